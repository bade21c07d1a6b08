"""Loading a model on a device: the file's format, the front end that turns it into the one the device loads
(``accel.front_ends``), the Model (``accel.Device.load``, ``Device.load`` of the ops' fused graphs)."""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from .. import compile_cache, front_ends
from .capabilities import describe
from .._lazy_import import import_or_undo
from ..errors import AccelError, InvalidArgumentError, UnsupportedError
from ..front_ends.front_end import LoadRequest
from ._frontend import core
from .device import RuntimeDevice
from .dtypes import has_buffer
from .dynamic_model import DynamicModel, Signature
from .model import Model
from .tensor_info import from_core

__all__ = ["PathOrBytes", "load"]

#: What ``Device.load`` accepts: a path, or the model's bytes (any buffer-protocol object).
PathOrBytes = Union[str, os.PathLike[str], bytes, bytearray, memoryview]


def load(device: RuntimeDevice, path_or_bytes: PathOrBytes,
         input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
         extra_outputs: Union[str, Sequence[str], None] = None,
         image_inputs: Optional[Mapping[str, Any]] = None, subgraph: Optional[str] = None,
         source: Optional[Union[str, os.PathLike[str]]] = None, dequantized: bool = False,
         shapes: Optional[Sequence[Mapping[str, Sequence[int]]]] = None, pad: bool = False,
         fold_limit: Optional[int] = None) -> Model:
    """:meth:`accel.Device.load` (its docstring says what it takes and raises): the model at ``path_or_bytes``
    loaded on ``device``, through the front end that turns its format into the device's."""
    device._check_open()
    if isinstance(path_or_bytes, (str, os.PathLike)):
        path = os.fsdecode(os.fspath(path_or_bytes))
        with open(path, "rb") as f:
            data: Any = f.read()
        name = Path(path).stem or "model"
        what = repr(path)
        path_given: Optional[str] = path
        base = os.path.basename(path).lower()
        suffix = base[base.rfind("."):] if "." in base else ""
    # Any buffer is taken (a NumPy array of bytes...), though PathOrBytes can only name these three.
    elif (isinstance(path_or_bytes, (bytes, bytearray, memoryview))
          or has_buffer(path_or_bytes)):  # type: ignore[unreachable]
        data = path_or_bytes
        name = "model"
        what = "the model bytes"
        path_given = None
        suffix = ""
    else:
        raise TypeError(f"load() takes a path or the model's bytes, not {type(path_or_bytes).__name__}")

    caps = device.capabilities
    head = bytes(memoryview(data).cast("B")[:16]) if not isinstance(data, bytes) else data[:16]
    front = front_ends.choose(caps.model_format, head, suffix)
    if front is None:
        refused = front_ends.foreign(suffix)
        # A suffix of the device's own files is its own format (a board's .xmodel), whatever front end takes it
        # elsewhere.
        if refused is not None and refused.produces != caps.model_format and suffix not in caps.file_suffixes:
            raise UnsupportedError(
                f"backend {device.info.backend!r} cannot load {refused.name} models ({what}): it loads "
                f"{caps.model_format or 'its own'} models ({', '.join(caps.file_suffixes) or 'any suffix'}); "
                f"compile it with the vendor's toolchain, or load it on a device that loads "
                f"{refused.produces} models{_devices_loading(refused.produces)}")

    if not isinstance(dequantized, bool):
        raise TypeError(f"dequantized must be a bool, not {type(dequantized).__name__}")
    if fold_limit is not None and (isinstance(fold_limit, bool) or not isinstance(fold_limit, int) or fold_limit < 0):
        raise TypeError(f"fold_limit must be a number of bytes (an int >= 0) or None, not {fold_limit!r}")
    extra = compile_cache.normalize_extra_outputs(extra_outputs)
    images = compile_cache.normalize_image_inputs(image_inputs)
    if source is not None:
        if not isinstance(source, (str, os.PathLike)):
            raise TypeError(f"source must be a path (the model the file was made from), not {type(source).__name__}")
        source = os.fsdecode(os.fspath(source))
        if not os.path.isfile(source):
            raise FileNotFoundError(f"source {source!r}: no such file")
    front_ends.check_options(front, what, {"input_shapes": input_shapes, "extra_outputs": extra,
                                           "image_inputs": images, "source": source,
                                           "dequantized": True if dequantized else None, "fold_limit": fold_limit})
    if subgraph is not None:
        if not isinstance(subgraph, str):
            raise TypeError(f"subgraph must be a str (a DPU subgraph's name), not {type(subgraph).__name__}")
        if front is None and not caps.loads_subgraph:
            raise UnsupportedError(f"backend {device.info.backend!r} loads {what} as it is: it cannot choose a "
                                   f"subgraph by name (vart can, and the emulator running a .xmodel: docs/xmodel.md)")
        if front is not None and not front.subgraphs:
            raise InvalidArgumentError(f"subgraph applies to models with subgraphs (a Vitis AI .xmodel); {what} is "
                                       f"{front.name}")
    if shapes is not None or pad:
        _check_shape_options(shapes, pad, front, what)
    if front is None:
        native = _load_core(device, data, path_given, subgraph)
        if shapes is not None or pad:
            # A compiled file (a board's .bin, .hbm, .xmodel; an .accm) has the shapes it was compiled for: name them.
            raise InvalidArgumentError(f"shapes= and pad= apply to models whose input dims are set at run time "
                                       f"(ONNX); {what} was compiled for {_fixed(native)}")
        return Model(device, native, name)
    request = LoadRequest(data, what, path_given, input_shapes, extra, images, caps.int8_rules, subgraph, source,
                          dequantized, fold_limit)
    def load_native(compiled: Any) -> Any:
        return _load_compiled(device, compiled)

    try:
        core_model, extra_count = front.load(request, load_native)
    except (InvalidArgumentError, UnsupportedError) as e:
        if not _set_at_run_time(e, front, request):
            raise
        return _dynamic(device, front, request, name, load_native, shapes, pad, _value_inputs(e))
    if shapes is not None:
        raise InvalidArgumentError(f"shapes= lists the shapes to compile a model whose input dims are set at run "
                                   f"time; {what}'s are fixed: {_fixed(core_model)}")
    return Model(device, core_model, name, extra_count)


def _check_shape_options(shapes: Any, pad: Any, front: Any, what: str) -> None:
    if not isinstance(pad, bool):
        raise TypeError(f"pad must be a bool, not {type(pad).__name__}")
    if shapes is not None and (isinstance(shapes, Mapping) or not isinstance(shapes, (list, tuple))):
        raise TypeError(f"shapes must be a list of dicts, each mapping every input's name to its shape, not "
                        f"{type(shapes).__name__}")
    if front is not None and front.signature is None:
        raise InvalidArgumentError(f"shapes= and pad= apply to models whose input dims are set at run time "
                                   f"(ONNX); {what} has fixed shapes")


def _set_at_run_time(error: AccelError, front: Any, request: LoadRequest) -> bool:
    """Whether the load failed only because the model leaves input dims, or an If's choice, to run time, in a form
    that can compile per set of input shapes and values (not with extra outputs or camera frames, whose requests
    name fixed tensors)."""
    from ..compiler.errors import InputShapeError  # the compiler is loaded: it raised

    set_later = isinstance(error.__cause__, InputShapeError) or _value_inputs(error) is not None
    return (set_later and front.signature is not None and request.extra_outputs is None
            and request.image_inputs is None)


def _value_inputs(error: BaseException) -> Optional[Tuple[str, ...]]:
    """The graph inputs the If or Loop that ``error`` names decides on, where the compiler found them few small
    integer or bool values the model can be compiled per value of (silero VAD's sample rate); None for any other
    error."""
    from ..compiler.errors import RunTimeConditionError

    cause = error.__cause__ if isinstance(error, AccelError) else error
    return cause.inputs or None if isinstance(cause, RunTimeConditionError) else None


def _dynamic(device: RuntimeDevice, front: Any, request: LoadRequest, name: str, load_native: Any,
             shapes: Optional[Sequence[Mapping[str, Sequence[int]]]], pad: bool,
             values: Optional[Tuple[str, ...]]) -> Model:
    """The model as a DynamicModel: compiled per set of input shapes (those given fixed as given), and per value
    of the inputs an If decides on (``values``, or found at the first compile that says so)."""
    inputs, outputs = front.signature(request.file_bytes())
    given = compile_cache.normalize_input_shapes(request.input_shapes) or {}
    inputs = tuple((n, t, tuple(given[n]) if n in given else dims) for n, t, dims in inputs)

    def specialize(concrete: Dict[str, Tuple[int, ...]], fixed: Dict[str, np.ndarray]) -> Model:
        req = dataclasses.replace(request, input_shapes=concrete)
        if fixed:
            req = dataclasses.replace(req, data=_with_constants(request, fixed), path=None)
        core_model, extra_count = front.load(req, load_native)
        return Model(device, core_model, name, extra_count)

    return DynamicModel(device, name, Signature(inputs, outputs), specialize, shapes, pad, values or (),
                        _value_inputs)


def _with_constants(request: LoadRequest, values: Dict[str, np.ndarray]) -> bytes:
    """The ONNX model's bytes with the inputs named in ``values`` made constants of those values (its external
    data read in first, from beside its file)."""
    with import_or_undo():
        import onnx
        from onnx import numpy_helper

    model = onnx.load(request.path) if request.path is not None else onnx.ModelProto.FromString(request.file_bytes())
    kept = [i for i in model.graph.input if i.name not in values]
    del model.graph.input[:]
    model.graph.input.extend(kept)
    for n, v in values.items():
        model.graph.initializer.append(numpy_helper.from_array(v, n))
    data: bytes = model.SerializeToString()
    return data


def _fixed(core_model: Any) -> str:
    return ", ".join(f"{t.name} {list(t.shape)}" for t in map(from_core, core_model.inputs()))


def _load_compiled(device: RuntimeDevice, data: Any) -> Any:
    """Loads bytes a front end made in the device's own format."""
    device._check_open()
    return device._core.load(data)


def _load_core(device: RuntimeDevice, data: Any, path: Optional[str], subgraph: Optional[str] = None) -> Any:
    try:
        return device._core.load(data) if subgraph is None else device._core.load(data, subgraph)
    except AccelError as e:
        if path is None:
            raise
        # The core loads from memory and cannot name the file: say which one it was.
        raise type(e)(f"cannot load {path!r}: {e.message}", e.status) from None


def _devices_loading(model_format: str) -> str:
    """" (the drivers here that load ``model_format``: 'emu')", or "" when none does."""
    schemes = []
    for scheme in core.backends():
        try:
            if describe(scheme).model_format == model_format:
                schemes.append(repr(scheme))
        except AccelError:  # a driver that cannot describe its bare scheme names no device here
            continue
    return f" ({', '.join(schemes)})" if schemes else ""
