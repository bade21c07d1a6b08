"""float16 kept in float32 between ops computed in float32, as onnxruntime's CPU provider keeps it.

Lowering computes a float16 op in float32 between casts (lower/half.py, onnxruntime's InsertCastTransformer), so
two such ops in a row leave a float32 -> float16 -> float32 round trip between them. onnxruntime removes that
pair of casts (its RemoveDuplicateCastTransformer ranks float16 and float32 as one type group) and also runs in
float32 an op with a float16 kernel when every float16 value it reads comes from, and every one it writes goes to,
ops computed in float32 (its "isolated" nodes): a chain of float16 ops rounds once, where it leaves the chain. This
pass does the same on the runtime graph, for the data moves that take any dtype (MOVES); the rounding stays where
a float16 value is a graph output (there only: as in onnxruntime, its float32 readers still read it unrounded), a
graph input or constant, or read by anything else. Constants are not chains:
a float16 constant keeps its float16 value (converted exactly where a lifted move reads it), as onnxruntime folds
constants before it inserts casts."""

from __future__ import annotations

import numpy as np

from .ir import Graph

HALF, FLOAT = np.dtype(np.float16), np.dtype(np.float32)
# Runtime ops that move or select elements whatever their dtype: the same params serve float32.
MOVES = frozenset({"copy", "transpose", "concat", "slice", "gather", "expand", "where"})


def _is_cast(g: Graph, node, src, dst) -> bool:
    return node.op == "cast" and g.value(node.inputs[0]).dtype == src and g.value(node.outputs[0]).dtype == dst


def keep_float32(g: Graph) -> None:
    outputs, producers, consumers = set(g.outputs), g.producers(), g.consumers()

    def half_data(node):
        """The float16 tensors that a move reads and that are not constants."""
        return [i for i in node.inputs if i and g.value(i).dtype == HALF and not g.is_const(i)]

    # The greatest set of float16 tensors each made by a cast down or a lifted move and read only by casts up
    # (whose results are not graph outputs) or lifted moves: start from every candidate, drop what breaks a rule.
    # A cast down whose result is also a graph output stays for it; its readers in float32 still skip it.
    chain = set()
    for t, p in producers.items():
        if g.value(t).dtype != HALF:
            continue
        if _is_cast(g, p, FLOAT, HALF) or (p.op in MOVES and len(p.outputs) == 1 and t not in outputs):
            chain.add(t)
    changed = True
    while changed:
        changed = False
        for t in list(chain):
            p = producers[t]
            ok = p.op == "cast" or all(i in chain for i in half_data(p))
            for c in consumers.get(t, []):
                if _is_cast(g, c, HALF, FLOAT):
                    ok = ok and c.outputs[0] not in outputs
                else:
                    ok = ok and c.op in MOVES and c.outputs[0] in chain
            if not ok or not consumers.get(t):
                chain.discard(t)
                changed = True
    if not chain:
        return

    # Each chain tensor's float32 stand-in: a cast down's input, or the lifted move's output retyped.
    wide = {}
    for t in chain:
        p = producers[t]
        if p.op == "cast":
            wide[t] = p.inputs[0]
        else:
            g.value(t).dtype = FLOAT
            wide[t] = t
    removed = set()
    for t in chain:
        p = producers[t]
        if p.op in MOVES:
            p.inputs = [_widened(g, i, wide) for i in p.inputs]
        for c in consumers.get(t, []):
            if c.op == "cast":  # a cast up: its readers read the stand-in
                g.replace_uses(c.outputs[0], wide[t])
                removed.add(id(c))
    g.nodes = [n for n in g.nodes if id(n) not in removed]
    g.remove_dead()


def _widened(g: Graph, name, wide: dict):
    if not name or name in wide:
        return wide.get(name, name) if name else name
    v = g.value(name)
    if v.dtype == HALF and v.is_const:
        return g.add_const(v.const.astype(np.float32), f"{name}_float32")
    return name
