"""NumPy references of the device ops (Device.ops), written from torch.nn.functional's documented semantics
(torch itself is not needed). Computed in float64, returned as float32."""
from __future__ import annotations

import math

import numpy as np


def pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    w, b = weight, bias
    (sh, sw), (dh, dw) = pair(stride), pair(dilation)
    o, cg, kh, kw = w.shape
    if padding == "valid":
        pads = ((0, 0), (0, 0))
    elif padding == "same":
        th, tw = dh * (kh - 1), dw * (kw - 1)
        pads = ((th // 2, th - th // 2), (tw // 2, tw - tw // 2))
    else:
        ph, pw = pair(padding)
        pads = ((ph, ph), (pw, pw))
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), *pads))
    n, _, hh, ww = xp.shape
    oh, ow = (hh - dh * (kh - 1) - 1) // sh + 1, (ww - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, w[g * og:(g + 1) * og, :, i, j])
    if b is not None:
        out += b[None, :, None, None]
    return out.astype(np.float32)


def _out_size(size, k, s, p, d, ceil_mode):
    span = size + 2 * p - d * (k - 1) - 1
    if ceil_mode:
        out = -(-span // s) + 1
        if (out - 1) * s >= size + p:
            out -= 1
        return out
    return span // s + 1


def _pool(x, kernel_size, stride, padding, dilation, ceil_mode, reduce):
    (kh, kw) = pair(kernel_size)
    (sh, sw) = pair(stride) if stride is not None else (kh, kw)
    (ph, pw), (dh, dw) = pair(padding), pair(dilation)
    n, c, hh, ww = x.shape
    oh, ow = _out_size(hh, kh, sh, ph, dh, ceil_mode), _out_size(ww, kw, sw, pw, dw, ceil_mode)
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * sh - ph, j * sw - pw
            rows = [h0 + a * dh for a in range(kh)]
            cols = [w0 + a * dw for a in range(kw)]
            out[:, :, i, j] = reduce(x.astype(np.float64), rows, cols, (h0, w0), (kh, kw), (ph, pw))
    return out.astype(np.float32)


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    def reduce(xd, rows, cols, *_):
        rows = [r for r in rows if 0 <= r < xd.shape[2]]
        cols = [q for q in cols if 0 <= q < xd.shape[3]]
        return xd[:, :, rows][:, :, :, cols].max(axis=(2, 3))
    return _pool(x, kernel_size, stride, padding, dilation, ceil_mode, reduce)


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    def reduce(xd, rows, cols, start, k, pad):
        h, w = xd.shape[2:]
        inside_r = [r for r in rows if 0 <= r < h]
        inside_c = [q for q in cols if 0 <= q < w]
        total = xd[:, :, inside_r][:, :, :, inside_c].sum(axis=(2, 3))
        if count_include_pad:
            # torch: the window clipped to the padded input (a ceil_mode window past it counts less)
            he, we = min(start[0] + k[0], h + pad[0]), min(start[1] + k[1], w + pad[1])
            return total / ((he - start[0]) * (we - start[1]))
        return total / (len(inside_r) * len(inside_c))
    return _pool(x, kernel_size, stride, padding, 1, ceil_mode, reduce)


def adaptive_avg_pool2d(x, output_size):
    return x.astype(np.float64).mean(axis=(2, 3), keepdims=True).astype(np.float32)


def linear(x, weight, bias=None):
    w, b = weight, bias
    y = x.astype(np.float64) @ w.T.astype(np.float64)
    return (y if b is None else y + b).astype(np.float32)


def _erf(x):
    return np.vectorize(math.erf)(x)


def gelu(x, approximate="none"):
    x = x.astype(np.float64)
    if approximate == "tanh":
        return (0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))).astype(np.float32)
    return (0.5 * x * (1 + _erf(x / math.sqrt(2)))).astype(np.float32)


def sigmoid(x):
    return (1 / (1 + np.exp(-x.astype(np.float64)))).astype(np.float32)


UNARY = {
    "relu": lambda x: np.maximum(x, 0),
    "relu6": lambda x: np.clip(x, 0, 6),
    "sigmoid": sigmoid,
    "tanh": np.tanh,
    "silu": lambda x: x * sigmoid(x),
    "gelu": gelu,
    "leaky_relu": lambda x, negative_slope=0.01: np.where(x > 0, x, negative_slope * x),
    "hardswish": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "hardsigmoid": lambda x: np.clip(x + 3, 0, 6) / 6,
}

BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "matmul": np.matmul}


def softmax(x, dim):
    e = np.exp(x.astype(np.float64) - x.max(axis=dim, keepdims=True))
    return (e / e.sum(axis=dim, keepdims=True)).astype(np.float32)


def flatten(x, start_dim=0, end_dim=-1):
    if x.ndim == 0:
        return x.reshape(1)
    a, b = start_dim % x.ndim, end_dim % x.ndim
    return x.reshape(*x.shape[:a], -1, *x.shape[b + 1:])


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    xd = x.astype(np.float64)
    y = (xd - xd.mean(axis=axes, keepdims=True)) / np.sqrt(xd.var(axis=axes, keepdims=True) + eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y.astype(np.float32)


def _source(out_len, in_len, scale, mode, align_corners):
    """torch's source coordinate of each output index along one axis."""
    dst = np.arange(out_len, dtype=np.float64)
    if mode == "nearest":
        step = 1.0 / scale if scale is not None else in_len / out_len
        return np.minimum(np.floor(dst * step), in_len - 1).astype(int)
    if align_corners:
        return dst * ((in_len - 1) / (out_len - 1)) if out_len > 1 else np.zeros(out_len)
    step = 1.0 / scale if scale is not None else in_len / out_len
    return np.maximum((dst + 0.5) * step - 0.5, 0.0)


def interpolate(x, size=None, scale_factor=None, mode="nearest", align_corners=None):
    spatial = x.shape[2:]
    n = len(spatial)
    sizes = ([size] * n if isinstance(size, int) else list(size)) if size is not None else None
    scales = ([scale_factor] * n if not isinstance(scale_factor, (tuple, list)) else list(scale_factor)) \
        if scale_factor is not None else [None] * n
    if sizes is None:
        sizes = [math.floor(d * s) for d, s in zip(spatial, scales)]
    y = x.astype(np.float64)
    for a in range(n):
        axis = 2 + a
        src = _source(sizes[a], spatial[a], scales[a], mode, align_corners)
        if mode == "nearest":
            y = np.take(y, src, axis=axis)
            continue
        i0 = np.floor(src).astype(int)
        i1 = np.minimum(i0 + 1, spatial[a] - 1)
        lam = (src - i0).reshape([-1 if d == axis else 1 for d in range(y.ndim)])
        y = np.take(y, i0, axis=axis) * (1 - lam) + np.take(y, i1, axis=axis) * lam
    return y.astype(np.float32)
