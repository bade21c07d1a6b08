"""The Vitis AI front end: a compiled ``.xmodel``'s DPU subgraph, read by ``accel.compiler.xir`` and compiled with the
DPU's int8 rules into ``.accm`` (cached as ONNX models are: ``accel.compile_cache``), for the devices that load
``.accm`` and compute with those rules (``emu:int8=dpu``). The model's tensors are the subgraph's, as VART's runner
gives them on a board: xint8, NHWC as stored, real = q * 2^-fix_point."""
from __future__ import annotations

from typing import Any, Tuple

from .. import compile_cache
from .._lazy_import import import_or_undo
from ..errors import ModelFormatError, UnsupportedError
from .front_end import FrontEnd, LoadNative, LoadRequest

__all__ = ["XMODEL"]

#: The int8 rules a compiled DPU model computes with (DeviceCapabilities.int8_rules).
RULES = "dpu"


def _claims(head: bytes, suffix: str) -> bool:
    return suffix == ".xmodel"


def _load(request: LoadRequest, load_native: LoadNative) -> Tuple[Any, int]:
    if request.int8_rules != RULES:
        raise UnsupportedError(f"{request.what} is a model compiled for a Vitis AI DPU, which computes int8 with the "
                               f"DPU's rules; this device computes with {request.int8_rules or 'none'!r}: open "
                               f"'emu:int8={RULES}' to run it as the DPU does")
    with import_or_undo():
        from ..compiler import xir

    try:
        model = xir.dpu_model(request.file_bytes())
    except xir.UnsupportedXmodelError as e:
        raise UnsupportedError(f"cannot run {request.what} on the emulator: {e}") from e
    except xir.XmodelError as e:
        raise ModelFormatError(f"cannot read {request.what}: {e}") from e
    onnx_bytes = model.SerializeToString()
    accm, _, _ = compile_cache.compile_onnx(onnx_bytes, None, request.what, None, RULES)
    return load_native(accm), 0


#: A compiled Vitis AI model, its DPU subgraph turned into .accm.
XMODEL = FrontEnd(name="Vitis AI .xmodel", suffixes=(".xmodel",), produces="accm", claims=_claims, load=_load,
                  options=False)
