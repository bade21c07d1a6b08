"""accel.compiler.xir: Vitis AI's compiled models (``.xmodel``, XIR's serialized graph) for the emulator.

    from accel.compiler import xir
    graph = xir.read(data)                        # the whole file: ops, tensors, subgraph tree (reader.py)
    model = xir.dpu_model(data, subgraph=None)    # one DPU subgraph as a power-of-two QDQ ONNX model (dpu_graph.py)
    model = xir.dpu_model(int_data)               # the quantizer's *_int.xmodel, folded as vai_c_xir would (fold.py)
    data = xir.write(graph)                       # and back (writer.py)

The ONNX model compiles with ``int8="dpu"`` into what the DPU computes; its inputs and outputs are the subgraph's, as
VART's runner gives them (xint8, NHWC as stored, real = q * 2^-fix_point). schema.py declares the messages once for
the reader and the writer.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

from .dpu_graph import FAMILY, OPS, ExtraTensors, boundary, extra_tensors, to_qdq
from .fold import fold, is_quantized
from .reader import Graph, Op, Subgraph, Tensor, UnsupportedXmodelError, XmodelError, attr, read
from .writer import write

__all__ = ["FAMILY", "OPS", "ExtraTensors", "Graph", "Op", "Subgraph", "Tensor", "UnsupportedXmodelError",
           "XmodelError", "attr", "boundary", "dpu_model", "dpu_part", "dpu_subgraph", "extra_tensors", "fold",
           "is_quantized", "read", "tensor_order", "to_qdq", "write", "UnknownSubgraphError"]


class UnknownSubgraphError(XmodelError):
    """A subgraph asked for by name that the file has not (the caller's to fix); the message lists those it has."""


def dpu_subgraph(graph: Graph, name: Optional[str] = None) -> Subgraph:
    """The DPU subgraph named `name` (UnknownSubgraphError listing them if there is none), or the only one
    (XmodelError if there is none, UnsupportedXmodelError if there are several: name one, as VART's users do);
    UnsupportedXmodelError for a DPU of another family than the one whose arithmetic the emulator's dpu rules are
    (FAMILY)."""
    dpus: List[Subgraph] = graph.subgraphs("DPU")
    names = ", ".join(repr(s.name) for s in dpus)
    if not dpus:
        devices = ", ".join(f"{c.name!r} ({c.device or 'no device'})" for c in graph.root.children) or "none"
        raise XmodelError(f"graph {graph.name!r} has no DPU subgraph (its subgraphs: {devices}); is it compiled? "
                          f"vai_c_xir writes one, the quantizer's *_int.xmodel has none")
    if name is None:
        if len(dpus) > 1:
            raise UnsupportedXmodelError(f"graph {graph.name!r} has {len(dpus)} DPU subgraphs ({names}): name the one "
                                         f"to run (Device.load's subgraph=), as VART makes one runner per subgraph")
        chosen = dpus[0]
    else:
        chosen = next((s for s in dpus if s.name == name), None)
        if chosen is None:
            raise UnknownSubgraphError(f"graph {graph.name!r} has no DPU subgraph {name!r}; its DPU subgraphs: {names}")
    target = attr(f"subgraph {chosen.name!r}", chosen.attrs, "dpu_name", str, "")
    if not target.startswith(FAMILY):
        raise UnsupportedXmodelError(f"subgraph {chosen.name!r} is compiled for {target or 'an unnamed DPU'!r}; the "
                                     f"emulator computes as the {FAMILY} does (Zynq UltraScale+: KV260, ZCU102/104)")
    return chosen


def dpu_part(graph: Graph, subgraph: Optional[str] = None) -> Tuple[Graph, Subgraph]:
    """(the compiled graph, the DPU subgraph to run): a compiled file's dpu_subgraph, or the quantizer's graph folded
    (fold.py; it has one part, so no subgraph is named)."""
    if not is_quantized(graph):
        return graph, dpu_subgraph(graph, subgraph)
    if subgraph is not None:
        raise UnknownSubgraphError(f"graph {graph.name!r} is the quantizer's (fix ops, no subgraphs): it has no "
                                   f"subgraph {subgraph!r} to choose")
    folded, part, _ = fold(graph)
    return folded, part


def dpu_model(data: bytes, subgraph: Optional[str] = None, extra: ExtraTensors = None):
    """The onnx.ModelProto of a .xmodel's DPU part (dpu_part) as the DPU computes it, for compile_model with
    int8="dpu"; the tensors `extra` names after its outputs (dpu_graph.extra_tensors)."""
    return to_qdq(*dpu_part(read(data), subgraph), extra)


def tensor_order(data: bytes, subgraph: Optional[str] = None) -> List[str]:
    """The tensors of a .xmodel's DPU part in graph order: its inputs, then every tensor its ops write (those
    dpu_model gives with extra="all", and its outputs)."""
    graph, part = dpu_part(read(data), subgraph)
    inputs, _ = boundary(graph, part)
    inside = set(part.ops())
    return [op.output.name for op in inputs] + [op.output.name for name, op in graph.ops.items()
                                                 if name in inside and op.type != "const-fix"]
