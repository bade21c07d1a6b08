"""quantize_dynamic's linear layer in one runtime op: matmulinteger (a constant 2-D B) -> cast to float32 ->
mul by a multiplier of one value or one per column -> optionally add a bias of one value or one per column
becomes matmulintegerf, which computes the same float32 multiply and add on each sum while the product's
part is in cache (and on the core's threads), where the chain took three more passes over the output. The
values are the chain's bit for bit: float32(acc) is the cast's conversion, and the multiply and the add are
the same two roundings (no FMA)."""
from __future__ import annotations

import numpy as np

from .ir import Graph, Node


def _per_column(g: Graph, name: str, n: int, rank: int) -> bool:
    """Is tensor `name` float32 with one value or n along its last axis only (it broadcasts over the rows)?"""
    v = g.value(name)
    shape = tuple(v.shape)
    if v.dtype != np.float32 or len(shape) > rank:
        return False
    size = int(np.prod(shape, dtype=np.int64))
    return size == 1 or (size == n and shape[-1] == n)


def fuse_integer_epilogue(g: Graph) -> None:
    outputs = set(g.outputs)
    consumers = g.consumers()

    def only_user(t):
        users = consumers.get(t, [])
        return users[0] if len(users) == 1 and t not in outputs else None

    removed: set[int] = set()
    replace: dict[int, Node] = {}
    for mm in g.nodes:
        if mm.op != "matmulinteger" or mm.act or not g.is_const(mm.inputs[1]):
            continue
        b = g.value(mm.inputs[1])
        acc = mm.outputs[0]
        shape = tuple(g.value(acc).shape)
        if len(b.shape) > 2 or not shape:
            continue
        n = b.shape[-1] if len(b.shape) == 2 else 1
        cast = only_user(acc)
        if cast is None or cast.op != "cast" or cast.act or g.value(cast.outputs[0]).dtype != np.float32:
            continue
        accf = cast.outputs[0]
        mul = only_user(accf)
        if mul is None or mul.op != "mul" or mul.act or len(mul.inputs) != 2:
            continue
        scale = mul.inputs[1] if mul.inputs[0] == accf else mul.inputs[0]
        if scale == accf or tuple(g.value(mul.outputs[0]).shape) != shape or not _per_column(g, scale, n, len(shape)):
            continue
        chain, y, bias = [mm, cast, mul], mul.outputs[0], None
        add = only_user(y)
        if add is not None and add.op == "add" and not add.act and len(add.inputs) == 2:
            other = add.inputs[1] if add.inputs[0] == y else add.inputs[0]
            if other != y and tuple(g.value(add.outputs[0]).shape) == shape and _per_column(g, other, n, len(shape)):
                chain.append(add)
                y, bias = add.outputs[0], other
        zeros = list(mm.inputs[2:4]) + [None] * (4 - len(mm.inputs))
        fused = Node("matmulintegerf", [mm.inputs[0], mm.inputs[1], scale, zeros[0], zeros[1], bias], [y],
                     chain[-1].name)
        while fused.inputs and fused.inputs[-1] is None:
            fused.inputs.pop()
        replace[id(chain[-1])] = fused
        removed.update(id(c) for c in chain[:-1])
    if replace:
        g.nodes = [replace.get(id(n), n) for n in g.nodes if id(n) not in removed]
