"""Lowering: walks the ONNX nodes in order, folds what is constant (folding.py) and lowers the rest to
runtime nodes (FORMAT.md ops), computing every output's static shape with the op's own rule.

Each op family is a module whose HANDLERS map ONNX op types to handlers `handler(ctx, node)` that emit
runtime nodes through the context (context.py); HANDLERS here is their union.
"""

from __future__ import annotations

import collections

from .. import folding, qdq
from ..errors import CompileError
from ..importer import DEFAULT_DOMAINS, Imported, check_schema
from ..ir import Graph, Value
from ..op_params import ACTIVATIONS
from ..qdq_device import FUSED_ACTIVATION
from . import (col2im, control, conv, data, einsum, elementwise, functions, gridsample, groupnorm, half, index,
               linalg, logic, lp_norms, normalization, qinteger, qlinear, quantized, recurrent, reduce, reshape, resize,
               reverse, rewrites, roialign, scatter, spatial)
from .context import Ctx, unsupported

FAMILIES = (linalg, elementwise, reduce, normalization, conv, resize, reshape, data, quantized, qlinear, qinteger,
            logic, spatial, groupnorm, einsum, index, recurrent, scatter, reverse, col2im, gridsample, roialign,
            lp_norms)
# Ops that move int8 data without computing on it: their output keeps the input's quantization. Those QDQ
# fusion runs on the integers, and Split (its outputs each behind their own Q, which fusion leaves alone).
QUANT_KEEPING_OPS = qdq.DATA_MOVEMENT | {"Split"}


def _union(families) -> dict:
    handlers: dict = {}
    for family in families:
        claimed = handlers.keys() & family.HANDLERS.keys()
        if claimed:  # a second handler for an op would silently replace the first
            raise RuntimeError(f"{family.__name__} lowers {sorted(claimed)}, already lowered elsewhere")
        handlers.update(family.HANDLERS)
    return handlers


HANDLERS = _union(FAMILIES)
# The ops of other domains than ONNX's default one that a family lowers: (domain, op type).
DOMAIN_OPS = frozenset((d, op) for f in FAMILIES for d, ops in getattr(f, "DOMAIN_OPS", {}).items() for op in ops)
# The ops no handler lowers that are replaced by their ONNX function body (functions.py).
EXPANDED_OPS = functions.expanded_ops(HANDLERS)
# What lowering takes: the handlers' ops, the control flow it inlines where its path is known (control.py), the
# ops it expands or rewrites, Shape and Size (always computed at compile time: the shapes are static) and Constant.
SUPPORTED_OPS = (frozenset(HANDLERS) | control.INLINED | EXPANDED_OPS | frozenset(rewrites.REWRITES) | folding.SHAPE_OPS
                 | {"Constant"})


def lower(imp: Imported, fold_limit: int = folding.FOLD_LIMIT_BYTES, int8: str = "ort") -> Graph:
    """The runtime graph of imp; int8 names the integer rules the quantized ops are checked against
    (qdq_device.check_quant)."""
    ctx = Ctx(imp, int8)
    g = imp.graph
    queue = collections.deque(imp.nodes)
    while queue:
        node = queue.popleft()
        if node.domain == control.SELECT_DOMAIN:
            control.select(ctx, node)
            continue
        if node.op in control.INLINED and node.domain in DEFAULT_DOMAINS:
            queue.extendleft(reversed(control.inline(ctx, node)))
            continue
        if node.op in EXPANDED_OPS and node.domain in DEFAULT_DOMAINS:
            check_schema(node, imp.opset, lambda n: g.values[n].dtype if n in g.values else None)
            queue.extendleft(reversed(functions.body(ctx, node)))
            continue
        if node.domain not in DEFAULT_DOMAINS and (node.domain, node.op) not in DOMAIN_OPS:
            raise unsupported(node)
        check_schema(node, imp.opset, lambda n: g.values[n].dtype if n in g.values else None)
        for i in node.inputs:
            if i:
                g.value(i)
        present = [i for i in node.all_inputs if i]
        results = None
        if node.op in folding.NONDETERMINISTIC_OPS:
            raise unsupported(node)
        if all(g.value(i).is_const for i in present) and node.op not in quantized.SELF_FOLDING:
            arrays = [g.values[i].const if i else None for i in node.inputs]
            results = folding.evaluate(node, arrays, imp.opset_imports, fold_limit)
        elif node.op == "Shape":
            results = [folding.shape_of(node, g.values[node.inputs[0]].shape, imp.opset)]
        elif node.op == "Size":
            results = [folding.size_of(g.values[node.inputs[0]].shape)]
        if results is not None:
            for o, r in zip(node.outputs, results):
                if not o:
                    continue
                if r is None:
                    if o in imp.used:
                        raise CompileError(f"{node.label}: output '{o}' was not computed")
                    continue
                g.values[o] = Value(o, r.dtype, tuple(r.shape), r)
            continue
        if half.needs_float32(g, node):  # before the rewrites: theirs are float32 ops
            queue.extendleft(reversed(half.in_float32(ctx, node)))
            continue
        rewritten = (rewrites.REWRITES[node.op](ctx, node)
                     if node.op in rewrites.REWRITES and node.domain in DEFAULT_DOMAINS else None)
        if rewritten is not None:
            queue.extendleft(reversed(rewritten))
            continue
        handler = HANDLERS.get(node.op)
        if handler is None:
            raise unsupported(node)
        handler(ctx, node)
        if node.attr(FUSED_ACTIVATION) is not None:
            _put_fused_activation(g, node)
        if node.op in QUANT_KEEPING_OPS:
            _keep_quant(g, node)
        for o in node.outputs:
            if o and o not in g.values and o in imp.used:
                raise CompileError(f"{node.label}: output '{o}' is not supported")
    _quant_through_moves(g, imp)
    return g


def _put_fused_activation(g: Graph, node) -> None:
    """The activation qdq_device.py absorbed into `node`, on the node that computes its output (through the
    copies a 1-D lowering adds: an elementwise function commutes with them)."""
    producers = g.producers()
    p = producers.get(node.outputs[0])
    while p is not None and p.op == "copy":
        p = producers.get(p.inputs[0])
    if p is None or p.act != 0:
        raise CompileError(f"{node.label}: the fused activation has no node to go on")
    p.act = ACTIVATIONS[str(node.attr(FUSED_ACTIVATION))]
    p.alpha = float(node.attr(f"{FUSED_ACTIVATION}_alpha", 0.0))
    p.beta = float(node.attr(f"{FUSED_ACTIVATION}_beta", 0.0))


def _quant_through_moves(g: Graph, imp: Imported) -> None:
    """Integer tensors on either side of a move (QUANT_KEEPING_OPS: a Transpose, a Reshape, a MaxPool, which QDQ
    fusion runs on the integers once its DequantizeLinear and QuantizeLinear agree) read with one quantization: where
    one side has it and the other none (a graph input moved first, a chain of moves between two quantized ops),
    the other takes it, in both directions until nothing changes. A quantized op's input took its quantization as
    the op was lowered; a move lowered before that knew none."""
    moves = [n for n in imp.nodes if n.op in QUANT_KEEPING_OPS and n.inputs and n.inputs[0] and n.outputs]
    changed = True
    while changed:
        changed = False
        for node in moves:
            x = g.values.get(node.inputs[0])
            for o in node.outputs:
                y = g.values.get(o) if o else None
                if x is None or y is None or x.dtype != y.dtype or x.is_const or y.is_const:
                    continue
                if x.quant is None and y.quant is not None and y.quant.per_tensor:
                    x.quant, changed = y.quant, True
                elif y.quant is None and x.quant is not None and x.quant.per_tensor:
                    y.quant, changed = x.quant, True


def _keep_quant(g: Graph, node) -> None:
    q = g.values[node.inputs[0]].quant
    if q is None or not q.per_tensor:
        return
    for o in node.outputs:
        v = g.values.get(o) if o else None
        if v is not None and v.quant is None and v.dtype == g.values[node.inputs[0]].dtype and not v.is_const:
            v.quant = q
