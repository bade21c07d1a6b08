"""Convs with small output planes (7x7, 14x14, 5x3, 1x1): on AVX-512 the dense ones run on the channel-vectorized
GEMM (math/conv_small.cc) and the depthwise ones (up to 32x32 outputs) 16 channels to a vector
(math/conv_small_depthwise.cc).
Each shape is checked on every float path the CPU has, element by element against the portable path (im2col +
sgemm, the row kernel for depthwise) within a stated bound, and bit for bit across thread counts 1 to 3.

The bound: both paths sum the same K = Cg*kh*kw products (and the bias) in their own orders, so each is within
(K + 1) u sum(|w x|) + |b|) of the exact sum (recursive summation, u = 2^-24), and the two within twice that;
the activations after it (relu, clip, hardswish) grow a difference at most 1.5 times and add a rounding or two
of the output."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import accel
from accel import compiler

pytestmark = pytest.mark.emulator

U = 2.0 ** -24
THREADS = (1, 2, 3)

# n, c, m, group, h, w, k, stride, pad, activation
SHAPES = [
    # 1x1 convs on 7x7 and 14x14 planes (MobileNetV2's tail), M = 17, 64, 512
    (1, 160, 17, 1, 7, 7, 1, 1, 0, "Relu"),
    (1, 96, 64, 1, 7, 7, 1, 1, 0, ""),
    (1, 320, 512, 1, 7, 7, 1, 1, 0, "Clip"),
    (1, 64, 17, 1, 14, 14, 1, 1, 0, "HardSwish"),
    (1, 96, 64, 1, 14, 14, 1, 1, 0, "Clip"),
    (1, 64, 512, 1, 14, 14, 1, 1, 0, "Relu"),
    # 3x3 convs, stride 1 and 2 (ResNet's last stages)
    (1, 64, 512, 1, 7, 7, 3, 1, 1, "Relu"),
    (1, 32, 17, 1, 7, 7, 3, 1, 1, "HardSwish"),
    (1, 48, 64, 1, 14, 14, 3, 1, 1, "Clip"),
    (1, 64, 64, 1, 14, 14, 3, 2, 1, "Relu"),
    (1, 16, 512, 1, 14, 14, 3, 2, 1, ""),
    (1, 24, 64, 1, 16, 16, 3, 1, 1, "Relu"),
    # 1x1 stride 2 (ResNet's downsampling)
    (1, 128, 64, 1, 14, 14, 1, 2, 0, ""),
    # 5x3 planes
    (1, 40, 64, 1, 5, 3, 3, 1, 1, "HardSwish"),
    (1, 40, 17, 1, 5, 3, 1, 1, 0, "Relu"),
    (1, 24, 512, 1, 10, 6, 3, 2, 1, "Clip"),
    # 1x1 planes (squeeze-excite)
    (1, 384, 96, 1, 1, 1, 1, 1, 0, "Relu"),
    (1, 64, 512, 1, 1, 1, 1, 1, 0, "HardSwish"),
    (1, 17, 17, 1, 1, 1, 3, 1, 1, ""),
    # groups, and two images
    (1, 64, 64, 4, 7, 7, 3, 1, 1, "Relu"),
    (1, 32, 34, 2, 14, 14, 1, 1, 0, ""),
    (2, 96, 64, 1, 7, 7, 1, 1, 0, "Clip"),
    (2, 32, 48, 2, 5, 3, 3, 1, 1, "HardSwish"),
    # depthwise on small planes
    (1, 960, 960, 960, 7, 7, 3, 1, 1, "Clip"),
    (1, 576, 576, 576, 14, 14, 3, 2, 1, "Relu"),
    (1, 64, 64, 64, 14, 14, 3, 1, 1, "HardSwish"),
    (1, 17, 17, 17, 5, 3, 3, 1, 1, "Relu"),
    (1, 40, 40, 40, 14, 14, 5, 2, 2, "Clip"),
    (2, 33, 33, 33, 7, 7, 5, 1, 2, ""),
    (1, 16, 16, 16, 1, 1, 3, 1, 1, "Relu"),
    (1, 48, 48, 48, 28, 28, 3, 1, 1, "Clip"),
    (1, 24, 24, 24, 56, 56, 3, 2, 1, "Relu"),
]


def shape_id(s) -> str:
    n, c, m, group, h, w, k, st, _pad, act = s
    kind = "dw" if group == c == m else f"{c}to{m}" + (f"g{group}" if group > 1 else "")
    return f"{kind}_n{n}_{h}x{w}_k{k}_s{st}" + (f"_{act}" if act else "")


def make_model(s, rng):
    n, c, m, group, h, w, k, st, pad, act = s
    wt = (rng.standard_normal((m, c // group, k, k)) / np.sqrt(c // group * k * k)).astype(np.float32)
    b = rng.standard_normal(m).astype(np.float32)
    inits = [numpy_helper.from_array(wt, "w"), numpy_helper.from_array(b, "b")]
    out = "c" if act else "y"
    nodes = [helper.make_node("Conv", ["x", "w", "b"], [out], group=group, kernel_shape=[k, k], strides=[st, st],
                              pads=[pad] * 4)]
    if act == "Clip":
        inits += [numpy_helper.from_array(np.float32(0), "lo"), numpy_helper.from_array(np.float32(6), "hi")]
        nodes.append(helper.make_node("Clip", ["c", "lo", "hi"], ["y"]))
    elif act:
        nodes.append(helper.make_node(act, ["c"], ["y"]))
    graph = helper.make_graph(nodes, "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, c, h, w])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), wt, b


def abs_sums(x, wt, b, group, st, pad):
    """sum over K of |w x| + |b| per output element (float64), the scale of the summation error."""
    n, _c, h, w = x.shape
    m, cg, k, _ = wt.shape
    xp = np.pad(np.abs(x).astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - k) // st + 1, (w + 2 * pad - k) // st + 1
    mg = m // group
    out = np.empty((n, m, oh, ow))
    for g in range(group):
        xs = xp[:, g * cg:(g + 1) * cg]
        cols = np.stack([xs[:, :, i:i + st * oh:st, j:j + st * ow:st] for i in range(k) for j in range(k)], axis=2)
        cols = cols.reshape(n, cg * k * k, oh * ow)  # rows (channel, tap) as the weights' K order
        wg = np.abs(wt[g * mg:(g + 1) * mg]).astype(np.float64).reshape(mg, cg * k * k)
        out[:, g * mg:(g + 1) * mg] = np.einsum("mk,nkp->nmp", wg, cols).reshape(n, mg, oh, ow)
    return out + np.abs(b.astype(np.float64))[None, :, None, None]


def run(accm, x, cap, threads):
    import os

    old = os.environ.get("ACCEL_EMU_ISA")
    os.environ["ACCEL_EMU_ISA"] = cap
    try:
        with accel.open(f"emu:cores=1,threads={threads}") as d:
            name = d.info.name
            return np.array(d.load(accm).run(x)[0], copy=True), name.split("float: ", 1)[1].split(",", 1)[0]
    finally:
        if old is None:
            del os.environ["ACCEL_EMU_ISA"]
        else:
            os.environ["ACCEL_EMU_ISA"] = old


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_small_plane_conv_matches_the_portable_path_and_any_thread_count(shape):
    rng = np.random.default_rng(37)
    proto, wt, b = make_model(shape, rng)
    n, c, _m, group, h, w, k, st, pad, act = shape
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    accm = compiler.compile_model(proto)

    portable, fpath = run(accm, x, "portable", 1)
    assert fpath == "portable"
    K = c // group * k * k
    grow = 1.5 if act == "HardSwish" else 1.0
    bound = grow * 2 * (K + 1) * U * abs_sums(x, wt, b, group, st, pad) + 4 * U * np.abs(portable)
    # Every path this CPU has (ACCEL_EMU_ISA caps the path; the device's name says which one a load picks).
    seen = {"portable"}
    for cap in ("avx2", "avx512vnni"):
        fast, fpath = run(accm, x, cap, 1)
        if fpath in seen:
            continue
        seen.add(fpath)
        err = np.abs(fast.astype(np.float64) - portable)
        beyond = int(np.count_nonzero(err > bound))
        differ = int(np.count_nonzero(fast != portable))
        ratio = float(np.max(err / np.maximum(bound, 1e-30)))
        print(f"{shape_id(shape)} on {fpath}: {differ} of {fast.size} differ from the portable path, max abs "
              f"difference {float(err.max()):.3g}, at most {ratio:.3f} of the bound; {beyond} beyond it")
        assert beyond == 0, f"{fpath}: {beyond} of {fast.size} elements differ from the portable path beyond the bound"
        for t in THREADS[1:]:
            got, _ = run(accm, x, cap, t)
            diff = np.flatnonzero(got.view(np.uint32) != fast.view(np.uint32))
            print(f"  {fpath} threads={t}: {diff.size} elements differ from threads=1")
            assert diff.size == 0, f"{fpath} threads={t} differs from threads=1 at {diff.size} elements"
    print(f"paths: {', '.join(sorted(seen))}")
