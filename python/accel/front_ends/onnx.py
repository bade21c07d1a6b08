"""The ONNX front end: an ONNX model compiled by ``accel.compiler`` (cached: ``accel.compile_cache``) into the
``.accm`` format, for the devices that load it."""
from __future__ import annotations

from typing import Any, Tuple

from .. import compile_cache
from .._lazy_import import import_or_undo
from ..errors import ModelFormatError
from .front_end import FrontEnd, LoadNative, LoadRequest

__all__ = ["ONNX", "ACCM_MAGIC"]

#: The first bytes of an .accm file (emulator/FORMAT.md).
ACCM_MAGIC = b"ACCM"


def _claims(head: bytes, suffix: str) -> bool:
    # An .accm file is never ONNX, whatever its name; another file is ONNX when named so or when it starts as a
    # ModelProto does (field 1, ir_version, a varint: the byte 0x08).
    return head[:4] != ACCM_MAGIC and (suffix == ".onnx" or head[:1] == b"\x08")


def _load(request: LoadRequest, load_native: LoadNative) -> Tuple[Any, int]:
    onnx_bytes = request.file_bytes()
    shapes = compile_cache.normalize_input_shapes(request.input_shapes)
    int8 = request.int8_rules or "ort"
    args = (onnx_bytes, shapes, request.what, request.path, int8, request.extra_outputs, request.image_inputs,
            request.dequantized, request.fold_limit)
    accm, key, cached = compile_cache.compile_onnx(*args)
    try:
        core_model = load_native(accm)
    except ModelFormatError:
        if not cached:
            raise
        # A damaged cache entry: compile again.
        compile_cache.invalidate(key)
        accm, key, cached = compile_cache.compile_onnx(*args)
        core_model = load_native(accm)
    return core_model, _extra_count(request.extra_outputs, onnx_bytes, core_model)


def _extra_count(extra: compile_cache.ExtraOutputs, onnx_bytes: bytes, core_model: Any) -> int:
    """How many outputs the compiler added for ``extra`` (normalized): as many as named, or for "all" those past
    the ONNX graph's own outputs."""
    if extra is None:
        return 0
    if extra != "all":
        return len(extra)
    with import_or_undo():
        import onnx

    own = len(onnx.ModelProto.FromString(onnx_bytes).graph.output)
    return len(core_model.outputs()) - own


def _signature(data: bytes) -> Tuple[Any, Any]:
    """The graph's inputs (initializers aside) and outputs as (name, dtype, dims), the outputs' dims as ONNX's
    shape inference gives them where the file does not (so that a symbol of the inputs carries to them); a
    tensor of undeclared rank has no dims."""
    with import_or_undo():
        import onnx
        from onnx import helper

    model = onnx.ModelProto.FromString(data)
    try:
        model = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - a graph the inference cannot follow keeps the dims it declares
        pass
    g = model.graph
    constants = {i.name for i in g.initializer}

    def entry(vi: Any) -> Tuple[str, Any, Tuple[Any, ...]]:
        t = vi.type.tensor_type
        # A dim_value below 1 (some exporters write -1) is a dim left open, as an unnamed one; so is a name the
        # shape inference made up (unk__N), which says nothing.
        dims = tuple(d.dim_value if d.HasField("dim_value") and d.dim_value > 0
                     else (d.dim_param if d.dim_param and not d.dim_param.startswith("unk__") else None)
                     for d in t.shape.dim)
        return vi.name, helper.tensor_dtype_to_np_dtype(t.elem_type), dims

    return (tuple(entry(i) for i in g.input if i.name not in constants), tuple(entry(o) for o in g.output))


#: ONNX, compiled into .accm.
ONNX = FrontEnd(name="ONNX", suffixes=(".onnx",), produces="accm", claims=_claims, load=_load,
                options=("input_shapes", "extra_outputs", "image_inputs", "dequantized", "fold_limit"),
                signature=_signature)
