"""ConvTranspose, Resize and Upsample on the emulator against onnxruntime.

Each case builds a one-node ONNX model, compiles it with accel.compiler, runs it on the emulator and
compares with onnxruntime (one thread) on a random input with a fixed seed. Nearest resize must match
exactly (it copies pixels); the others within float rounding.
"""
from __future__ import annotations

import itertools
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import accel
from accel import compiler
from accel.compiler import CompileError, accm

F = TensorProto.FLOAT


def make_model(node, x_shape, inits=None, opset=17, extra_inputs=()):
    inits = inits or {}
    g = helper.make_graph(
        [node], "spatial",
        [helper.make_tensor_value_info("x", F, list(x_shape))]
        + [helper.make_tensor_value_info(n, dt, list(s)) for n, dt, s in extra_inputs],
        [helper.make_tensor_value_info("y", F, None)],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def ort_result(m, x):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    s = ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return s.run(None, {"x": x})[0]


def emu_result(dev, m, x):
    # Compiled here rather than by dev.load(onnx) so the test leaves nothing in the compile cache.
    model = dev.load(compiler.compile_model(m))
    return model.run(x)[0]


def check(dev, m, x_shape, seed=0, exact=False, tol=1e-4):
    x = np.random.default_rng(seed).standard_normal(x_shape).astype(np.float32)
    want = ort_result(m, x)
    got = emu_result(dev, m, x)
    assert got.shape == want.shape
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    return got


def rnd(shape, seed):
    return (np.random.default_rng(seed).standard_normal(shape) * 0.5).astype(np.float32)


def ops_of(m):
    return [accm.OP_NAMES[n["op"]] for n in accm.read(compiler.compile_model(m))["nodes"]]


# ---------------------------------------------------------------------------------------------------
# ConvTranspose
# ---------------------------------------------------------------------------------------------------

def convtranspose(x_shape, m_per_group, kernel, bias=True, seed=0, opset=17, **attrs):
    c = x_shape[1]
    group = attrs.get("group", 1)
    w = rnd((c, m_per_group, *kernel), seed + 1)
    inits = {"w": w}
    inputs = ["x", "w"]
    if bias:
        inits["b"] = rnd((m_per_group * group,), seed + 2)
        inputs.append("b")
    return make_model(helper.make_node("ConvTranspose", inputs, ["y"], **attrs), x_shape, inits, opset)


CT_CASES = {
    # name: (x shape, output channels per group, kernel, attributes)
    "s1_k3": ((1, 3, 6, 5), 4, (3, 3), {}),
    "s2_k3_pads_outpad": ((1, 4, 5, 6), 3, (3, 3), dict(strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1])),
    "s3_k3_asym_pads": ((1, 2, 4, 5), 3, (3, 3), dict(strides=[3, 3], pads=[0, 1, 2, 1])),
    "s3_k2_outpad2": ((1, 2, 4, 4), 2, (2, 2), dict(strides=[3, 3], output_padding=[2, 1])),
    "s2_k2_cover": ((1, 5, 7, 6), 4, (2, 2), dict(strides=[2, 2])),
    "s2_k2_cover_pads": ((1, 3, 5, 5), 2, (2, 2), dict(strides=[2, 2], pads=[1, 0, 1, 1], output_padding=[1, 0])),
    "s2_k2_outpad_past_pad": ((1, 3, 4, 4), 2, (2, 2), dict(strides=[2, 2], output_padding=[1, 1])),
    "s2_k4_p1": ((2, 3, 5, 4), 2, (4, 4), dict(strides=[2, 2], pads=[1, 1, 1, 1])),
    "dil2": ((1, 3, 5, 5), 2, (3, 3), dict(dilations=[2, 2])),
    "dil2_s2_outpad": ((1, 2, 4, 5), 3, (3, 2), dict(dilations=[2, 3], strides=[2, 1], output_padding=[1, 0])),
    "rect_kernel_strides": ((1, 3, 4, 6), 2, (3, 2), dict(strides=[2, 1], pads=[1, 0, 0, 1])),
    "group2": ((1, 4, 5, 5), 3, (3, 3), dict(group=2, strides=[2, 2], pads=[1, 1, 0, 0])),
    "group3_cover": ((1, 6, 4, 4), 2, (2, 2), dict(group=3, strides=[2, 2])),
    "depthwise_s2": ((1, 4, 5, 6), 1, (3, 3), dict(group=4, strides=[2, 2], pads=[1, 1, 1, 1])),
    "depthwise_cover": ((2, 3, 4, 4), 1, (2, 2), dict(group=3, strides=[2, 2])),
    "channel_multiplier": ((1, 3, 4, 5), 2, (3, 3), dict(group=3, dilations=[1, 2], pads=[0, 1, 1, 0])),
    "pointwise": ((2, 5, 4, 3), 6, (1, 1), {}),
    "k1_s2": ((1, 3, 4, 4), 2, (1, 1), dict(strides=[2, 2])),
    "pads_eat_border": ((1, 2, 3, 3), 2, (3, 3), dict(pads=[2, 2, 2, 1])),
    "tiled_big": ((1, 8, 40, 50), 16, (3, 3), dict(strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1])),
    "tiled_cover": ((1, 8, 150, 140), 6, (2, 2), dict(strides=[2, 2])),
}


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("name", sorted(CT_CASES))
def test_convtranspose(dev, name, bias):
    x_shape, mg, kernel, attrs = CT_CASES[name]
    check(dev, convtranspose(x_shape, mg, kernel, bias=bias, **attrs), x_shape)


def test_convtranspose_output_padding_below_dilation(dev):
    """The spec lets output_padding reach the dilation when that exceeds the stride; onnxruntime refuses
    it. Output padding only extends the output at the end: the reference is onnxruntime's output with the
    end pads dropped (which keeps the last computed column), plus bias-only rows past the last patch."""
    x_shape = (1, 3, 4, 5)
    padded = convtranspose(x_shape, 2, (3, 3), dilations=[3, 2], pads=[1, 0, 0, 1], output_padding=[2, 1])
    unpadded_end = convtranspose(x_shape, 2, (3, 3), dilations=[3, 2], pads=[1, 0, 0, 0])
    x = np.random.default_rng(0).standard_normal(x_shape).astype(np.float32)
    want = ort_result(unpadded_end, x)  # OH 9, OW 9
    bias = numpy_helper.to_array(padded.graph.initializer[1]).reshape(1, -1, 1, 1)
    want = np.concatenate([want, np.broadcast_to(bias, (1, 2, 2, want.shape[3]))], axis=2)
    got = emu_result(dev, padded, x)
    assert got.shape == (1, 2, 11, 9)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER", "VALID"])
@pytest.mark.parametrize("stride,k", [(2, 3), (2, 4), (3, 3), (1, 2), (3, 1), (4, 2)])
def test_convtranspose_auto_pad(dev, auto_pad, stride, k):
    """With a kernel shorter than the stride, SAME would need negative pads: onnxruntime then gives the
    full output (no pads), and so does the compiler."""
    m = convtranspose((1, 3, 5, 4), 2, (k, k), strides=[stride, stride], auto_pad=auto_pad)
    y = check(dev, m, (1, 3, 5, 4))
    if auto_pad != "VALID" and k >= stride:
        assert y.shape == (1, 2, 5 * stride, 4 * stride)


@pytest.mark.parametrize("auto_pad", ["NOTSET", "SAME_UPPER", "SAME_LOWER"])
@pytest.mark.parametrize("output_shape", [[10, 8], [9, 7], [7, 6], [8, 9]])
def test_convtranspose_output_shape(dev, auto_pad, output_shape):
    m = convtranspose((1, 3, 5, 4), 2, (3, 3), strides=[2, 2], auto_pad=auto_pad, output_shape=output_shape)
    y = check(dev, m, (1, 3, 5, 4))
    assert y.shape[2:] == tuple(output_shape)


@pytest.mark.parametrize("auto_pad", ["NOTSET", "SAME_UPPER"])
def test_convtranspose_output_shape_past_the_full_output(dev, auto_pad):
    """onnxruntime extends the output at the end (bias only there), as more output padding would."""
    m = convtranspose((1, 3, 5, 4), 2, (1, 1), strides=[3, 3], auto_pad=auto_pad, output_shape=[15, 12])
    assert check(dev, m, (1, 3, 5, 4)).shape == (1, 2, 15, 12)


def test_convtranspose_output_shape_overrides_pads(dev):
    m = convtranspose((1, 2, 4, 4), 2, (3, 3), strides=[2, 2], pads=[0, 0, 2, 2], output_shape=[7, 8],
                      output_padding=[1, 0])
    assert check(dev, m, (1, 2, 4, 4)).shape == (1, 2, 7, 8)


@pytest.mark.parametrize("attrs", [
    dict(strides=[2], pads=[1, 0], output_padding=[1]),
    dict(strides=[3], dilations=[2]),
    dict(group=2, strides=[2], output_shape=[13]),
    dict(strides=[2], auto_pad="SAME_LOWER"),
], ids=["pads_outpad", "dilation", "group_output_shape", "same_lower"])
def test_convtranspose_1d(dev, attrs):
    m = convtranspose((2, 4, 7), 3, (3,), **attrs)
    check(dev, m, (2, 4, 7))


@pytest.mark.parametrize("opset", [1, 9, 11, 22])
def test_convtranspose_opsets(dev, opset):
    m = convtranspose((1, 3, 4, 4), 2, (3, 3), opset=opset, strides=[2, 2], pads=[1, 1, 1, 1])
    check(dev, m, (1, 3, 4, 4))


@pytest.mark.parametrize("case", ["s2_k2_cover", "s2_k4_p1", "depthwise_s2", "pointwise"])
@pytest.mark.parametrize("act", ["Relu", "Sigmoid", "LeakyRelu"])
@pytest.mark.parametrize("fused", [False, True], ids=["separate", "fused"])
def test_convtranspose_then_activation(dev, monkeypatch, case, act, fused):
    """An activation after ConvTranspose, as its own node and fused into the convtranspose node (what
    the compiler does once fusion.py lists convtranspose as fusable)."""
    from accel.compiler import fusion

    fusable = fusion.FUSABLE | {"convtranspose"} if fused else fusion.FUSABLE - {"convtranspose"}
    monkeypatch.setattr(fusion, "FUSABLE", fusable)
    x_shape, mg, kernel, attrs = CT_CASES[case]
    c, group = x_shape[1], attrs.get("group", 1)
    g = helper.make_graph(
        [helper.make_node("ConvTranspose", ["x", "w", "b"], ["t"], **attrs), helper.make_node(act, ["t"], ["y"])],
        "ct_act", [helper.make_tensor_value_info("x", F, list(x_shape))], [helper.make_tensor_value_info("y", F, None)],
        [numpy_helper.from_array(rnd((c, mg, *kernel), 1), "w"), numpy_helper.from_array(rnd((mg * group,), 2), "b")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    assert ops_of(m) == (["convtranspose"] if fused else ["convtranspose", "activation"])
    check(dev, m, x_shape)


@pytest.mark.parametrize("x_shape,kernel,attrs", [
    ((1, 4, 5, 6), (3, 3), dict(group=2, strides=[2, 2], pads=[1, 1, 0, 0])),
    ((1, 4, 6), (2,), dict(group=2, strides=[2])),
], ids=["2d_group2", "1d_group2"])
def test_convtranspose_per_channel_tail(dev, x_shape, kernel, attrs):
    """Per-channel mul, add and BatchNormalization after a grouped ConvTranspose (what the compiler may fold
    into its weight and bias), then Relu."""
    c, mg, group = x_shape[1], 3, attrs["group"]
    m_out = mg * group
    sp = len(kernel)
    r = np.random.default_rng(5)
    chan = (1, m_out) + (1,) * sp
    inits = {"w": rnd((c, mg, *kernel), 1), "s": (r.random(chan) + 0.5).astype(np.float32), "t": rnd(chan, 2),
             "gamma": (r.random(m_out) + 0.5).astype(np.float32), "beta": rnd((m_out,), 3),
             "mean": rnd((m_out,), 4), "var": (r.random(m_out) + 0.5).astype(np.float32)}
    nodes = [helper.make_node("ConvTranspose", ["x", "w"], ["a"], **attrs),
             helper.make_node("Mul", ["a", "s"], ["b"]), helper.make_node("Add", ["b", "t"], ["c"]),
             helper.make_node("BatchNormalization", ["c", "gamma", "beta", "mean", "var"], ["d"]),
             helper.make_node("Relu", ["d"], ["y"])]
    g = helper.make_graph(nodes, "tail", [helper.make_tensor_value_info("x", F, list(x_shape))],
                          [helper.make_tensor_value_info("y", F, None)],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    check(dev, m, x_shape)


def test_convtranspose_compile_errors():
    w = rnd((2, 2, 3, 3), 0)
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="ct", strides=[2, 2])
    # 3-D transposed convolution
    m = make_model(helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="ct3"), (1, 2, 3, 3, 3),
                   {"w": rnd((2, 2, 3, 3, 3), 0)})
    with pytest.raises(CompileError, match=r"input rank 5.*ConvTranspose.*ct3"):
        compiler.compile_model(m)
    # weights computed at run time
    m = make_model(node, (1, 2, 4, 4), extra_inputs=[("w", F, (2, 2, 3, 3))])
    with pytest.raises(CompileError, match=r"ct.*weight W.*constant"):
        compiler.compile_model(m)
    # output_shape past the unpadded output (9) by the stride
    m = make_model(helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="big", strides=[2, 2],
                                    output_shape=[11, 9]), (1, 2, 4, 4), {"w": w})
    with pytest.raises(CompileError, match=r"big.*output size 11 exceeds.*output 9 by 2"):
        compiler.compile_model(m)
    # output_padding not below the stride or the dilation
    m = make_model(helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="op", strides=[2, 2],
                                    output_padding=[2, 0]), (1, 2, 4, 4), {"w": w})
    with pytest.raises(CompileError, match=r"op.*output_padding"):
        compiler.compile_model(m)
    # weight dim 0 must be the input channels
    m = make_model(helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="ch"), (1, 3, 4, 4), {"w": w})
    with pytest.raises(CompileError, match=r"ch.*input channels 3"):
        compiler.compile_model(m)


# ---------------------------------------------------------------------------------------------------
# Resize
# ---------------------------------------------------------------------------------------------------

COORDS = ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "tf_half_pixel_for_nn",
          "half_pixel_symmetric"]
ROUNDINGS = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
X4 = (2, 3, 5, 7)
# Scales (N and C 1): upscale, non-integer up, downscale, non-integer down, mixed, one axis only.
SCALES = [(2.0, 3.0), (1.7, 2.4), (0.5, 0.6), (0.8, 0.35), (1.5, 0.7), (1.0, 2.5)]
SIZES = [(10, 14), (9, 4), (3, 11), (1, 1), (5, 13)]


def resize(x_shape, opset=19, scales=None, sizes=None, roi=None, **attrs):
    inits, inputs = {}, ["x", "", "", ""]
    if roi is not None:
        inits["roi"] = np.asarray(roi, np.float32)
        inputs[1] = "roi"
    if scales is not None:
        inits["scales"] = np.asarray(scales, np.float32)
        inputs[2] = "scales"
    if sizes is not None:
        inits["sizes"] = np.asarray(sizes, np.int64)
        inputs[3] = "sizes"
    while inputs[-1] == "":
        inputs.pop()
    return make_model(helper.make_node("Resize", inputs, ["y"], **attrs), x_shape, inits, opset)


def _opset_for(coord):
    # tf_half_pixel_for_nn left the spec in opset 18; half_pixel_symmetric arrived in 19.
    return 13 if coord == "tf_half_pixel_for_nn" else 19


# Each resize case gives its output as scales (of H and W) or as sizes.
GIVEN = [("scales", [1, 1, *sc]) for sc in SCALES] + [("sizes", [2, 3, *sz]) for sz in SIZES]
GIVEN_IDS = [f"{kind}_{v[2]}x{v[3]}" for kind, v in GIVEN]


@pytest.mark.parametrize("given", GIVEN, ids=GIVEN_IDS)
@pytest.mark.parametrize("coord,rounding", list(itertools.product(COORDS, ROUNDINGS)))
def test_resize_nearest(dev, coord, rounding, given):
    kind, values = given
    m = resize(X4, _opset_for(coord), **{kind: values}, mode="nearest", coordinate_transformation_mode=coord,
               nearest_mode=rounding)
    check(dev, m, X4, exact=True)


@pytest.mark.parametrize("given", GIVEN, ids=GIVEN_IDS)
@pytest.mark.parametrize("coord", COORDS)
def test_resize_linear(dev, coord, given):
    kind, values = given
    m = resize(X4, _opset_for(coord), **{kind: values}, mode="linear", coordinate_transformation_mode=coord)
    check(dev, m, X4, tol=1e-5)


@pytest.mark.parametrize("factor", [2, 4, 8])
def test_resize_ppocr_nearest_upsample(dev, factor):
    """PP-OCR's FPN: nearest, asymmetric, floor, integer factors, given as opset-11 roi + scales."""
    m = resize((1, 24, 20, 20), 11, roi=[], scales=[1, 1, factor, factor], mode="nearest",
               coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    assert check(dev, m, (1, 24, 20, 20), exact=True).shape == (1, 24, 20 * factor, 20 * factor)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("sc", [(0.5, 0.5), (1 / 3, 0.25), (0.37, 0.61), (2.0, 2.0)])
def test_resize_bigger_planes(dev, mode, sc):
    """Planes large enough that rows are reused (upscale) and skipped (downscale) in runs."""
    x_shape = (1, 4, 60, 90)
    m = resize(x_shape, 19, scales=[1, 1, *sc], mode=mode)
    check(dev, m, x_shape, exact=mode == "nearest", tol=1e-5)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("sc", [(2.0, 2.0), (0.5, 0.5), (1.0, 1.6), (0.6, 3.0)], ids=str)
def test_resize_opset10(dev, mode, sc):
    x_shape = (1, 2, 6, 5)
    m = make_model(helper.make_node("Resize", ["x", "scales"], ["y"], mode=mode), x_shape,
                   {"scales": np.asarray([1, 1, *sc], np.float32)}, opset=10)
    if mode == "nearest" and (sc[0] - 1) * (sc[1] - 1) < 0:
        with pytest.raises(CompileError, match=r"upscaling one axis and downscaling the other"):
            compiler.compile_model(m)
        return
    check(dev, m, x_shape, exact=mode == "nearest", tol=1e-5)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_opset11_sizes_with_empty_scales(dev, mode):
    x_shape = (1, 2, 6, 5)
    m = resize(x_shape, 11, roi=[], scales=[], sizes=[1, 2, 9, 13], mode=mode)
    assert check(dev, m, x_shape, exact=mode == "nearest", tol=1e-5).shape == (1, 2, 9, 13)


@pytest.mark.parametrize("axes,scales,sizes", [
    ([2, 3], [1.5, 0.5], None),
    ([3], [2.5], None),
    ([-2, -1], None, [4, 9]),
    ([-1], None, [3]),
    ([3, 2], None, [12, 7]),
], ids=["scales_hw", "scales_w", "sizes_neg", "sizes_w", "sizes_swapped"])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_opset18_axes(dev, axes, scales, sizes, mode):
    x_shape = (1, 3, 6, 5)
    m = resize(x_shape, 18, scales=scales, sizes=sizes, axes=axes, mode=mode)
    check(dev, m, x_shape, exact=mode == "nearest", tol=1e-5)


@pytest.mark.parametrize("policy", ["stretch", "not_larger", "not_smaller"])
# (onnxruntime ignores the policy when axes are negative, so these are not.)
@pytest.mark.parametrize("sizes,axes", [([9, 4], [2, 3]), ([7, 16], [2, 3]), ([16, 7], [3, 2]),
                                        ([11, 3], [2, 3])], ids=str)
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_keep_aspect_ratio(dev, policy, sizes, axes, mode):
    x_shape = (1, 3, 6, 5)
    m = resize(x_shape, 18, sizes=sizes, axes=axes, keep_aspect_ratio_policy=policy, mode=mode)
    check(dev, m, x_shape, exact=mode == "nearest", tol=1e-5)


def test_resize_keep_aspect_ratio_over_all_axes(dev):
    """Without axes the policy's scale applies to N and C too (ONNX spec): those resize as onnxruntime does
    (resample nodes, tests/python/emulator/test_ops_resize_modes.py)."""
    m = resize((1, 3, 6, 5), 18, sizes=[1, 3, 10, 10], keep_aspect_ratio_policy="not_smaller", name="k")
    assert check(dev, m, (1, 3, 6, 5), exact=True).shape == (2, 6, 12, 10)


OTHER_RANKS = {
    "rank3": ((3, 7, 5), [1, 2.5, 1.4]),
    "rank3_last": ((3, 7, 5), [1, 1, 0.6]),
    "rank2": ((9, 6), [1.5, 0.5]),
    "rank1": ((11,), [2.2]),
    "rank5": ((1, 2, 3, 4, 5), [1, 1, 1, 2, 1.5]),
}
# onnxruntime's linear Resize takes ranks 2 to 4 (and rank 5 scaling the last three axes) only.
RANK_CASES = [(k, "nearest") for k in OTHER_RANKS] + [(k, "linear") for k in ("rank3", "rank3_last", "rank2")]


@pytest.mark.parametrize("case,mode", RANK_CASES)
def test_resize_other_ranks(dev, case, mode):
    x_shape, scales = OTHER_RANKS[case]
    m = resize(x_shape, 13, scales=scales, mode=mode, coordinate_transformation_mode="align_corners")
    check(dev, m, x_shape, exact=mode == "nearest", tol=1e-5)


@pytest.mark.parametrize("scales", [[1, 1, 1, 1], [1, 1, 1.1, 1.12]], ids=["ones", "same_shape"])
def test_resize_to_the_same_shape_is_a_copy(dev, scales):
    """onnxruntime copies when the output shape is the input's, whatever the scales."""
    m = resize((1, 2, 4, 6), 13, scales=scales, mode="linear")
    assert "resize" not in ops_of(m)
    check(dev, m, (1, 2, 4, 6), exact=True)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("opset,sc", [(7, [1, 1, 2, 3]), (7, [1, 1, 1.5, 2.5]), (9, [1, 1, 2, 2]),
                                      (9, [1, 1, 3, 1.7])], ids=str)
def test_upsample(dev, mode, opset, sc):
    x_shape = (1, 3, 4, 5)
    if opset == 7:
        m = make_model(helper.make_node("Upsample", ["x"], ["y"], mode=mode, scales=[float(v) for v in sc]),
                       x_shape, opset=7)
    else:
        m = make_model(helper.make_node("Upsample", ["x", "s"], ["y"], mode=mode), x_shape,
                       {"s": np.asarray(sc, np.float32)}, opset=9)
    check(dev, m, x_shape, exact=mode == "nearest", tol=1e-5)


def test_resize_compile_errors():
    def fails(m, pattern):
        with pytest.raises(CompileError, match=pattern):
            compiler.compile_model(m)

    fails(resize(X4, 19, scales=[1, 1, 2, 2], mode="area", name="r1"),
          r"unsupported mode 'area' in op 'Resize' \(node 'r1'\)")
    fails(resize(X4, 19, scales=[1, 1, 2, 2], name="r2", coordinate_transformation_mode="tf_crop"),
          r"unsupported coordinate_transformation_mode 'tf_crop'.*'r2'")
    fails(resize(X4, 19, scales=[1, 1, 2, 2], mode="nearest", antialias=1, name="r3"),
          r"unsupported antialias=1 with mode nearest.*'r3'")
    fails(resize(X4, 19, scales=[1, 1, 2, 2], mode="linear", exclude_outside=1, name="r4"),
          r"r4.*exclude_outside=1 needs mode cubic or antialias=1")
    fails(resize(X4, 19, scales=[1, 1, 2, 2], sizes=[2, 3, 10, 14], name="r6"), r"r6.*exactly one of scales")
    fails(resize(X4, 19, scales=[1, 1, 2, 2], nearest_mode="nearest_even", name="r7"),
          r"unsupported nearest_mode 'nearest_even'.*'r7'")
    fails(make_model(helper.make_node("Resize", ["x", "", "s"], ["y"], name="r8"), X4,
                     extra_inputs=[("s", F, (4,))], opset=13), r"r8.*scales.*constant")
    fails(make_model(helper.make_node("Upsample", ["x"], ["y"], scales=[1.0, 1.0, 0.5, 2.0], name="u1"), X4,
                     opset=7),
          r"u1.*scales.*>= 1")


# ---------------------------------------------------------------------------------------------------
# Load-time refusals (hand-made .accm files the compiler would not write)
# ---------------------------------------------------------------------------------------------------

def _load_error(dev, op, x_dims, y_dims, ints, floats=(), weights=None):
    tensors = [accm.Tensor("x", 1, accm.KIND_INPUT, x_dims)]
    inputs = [0]
    if weights is not None:
        tensors.append(accm.Tensor("w", 1, accm.KIND_CONSTANT, weights.shape, data=weights))
        inputs.append(1)
    tensors.append(accm.Tensor("y", 1, accm.KIND_OUTPUT, y_dims))
    nodes = [accm.Node(accm.OPS[op], inputs, [len(tensors) - 1], "bad", ints=list(ints), floats=list(floats))]
    data = accm.write(tensors, nodes, [0], [len(tensors) - 1])
    with pytest.raises(accel.AccelError) as e:
        dev.load(data)
    return str(e.value)


@pytest.mark.emulator  # the emulator's own checks of its model format, and their messages
def test_load_refuses_bad_nodes(dev):
    w = rnd((2, 3, 2, 2), 0)
    base = [1, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 0, 0]
    msg = _load_error(dev, "convtranspose", (1, 2, 4, 4), (1, 3, 10, 8), base[:11] + [2, 0], weights=w)
    assert "output_pad_h 2" in msg and "bad" in msg
    msg = _load_error(dev, "convtranspose", (1, 2, 4, 4), (1, 3, 8, 9), base, weights=w)
    assert "should be [1,3,8,8]" in msg
    msg = _load_error(dev, "resize", (1, 2, 4, 4), (1, 2, 8, 8), [0, 9, 0], [2.0, 2.0])
    assert "coordinate transformation 9" in msg
    msg = _load_error(dev, "resize", (1, 2, 4, 4), (1, 2, 8, 8), [0, 0, 0], [1.0, 2.0])
    assert "scale_h 1" in msg
    msg = _load_error(dev, "resize", (1, 2, 4, 4), (1, 3, 8, 8), [0, 0, 0], [2.0, 2.0])
    assert "resizes N or C" in msg


# ---------------------------------------------------------------------------------------------------
# A PP-OCR-style detector head: FPN nearest upsampling, then ConvTranspose, bias Add, BN, Relu, ConvTranspose
# ---------------------------------------------------------------------------------------------------

def test_ppocr_style_head(dev):
    c = 8
    r = np.random.default_rng(7)
    inits = {
        "s2": np.asarray([1, 1, 2, 2], np.float32), "s4": np.asarray([1, 1, 4, 4], np.float32),
        "roi": np.zeros(0, np.float32),
        "w0": rnd((c, c, 2, 2), 1), "b0": rnd((1, c, 1, 1), 2),
        "gamma": (r.random(c) + 0.5).astype(np.float32), "beta": rnd((c,), 3),
        "mean": rnd((c,), 4), "var": (r.random(c) + 0.5).astype(np.float32),
        "w1": rnd((c, 1, 2, 2), 5), "b1": rnd((1, 1, 1, 1), 6),
    }
    nearest = dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    nodes = [
        helper.make_node("Resize", ["x", "roi", "s2"], ["u2"], **nearest),
        helper.make_node("Resize", ["x", "roi", "s4"], ["u4"], **nearest),
        helper.make_node("Resize", ["u2", "roi", "s2"], ["u22"], **nearest),
        helper.make_node("Add", ["u4", "u22"], ["fpn"]),
        helper.make_node("ConvTranspose", ["fpn", "w0"], ["t0"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Add", ["t0", "b0"], ["t0b"]),
        helper.make_node("BatchNormalization", ["t0b", "gamma", "beta", "mean", "var"], ["bn"]),
        helper.make_node("Relu", ["bn"], ["r"]),
        helper.make_node("ConvTranspose", ["r", "w1"], ["t1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Add", ["t1", "b1"], ["t1b"]),
        helper.make_node("Sigmoid", ["t1b"], ["y"]),
    ]
    x_shape = (1, c, 10, 12)
    g = helper.make_graph(nodes, "head", [helper.make_tensor_value_info("x", F, list(x_shape))],
                          [helper.make_tensor_value_info("y", F, None)],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 12)])
    m.ir_version = 7
    ops = ops_of(m)
    assert ops.count("resize") == 3 and ops.count("convtranspose") == 2
    assert check(dev, m, x_shape).shape == (1, 1, 160, 192)
