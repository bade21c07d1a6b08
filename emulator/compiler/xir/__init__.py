"""accel.compiler.xir: Vitis AI's compiled models (``.xmodel``, XIR's serialized graph) for the emulator.

    from accel.compiler import xir
    graph = xir.read(data)                        # the whole file: ops, tensors, subgraph tree (reader.py)
    model = xir.dpu_model(data, subgraph=None)    # one DPU subgraph as a power-of-two QDQ ONNX model (dpu_graph.py)
    data = xir.write(graph)                       # and back (writer.py)

The ONNX model compiles with ``int8="dpu"`` into what the DPU computes; its inputs and outputs are the subgraph's, as
VART's runner gives them (xint8, NHWC as stored, real = q * 2^-fix_point). schema.py declares the messages once for
the reader and the writer.
"""
from __future__ import annotations

from typing import List, Optional

from .dpu_graph import FAMILY, OPS, boundary, to_qdq
from .reader import Graph, Op, Subgraph, Tensor, UnsupportedXmodelError, XmodelError, attr, read
from .writer import write

__all__ = ["FAMILY", "OPS", "Graph", "Op", "Subgraph", "Tensor", "UnsupportedXmodelError", "XmodelError", "attr",
           "boundary", "dpu_model", "dpu_subgraph", "read", "write"]


def dpu_subgraph(graph: Graph, name: Optional[str] = None) -> Subgraph:
    """The DPU subgraph named `name`, or the only one; XmodelError listing them otherwise, UnsupportedXmodelError for
    a DPU of another family than the one whose arithmetic the emulator's dpu rules are (FAMILY)."""
    dpus: List[Subgraph] = graph.subgraphs("DPU")
    names = ", ".join(repr(s.name) for s in dpus)
    if not dpus:
        devices = ", ".join(f"{c.name!r} ({c.device or 'no device'})" for c in graph.root.children) or "none"
        raise XmodelError(f"graph {graph.name!r} has no DPU subgraph (its subgraphs: {devices}); is it compiled? "
                          f"vai_c_xir writes one, the quantizer's *_int.xmodel has none")
    if name is None:
        if len(dpus) > 1:
            raise XmodelError(f"graph {graph.name!r} has {len(dpus)} DPU subgraphs ({names}): name the one to run "
                              f"(Device.load's subgraph=), as VART makes one runner per subgraph")
        chosen = dpus[0]
    else:
        chosen = next((s for s in dpus if s.name == name), None)
        if chosen is None:
            raise XmodelError(f"graph {graph.name!r} has no DPU subgraph {name!r}; its DPU subgraphs: {names}")
    target = attr(f"subgraph {chosen.name!r}", chosen.attrs, "dpu_name", str, "")
    if not target.startswith(FAMILY):
        raise UnsupportedXmodelError(f"subgraph {chosen.name!r} is compiled for {target or 'an unnamed DPU'!r}; the "
                                     f"emulator computes as the {FAMILY} does (Zynq UltraScale+: KV260, ZCU102/104)")
    return chosen


def dpu_model(data: bytes, subgraph: Optional[str] = None):
    """The onnx.ModelProto of a .xmodel's DPU subgraph (dpu_subgraph) as the DPU computes it, for compile_model with
    int8="dpu"."""
    graph = read(data)
    return to_qdq(graph, dpu_subgraph(graph, subgraph))
