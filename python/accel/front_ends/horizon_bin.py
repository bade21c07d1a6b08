"""The Horizon ``.bin`` front end: an RDK X3/X5 model (hb_mapper's output) on the devices that load ``.accm``. Its
BPU part (PACKED_HBM_MODEL) has no public description and is not emulated: what runs is the ONNX the ``.bin`` was
made from (``Device.load(..., source="model.onnx")``, or hb_mapper's ``<name>_calibrated_model.onnx`` found next to
the ``.bin``) behind exactly the ``.bin``'s interface, read from its container by ``accel.compiler.hbin``: its
camera-frame inputs with the preprocessing hb_mapper compiled in, its featuremaps, its outputs' dtypes; a quantized
model with the BPU's int8 rules. ``accel info model.bin`` describes the container."""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple

from .. import compile_cache
from .._lazy_import import import_or_undo
from ..errors import InvalidArgumentError, ModelFormatError, UnsupportedError
from .front_end import FrontEnd, LoadNative, LoadRequest

__all__ = ["HORIZON_BIN", "sibling_source"]

#: The int8 rules a quantized .bin computes with (DeviceCapabilities.int8_rules).
RULES = "bpu"

#: What hb_mapper names the calibrated ONNX beside ``<name>.bin``, the source taken when none is given.
CALIBRATED_SUFFIX = "_calibrated_model.onnx"

def _claims(head: bytes, suffix: str) -> bool:
    return suffix == ".bin"


def sibling_source(path: Optional[str]) -> Optional[str]:
    """hb_mapper's calibrated ONNX beside the .bin at ``path``, when there is one."""
    if path is None:
        return None
    candidate = os.path.splitext(path)[0] + CALIBRATED_SUFFIX
    return candidate if os.path.isfile(candidate) else None


def _read(data: bytes, what: str) -> Any:
    with import_or_undo():
        from ..compiler import hbin

    try:
        return hbin.describe(hbin.read(data))
    except hbin.BinFormatError as e:
        raise ModelFormatError(f"cannot read {what}: {e}") from e


def _load(request: LoadRequest, load_native: LoadNative) -> Tuple[Any, int]:
    with import_or_undo():
        import onnx

        from ..compiler import dequantize, hbin
        from ..compiler.errors import CompileError

    info = _read(request.file_bytes(), request.what)
    model = info.models[0]
    source = request.source or sibling_source(request.path)
    if source is None:
        looked = (f" (none named {os.path.basename(os.path.splitext(request.path)[0] + CALIBRATED_SUFFIX)!r} is next "
                  f"to it)" if request.path else "")
        raise InvalidArgumentError(
            f"{request.what} is a Horizon .bin for {info.chip} (march {info.march}): its BPU part has no public "
            f"description and cannot be emulated; pass source='model.onnx', the ONNX it was made from (hb_mapper's "
            f"*{CALIBRATED_SUFFIX} or the float model), to run that behind the .bin's interface{looked}")
    try:
        proto, images = hbin.behind(model, onnx.load(source))
    except FileNotFoundError:  # the caller's, naming the file
        raise
    except hbin.BinSourceError as e:
        raise InvalidArgumentError(f"cannot run {request.what} from {source!r}: {e}") from e
    except CompileError as e:  # a Horizon op of the source that the compiler does not read
        raise UnsupportedError(f"cannot run {request.what} from {source!r}: {e}") from e
    except (OSError, ValueError) as e:  # onnx's DecodeError is a ValueError
        raise ModelFormatError(f"cannot read {source!r}, the source of {request.what}: {e}") from e
    quantized = dequantize.is_quantized(proto)
    if quantized and request.int8_rules != RULES and not request.dequantized:
        raise UnsupportedError(f"{request.what} is a quantized model for Horizon's BPU, which computes int8 with the "
                               f"BPU's rules; this device computes with {request.int8_rules or 'none'!r}: open "
                               f"'emu:int8={RULES}' to run it as the BPU does")
    what = f"{request.what} (from {os.path.basename(source)})"
    # The rewritten model compiles from its bytes (onnx.load took in any external data), not from the source's file.
    accm, _, _ = compile_cache.compile_onnx(proto.SerializeToString(), None, what, None,
                                            RULES if quantized else (request.int8_rules or "ort"), None,
                                            compile_cache.normalize_image_inputs(images) if images else None,
                                            request.dequantized, request.fold_limit)
    return load_native(accm), 0


def _describe(data: bytes) -> Dict[str, Any]:
    """The march, versions and hb_mapper's settings, and each model's inputs (runtime type, layout,
    preprocessing), outputs and nodes (where each runs)."""
    info = _read(data, "the file")
    models: List[Dict[str, Any]] = []
    for m in info.models:
        inputs = []
        for i in m.inputs:
            entry = f"{i.name} {list(i.shape)} {i.dtype} {i.type_rt}"
            if i.layout_rt:
                entry += f" {i.layout_rt}"
            if i.type_rt != "featuremap":
                entry += f" -> {i.type_train} ({i.space_and_range})"
            if i.mean or i.scale:
                mean, scale = (" ".join(f"{x:g}" for x in v) for v in (i.mean, i.scale))
                entry += f", ({mean or 0} subtracted) * ({scale or 1})"
            inputs.append(entry)
        where: Dict[str, List[str]] = {}
        for n in m.nodes:
            where.setdefault(n.where, []).append(f"{n.name} ({n.op_type})")
        models.append({"name": m.name, "inputs": inputs, "outputs": [f"{o.name} {list(o.shape)} {o.dtype}"
                                                                        for o in m.outputs],
                       "BPU (not emulated)": where.get("BPU", []), "CPU": where.get("CPU", []) or "none"})
    versions = [v for v in info.versions if v]
    settings = {k: v for k, v in info.metadata.items() if k != "MARCH"}
    return {"format": HORIZON_BIN.name, "march": f"{info.march} ({info.chip})",
            **({"versions": " ".join(versions)} if versions else {}), "models": models, "settings": settings,
            "on the emulator": "the ONNX it was made from, behind this interface: load(path, source='model.onnx')"}


#: A Horizon RDK .bin, its source ONNX behind its interface, into .accm.
HORIZON_BIN = FrontEnd(name="Horizon .bin", suffixes=(".bin",), produces="accm", claims=_claims, load=_load,
                       options=("source", "dequantized", "fold_limit"), describe=_describe, int8_rules=RULES)
