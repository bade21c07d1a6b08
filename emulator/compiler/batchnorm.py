"""BatchNormalization: folded into the preceding conv when that conv's output feeds only the BN
(W' = W * s, b' = b * s + t with s = gamma / sqrt(var + eps), t = beta - mean * s, which is
(b - mean) * s + beta), else lowered to mul + add with per-channel constants shaped [C, 1, ...]."""

from __future__ import annotations

import numpy as np

from .affine import scale_out_channels
from .ir import Graph, Node


def _same_channels(g: Graph, copy: Node) -> bool:
    """A reshape that keeps dims 0 and 1 keeps every element's channel."""
    a = g.value(copy.inputs[0]).shape
    b = g.value(copy.outputs[0]).shape
    return len(a) >= 2 and len(b) >= 2 and tuple(a[:2]) == tuple(b[:2])


def _foldable_conv(g: Graph, bn: Node, producers, consumers, outputs):
    """(conv, copies between it and the BN, nearest the BN first) or None."""
    chain = []
    cur = bn.inputs[0]
    while True:
        if cur in outputs or len(consumers.get(cur, [])) != 1:
            return None
        p = producers.get(cur)
        if p is None:
            return None
        if p.op == "copy" and _same_channels(g, p):
            chain.append(p)
            cur = p.inputs[0]
            continue
        if p.op in ("conv", "convtranspose") and p.act == 0:
            return p, chain
        return None


def fold_batchnorm(g: Graph) -> None:
    outputs = set(g.outputs)
    producers, consumers = g.producers(), g.consumers()
    replace: dict[int, list] = {}  # id(bn) -> the nodes that take its place
    for bn in [n for n in g.nodes if n.op == "batchnorm"]:
        s = g.value(bn.inputs[1]).const
        t = g.value(bn.inputs[2]).const
        found = _foldable_conv(g, bn, producers, consumers, outputs)
        if found is not None:
            conv, chain = found
            w = g.value(conv.inputs[1]).const
            b = g.value(conv.inputs[2]).const if len(conv.inputs) > 2 and conv.inputs[2] else None
            w2 = scale_out_channels(conv, w, s).astype(w.dtype)
            b2 = ((b if b is not None else np.zeros_like(s)) * s + t).astype(w.dtype)
            wname = g.add_const(w2, f"{conv.inputs[1]}_bnfold")
            bname = g.add_const(b2, f"{conv.name or conv.outputs[0]}_bias_bnfold")
            conv.inputs = [conv.inputs[0], wname, bname]
            last = chain[0] if chain else conv
            last.outputs = [bn.outputs[0]]
            producers[bn.outputs[0]] = last
            consumers.pop(bn.inputs[0], None)
            replace[id(bn)] = []
            continue
        x = g.value(bn.inputs[0])
        shape = (x.shape[1],) + (1,) * (len(x.shape) - 2)
        sname = g.add_const(s.reshape(shape), f"{bn.name}_mul")
        tname = g.add_const(t.reshape(shape), f"{bn.name}_add")
        tmp = g.add_value(f"{bn.outputs[0]}_scaled", x.dtype, x.shape)
        mul = Node("mul", [x.name, sname], [tmp], f"{bn.name}/mul")
        add = Node("add", [tmp, tname], [bn.outputs[0]], f"{bn.name}/add")
        replace[id(bn)] = [mul, add]
        producers[tmp], producers[bn.outputs[0]] = mul, add
        consumers[x.name] = [mul if n is bn else n for n in consumers.get(x.name, [])]
        consumers[tmp] = [add]
    g.nodes = [m for n in g.nodes for m in replace.get(id(n), [n])]
