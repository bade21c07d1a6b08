"""Resize's forms lowered to the resample op (81): mode cubic (cubic_coeff_a, exclude_outside), antialias=1
for linear and cubic, coordinate_transformation_mode tf_crop_and_resize (roi, extrapolation_value, the opset 18
axes form) and resizing axes before the last two, each one Resize node against onnxruntime (one thread)
element by element, NaN and infinities included; and the load-time checks of the resample kernel."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import compile_error, emu_outputs, onnx_model, rand_array, run_ort
from conftest import runtime_ops as ops
from onnx import helper

import accel
from accel.compiler import accm

# The emulator's compiler and kernels (a board's toolchain compiles what it supports itself).
pytestmark = pytest.mark.emulator

X4 = (2, 3, 6, 7)
COORDS = ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "half_pixel_symmetric"]
# (kind, values of H and W): upscale, non-integer up, downscale, non-integer down, mixed, one axis.
GIVEN = [("scales", (2.0, 3.0)), ("scales", (1.7, 2.4)), ("scales", (0.5, 0.6)), ("scales", (0.8, 0.35)),
         ("scales", (1.5, 0.7)), ("scales", (1.0, 2.5)), ("sizes", (10, 4)), ("sizes", (3, 11)),
         ("sizes", (1, 1)), ("sizes", (5, 13))]
GIVEN_IDS = [f"{k}_{v[0]}x{v[1]}" for k, v in GIVEN]


@pytest.fixture(scope="module")
def dev():
    d = accel.open("emu:cores=2")
    yield d
    d.close()


def resize(x_shape, opset=19, scales=None, sizes=None, roi=None, **attrs):
    """A one-node Resize model with constant roi, scales and sizes."""
    inits, inputs = {}, ["x", "", "", ""]
    for i, (name, v, dt) in enumerate([("roi", roi, np.float32), ("scales", scales, np.float32),
                                       ("sizes", sizes, np.int64)]):
        if v is not None:
            inits[name] = np.asarray(v, dt)
            inputs[i + 1] = name
    while inputs[-1] == "":
        inputs.pop()
    node = helper.make_node("Resize", inputs, ["y"], **attrs)
    return onnx_model([node], [("x", "float32", x_shape)], [("y", "float32")], inits, opset=opset)


def given_inputs(kind, values, rank=4):
    lead = [1.0] * (rank - 2) if kind == "scales" else list(X4[: rank - 2])
    return {kind: [*lead, *values]}


def check(dev, m, x, rtol=1e-5):
    """The emulator's output is onnxruntime's: shape, dtype and every element within rtol of the output's
    largest magnitude (NaN where onnxruntime has NaN, infinities equal). Returns it."""
    got = emu_outputs(dev, m, {"x": x})[0]
    want = run_ort(m, {"x": x})[0]
    assert got.dtype == want.dtype and got.shape == want.shape, (got.shape, want.shape)
    finite = np.isfinite(want)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(got[np.isinf(want)], want[np.isinf(want)])
    scale = float(np.max(np.abs(want[finite]), initial=1.0))
    np.testing.assert_allclose(got[finite], want[finite], rtol=0, atol=rtol * scale)
    return got


def rand(shape, seed=0):
    return rand_array(shape, "float32", seed, scale=3.0)


# ---- cubic -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("given", GIVEN, ids=GIVEN_IDS)
@pytest.mark.parametrize("coord", COORDS)
def test_cubic(dev, coord, given):
    m = resize(X4, **given_inputs(*given), mode="cubic", coordinate_transformation_mode=coord)
    check(dev, m, rand(X4))
    assert "resample" in ops(m)


@pytest.mark.parametrize("a,exclude", list(itertools.product([-0.75, -0.5, -0.25], [0, 1])))
@pytest.mark.parametrize("given", [("scales", (1.6, 2.2)), ("scales", (0.6, 0.45)), ("sizes", (4, 17))], ids=str)
def test_cubic_coeff_a_and_exclude_outside(dev, a, exclude, given):
    m = resize(X4, **given_inputs(*given), mode="cubic", cubic_coeff_a=a, exclude_outside=exclude)
    check(dev, m, rand(X4, 1))


def test_cubic_exactly_as_onnxruntime_on_integer_scales(dev):
    """Upscaling by 2 with asymmetric coordinates: the same taps and weights, so every bit is onnxruntime's."""
    m = resize(X4, scales=[1, 1, 2, 2], mode="cubic", coordinate_transformation_mode="asymmetric")
    x = rand(X4, 2)
    np.testing.assert_array_equal(emu_outputs(dev, m, {"x": x})[0], run_ort(m, {"x": x})[0])


# ---- antialias ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("given", [("scales", (0.5, 0.6)), ("scales", (0.8, 0.35)), ("scales", (0.3, 1.0)),
                                   ("sizes", (3, 2)), ("sizes", (1, 5)), ("scales", (1.5, 0.5)),
                                   ("scales", (2.0, 2.5))], ids=str)
@pytest.mark.parametrize("mode,exclude", [("linear", 0), ("linear", 1), ("cubic", 0), ("cubic", 1)])
@pytest.mark.parametrize("coord", ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"])
def test_antialias(dev, mode, exclude, coord, given):
    m = resize(X4, 18, **given_inputs(*given), mode=mode, antialias=1, exclude_outside=exclude,
               coordinate_transformation_mode=coord)
    check(dev, m, rand(X4, 3))


def test_antialias_bigger_plane(dev):
    """A 5x downscale: windows of 11 taps (linear) and 21 (cubic), with the edges folded in."""
    shape = (1, 2, 40, 45)
    for mode in ("linear", "cubic"):
        check(dev, resize(shape, 18, scales=[1, 1, 0.2, 0.25], mode=mode, antialias=1), rand(shape, 4))


# ---- tf_crop_and_resize ------------------------------------------------------------------------------

ROIS = {
    "inside": [0, 0, 0.2, 0.3, 1, 1, 0.8, 0.9],
    "beyond": [0, 0, -0.3, 0.4, 1, 1, 1.2, 1.5],   # outputs past the input take extrapolation_value
    "flipped": [0, 0, 0.9, 0.8, 1, 1, 0.1, 0.2],   # end before start: the crop mirrored
}


@pytest.mark.parametrize("roi", list(ROIS), ids=str)
@pytest.mark.parametrize("given", [("scales", (1.5, 0.8)), ("sizes", (4, 9)), ("sizes", (1, 5))], ids=str)
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_tf_crop_and_resize(dev, mode, given, roi):
    m = resize(X4, 13, roi=ROIS[roi], **given_inputs(*given), mode=mode,
               coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-7.5)
    check(dev, m, rand(X4, 5))


@pytest.mark.parametrize("axes,roi,sizes", [([2, 3], [0.1, -0.2, 0.7, 1.1], [5, 6]),
                                             ([3, 2], [-0.2, 0.1, 1.1, 0.7], [6, 5]),
                                             ([3], [0.25, 1.3], [8])], ids=str)
def test_tf_crop_and_resize_axes(dev, axes, roi, sizes):
    m = resize(X4, 18, roi=roi, sizes=sizes, axes=axes, mode="linear",
               coordinate_transformation_mode="tf_crop_and_resize")
    check(dev, m, rand(X4, 6))


# ---- axes before the last two ------------------------------------------------------------------------

@pytest.mark.parametrize("shape,scales", [((3, 7, 5), [2.0, 1.5, 0.6]), ((5, 4, 6), [0.6, 1.0, 1.0]),
                                          ((1, 2, 3, 4, 5), [1, 1, 2.0, 0.5, 1.5])], ids=str)
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_outer_axes(dev, shape, scales, mode):
    """onnxruntime's trilinear (rank 3, and rank 5 over the last three axes) and nearest on any axis."""
    m = resize(shape, 13, scales=scales, mode=mode)
    check(dev, m, rand(shape, 7))
    assert "resample" in ops(m)


# ---- NaN and infinities ------------------------------------------------------------------------------

@pytest.mark.parametrize("mode,attrs", [("cubic", {}), ("cubic", {"exclude_outside": 1}),
                                        ("linear", {"antialias": 1}), ("cubic", {"antialias": 1}),
                                        ("linear", {"coordinate_transformation_mode": "tf_crop_and_resize"})],
                         ids=str)
def test_nan_and_inf_stay_in_their_windows(dev, mode, attrs):
    """A NaN or infinity reaches the outputs whose taps read it, as in onnxruntime, and no others (a
    padding tap reads nothing, so no 0 * inf makes a NaN)."""
    shape = (1, 1, 8, 9)
    x = rand(shape, 8)
    x[0, 0, 2, 3], x[0, 0, 6, 1], x[0, 0, 0, 8] = np.nan, np.inf, -np.inf
    roi = [0, 0, 0.1, 0.1, 1, 1, 0.9, 0.9] if attrs.get("coordinate_transformation_mode") else None
    m = resize(shape, 18, roi=roi, scales=[1, 1, 0.6, 0.7], mode=mode, **attrs)
    got = check(dev, m, x)
    assert np.isfinite(got).any() and not np.isfinite(got).all()


# ---- refusals and load-time checks -------------------------------------------------------------------

def test_antialias_with_nearest_is_refused():
    m = resize(X4, 18, scales=[1, 1, 0.5, 0.5], mode="nearest", antialias=1)
    compile_error(m, r"unsupported antialias=1 with mode nearest.*'Resize'")


def test_roi_must_be_constant():
    node = helper.make_node("Resize", ["x", "roi", "scales"], ["y"], mode="linear",
                            coordinate_transformation_mode="tf_crop_and_resize")
    m = onnx_model([node], [("x", "float32", X4), ("roi", "float32", (8,))], [("y", "float32")],
                   {"scales": np.asarray([1, 1, 2, 2], np.float32)}, opset=13)
    compile_error(m, r"roi \('roi'\) must be a constant")


F32, I32 = accm.dtype_code(np.float32), accm.dtype_code(np.int32)


def resample_model(taps, weights, x_dims=(2, 5), y_dims=(2, 3), axis=1, const=True, i_dtype=I32):
    """One resample node over input x with taps and weights (constants unless const=False)."""
    kind = accm.KIND_CONSTANT if const else accm.KIND_INPUT
    taps = np.asarray(taps, np.int32 if i_dtype == I32 else np.float32)
    weights = np.asarray(weights, np.float32)
    tensors = [accm.Tensor("x", F32, accm.KIND_INPUT, x_dims),
               accm.Tensor("i", i_dtype, kind, taps.shape, data=taps if const else None),
               accm.Tensor("w", F32, kind, weights.shape, data=weights if const else None),
               accm.Tensor("y", F32, accm.KIND_OUTPUT, y_dims)]
    node = accm.Node(accm.OPS["resample"], [0, 1, 2], [3], name="n1", ints=[axis])
    inputs = [0] if const else [0, 1, 2]
    return accm.write(tensors, [node], inputs, [3])


def test_resample_kernel_runs_its_rule(dev):
    """Taps in order, a row ending at its first -1, along a middle axis."""
    taps, weights = [[0, 4, -1], [2, 2, 1], [-1, 0, 0]], [[0.5, 0.25, 9], [1, 2, 0.125], [9, 9, 9]]
    x = rand((2, 5, 3), 9)
    y = dev.load(resample_model(taps, weights, (2, 5, 3), (2, 3, 3))).run({"x": x})[0]
    want = np.stack([0.5 * x[:, 0] + 0.25 * x[:, 4], x[:, 2] + 2 * x[:, 2] + 0.125 * x[:, 1],
                     np.zeros_like(x[:, 0])], axis=1)
    np.testing.assert_allclose(np.array(y), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kw,match", [
    (dict(taps=[[0], [5], [1]]), r"tap index 5 at position 1 is outside -1..4"),
    (dict(taps=[[0], [-2], [1]]), r"tap index -2 at position 1 is outside -1..4"),
    (dict(y_dims=(2, 4)), r"output \[2,4\] is not input \[2,5\] with axis 1 of I's 3"),
    (dict(axis=2), r"axis 2 outside 0..1"),
    (dict(weights=[[1, 1], [1, 1], [1, 1]]), r"are not both \[OA, K\]"),
    (dict(const=False), r"I and W must be constants"),
    (dict(i_dtype=F32), r"I is float32, not int32"),
])
def test_resample_kernel_refuses_bad_nodes_at_load(dev, kw, match):
    args = dict(taps=[[0], [4], [1]], weights=[[1], [1], [1]])
    args.update(kw)
    with pytest.raises(accel.AccelError, match=f"'n1'.*resample: .*{match}"):
        dev.load(resample_model(**args))


def test_an_integer_resize_the_resample_op_would_take_is_refused_by_name():
    # The resample op filters float32: an int8 or uint8 picture's cubic resize is refused at compile time (not by
    # the loader).
    m = onnx_model([helper.make_node("Resize", ["x", "", "scales"], ["y"], name="r", mode="cubic")],
                   [("x", "uint8", (1, 3, 4, 4))], [("y", "uint8")], {"scales": np.array([1, 1, 2, 2], np.float32)},
                   opset=18)
    compile_error(m, r"unsupported dtype uint8 of input 'x' with mode 'cubic'.*\(float32 only\) in op 'Resize'")
