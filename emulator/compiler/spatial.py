"""Convolution and pooling geometry: explicit pads from auto_pad, output sizes (FORMAT.md rules)."""

from __future__ import annotations

from .errors import CompileError


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
