"""Rules of the layer ops: conv2d, linear, the 2-D pools and layer_norm (torch.nn.functional's arguments)."""
from __future__ import annotations

from typing import Any, List, Tuple

import numpy as np

from ..errors import InvalidArgumentError, ShapeError, UnsupportedError
from ..runtime.messages import shown
from .args import GEOMETRY, Shape, as_float, as_int, as_ints, as_pair, ndim_error, sized, weight
from .plan import Arg, Call, Const, Plan, Prev, const, node, plan


def _spatial(op: str, size: int, k: int, s: int, d: int, pad: Tuple[int, int], ceil_mode: bool, axis: str,
             shape: Shape) -> int:
    """One output size as torch computes it (with ceil_mode, a last window starting in the right padding
    is dropped); ShapeError when the (dilated) kernel does not fit."""
    span = size + pad[0] + pad[1] - d * (k - 1) - 1
    if span < 0:
        raise ShapeError(f"{op}: kernel size {k} (dilation {d}) does not fit input {axis} {size} with padding "
                         f"{pad[0]}+{pad[1]}; input has shape {shape}")
    if ceil_mode:
        out = -(-span // s) + 1
        if (out - 1) * s >= size + pad[0]:
            out -= 1
    else:
        out = span // s + 1
    return out


def _nchw(c: Call) -> Shape:
    x = c.shape()
    if len(x) != 4:
        raise ndim_error(c.op, "input", "4-D (N, C, H, W)", x)
    return x


def conv2d(c: Call) -> Plan:
    op, x = c.op, _nchw(c)
    w = weight(op, "weight", c.get("weight"))
    if w.ndim != 4:
        raise ndim_error(op, "weight", "4-D (out_channels, in_channels / groups, kH, kW)", w.shape)
    groups = as_int(op, "groups", c.get("groups"), minimum=1)
    o, cg, kh, kw = w.shape
    if x[1] != cg * groups:
        raise ShapeError(f"{op}: weight of shape {w.shape} needs input with {cg} * groups = {cg * groups} "
                         f"channels; input has shape {x}")
    if o % groups:
        raise ShapeError(f"{op}: weight of shape {w.shape} has {o} output channels, not a multiple of "
                         f"groups={groups}")
    if max(kh, kw) > GEOMETRY.value:
        raise InvalidArgumentError(f"{op}: weight of shape {w.shape} has a kernel past {GEOMETRY.text}")
    stride = as_pair(op, "stride", c.get("stride"), 1, GEOMETRY)
    dilation = as_pair(op, "dilation", c.get("dilation"), 1, GEOMETRY)
    padding = c.get("padding")
    pads: List[Tuple[int, int]]
    if isinstance(padding, str) and padding == "valid":
        pads = [(0, 0), (0, 0)]
    elif isinstance(padding, str) and padding == "same":
        if stride != (1, 1):
            raise InvalidArgumentError(f"{op}: padding='same' needs stride 1, got stride={stride}")
        # torch puts the odd unit of padding at the end.
        totals = [dilation[0] * (kh - 1), dilation[1] * (kw - 1)]
        pads = [(t // 2, t - t // 2) for t in totals]
    elif isinstance(padding, str):
        raise InvalidArgumentError(f"{op}: padding must be an int, a pair of ints, 'valid' or 'same', "
                                   f"not {shown(padding)}")
    else:
        ph, pw = as_pair(op, "padding", padding, 0, GEOMETRY)
        pads = [(ph, ph), (pw, pw)]
    oh = _spatial(op, x[2], kh, stride[0], dilation[0], pads[0], False, "height", x)
    ow = _spatial(op, x[3], kw, stride[1], dilation[1], pads[1], False, "width", x)
    b = c.get("bias")
    inputs: List[Any] = [Arg("input"), Const(w)]
    if b is not None:
        inputs.append(Const(weight(op, "bias", b, (o,))))
    out = sized(op, (x[0], o, oh, ow), f"input of shape {x} with padding {pads[0][0]}+{pads[0][1]}, "
                                       f"{pads[1][0]}+{pads[1][1]}")
    return plan(out,
                node("Conv", *inputs, kernel_shape=[kh, kw], strides=list(stride), dilations=list(dilation),
                     pads=[pads[0][0], pads[1][0], pads[0][1], pads[1][1]], group=groups))


def linear(c: Call) -> Plan:
    op, x = c.op, c.shape()
    w = weight(op, "weight", c.get("weight"))
    if w.ndim != 2:
        raise ndim_error(op, "weight", "2-D (out_features, in_features)", w.shape)
    if not x:
        raise ndim_error(op, "input", "at least 1-D", x)
    out_f, in_f = w.shape
    if x[-1] != in_f:
        raise ShapeError(f"{op}: weight of shape {w.shape} needs input with {in_f} features in its last dim; "
                         f"input has shape {x}")
    b = c.get("bias")
    bias = None if b is None else Const(weight(op, "bias", b, (out_f,)))
    shape = (*x[:-1], out_f)
    if len(x) == 2:
        return plan(shape, node("Gemm", Arg("input"), Const(w), bias, transB=1))
    mm = node("MatMul", Arg("input"), Const(np.ascontiguousarray(w.T)))
    # The compiler folds a constant bias added to a MatMul into one gemm.
    return plan(shape, mm) if bias is None else plan(shape, mm, node("Add", Prev(0), bias))


def _pool_args(c: Call, dilated: bool) -> Tuple[Shape, Tuple[int, int], Tuple[int, int], Tuple[int, int],
                                               Tuple[int, int], bool]:
    op, x = c.op, _nchw(c)
    k = as_pair(op, "kernel_size", c.get("kernel_size"), 1, GEOMETRY)
    stride_arg = c.get("stride")
    default = stride_arg is None or (isinstance(stride_arg, (list, tuple)) and not stride_arg)  # torch's []
    s = k if default else as_pair(op, "stride", stride_arg, 1, GEOMETRY)
    p = as_pair(op, "padding", c.get("padding"), 0, GEOMETRY)
    d = as_pair(op, "dilation", c.get("dilation"), 1, GEOMETRY) if dilated else (1, 1)
    for i in range(2):
        if p[i] > k[i] // 2:
            raise InvalidArgumentError(f"{op}: padding {p} must be at most half of kernel_size {k}")
    ceil = c.get("ceil_mode")
    if not isinstance(ceil, (bool, np.bool_)):
        raise TypeError(f"{op}: ceil_mode must be a bool, not {shown(ceil)}")
    return x, k, s, p, d, bool(ceil)


def _pool(c: Call, onnx_op: str, dilated: bool, **attrs: int) -> Plan:
    x, k, s, p, d, ceil = _pool_args(c, dilated)
    oh = _spatial(c.op, x[2], k[0], s[0], d[0], (p[0], p[0]), ceil, "height", x)
    ow = _spatial(c.op, x[3], k[1], s[1], d[1], (p[1], p[1]), ceil, "width", x)
    if dilated:
        attrs["dilations"] = list(d)  # type: ignore[assignment]
    return plan((x[0], x[1], oh, ow),
                node(onnx_op, Arg("input"), kernel_shape=list(k), strides=list(s), pads=[p[0], p[1], p[0], p[1]],
                     ceil_mode=int(ceil), **attrs))


def max_pool2d(c: Call) -> Plan:
    return _pool(c, "MaxPool", True)


def avg_pool2d(c: Call) -> Plan:
    cip = c.get("count_include_pad")
    if not isinstance(cip, (bool, np.bool_)):
        raise TypeError(f"{c.op}: count_include_pad must be a bool, not {shown(cip)}")
    return _pool(c, "AveragePool", False, count_include_pad=int(bool(cip)))


def adaptive_avg_pool2d(c: Call) -> Plan:
    x = _nchw(c)
    size = as_ints(c.op, "output_size", c.get("output_size"))
    if size not in ((1,), (1, 1)):
        raise UnsupportedError(f"{c.op}: output_size {shown(c.get('output_size'))} is not supported; only 1 (global "
                               f"average pooling to (N, C, 1, 1))")
    return plan((x[0], x[1], 1, 1), node("GlobalAveragePool", Arg("input")))


def layer_norm(c: Call) -> Plan:
    op, x = c.op, c.shape()
    norm = as_ints(op, "normalized_shape", c.get("normalized_shape"))
    if not norm or len(norm) > len(x) or x[len(x) - len(norm):] != norm:
        raise ShapeError(f"{op}: normalized_shape {norm} must be the last dims of input; input has shape {x}")
    eps = as_float(op, "eps", c.get("eps"), finite=True)
    if not np.float32(eps) > 0:  # as the model's float32 attribute: 1e-50 would be 0
        raise InvalidArgumentError(f"{op}: eps must be > 0 as a float32 (at least {float(np.float32(1e-45)):.2g}), "
                                   f"got {eps}")
    w, b = c.get("weight"), c.get("bias")
    scale = const(np.ones(norm)) if w is None else Const(weight(op, "weight", w, norm))
    bias = None if b is None else Const(weight(op, "bias", b, norm))
    return plan(x, node("LayerNormalization", Arg("input"), scale, bias, axis=-len(norm), epsilon=eps))
