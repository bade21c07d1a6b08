"""Ops lowered by rewriting them into other ONNX ops (the lowering loop queues the nodes each rewrite returns in
place of the node): Compress of a constant condition as a Gather of the indices it keeps."""

from __future__ import annotations

import numpy as np
from onnx import helper

from ..errors import CompileError
from ..importer import OnnxNode
from .context import normalize_axis


def _node(ctx, node, op, inputs, outputs=None, **attrs) -> OnnxNode:
    outputs = outputs or [ctx.g.names.new(f"{node.name}/{op.lower()}")]
    return OnnxNode(helper.make_node(op, inputs, outputs, name=f"{node.name}/{op}", **attrs), 0)


def compress(ctx, node: OnnxNode) -> list:
    """Compress (opset 9 on) of a constant condition: the slices of x along `axis` (of x flattened without one)
    where the condition is true, as a Gather of their indices; a condition shorter than the axis keeps none past
    its end. A condition computed at run time makes the output's length data, which a fixed graph cannot have."""
    x = ctx.input(node, 0)
    cond = ctx.const_input(node, 1, "condition")
    if cond is None:
        raise CompileError(f"{node.label}: condition is required")
    cond = np.asarray(cond).reshape(-1).astype(bool)
    axis = node.attr("axis")
    nodes = []
    source = x.name
    if axis is None:
        shape = ctx.g.add_const(np.array([-1], np.int64), f"{node.name}/flat")
        nodes.append(_node(ctx, node, "Reshape", [x.name, shape]))
        source, axis, dim = nodes[-1].outputs[0], 0, int(np.prod(x.shape))
    else:
        axis = normalize_axis(node, axis, len(x.shape))
        dim = x.shape[axis]
    if cond.size > dim:
        raise CompileError(f"{node.label}: the condition has {cond.size} elements, more than the {dim} along the axis")
    keep = np.nonzero(cond)[0].astype(np.int64)
    indices = ctx.g.add_const(keep, f"{node.name}/kept")
    nodes.append(_node(ctx, node, "Gather", [source, indices], [node.outputs[0]], axis=axis))
    return nodes


REWRITES = {"Compress": compress}
