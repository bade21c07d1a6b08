"""Convolution, pooling, transposed-convolution and resize geometry: explicit pads from auto_pad and
output_shape, output sizes and resize scales (FORMAT.md rules)."""

from __future__ import annotations

import numpy as np

from ..errors import CompileError


def int_list(node, name, default, n, *, minimum=None):
    """An ints attribute of length n (or the default), checked against a minimum."""
    v = node.attr(name)
    if v is None:
        v = list(default)
    v = [int(x) for x in v]
    if len(v) != n:
        raise CompileError(f"{node.label}: attribute {name}={v} must have {n} values")
    if minimum is not None and any(x < minimum for x in v):
        raise CompileError(f"{node.label}: attribute {name}={v} must be >= {minimum}")
    return v


def resolve_pads(node, in_sizes, kernel, strides, dilations):
    """(begins, ends) explicit pads for the spatial dims, from pads or auto_pad."""
    n = len(in_sizes)
    auto_pad = node.attr("auto_pad", "NOTSET") or "NOTSET"
    if auto_pad == "NOTSET":
        pads = int_list(node, "pads", [0] * (2 * n), 2 * n, minimum=0)
        return pads[:n], pads[n:]
    if auto_pad == "VALID":
        return [0] * n, [0] * n
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        begins, ends = [], []
        for size, k, s, d in zip(in_sizes, kernel, strides, dilations):
            out = -(-size // s)
            total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
            small, big = total // 2, total - total // 2
            if auto_pad == "SAME_UPPER":
                begins.append(small)
                ends.append(big)
            else:
                begins.append(big)
                ends.append(small)
        return begins, ends
    raise CompileError(f"{node.label}: auto_pad='{auto_pad}' is not supported "
                       f"(NOTSET, VALID, SAME_UPPER, SAME_LOWER are)")


def out_size(node, size, k, s, d, pb, pe, ceil_mode=False):
    """One output spatial size; with ceil_mode the last window must start inside the input or the
    left padding (as ONNX)."""
    num = size + pb + pe - d * (k - 1) - 1
    if num < 0:
        raise CompileError(f"{node.label}: the kernel (size {k}, dilation {d}) does not fit the "
                           f"input size {size} with pads {pb}+{pe}")
    if ceil_mode:
        out = -(-num // s) + 1
        if (out - 1) * s >= size + pb:
            out -= 1
    else:
        out = num // s + 1
    if out < 1:
        raise CompileError(f"{node.label}: output size {out} < 1")
    return out


def transpose_pads(node, in_sizes, kernel, strides, dilations, out_pads, output_shape=None):
    """(begins, ends, output paddings) of a ConvTranspose. Given output_shape (or auto_pad SAME_*, whose
    output is in * stride), the total padding is stride*(in-1) + output_padding + (k-1)*dilation + 1 - out,
    split as the ONNX spec says: the odd one at the end for SAME_UPPER, at the beginning otherwise. A
    negative total is taken as onnxruntime does: no pads, and an output_shape past the full output extends
    it at the end (more output padding, which must stay below the stride or the dilation); SAME_* then
    gives the full output. Else the pads attribute (auto_pad NOTSET) or none (VALID)."""
    n = len(in_sizes)
    auto_pad = node.attr("auto_pad", "NOTSET") or "NOTSET"
    if auto_pad not in ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"):
        raise CompileError(f"{node.label}: auto_pad='{auto_pad}' is not supported "
                           f"(NOTSET, VALID, SAME_UPPER, SAME_LOWER are)")
    explicit = output_shape is not None
    if not explicit and auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        output_shape = [size * s for size, s in zip(in_sizes, strides)]
    if output_shape is None:
        if auto_pad == "VALID":
            return [0] * n, [0] * n, list(out_pads)
        pads = int_list(node, "pads", [0] * (2 * n), 2 * n, minimum=0)
        return pads[:n], pads[n:], list(out_pads)
    begins, ends, new_out_pads = [], [], []
    for size, k, s, d, op, out in zip(in_sizes, kernel, strides, dilations, out_pads, output_shape):
        total = s * (size - 1) + op + (k - 1) * d + 1 - out
        if total < 0:
            extra = -total if explicit else 0
            if op + extra >= max(s, d):
                raise CompileError(f"{node.label}: output size {out} exceeds the full transposed-convolution "
                                   f"output {out + total} by {extra}, more than output padding can add "
                                   f"(it must stay below the stride {s} or the dilation {d})")
            begins.append(0)
            ends.append(0)
            new_out_pads.append(op + extra)
            continue
        small, big = total // 2, total - total // 2
        begins.append(small if auto_pad == "SAME_UPPER" else big)
        ends.append(big if auto_pad == "SAME_UPPER" else small)
        new_out_pads.append(op)
    return begins, ends, new_out_pads


def transpose_out_size(node, size, k, s, d, pb, pe, op):
    """One ConvTranspose output size: s*(size-1) + op + (k-1)*d + 1 - pb - pe (FORMAT.md op 16)."""
    out = s * (size - 1) + op + (k - 1) * d + 1 - pb - pe
    if out < 1:
        raise CompileError(f"{node.label}: output size {out} < 1 (input {size}, kernel {k}, stride {s}, "
                           f"dilation {d}, pads {pb}+{pe}, output_padding {op})")
    return out


def resize_from_scales(node, in_shape, scales):
    """(output shape, float32 scales) of Resize/Upsample given scales, as onnxruntime computes them:
    out = floor(scale * in) in float32. A size float32 cannot hold (inf, NaN) is a CompileError naming the node."""
    f32 = np.float32
    scales = [f32(s) for s in scales]
    with np.errstate(over="ignore", invalid="ignore"):
        sizes = [np.floor(s * f32(d)) for s, d in zip(scales, in_shape)]
    if not all(np.isfinite(sizes)):
        raise CompileError(f"{node.label}: scales {[float(s) for s in scales]} of input shape {tuple(in_shape)} give "
                           f"output sizes float32 cannot hold ({[float(v) for v in sizes]})")
    return [int(v) for v in sizes], scales


def resize_from_sizes(in_shape, sizes, axes, policy):
    """(output shape, float32 scales) of Resize given sizes for every axis: scale = out / in in float32;
    keep_aspect_ratio_policy not_larger / not_smaller uses the smallest / largest scale of `axes` on all of
    them, with out = round(scale * in) (halves away from zero), as the ONNX spec and onnxruntime do."""
    f32 = np.float32
    sizes = [int(s) for s in sizes]
    scales = [f32(o) / f32(d) for o, d in zip(sizes, in_shape)]
    if policy == "stretch":
        return sizes, scales
    pick = min if policy == "not_larger" else max
    s = pick(scales[a] for a in axes)
    out, new_scales = list(in_shape), [f32(1)] * len(in_shape)
    for a in axes:
        new_scales[a] = s
        out[a] = int(np.floor(float(s * f32(in_shape[a])) + 0.5))
    return out, new_scales
