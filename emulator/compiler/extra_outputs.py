"""Intermediate tensors a caller asks to see (compile_model's extra_outputs): the names checked against the model
and kept as graph outputs after the model's own, and what the quantized passes did to each.

Looking must not change what is looked at. The QDQ passes therefore fuse as if nothing were requested (a requested
tensor that only exists in float inside a fused int8 op is not computed by the int8 model: naming it is an error,
and "all" leaves it out); a DequantizeLinear output they fuse away is given by a DequantizeLinear of its own (exact:
the same integers times the same scale). The float passes keep every requested tensor (a Conv's output before its
Relu stays a tensor), which changes float results by rounding at most, as onnxruntime does when a tensor becomes
an output.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from .errors import ExtraOutputError
from .ir import Graph

ALL = "all"
_DQ, _Q = "DequantizeLinear", "QuantizeLinear"


@dataclass
class Request:
    names: list = field(default_factory=list)  # in the order given ("all": graph order)
    explicit: bool = True  # named by the caller: one that cannot be given is an error ("all": it is left out)
    producers: dict = field(default_factory=dict)  # name -> the imported node that made it
    readers: dict = field(default_factory=dict)  # name -> the imported nodes that read it


def resolve(request, nodes: list, live: list, graph: Graph) -> Request:
    """The requested names (None, "all" or a sequence of tensor names), checked against the topologically ordered
    imported `nodes` and `graph` (its inputs, constants and outputs): an ExtraOutputError for anything else. "all"
    is every tensor the `live` nodes (those the model's outputs need) make, but for dequantized copies."""
    if request is None:
        return Request()
    producers = {o: n for n in nodes for o in n.outputs if o}
    readers: dict = {}
    for n in nodes:
        for i in n.all_inputs:
            if i:
                readers.setdefault(i, []).append(n)
    own = set(graph.outputs)
    if isinstance(request, str):
        if request != ALL:
            raise ExtraOutputError(f"extra_outputs must be {ALL!r} or a list of tensor names, not {request!r}")
        names = [o for n in live for o in n.outputs if o and o not in own and not _dequantizes_at_run_time(n, graph)]
        return Request(list(dict.fromkeys(names)), False, producers, readers)
    if isinstance(request, (bytes, bytearray)) or not hasattr(request, "__iter__"):
        raise ExtraOutputError(f"extra_outputs must be {ALL!r} or a list of tensor names, not {type(request).__name__}")
    names = list(request)
    seen: set = set()
    for name in names:
        if not isinstance(name, str):
            raise ExtraOutputError(f"extra_outputs: {name!r} is not a tensor name (a str)")
        if name in seen:
            raise ExtraOutputError(f"extra_outputs names '{name}' twice")
        seen.add(name)
        if name in own:
            raise ExtraOutputError(f"extra_outputs: '{name}' is already an output of the model")
        if name in graph.inputs:
            raise ExtraOutputError(f"extra_outputs: '{name}' is an input of the model (its value is what you give)")
        if name not in producers and name not in graph.values:
            raise ExtraOutputError(f"extra_outputs: the model has no tensor '{name}'{_nearest(name, producers)}")
    return Request(names, True, producers, readers)


def _dequantizes_at_run_time(node, graph: Graph) -> bool:
    """Is `node` a DequantizeLinear of a tensor computed at run time? ("all" gives that tensor, quantized, instead.)"""
    if node.op != _DQ or not node.inputs:
        return False
    v = graph.values.get(node.inputs[0])
    return v is None or not v.is_const


def _nearest(name: str, candidates) -> str:
    close = difflib.get_close_matches(name, list(candidates), n=3, cutoff=0.6)
    if not close:
        return ""
    return "; the nearest names: " + ", ".join(f"'{c}'" for c in close)


def after_quantized_passes(req: Request, imp) -> None:
    """Each requested tensor the QDQ passes left uncomputed: a DequantizeLinear output made again by its own node,
    anything else an error (explicit) or left out ("all"). imp.graph.outputs follows."""
    if not req.names:
        return
    g = imp.graph
    produced = {o for n in imp.nodes for o in n.outputs if o} | set(g.inputs) | {n for n, v in g.values.items()
                                                                                 if v.is_const}
    kept = []
    for name in req.names:
        if name not in produced:
            p = req.producers.get(name)
            if p is not None and p.op == _DQ and all(not i or i in produced for i in p.inputs):
                imp.nodes.append(p)  # after whatever now makes its integers: still a topological order
                produced.add(name)
            elif req.explicit:
                raise ExtraOutputError(_not_computed(name, req))
            else:
                continue
        kept.append(name)
    own = [o for o in g.outputs if o not in g.extra_outputs]
    g.outputs = own + kept
    g.extra_outputs = frozenset(kept)
    imp.used.update(kept)


def _not_computed(name: str, req: Request) -> str:
    p = req.producers.get(name)
    what = f"node '{p.name}' ({p.op})" if p is not None else "its node"
    qs = [r.outputs[0] for r in req.readers.get(name, []) if r.op == _Q and r.outputs and r.outputs[0]]
    instead = f"; its int8 value is '{qs[0]}'" if qs else ""
    return (f"extra_outputs: '{name}' is not computed by the quantized model: {what} runs fused into one int8 op, "
            f"which never makes this float tensor{instead}")


def drop_constants(req: Request, g: Graph) -> None:
    """ "all" gives what the model computes at run time: the requested tensors folded to constants are left out."""
    if req.explicit or not req.names:
        return
    keep = {n for n in g.extra_outputs if not g.value(n).is_const}
    g.outputs = [o for o in g.outputs if o not in g.extra_outputs or o in keep]
    g.extra_outputs = frozenset(keep)
