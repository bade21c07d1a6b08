"""A model whose input dims are known only at run time (``Device.load`` of an ONNX model with symbolic dims): the
emulator compiles static shapes, so the model is compiled once per set of input shapes the runs bring (each
compile kept in the compile cache, the last MAX_SHAPES kept loaded), or, with ``shapes=`` and ``pad=True``, a run
is padded up to the smallest of a list of shapes compiled at load (shape buckets, what users of static NPUs do by
hand) and its outputs cut back.

Every shape-specific model is an ordinary :class:`accel.Model` (``DynamicModel.specialize`` gives it); this class
chooses one per call and keeps the declared signature: its ``inputs`` and ``outputs`` show ``-1`` where a dim is set
at run time (``TensorInfo.symbols`` names it).
"""
from __future__ import annotations

import collections
import dataclasses
import math
import threading
import time
from dataclasses import dataclass
from typing import (TYPE_CHECKING, Any, Callable, Dict, Generator, Iterable, List, Mapping, Optional, Sequence, Tuple,
                    Union)

import numpy as np

from . import batching
from ..errors import InvalidArgumentError, ShapeError
from .messages import type_name
from .model import Inputs, Model, Outputs, _check_priority, _timeout_us
from .tensor_info import TensorInfo

if TYPE_CHECKING:
    from .device import RuntimeDevice as Device

__all__ = ["MAX_SHAPES", "Compiled", "DynamicModel", "Signature"]

#: Shape-specific models kept loaded at once (the least recently used is dropped; its compile stays cached).
MAX_SHAPES = 16

#: One set of input shapes: one shape per input, in input order.
ShapeKey = Tuple[Tuple[int, ...], ...]
#: The values of the inputs a model is compiled per value of (its dtype's name and bytes each, in their order).
ValueKey = Tuple[Tuple[str, bytes], ...]
#: What one compiled model stands for.
Key = Tuple[ShapeKey, ValueKey]
#: Loads the model compiled for these shapes (every input's) and these values (the value inputs').
Specialize = Callable[[Dict[str, Tuple[int, ...]], Dict[str, np.ndarray]], Model]
#: Which inputs a failure of specialize says the model must be compiled per value of (None: it says none).
FindValues = Callable[[BaseException], Optional[Tuple[str, ...]]]
#: A dim as a model declares it: a size, a symbol's name (str), or None (unknown).
Dim = Union[int, str, None]
#: What makes a run's results the caller's: the identity, or a padded run's cut back to its own shapes.
Cut = Callable[[List[np.ndarray]], List[np.ndarray]]


@dataclass(frozen=True)
class Signature:
    """The inputs and outputs as the ONNX graph declares them: name, dtype, dims (Dim)."""

    inputs: Tuple[Tuple[str, np.dtype, Tuple[Dim, ...]], ...]
    outputs: Tuple[Tuple[str, np.dtype, Tuple[Dim, ...]], ...]


@dataclass
class Compiled:
    """One set of input shapes the model is compiled for: the shapes by input name, the seconds the compile took
    (from the compile cache: about none), the runs that used it and how many of them were padded up to it, and
    the values of the inputs it is compiled per value of (an If deciding on them: ``Model.value_inputs``)."""

    shapes: Dict[str, Tuple[int, ...]]
    seconds: float
    runs: int = 0
    padded: int = 0
    values: Dict[str, Any] = dataclasses.field(default_factory=dict)


def _info(name: str, dtype: np.dtype, dims: Sequence[Dim]) -> TensorInfo:
    shape = tuple(d if isinstance(d, int) else -1 for d in dims)
    symbols = tuple(d if isinstance(d, str) else None for d in dims)
    return TensorInfo(name, shape, np.dtype(dtype), symbols=symbols)


class DynamicModel(Model):
    """A model with input dims set at run time (see the module's docstring); ``Device.load`` makes it. It runs as
    :class:`accel.Model` does (``run``, ``run_async``, ``run_batch``, ``imap``) on the shapes each call brings."""

    def __init__(self, device: Device, name: str, signature: Signature, specialize: Specialize,
                 shapes: Optional[Sequence[Mapping[str, Sequence[int]]]] = None, pad: bool = False,
                 values: Tuple[str, ...] = (), find_values: Optional[FindValues] = None) -> None:
        """``specialize(shapes, values)`` loads the model compiled for ``shapes`` (every input's) and the values of
        the inputs named in ``values`` (an If decides on them); ``find_values(error)`` names such inputs from a
        failed compile, the first time one fails so. ``shapes`` are compiled now, and with ``pad`` a run's inputs are
        padded up to the smallest of them that holds them."""
        self._device = device
        self._name = name
        self._uri = device.uri
        self._signature = signature
        self._specialize = specialize
        self._inputs = tuple(_info(*i) for i in signature.inputs)
        self._outputs = tuple(_info(*o) for o in signature.outputs)
        self._own_outputs = len(self._outputs)
        self._in_index = {t.name: i for i, t in enumerate(self._inputs)}
        self._lock = threading.Lock()
        self._loaded: collections.OrderedDict[Key, Model] = collections.OrderedDict()
        self._compiled: Dict[Key, Compiled] = {}
        self._values = tuple(values)
        self._find_values = find_values
        if pad and not shapes:
            raise InvalidArgumentError("pad=True pads a run up to one of the shapes given with shapes=: give them")
        if pad and values:
            raise InvalidArgumentError(f"pad=True cannot pad {self._name!r}: it is compiled per value of "
                                       f"{', '.join(repr(v) for v in values)} (an If decides on them)")
        self._buckets: List[ShapeKey] = [self._key_of(s) for s in (shapes or [])]
        self._pad = bool(pad)
        if pad:
            self._check_cuttable()
        for key in self._buckets:
            self._model((key, ()), {})

    # -- metadata --------------------------------------------------------------------------------------

    @property
    def compiled(self) -> List[Compiled]:
        """The sets of input shapes compiled so far, in the order they were first run (or given with ``shapes=``),
        with their compile times and runs."""
        with self._lock:
            return list(self._compiled.values())

    @property
    def value_inputs(self) -> List[str]:
        """The inputs the model is compiled per value of: those an If's condition depends on (the runtime runs a
        fixed graph, so each value a run brings compiles the branches it takes), found at the first compile that
        needs them; empty for most models."""
        return list(self._values)

    def specialize(self, input_shapes: Mapping[str, Sequence[int]],
                   values: Optional[Mapping[str, Any]] = None) -> Model:
        """The model compiled for ``input_shapes`` (every input's shape by name) and, for a model with
        :attr:`value_inputs`, their ``values`` (by name): an :class:`accel.Model` whose ``inputs`` and ``outputs`` are
        the device's full description (layouts, quantization) at those shapes, without the value inputs."""
        named = {n: np.asarray(v) for n, v in (values or {}).items()}
        missing = [n for n in self._values if n not in named]
        if missing:
            raise InvalidArgumentError(f"model {self._name!r} is compiled per value of {missing[0]!r}: give values=")
        key = self._key_of(input_shapes)
        return self._model((key, self._value_key(named)), named)

    def __repr__(self) -> str:
        ins = ", ".join(str(i) for i in self._inputs)
        outs = ", ".join(str(o) for o in self._outputs)
        return f"<accel.Model {self._name!r} on {self._uri!r}: ({ins}) -> ({outs}), shapes set at run time>"

    # -- running ---------------------------------------------------------------------------------------

    def run(self, inputs: Inputs = (), outputs: Optional[Outputs] = None, *, priority: int = 0,
            timeout: Optional[float] = None) -> List[np.ndarray]:
        """:meth:`accel.Model.run` on the model compiled for the inputs' shapes (compiled now the first time)."""
        model, inputs, cut = self._for(inputs, outputs)
        results = model.run(inputs, outputs, priority=priority, timeout=timeout)
        return cut(results)

    def run_async(self, inputs: Inputs = (), outputs: Optional[Outputs] = None, *, priority: int = 0,
                  timeout: Optional[float] = None) -> Any:
        """:meth:`accel.Model.run_async` on the model compiled for the inputs' shapes (a first compile happens
        before it returns)."""
        model, inputs, cut = self._for(inputs, outputs)
        future = model.run_async(inputs, outputs, priority=priority, timeout=timeout)
        if cut is _as_they_are:
            return future
        return _CutFuture(future, cut)

    def run_batch(self, items: Iterable[Inputs], outputs: Optional[Sequence[Optional[Outputs]]] = None, *,
                  priority: int = 0, timeout: Optional[float] = None,
                  max_inflight: Optional[int] = None) -> List[List[np.ndarray]]:
        """:meth:`accel.Model.run_batch`: the items of one shape run together on that shape's model, each group
        after the one before, the results in item order."""
        batch = list(items)
        outs = list(outputs) if outputs is not None else [None] * len(batch)
        if len(outs) != len(batch):
            raise InvalidArgumentError(f"run_batch: outputs has {len(outs)} entries for {len(batch)} items "
                                       f"(one entry per item: its outputs as Model.run takes them, or None)")
        groups: Dict[int, List[int]] = {}
        chosen = []
        for i, item in enumerate(batch):
            try:
                model, fed, cut = self._for(item, outs[i])
            except Exception as e:
                raise batching.at_item("run_batch", i, e) from None
            chosen.append((model, fed, cut))
            groups.setdefault(id(model), []).append(i)
        results: List[List[np.ndarray]] = [[] for _ in batch]
        for indices in groups.values():
            model = chosen[indices[0]][0]
            given = None if outputs is None else [outs[i] for i in indices]
            got = model.run_batch([chosen[i][1] for i in indices], given, priority=priority, timeout=timeout,
                                  max_inflight=max_inflight)
            for i, r in zip(indices, got):
                results[i] = chosen[i][2](r)
        return results

    def imap(self, iterable: Iterable[Inputs], jobs: Optional[int] = None, *, priority: int = 0,
             timeout: Optional[float] = None) -> Generator[List[np.ndarray], None, None]:
        """:meth:`accel.Model.imap`: each item runs on the model for its shapes, in one window of jobs."""
        if priority.__class__ is not int or not 0 <= priority <= 255:
            priority = _check_priority(priority)
        return batching.imap(self._submissions(), (self._for(item, None) for item in iterable), jobs, priority,
                             _timeout_us(timeout))

    def _submissions(self) -> batching.Submissions:
        # The window's items are (model, inputs, cut) triples, made as they are pulled (imap).
        def unsupported(*args: Any) -> Any:
            raise InvalidArgumentError("outputs given to a model whose shapes are set at run time: use run_batch")

        def submit(item: Any, given: Any, priority: int, timeout_us: int) -> Any:
            model, fed, cut = item
            future = model._submit_item(fed, given, priority, timeout_us)
            return future if cut is _as_they_are else _CutFuture(future, cut)

        return batching.Submissions(self._device.info, self._check_open,
                                    lambda item: item[0]._check_inputs(item[1]),
                                    lambda item, job, prefix: item[0]._input_ranges(item[1], job, prefix),
                                    unsupported, unsupported, submit)

    # -- choosing the shape-specific model -------------------------------------------------------------------

    def _for(self, inputs: Inputs, outputs: Optional[Outputs]) -> Tuple[Model, Inputs, Cut]:
        """(the model for the inputs' shapes, the inputs as it takes them, what makes its results the caller's)."""
        self._check_open()
        named = self._named(inputs)
        key = tuple(self._shape_of(t, named[t.name]) for t in self._inputs)
        if not self._pad:
            model = self._valued(key, named)
            if self._values:
                inputs = {n: x for n, x in named.items() if n not in self._values}
            return model, inputs, _as_they_are
        bucket = self._bucket(key)
        model = self._model((bucket, ()), {})
        if bucket == key:
            with self._lock:
                self._compiled[(bucket, ())].runs += 1
            return model, inputs, _as_they_are
        if outputs is not None:
            raise InvalidArgumentError(f"outputs given to a run padded from {self._shapes_text(key)} up to "
                                       f"{self._shapes_text(bucket)}: pad runs into fresh outputs")
        with self._lock:
            self._compiled[(bucket, ())].padded += 1
        padded = {t.name: _pad(np.asarray(named[t.name]), shape) for t, shape in zip(self._inputs, bucket)}
        return model, padded, self._cutter(key)

    def _named(self, inputs: Inputs) -> Dict[str, Any]:
        """The inputs by name (any form Model.run takes); ValueError / TypeError as Model.run raises them."""
        infos = self._inputs
        if isinstance(inputs, Mapping):
            unknown = [k for k in inputs if k not in self._in_index]
            if unknown:
                raise InvalidArgumentError(f"model {self._name!r} has no input {unknown[0]!r} (its inputs: "
                                           f"{', '.join(repr(t.name) for t in infos)})")
            missing = [t.name for t in infos if t.name not in inputs]
            if missing:
                raise InvalidArgumentError(f"model {self._name!r}: input {missing[0]!r} is missing")
            return dict(inputs)
        if isinstance(inputs, (list, tuple)):
            if len(inputs) != len(infos):
                raise InvalidArgumentError(f"model {self._name!r} takes {len(infos)} inputs, got {len(inputs)}")
            return {t.name: x for t, x in zip(infos, inputs)}
        if len(infos) != 1:
            raise InvalidArgumentError(f"model {self._name!r} takes {len(infos)} inputs "
                                       f"({', '.join(repr(t.name) for t in infos)}): pass a list or a dict")
        return {infos[0].name: inputs}

    def _shape_of(self, info: TensorInfo, x: Any) -> Tuple[int, ...]:
        shape = getattr(x, "shape", None)
        if shape is None:
            raise TypeError(f"input {info.name!r} must be an array (numpy.ndarray or accel.DeviceTensor), not "
                            f"{type_name(x)}")
        return tuple(int(d) for d in shape)

    def _key_of(self, shapes: Mapping[str, Sequence[int]]) -> ShapeKey:
        """Every input's shape from ``shapes`` (by name), checked against the declared dims."""
        if not isinstance(shapes, Mapping):
            raise TypeError(f"shapes must be a dict mapping each input's name to its shape, not "
                            f"{type(shapes).__name__}")
        unknown = [k for k in shapes if k not in self._in_index]
        if unknown:
            raise InvalidArgumentError(f"model {self._name!r} has no input {unknown[0]!r}")
        missing = [t.name for t in self._inputs if t.name not in shapes]
        if missing:
            raise InvalidArgumentError(f"shapes names no shape for input {missing[0]!r}: give every input's")
        return tuple(tuple(int(d) for d in shapes[t.name]) for t in self._inputs)

    def _check(self, key: ShapeKey) -> None:
        """ShapeError unless ``key`` fits the declared dims: each input's rank, its fixed dims, and one value per
        symbol across the inputs."""
        seen: Dict[str, Tuple[int, str]] = {}
        for info, shape in zip(self._inputs, key):
            if len(shape) != len(info.shape):
                raise ShapeError(f"input {info.name!r} has {len(info.shape)} dims ({self._declared(info)}), "
                                 f"got shape {shape}")
            for k, (want, got, symbol) in enumerate(zip(info.shape, shape, info.symbols or ())):
                if got < 1:
                    raise ShapeError(f"input {info.name!r}: dim {k} is {got}; dims are >= 1")
                if want != -1 and got != want:
                    raise ShapeError(f"input {info.name!r} has shape ({self._declared(info)}), got {shape}: dim "
                                     f"{k} must be {want}")
                if symbol is not None:
                    first = seen.setdefault(symbol, (got, info.name))
                    if first[0] != got:
                        raise ShapeError(f"dim {symbol!r} is {first[0]} in input {first[1]!r} and {got} in input "
                                         f"{info.name!r}: one run gives it one value")

    def _declared(self, info: TensorInfo) -> str:
        return ", ".join(str(d) if d != -1 else (s or "?") for d, s in zip(info.shape, info.symbols or ()))

    def _shapes_text(self, key: ShapeKey) -> str:
        return ", ".join(f"{t.name}: {list(s)}" for t, s in zip(self._inputs, key))

    def _valued(self, shapes: ShapeKey, named: Dict[str, Any]) -> Model:
        """The model for a run's shapes and values (a run counted), the value inputs found first where the compile
        says an If decides on inputs."""
        while True:
            key = (shapes, self._value_key(named))
            try:
                model = self._model(key, named)
                break
            except Exception as e:
                found = self._find_values(e) if self._find_values is not None and not self._values else None
                if not found:
                    raise
                with self._lock:
                    self._values = found
        with self._lock:
            self._compiled[key].runs += 1
        return model

    def _value_key(self, named: Mapping[str, Any]) -> ValueKey:
        arrays = [np.ascontiguousarray(named[n]) for n in self._values]
        return tuple((a.dtype.str, a.tobytes()) for a in arrays)

    def _model(self, key: Key, named: Mapping[str, Any]) -> Model:
        """The model for ``key`` (checked), loaded now the first time, the least recently used dropped past
        MAX_SHAPES (loaded again, from the compile cache, when it is run again)."""
        with self._lock:
            model = self._loaded.get(key)
            if model is not None:
                self._loaded.move_to_end(key)
                return model
        self._check(key[0])
        shapes = {t.name: s for t, s in zip(self._inputs, key[0])}
        values = {n: np.asarray(named[n]) for n in self._values}
        started = time.perf_counter()
        model = self._specialize({n: s for n, s in shapes.items() if n not in values}, values)
        seconds = time.perf_counter() - started
        with self._lock:
            self._loaded[key] = model
            self._loaded.move_to_end(key)
            self._compiled.setdefault(key, Compiled(shapes, seconds, values={n: v.tolist() for n, v in
                                                                            values.items()}))
            keep = {(b, ()) for b in self._buckets}
            while len(self._loaded) > max(MAX_SHAPES, len(keep)):
                old = next(k for k in self._loaded if k not in keep)
                del self._loaded[old]
        return model

    # -- shape buckets ---------------------------------------------------------------------------------------

    def _bucket(self, key: ShapeKey) -> ShapeKey:
        """The smallest of the buckets (by elements) that holds ``key`` in every dim; ShapeError naming them when
        none does."""
        self._check(key)
        fits = [b for b in self._buckets if all(g <= w for s, t in zip(key, b) for g, w in zip(s, t))]
        if not fits:
            raise ShapeError(f"no compiled shape holds {self._shapes_text(key)} (the shapes: "
                             f"{'; '.join(self._shapes_text(b) for b in self._buckets)}): pad=True pads a run up to "
                             f"one of them")
        return min(fits, key=lambda b: sum(math.prod(s) for s in b))

    def _check_cuttable(self) -> None:
        """A padded run's outputs are cut back along the dims that carry an input's symbol: every output dim
        must be fixed or such a symbol (else the padding would change what it holds)."""
        symbols = {s for t in self._inputs for s in (t.symbols or ()) if s}
        for name, _, dims in self._signature.outputs:
            for k, d in enumerate(dims):
                if not isinstance(d, int) and d not in symbols:
                    raise InvalidArgumentError(
                        f"pad=True cannot cut output {name!r} back: its dim {k}{f' ({d!r})' if d else ''} is not "
                        f"one of the inputs' dims ({', '.join(sorted(symbols)) or 'none'}), so padding would change "
                        f"what it holds; compile each shape as it comes (pad=False)")

    def _cutter(self, key: ShapeKey) -> Cut:
        values: Dict[str, int] = {}
        for info, shape in zip(self._inputs, key):
            for s, d in zip(info.symbols or (), shape):
                if s:
                    values[s] = d
        cuts = []
        for (_, _, dims) in self._signature.outputs:
            cuts.append(tuple(slice(0, values[d]) if isinstance(d, str) else slice(None) for d in dims))

        def cut(results: List[np.ndarray]) -> List[np.ndarray]:
            return [r[c] if len(c) == r.ndim else r for r, c in zip(results, cuts)]
        return cut


def _as_they_are(results: List[np.ndarray]) -> List[np.ndarray]:
    return results


def _pad(x: np.ndarray, shape: Tuple[int, ...]) -> np.ndarray:
    """``x`` with zeros after its end in every dim, to ``shape``."""
    out = np.zeros(shape, x.dtype)
    out[tuple(slice(0, d) for d in x.shape)] = x
    return out


class _CutFuture:
    """A padded run's future: its result cut back to the run's own shapes; everything else the future's."""

    def __init__(self, future: Any, cut: Cut) -> None:
        self._future, self._cut = future, cut

    def result(self, timeout: Optional[float] = None) -> List[np.ndarray]:
        return self._cut(self._future.result(timeout))

    def __await__(self) -> Generator[Any, None, List[np.ndarray]]:
        return self._cut((yield from self._future.__await__()))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._future, name)
