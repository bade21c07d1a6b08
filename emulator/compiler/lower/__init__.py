"""Lowering: walks the ONNX nodes in order, folds what is constant (folding.py) and lowers the rest to
runtime nodes (FORMAT.md ops), computing every output's static shape with the op's own rule.

Each op family is a module whose HANDLERS map ONNX op types to handlers `handler(ctx, node)` that emit
runtime nodes through the context (context.py); HANDLERS here is their union.
"""

from __future__ import annotations

from .. import folding
from ..errors import CompileError
from ..importer import DEFAULT_DOMAINS, Imported, check_schema
from ..ir import Graph, Value
from . import conv, data, elementwise, linalg, normalization, reshape, resize
from .context import Ctx, unsupported


FAMILIES = (linalg, elementwise, normalization, conv, resize, reshape, data)


def _union(families) -> dict:
    handlers: dict = {}
    for family in families:
        claimed = handlers.keys() & family.HANDLERS.keys()
        if claimed:  # a second handler for an op would silently replace the first
            raise RuntimeError(f"{family.__name__} lowers {sorted(claimed)}, already lowered elsewhere")
        handlers.update(family.HANDLERS)
    return handlers


HANDLERS = _union(FAMILIES)
SUPPORTED_OPS = frozenset(HANDLERS)


def lower(imp: Imported) -> Graph:
    ctx = Ctx(imp)
    g = imp.graph
    for node in imp.nodes:
        if node.domain not in DEFAULT_DOMAINS:
            raise unsupported(node)
        check_schema(node, imp.opset, lambda n: g.values[n].dtype if n in g.values else None)
        for i in node.inputs:
            if i:
                g.value(i)
        present = [i for i in node.inputs if i]
        results = None
        if node.op in folding.NONDETERMINISTIC_OPS:
            raise unsupported(node)
        if all(g.values[i].is_const for i in present):
            arrays = [g.values[i].const if i else None for i in node.inputs]
            results = folding.evaluate(node, arrays, imp.opset_imports)
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
        handler = HANDLERS.get(node.op)
        if handler is None:
            raise unsupported(node)
        handler(ctx, node)
        for o in node.outputs:
            if o and o not in g.values and o in imp.used:
                raise CompileError(f"{node.label}: output '{o}' is not supported")
    return g
