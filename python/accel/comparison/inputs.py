"""The input sets both models of a comparison run on: given (a dict by name or a list in the model's order),
random (seeded), or a run record's; and each set fitted to a model whose inputs differ in dtype (a float
input given to a model that takes it quantized, or the other way round).

Random inputs (``random=N, seed=S``; ``numpy.random.default_rng(S)``, set after set, input after input in the
model's order): floats uniform in [0, 1) (images' range), int8 and uint8 uniform over their whole range,
other integers uniform in [0, 16], booleans 0 or 1; an integer input whose values are positions (token ids
into an embedding table, sequence lengths: accel.comparison.index_inputs) uniform over the values valid for
it, [0, n). ``random_array`` is the one definition: accel compare, bench and selftest draw their inputs with it.
"""
from __future__ import annotations

from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence

import numpy as np

from .._lazy_import import import_or_undo
from .._wording import counted
from ..runtime.tensor_info import Quantization, TensorInfo
from . import quant_values

__all__ = ["Feeds", "fit", "given_sets", "random_array", "random_sets"]

Feeds = Dict[str, np.ndarray]
_SMALL_INT_MAX = 16


def random_sets(infos: Sequence[TensorInfo], count: int, seed: int,
                limits: Optional[Mapping[str, int]] = None) -> Iterator[Feeds]:
    """``count`` random input sets for inputs ``infos`` (see the module's docstring), each made when the one
    before is taken: a comparison keeps one set at a time, whatever ``count``. ``limits``: index_limits'
    ``{input name: n}`` of the models run on them."""
    if count < 1:
        raise ValueError(f"random must be >= 1 (input sets), got {count}")
    rng = np.random.default_rng(seed)
    limits = dict(limits or {})
    return ({i.name: random_array(i, rng, limits.get(i.name)) for i in infos} for _ in range(count))


def random_array(info: TensorInfo, rng: np.random.Generator, limit: Optional[int] = None) -> np.ndarray:
    """A random array of input ``info``'s shape and dtype (see the module's docstring); ``limit``: an integer
    input's values are positions valid in [0, limit) (index_limits), drawn there."""
    dt = np.dtype(info.dtype)
    shape = tuple(info.shape)
    if -1 in shape:
        _open_dims(info)
    if dt.kind == "f":
        return rng.random(shape, dtype=np.float32).astype(dt)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(dt)
    bounds = np.iinfo(dt)
    if limit is not None:
        return rng.integers(0, min(limit - 1, bounds.max), shape, endpoint=True).astype(dt)
    if dt.itemsize == 1:
        return rng.integers(bounds.min, bounds.max, shape, endpoint=True).astype(dt)
    return rng.integers(0, _SMALL_INT_MAX, shape, endpoint=True).astype(dt)


def _open_dims(info: TensorInfo) -> None:
    """The InputShapeError of an input whose dims are set at run time (a DynamicModel's): random inputs need them."""
    with import_or_undo():
        from ..compiler.errors import InputShapeError

    symbols = info.symbols or (None,) * info.ndim
    dims = tuple(d if d != -1 else s for d, s in zip(info.shape, symbols))
    k = info.shape.index(-1)
    raise InputShapeError(info.name, dims, f"input '{info.name}' dim {k} is set at run time"
                                           f"{f' ({symbols[k]!r})' if symbols[k] else ''}",
                          "random inputs need every dim's size")


def given_sets(inputs: Any, infos: Sequence[TensorInfo], model: str) -> List[Feeds]:
    """One input set from ``inputs``: a dict by name; or a list (or tuple) of arrays filling the inputs of
    ``infos`` in order, where an item may also be a ``(name, array)`` pair naming its input (the unnamed
    arrays then fill the other inputs in order, as ``accel run --input`` does); or one array for a model with
    one input. ValueError naming the model for an unknown or missing name or too many arrays."""
    names = [i.name for i in infos]
    named: Dict[str, np.ndarray] = {}
    unnamed: List[np.ndarray] = []
    if isinstance(inputs, Mapping):
        named = {str(n): np.asarray(a) for n, a in inputs.items()}
    elif isinstance(inputs, np.ndarray):
        unnamed = [inputs]
    else:
        for item in inputs:
            if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], (str, type(None))):
                if item[0] is None:
                    unnamed.append(np.asarray(item[1]))
                else:
                    named[item[0]] = np.asarray(item[1])
            else:
                unnamed.append(np.asarray(item))
    unknown = [n for n in named if n not in names]
    if unknown:
        raise ValueError(f"input {unknown[0]!r} is not an input of {model}: its inputs are {', '.join(names)}")
    free = [n for n in names if n not in named]
    if len(unnamed) > len(free):
        raise ValueError(f"{counted(len(named) + len(unnamed), 'input')} given; {model} takes {len(names)}: "
                         f"{', '.join(names)}")
    named.update(zip(free, unnamed))
    missing = [n for n in names if n not in named]
    if missing:
        raise ValueError(f"no input given for {', '.join(map(repr, missing))} of {model}")
    return [{n: named[n] for n in names}]


def fit(feeds: Feeds, quant: Mapping[str, Quantization], infos: Sequence[TensorInfo], model: str) -> Feeds:
    """``feeds`` (quantized as ``quant`` says, by name) for a model with inputs ``infos``: matched by name,
    else by position when the model has as many inputs; a float array quantized for a quantized input, an
    integer array with its quantization dequantized for a float one. Other mismatches are left for
    ``Model.run`` to report."""
    names = [i.name for i in infos]
    if set(names) <= set(feeds):
        pairs = [(n, n) for n in names]
    elif len(names) == len(feeds):
        pairs = list(zip(feeds, names))
    else:
        raise ValueError(f"{model} takes inputs {', '.join(names)}; the inputs are {', '.join(feeds)}")
    by_name = {i.name: i for i in infos}
    return {target: _convert(feeds[source], quant.get(source), by_name[target]) for source, target in pairs}


def _convert(array: np.ndarray, quant: Optional[Quantization], info: TensorInfo) -> np.ndarray:
    target = np.dtype(info.dtype)
    if array.dtype == target:
        return array
    if info.quant is not None and array.dtype.kind == "f" and target.kind in "iu":
        values = array.astype(np.float64).reshape(info.shape)
        return quant_values.quantize(values, info.quant, target, info.name).astype(target)
    if quant is not None and array.dtype.kind in "iu" and target.kind == "f":
        return quant_values.dequantize(array, quant, info.name).astype(target)
    return array
