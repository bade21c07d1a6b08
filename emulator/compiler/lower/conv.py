"""Convolution and pooling: Conv, ConvTranspose, MaxPool, AveragePool, GlobalAveragePool and
GlobalMaxPool, 2-D, with 1-D lowered to 2-D with H = 1."""
from __future__ import annotations

from ..errors import CompileError
from ..ir import Value
from ..op_params import AvgPool, Conv, ConvInteger, ConvTranspose, MaxPool, QConv
from ..quant import QUANT_DTYPES
from .context import F32, unsupported
from .geometry import int_list, out_size, resolve_pads, transpose_out_size, transpose_pads
from .pool3d import lower_pool3d, wants_pool3d


_CONV_PARAMS = {"conv": Conv, "qconv": QConv, "convinteger": ConvInteger}


def _lift_1d(ctx, node, x: Value) -> str:
    n, c, w = x.shape
    return ctx.reshape_temp(x.name, (n, c, 1, w), node.name, f"{x.name}_2d")


def _window(kernel, strides, dil, begins, ends) -> dict:
    """The 2-D window parameters shared by conv, convtranspose and the pools, by name ([h, w] each)."""
    return dict(kernel_h=kernel[0], kernel_w=kernel[1], stride_h=strides[0], stride_w=strides[1],
                pad_top=begins[0], pad_left=begins[1], pad_bottom=ends[0], pad_right=ends[1],
                dilation_h=dil[0], dilation_w=dil[1])


def _finish_1d(ctx, node, y2: str, y: str):
    v = ctx.g.value(y2)
    n, c, _, w = v.shape
    ctx.copy_to(y2, y, (n, c, w), node.name)


def conv_operands(ctx, node, what: str):
    """(X, W, B or None, rank) of a Conv-like node: X 3-D or 4-D (`what` names the op's kind in the
    refusal), W a constant of X's rank, B an optional constant."""
    x = ctx.input(node, 0)
    w = ctx.const_input(node, 1, "weight W")
    if w is None:
        raise CompileError(f"{node.label}: input W is required")
    b = ctx.const_input(node, 2, "bias B")
    rank = len(x.shape)
    if rank not in (3, 4):
        raise unsupported(node, f"input rank {rank} (only 1-D and 2-D {what})")
    if w.ndim != rank:
        raise CompileError(f"{node.label}: weight shape {w.shape} does not match input rank {rank}")
    return x, w, b, rank


def kernel_strides_dilations(node, w, sp: int):
    """(kernel, strides, dilations) of a Conv-like node with `sp` spatial dims: the kernel is W's, and a
    kernel_shape attribute must match it."""
    kernel = [int(k) for k in w.shape[2:]]
    if node.attr("kernel_shape") is not None and [int(k) for k in node.attr("kernel_shape")] != kernel:
        raise CompileError(f"{node.label}: kernel_shape {list(node.attr('kernel_shape'))} does not "
                           f"match the weight shape {w.shape}")
    strides = int_list(node, "strides", [1] * sp, sp, minimum=1)
    dil = int_list(node, "dilations", [1] * sp, sp, minimum=1)
    return kernel, strides, dil


def lower_conv(ctx, node):
    """Conv (every opset): 1-D and 2-D float32 convolutions (input rank 3 or 4) with constant W and
    optional constant B, group, strides, dilations, kernel_shape (must match W), pads and auto_pad
    (NOTSET, VALID, SAME_UPPER, SAME_LOWER). 3-D and higher convolutions and weights computed at run
    time are not supported.
    """
    x, w, b, _ = conv_operands(ctx, node, "convolutions")
    emit_conv(ctx, node, "conv", x, w, node.inputs[1], node.inputs[2] if b is not None else None, b, x.dtype)


def emit_conv(ctx, node, op, x: Value, w, wname, bname, b, ydtype, wquant=None, yquant=None, extra=()):
    """The conv node (op "conv", "qconv" or "convinteger") of a Conv-like ONNX node: its geometry from the
    node's attributes, over input x, weights w (the constant named wname, quantized by wquant for qconv) and
    bias b (named bname, or None) or other inputs after W (`extra`, None for an absent one), into the node's
    output of dtype ydtype (quantized by yquant)."""
    rank = len(x.shape)
    sp = rank - 2
    group = int(node.attr("group", 1))
    kernel, strides, dil = kernel_strides_dilations(node, w, sp)
    begins, ends = resolve_pads(node, x.shape[2:], kernel, strides, dil)
    n, c = x.shape[:2]
    m = int(w.shape[0])
    if group < 1 or c != w.shape[1] * group or m % group:
        raise CompileError(f"{node.label}: input channels {c}, weight {w.shape} and group {group} "
                           f"do not agree")
    if b is not None and tuple(b.shape) != (m,):
        raise CompileError(f"{node.label}: bias shape {b.shape} is not ({m},)")
    if sp == 1:
        kernel, strides, dil = [1] + kernel, [1] + strides, [1] + dil
        begins, ends = [0] + begins, [0] + ends
        xin = _lift_1d(ctx, node, x)
        w = w.reshape(m, w.shape[1], 1, w.shape[2])
        wname = ctx.const(w, f"{wname}_2d")
    else:
        xin = x.name
    if wquant is not None:
        wname = ctx.quantized_const(wname, wquant)
    in_hw = ctx.g.value(xin).shape[2:]
    out_hw = [out_size(node, in_hw[i], kernel[i], strides[i], dil[i], begins[i], ends[i])
              for i in range(2)]
    inputs = [xin, wname] + ([bname] if bname is not None else []) + list(extra)
    params = _CONV_PARAMS[op](group=group, **_window(kernel, strides, dil, begins, ends))
    y = ctx.output(node)
    if sp == 1:
        y2 = ctx.temp(f"{y}_2d", ydtype, (n, m, *out_hw), quant=yquant)
        ctx.emit(op, inputs, [y2], node.name, params=params)
        _finish_1d(ctx, node, y2, y)
    else:
        ctx.define(y, ydtype, (n, m, *out_hw), quant=yquant)
        ctx.emit(op, inputs, [y], node.name, params=params)


def lower_pool(ctx, node):
    """MaxPool and AveragePool (every opset): 1-D, 2-D and 3-D float32 pooling (input rank 3 to 5) with
    kernel_shape, strides, pads, auto_pad (NOTSET, VALID, SAME_UPPER, SAME_LOWER), ceil_mode,
    dilations and count_include_pad (AveragePool); MaxPool also of int8 and uint8 (1-D and 2-D). Not supported:
    4-D and higher pooling, MaxPool's Indices output. 3-D pooling and AveragePool dilations go to
    pool3d.lower_pool3d.
    """
    x = ctx.input(node, 0)
    rank = len(x.shape)
    if wants_pool3d(ctx, node, rank):
        lower_pool3d(ctx, node)
        return
    if rank not in (3, 4):
        raise unsupported(node, f"input rank {rank} (1-D, 2-D and 3-D pooling)")
    sp = rank - 2
    if node.attr("kernel_shape") is None:
        raise CompileError(f"{node.label}: kernel_shape is required")
    kernel = int_list(node, "kernel_shape", None, sp, minimum=1)
    strides = int_list(node, "strides", [1] * sp, sp, minimum=1)
    dil = int_list(node, "dilations", [1] * sp, sp, minimum=1)
    ceil_mode = int(int(node.attr("ceil_mode", 0)) != 0)
    is_max = node.op == "MaxPool"
    if is_max:
        ctx.forbid_outputs_from(node, 1, "MaxPool indices")
        if int(node.attr("storage_order", 0)) not in (0, 1):
            raise unsupported(node, "storage_order")
    begins, ends = resolve_pads(node, x.shape[2:], kernel, strides, dil)
    _emit_pool(ctx, node, x, "maxpool" if is_max else "avgpool", kernel, strides, dil, begins, ends,
               ceil_mode, int(int(node.attr("count_include_pad", 0)) != 0))


def _emit_pool(ctx, node, x, op, kernel, strides, dil, begins, ends, ceil_mode, cip):
    # maxpool is the one pool the float32-only check at emit leaves alone: it also takes int8 and uint8.
    if op == "maxpool" and x.dtype != F32 and x.dtype not in QUANT_DTYPES:
        raise unsupported(node, f"dtype {x.dtype} of input '{x.name}' (float32, int8 or uint8 only)")
    sp = len(x.shape) - 2
    if sp == 1:
        kernel, strides, dil = [1] + kernel, [1] + strides, [1] + dil
        begins, ends = [0] + begins, [0] + ends
        xin = _lift_1d(ctx, node, x)
    else:
        xin = x.name
    in_hw = ctx.g.value(xin).shape[2:]
    out_hw = [out_size(node, in_hw[i], kernel[i], strides[i], dil[i], begins[i], ends[i],
                       bool(ceil_mode)) for i in range(2)]
    window = _window(kernel, strides, dil, begins, ends)
    ceil = 1 if ceil_mode else 0
    params = (AvgPool(**window, ceil_mode=ceil, count_include_pad=1 if cip else 0) if op == "avgpool"
              else MaxPool(**window, ceil_mode=ceil))
    n, c = x.shape[:2]
    y = ctx.output(node)
    if sp == 1:
        y2 = ctx.temp(f"{y}_2d", x.dtype, (n, c, *out_hw))
        ctx.emit(op, [xin], [y2], node.name, params=params)
        _finish_1d(ctx, node, y2, y)
    else:
        ctx.define(y, x.dtype, (n, c, *out_hw))
        ctx.emit(op, [xin], [y], node.name, params=params)


def lower_global_avgpool(ctx, node):
    """GlobalAveragePool (every opset): float32 input of rank >= 3, averaged over every dim after the
    second.
    """
    x = ctx.input(node, 0)
    if len(x.shape) < 3:
        raise CompileError(f"{node.label}: input rank {len(x.shape)} < 3")
    y = ctx.define(ctx.output(node), x.dtype, tuple(x.shape[:2]) + (1,) * (len(x.shape) - 2))
    ctx.emit("globalavgpool", [x.name], [y], node.name)


def lower_global_maxpool(ctx, node):
    """GlobalMaxPool (every opset): 1-D and 2-D float32 inputs (rank 3 or 4). Rank 5 and higher are
    not supported.
    """
    x = ctx.input(node, 0)
    if len(x.shape) not in (3, 4):
        raise unsupported(node, f"input rank {len(x.shape)} (only 1-D and 2-D pooling)")
    sp = len(x.shape) - 2
    kernel = list(x.shape[2:])
    _emit_pool(ctx, node, x, "maxpool", kernel, [1] * sp, [1] * sp, [0] * sp, [0] * sp, 0, 0)


def lower_convtranspose(ctx, node):
    """ConvTranspose, every opset, 1-D and 2-D, float32: group (incl. depthwise), strides, dilations, pads,
    auto_pad NOTSET / VALID / SAME_UPPER / SAME_LOWER, output_padding (less than its stride or dilation),
    output_shape (pads derived as the ONNX spec says; where they would be negative, as onnxruntime does),
    optional bias. W and B must be constants (after folding). Not supported: 3-D and higher, an
    output_shape that exceeds the unpadded output by the stride or more.

    Emits one convtranspose node (FORMAT.md op 16); 1-D is lowered to 2-D with H = 1."""
    x, w, b, rank = conv_operands(ctx, node, "transposed convolutions")
    sp = rank - 2
    n, c = x.shape[:2]
    group = int(node.attr("group", 1))
    if group < 1 or w.shape[0] != c or c % group:
        raise CompileError(f"{node.label}: input channels {c}, weight {w.shape} and group {group} "
                           f"do not agree (weight dim 0 must be the input channels, divisible by group)")
    m = int(w.shape[1]) * group
    if b is not None and tuple(b.shape) != (m,):
        raise CompileError(f"{node.label}: bias shape {b.shape} is not ({m},)")
    kernel, strides, dil = kernel_strides_dilations(node, w, sp)
    out_pads = int_list(node, "output_padding", [0] * sp, sp, minimum=0)
    for op, s, d in zip(out_pads, strides, dil):
        if op >= s and op >= d:
            raise CompileError(f"{node.label}: output_padding {out_pads} must be less than the stride "
                               f"{strides} or the dilation {dil}")
    output_shape = node.attr("output_shape")
    if output_shape is not None:
        output_shape = [int(v) for v in output_shape]
        if len(output_shape) != sp:
            raise CompileError(f"{node.label}: output_shape {output_shape} must have {sp} values")
    begins, ends, out_pads = transpose_pads(node, x.shape[2:], kernel, strides, dil, out_pads, output_shape)
    if sp == 1:
        kernel, strides, dil, out_pads = [1] + kernel, [1] + strides, [1] + dil, [0] + out_pads
        begins, ends = [0] + begins, [0] + ends
        xin = _lift_1d(ctx, node, x)
        wname = ctx.const(w.reshape(c, w.shape[1], 1, w.shape[2]), f"{node.inputs[1]}_2d")
    else:
        xin, wname = x.name, node.inputs[1]
    in_hw = ctx.g.value(xin).shape[2:]
    out_hw = [transpose_out_size(node, in_hw[i], kernel[i], strides[i], dil[i], begins[i], ends[i],
                                 out_pads[i]) for i in range(2)]
    inputs = [xin, wname] + ([node.inputs[2]] if b is not None else [])
    params = ConvTranspose(group=group, **_window(kernel, strides, dil, begins, ends), output_pad_h=out_pads[0],
                           output_pad_w=out_pads[1])
    y, shape = ctx.output(node), (n, m, *out_hw)
    out = ctx.temp(f"{y}_2d", x.dtype, shape) if sp == 1 else ctx.define(y, x.dtype, shape)
    ctx.emit("convtranspose", inputs, [out], node.name, params=params)
    if sp == 1:
        _finish_1d(ctx, node, out, y)


HANDLERS: dict = {
    "Conv": lower_conv, "ConvTranspose": lower_convtranspose, "MaxPool": lower_pool, "AveragePool": lower_pool,
    "GlobalAveragePool": lower_global_avgpool, "GlobalMaxPool": lower_global_maxpool,
}
