"""The devices' integer arithmetic in numpy (int64 throughout), written from the vendors' documented
behaviour and independently of the emulator's C kernels, which the tests hold against it bit for bit:

- the Vitis AI DPU (emu:int8=dpu): VART's reference ops conv2d-fix, eltwise-fix, pool-fix,
  hard-sigmoid-fix and float2fix over power-of-two (fix point) tensors;
- the Horizon BPU (emu:int8=bpu): integer multipliers of 15 significant bits and right shifts rounding half
  toward +inf, over float scales (docs/quantization.md states the derivation).

And small builders of symmetric QDQ models (QuantizeLinear -> DequantizeLinear pairs, DequantizeLinear'd
integer constants).
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

# ---- shared -------------------------------------------------------------------------------------------


def round_up(v, shift):
    """v / 2^shift rounded half toward +inf for shift > 0 (the shift flooring), v * 2^-shift otherwise."""
    v = np.asarray(v, dtype=np.int64)
    if shift <= 0:
        return v << -shift
    return (v + (1 << (shift - 1))) >> shift


def sat8(v):
    return np.clip(v, -128, 127).astype(np.int64)


def conv_sum(x, w, pad=0, stride=1, groups=1):
    """The exact int64 sums of a 2-D convolution, NCHW, symmetric padding."""
    n, _, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x.astype(np.int64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    mg = m // groups
    acc = np.zeros((n, m, oh, ow), np.int64)
    for g in range(groups):
        xs, ws = xp[:, g * cg:(g + 1) * cg], w[g * mg:(g + 1) * mg].astype(np.int64)
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
                acc[:, g * mg:(g + 1) * mg] += np.einsum("nchw,mc->nmhw", patch, ws[:, :, i, j])
    return acc


def window_sum(x, k, pad=0):
    """Sums over k x k windows, stride 1, the padding adding 0."""
    n, c, h, w = x.shape
    xp = np.pad(x.astype(np.int64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - k + 1, w + 2 * pad - k + 1
    s = np.zeros((n, c, oh, ow), np.int64)
    for i in range(k):
        for j in range(k):
            s += xp[:, :, i:i + oh, j:j + ow]
    return s


def maxpool(x, k):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // k, k, w // k, k).max(axis=(3, 5))


# ---- the DPU ------------------------------------------------------------------------------------------


def float2fix(x, fp):
    return sat8(np.floor(np.asarray(x, np.float64) * 2.0 ** fp + 0.5).astype(np.int64))


def conv_fix(x, w, b, fx, fw, fb, fy, act=None, pad=0, stride=1, groups=1):
    """conv2d-fix: exact sum, bias << (fx + fw - fb), the activation on the exact value, one rounding."""
    acc = conv_sum(x, w, pad, stride, groups) + (b.astype(np.int64) << (fx + fw - fb))[None, :, None, None]
    s = fx + fw - fy
    if act == "leaky":  # the DPU's slope 26/256 on the exact value
        return sat8(np.where(acc < 0, round_up(acc * 26, s + 8), round_up(acc, s)))
    y = sat8(round_up(acc, s))
    return np.maximum(y, 0) if act == "relu" else y


def add_fix(a, fa, b, fb, fy, relu=False):
    """eltwise-fix add: each input at the smaller fix point with 7 more bits, summed, one rounding."""
    fmin = min(fa, fb)

    def align(v, s):
        return v << s if s >= 0 else v >> -s

    y = sat8(round_up(align(a, 7 - (fa - fmin)) + align(b, 7 - (fb - fmin)), fmin + 7 - fy))
    return np.maximum(y, 0) if relu else y


AVG_TABLE = {3: (7, 6), 5: (10, 8), 6: (7, 8), 7: (21, 10), 14: (21, 12)}


def avg_coef(kh, kw):
    """The DPU's average-pool multiplier N / 2^s: its table, else the closest over s < log2(kh kw 128)."""
    if kh == kw and kh in AVG_TABLE:
        return AVG_TABLE[kh]
    rec = kh * kw
    best, err = (0, 0), 1.0
    for s in range(int(np.ceil(np.log2(rec * 128)))):
        n = np.round(2.0 ** s / rec)
        e = abs(n / 2.0 ** s - 1 / rec)
        if e < err:
            best, err = (int(n), s), e
    return best


def avgpool_fix(x, k, fx, fy, pad=0):
    """pool-fix average: the window's sum (padding adds 0), times N / 2^shift, to fy, one rounding."""
    mult, shift = avg_coef(k, k)
    return sat8(round_up(window_sum(x, k, pad) * mult, shift + fx - fy))


def global_avg_fix(x, fx, fy):
    mult, shift = avg_coef(x.shape[2], x.shape[3])
    return sat8(round_up(x.astype(np.int64).sum(axis=(2, 3), keepdims=True) * mult, shift + fx - fy))


def hsigmoid_fix(x, fx, fy):
    t = np.clip(x + (3 << fx), 0, 6 << fx)
    return sat8(round_up(t * 2731, 14 + fx - fy))


# ---- the BPU ------------------------------------------------------------------------------------------


def bpu_shift(r):
    """The shift n of r's 15-bit multiplier: rint(r * 2^n) in [2^14, 2^15) (n < 0 for r of 2^15 or more)."""
    _, e = np.frexp(r)
    n = int(15 - e)
    return n - 1 if np.rint(np.ldexp(r, n)) >= 2 ** 15 else n


def bpu_multiplier(r):
    """(mult, shift): r ~ mult / 2^shift with mult in [2^14, 2^15), rounded half to even, shift >= 0 (a
    multiplier of 2^15 or more saturates every nonzero sum, as 2^15 does)."""
    n = max(bpu_shift(r), 0)
    return int(min(np.rint(np.ldexp(r, n)), 2 ** 15)), n


def bpu_quantize(x, scale):
    return sat8(np.rint(np.asarray(x, np.float32) / np.float32(scale)).astype(np.int64))


def bpu_requant(acc, r, relu=False):
    """acc (int64) times each channel's multiplier (r per channel along axis 1, or one), one rounding shift."""
    rs = np.broadcast_to(np.asarray(r, np.float64).reshape(-1), (acc.shape[1],)) if acc.ndim > 1 else np.asarray(r)
    out = np.empty_like(acc)
    for c in range(acc.shape[1]):
        m, n = bpu_multiplier(float(rs[c]))
        out[:, c] = round_up(acc[:, c] * m, n)
    y = sat8(out)
    return np.maximum(y, 0) if relu else y


def bpu_add(a, sa, b, sb, sy, relu=False):
    """a * ma + b * mb, one rounding shift (left when negative): the larger multiplier 15 bits."""
    ra, rb = sa / sy, sb / sy
    n = bpu_shift(max(ra, rb))
    ma, mb = int(np.rint(np.ldexp(ra, n))), int(np.rint(np.ldexp(rb, n)))
    y = sat8(round_up(a * ma + b * mb, n))
    return np.maximum(y, 0) if relu else y


def bpu_avgpool(x, k, sx, sy, pad=0):
    m, n = bpu_multiplier(sx / (sy * k * k))
    return sat8(round_up(window_sum(x, k, pad) * m, n))


def bpu_global_avg(x, sx, sy):
    m, n = bpu_multiplier(sx / (sy * x.shape[2] * x.shape[3]))
    return sat8(round_up(x.astype(np.int64).sum(axis=(2, 3), keepdims=True) * m, n))


# ---- QDQ builders -------------------------------------------------------------------------------------


def qdq(nodes, inits, name, scale, out=None, dtype=TensorProto.INT8, zero=0):
    """name -> QuantizeLinear -> DequantizeLinear -> out (default name_dq); returns the output's name."""
    s, z = f"{name}_s", f"{name}_z"
    inits += [helper.make_tensor(s, TensorProto.FLOAT, [], [float(scale)]), helper.make_tensor(z, dtype, [], [zero])]
    nodes += [helper.make_node("QuantizeLinear", [name, s, z], [f"{name}_q"]),
              helper.make_node("DequantizeLinear", [f"{name}_q", s, z], [out or f"{name}_dq"])]
    return out or f"{name}_dq"


def const_dq(nodes, inits, name, values, scale, dtype=TensorProto.INT8, axis=None):
    """An integer constant DequantizeLinear'd as `name`: one scale, or one per channel along axis."""
    s, z = f"{name}_s", f"{name}_z"
    scale = np.asarray(scale, np.float32).reshape(-1)
    dims = [] if scale.size == 1 else [scale.size]
    inits += [helper.make_tensor(f"{name}_i", dtype, values.shape, values.reshape(-1).tolist()),
              helper.make_tensor(s, TensorProto.FLOAT, dims, scale.tolist()),
              helper.make_tensor(z, dtype, dims, [0] * scale.size)]
    attrs = {} if axis is None else {"axis": axis}
    nodes.append(helper.make_node("DequantizeLinear", [f"{name}_i", s, z], [name], **attrs))
    return name


def model_of(nodes, inits, inputs, outputs, opset=13):
    """A model of float inputs and outputs {name: shape}."""
    graph = helper.make_graph(
        nodes, "m", [helper.make_tensor_value_info(k, TensorProto.FLOAT, v) for k, v in inputs.items()],
        [helper.make_tensor_value_info(k, TensorProto.FLOAT, v) for k, v in outputs.items()], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
