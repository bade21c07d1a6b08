"""MaxPool and AveragePool of 3-D inputs, and dilated average pools of any rank (FORMAT.md op 83, pool3d), and
MaxPool with its Indices output (op 85, maxpoolidx): the forms the 2-D maxpool and avgpool ops do not take.
conv.lower_pool hands them here."""
from __future__ import annotations

import numpy as np

from ..errors import CompileError
from ..op_params import MaxPoolIdx, Pool3d
from .context import float_input, unsupported
from .geometry import int_list, out_size, resolve_pads


def _indices_used(ctx, node) -> bool:
    return node.op == "MaxPool" and len(node.outputs) > 1 and bool(node.outputs[1]) and node.outputs[1] in ctx.used


def wants_pool3d(ctx, node, rank) -> bool:
    """Whether conv.lower_pool hands this MaxPool or AveragePool here: a 5-D input, a MaxPool whose Indices
    are used, or an AveragePool with dilations (rank 3 or 4)."""
    if rank == 5 or (rank in (3, 4) and _indices_used(ctx, node)):
        return True
    dil = node.attr("dilations")
    return node.op == "AveragePool" and rank in (3, 4) and dil is not None and any(int(d) != 1 for d in dil)


def lower_pool3d(ctx, node):
    """1-D, 2-D and 3-D float32 pooling on the pool3d op, lifted to 3-D with axes of one element: kernel_shape,
    strides, pads, auto_pad, dilations, ceil_mode, count_include_pad (AveragePool). AveragePool counting pads
    divides as onnxruntime does (the window clipped to the end padding). MaxPool's Indices output (any
    storage_order) on the maxpoolidx op, as onnxruntime's loop computes both outputs (a window's first
    element, replaced by each later one greater: a NaN first stays, a later one never wins). Not supported:
    int8 and uint8 3-D pools."""
    x = float_input(ctx, node, 0)
    rank = len(x.shape)
    sp = rank - 2
    if node.attr("kernel_shape") is None:
        raise CompileError(f"{node.label}: kernel_shape is required")
    kernel = int_list(node, "kernel_shape", None, sp, minimum=1)
    strides = int_list(node, "strides", [1] * sp, sp, minimum=1)
    dil = int_list(node, "dilations", [1] * sp, sp, minimum=1)
    ceil_mode = int(node.attr("ceil_mode", 0)) != 0
    is_max = node.op == "MaxPool"
    with_indices = _indices_used(ctx, node)
    storage_order = int(node.attr("storage_order", 0))
    if is_max and storage_order not in (0, 1):
        raise unsupported(node, "storage_order")
    begins, ends = resolve_pads(node, x.shape[2:], kernel, strides, dil)
    out = [out_size(node, x.shape[2 + i], kernel[i], strides[i], dil[i], begins[i], ends[i], ceil_mode)
           for i in range(sp)]
    lift = [1] * (3 - sp)
    zeros = [0] * (3 - sp)
    mode = 0 if is_max else (2 if int(node.attr("count_include_pad", 0)) else 1)
    params = Pool3d(mode=mode, kernel=lift + kernel, strides=lift + strides, dilations=lift + dil,
                    pad_begin=zeros + begins, pad_end=zeros + ends)
    n, c = x.shape[:2]
    y = ctx.output(node)
    if with_indices:
        idx_params = MaxPoolIdx(rank=sp, storage_order=storage_order, kernel=lift + kernel, strides=lift + strides,
                                dilations=lift + dil, pad_begin=zeros + begins)
        xin = x.name if sp == 3 else ctx.reshape_temp(x.name, (n, c, *lift, *x.shape[2:]), node.name, f"{x.name}_3d")
        i = ctx.output(node, 1)
        y3 = ctx.temp(f"{y}_3d", x.dtype, (n, c, *lift, *out))
        i3 = ctx.temp(f"{i}_3d", np.int64, (n, c, *lift, *out))
        ctx.emit("maxpoolidx", [xin], [y3, i3], node.name, params=idx_params)
        ctx.copy_to(y3, y, (n, c, *out), node.name)
        ctx.copy_to(i3, i, (n, c, *out), node.name)
        return
    if sp == 3:
        ctx.define(y, x.dtype, (n, c, *out))
        ctx.emit("pool3d", [x.name], [y], node.name, params=params)
        return
    xin = ctx.reshape_temp(x.name, (n, c, *lift, *x.shape[2:]), node.name, f"{x.name}_3d")
    y3 = ctx.temp(f"{y}_3d", x.dtype, (n, c, *lift, *out))
    ctx.emit("pool3d", [xin], [y3], node.name, params=params)
    ctx.copy_to(y3, y, (n, c, *out), node.name)
