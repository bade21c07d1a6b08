"""Graph clean-up and fusion: copy chains collapse, same-shape copies (Identity, Dropout, no-op
Reshape) disappear, and an activation fuses into the conv / gemm / matmul / elementwise node that
produces its input when that output has no other consumer and is not a graph output."""

from __future__ import annotations

from .ir import Graph

FUSABLE = frozenset({"conv", "gemm", "matmul", "add", "sub", "mul", "div"})


def _drop(g: Graph, removed: set) -> None:
    g.nodes = [n for n in g.nodes if id(n) not in removed]


def simplify_copies(g: Graph) -> None:
    outputs = set(g.outputs)
    producers, consumers = g.producers(), g.consumers()
    removed = set()

    # copy(copy(a)) -> copy(a) when the middle tensor has no other use.
    for c in g.nodes:
        if c.op != "copy":
            continue
        x = c.inputs[0]
        p = producers.get(x)
        if p is not None and p.op == "copy" and x not in outputs and len(consumers[x]) == 1:
            a = p.inputs[0]
            c.inputs = [a]
            removed.add(id(p))
            del producers[x]
            consumers[a] = [c if n is p else n for n in consumers[a]]

    # Same-shape copies vanish: their consumers read the source (or the source's producer writes
    # the graph output directly).
    for c in g.nodes:
        if c.op != "copy" or id(c) in removed:
            continue
        x, y = c.inputs[0], c.outputs[0]
        vx, vy = g.value(x), g.value(y)
        if tuple(vx.shape) != tuple(vy.shape) or vx.dtype != vy.dtype:
            continue
        users_x = [n for n in consumers.get(x, []) if n is not c]
        if y not in outputs:
            for n in consumers.get(y, []):
                n.inputs = [x if i == y else i for i in n.inputs]
            consumers[x] = users_x + consumers.pop(y, [])
            producers.pop(y, None)
            removed.add(id(c))
            continue
        p = producers.get(x)
        if p is not None and x not in outputs and x not in g.inputs:
            p.outputs = [y if o == x else o for o in p.outputs]
            for n in users_x:
                n.inputs = [y if i == x else i for i in n.inputs]
            consumers[y] = consumers.get(y, []) + users_x
            consumers.pop(x, None)
            producers.pop(x, None)
            producers[y] = p
            removed.add(id(c))
    _drop(g, removed)


def fuse_activations(g: Graph) -> None:
    outputs = set(g.outputs)
    producers, consumers = g.producers(), g.consumers()
    removed = set()
    for a in g.nodes:
        if a.op != "activation":
            continue
        chain = []
        cur = a.inputs[0]
        target = None
        while cur not in outputs and len(consumers.get(cur, [])) == 1:
            p = producers.get(cur)
            if p is None:
                break
            if p.op == "copy":  # elementwise functions commute with reshapes
                chain.append(p)
                cur = p.inputs[0]
                continue
            if p.op in FUSABLE and p.act == 0:
                target = p
            break
        if target is None:
            continue
        target.act, target.alpha, target.beta = a.act, a.alpha, a.beta
        last = chain[0] if chain else target
        last.outputs = [a.outputs[0]]
        producers[a.outputs[0]] = last
        producers.pop(a.inputs[0], None)
        consumers.pop(a.inputs[0], None)
        removed.add(id(a))
    _drop(g, removed)
