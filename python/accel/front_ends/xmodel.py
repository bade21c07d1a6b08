"""The Vitis AI front end: a compiled ``.xmodel``'s DPU subgraph, or the quantizer's ``*_int.xmodel`` folded as
vai_c_xir folds it, read by ``accel.compiler.xir`` and compiled with the DPU's int8 rules into ``.accm`` (cached as
ONNX models are: ``accel.compile_cache``), for the devices that load ``.accm`` and compute with those rules
(``emu:int8=dpu``). The model's tensors are the subgraph's, as VART's runner gives them on a board: xint8, NHWC as
stored, real = q * 2^-fix_point; ``extra_outputs`` names any other tensor the subgraph computes (or "all")."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from .. import compile_cache
from .._lazy_import import import_or_undo
from ..errors import InvalidArgumentError, ModelFormatError, UnsupportedError
from .front_end import FrontEnd, LoadNative, LoadRequest

__all__ = ["XMODEL"]

#: The int8 rules a compiled DPU model computes with (DeviceCapabilities.int8_rules).
RULES = "dpu"


def _claims(head: bytes, suffix: str) -> bool:
    return suffix == ".xmodel"


def _load(request: LoadRequest, load_native: LoadNative) -> Tuple[Any, int]:
    if request.int8_rules != RULES and not request.dequantized:
        raise UnsupportedError(f"{request.what} is a model compiled for a Vitis AI DPU, which computes int8 with the "
                               f"DPU's rules; this device computes with {request.int8_rules or 'none'!r}: open "
                               f"'emu:int8={RULES}' to run it as the DPU does")
    with import_or_undo():
        from ..compiler import xir
        from ..compiler.errors import ExtraOutputError

    try:
        graph, part = xir.dpu_part(xir.read(request.file_bytes()), request.subgraph)
        model = xir.to_qdq(graph, part, request.extra_outputs)
    except (ExtraOutputError, xir.UnknownSubgraphError) as e:
        raise InvalidArgumentError(f"cannot load {request.what}: {e}") from e
    except xir.UnsupportedXmodelError as e:
        raise UnsupportedError(f"cannot run {request.what} on the emulator: {e}") from e
    except xir.XmodelError as e:
        raise ModelFormatError(f"cannot read {request.what}: {e}") from e
    onnx_bytes = model.SerializeToString()
    accm, _, _ = compile_cache.compile_onnx(onnx_bytes, None, request.what, None, RULES,
                                            dequantized=request.dequantized, fold_limit=request.fold_limit)
    return load_native(accm), len(model.graph.output) - len(xir.boundary(graph, part)[1])


def _tensor_order(data: bytes, subgraph: Optional[str]) -> List[str]:
    with import_or_undo():
        from ..compiler import xir

    try:
        return xir.tensor_order(data, subgraph)
    except xir.XmodelError as e:
        raise ModelFormatError(f"cannot read the file: {e}") from e


def _describe(data: bytes) -> Dict[str, Any]:
    """The graph, each of the root's subgraphs (device, ops, and a DPU's target and fingerprint) and each DPU
    subgraph's input and output tensors (name, shape, type, fix point), as XIR gives them."""
    with import_or_undo():
        from ..compiler import xir

    try:
        graph = xir.read(data)
    except xir.XmodelError as e:
        raise ModelFormatError(f"cannot read the file: {e}") from e
    if xir.is_quantized(graph):
        try:
            folded, part, left = xir.fold(graph)
        except xir.XmodelError as e:
            return {"format": XMODEL.name, "graph": graph.name, "ops": len(graph.ops),
                    "kind": "the quantizer's (vai_q: float ops and fix ops)", "runs": f"no: {e}"}
        inputs, outputs = xir.boundary(folded, part)
        return {"format": XMODEL.name, "graph": graph.name, "ops": len(graph.ops),
                "kind": "the quantizer's (vai_q: float ops and fix ops), folded into the DPU's ops as vai_c_xir "
                        "folds it",
                "inputs": [_tensor(op.output) for op in inputs], "outputs": [_tensor(op.output) for op in outputs],
                "left to the CPU (not run)": [f"{n} ({graph.ops[n].type})" for n in left] or "none"}
    subgraphs: List[Dict[str, Any]] = []
    for s in graph.root.children:
        entry: Dict[str, Any] = {"name": s.name, "device": s.device or "(none)", "ops": len(s.ops())}
        if s.device == "DPU":
            entry["target"] = xir.attr(f"subgraph {s.name!r}", s.attrs, "dpu_name", str, "(not said)")
            fingerprint = s.attrs.get("dpu_fingerprint")
            if isinstance(fingerprint, int):
                entry["fingerprint"] = f"0x{fingerprint:016x}"
            inputs, outputs = xir.boundary(graph, s)
            entry["inputs"] = [_tensor(op.output) for op in inputs]
            entry["outputs"] = [_tensor(op.output) for op in outputs]
        subgraphs.append(entry)
    return {"format": XMODEL.name, "graph": graph.name, "ops": len(graph.ops), "kind": "compiled (vai_c_xir)",
            "subgraphs": subgraphs}


def _tensor(t: Any) -> str:
    fix = f" fix_point {t.fix_point}" if t.fix_point is not None else ""
    return f"{t.name} {list(t.shape)} {t.type_name}{fix}"


#: A compiled Vitis AI model, its DPU subgraph turned into .accm.
XMODEL = FrontEnd(name="Vitis AI .xmodel", suffixes=(".xmodel",), produces="accm", claims=_claims, load=_load,
                  options=("extra_outputs", "dequantized", "fold_limit"), describe=_describe, subgraphs=True,
                  tensor_order=_tensor_order, int8_rules=RULES)
