"""GridSample (op 82) and AffineGrid against onnxruntime (one thread), one node each, element by element:
every mode, padding mode and align_corners, 2-D and 3-D (volumetric), grids reaching far outside the input
(where padding decides), a grid computed at run time, NaN and infinities in the input; a non-finite grid
coordinate (NaN, where onnxruntime's result is undefined); the refusals and the kernel's load-time checks."""
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

MODES = ["nearest", "linear", "cubic"]
PADDINGS = ["zeros", "border", "reflection"]


@pytest.fixture(scope="module")
def dev():
    d = accel.open("emu:cores=2")
    yield d
    d.close()


def gridsample(x_shape, g_shape, opset=20, **attrs):
    node = helper.make_node("GridSample", ["x", "g"], ["y"], **attrs)
    return onnx_model([node], [("x", "float32", x_shape), ("g", "float32", g_shape)], [("y", "float32")],
                      opset=opset)


def grid(shape, seed, reach=1.6):
    """Grid points uniform over [-reach, reach]: reach > 1 puts some outside the input."""
    return np.random.default_rng(seed).uniform(-reach, reach, shape).astype(np.float32)


def check(dev, m, feeds, exact=False):
    """The emulator's output is onnxruntime's (every element; within 1e-5 of the largest unless exact, NaN
    where onnxruntime has NaN). Returns it."""
    got = emu_outputs(dev, m, feeds)[0]
    want = run_ort(m, feeds)[0]
    assert got.dtype == want.dtype and got.shape == want.shape, (got.shape, want.shape)
    if exact:
        np.testing.assert_array_equal(got, want)
        return got
    assert np.array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(want)
    assert np.array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
    scale = float(np.max(np.abs(want[finite]), initial=1.0))
    np.testing.assert_allclose(got[finite], want[finite], rtol=0, atol=1e-5 * scale)
    return got


@pytest.mark.parametrize("mode,padding,align", list(itertools.product(MODES, PADDINGS, [0, 1])))
@pytest.mark.parametrize("x_shape,g_shape", [((2, 3, 5, 7), (2, 4, 6, 2)), ((1, 2, 1, 4), (1, 3, 3, 2)),
                                             ((1, 1, 9, 2), (1, 5, 1, 2))], ids=str)
def test_gridsample_2d(dev, mode, padding, align, x_shape, g_shape):
    m = gridsample(x_shape, g_shape, mode=mode, padding_mode=padding, align_corners=align)
    feeds = {"x": rand_array(x_shape, "float32", 1, scale=3.0), "g": grid(g_shape, 2, reach=2.5)}
    check(dev, m, feeds, exact=mode == "nearest")
    assert ops(m) == ["gridsample"]


@pytest.mark.parametrize("mode,padding,align", list(itertools.product(["nearest", "linear"], PADDINGS, [0, 1])))
def test_gridsample_3d(dev, mode, padding, align):
    x_shape, g_shape = (2, 2, 3, 4, 5), (2, 3, 2, 4, 3)
    m = gridsample(x_shape, g_shape, mode=mode, padding_mode=padding, align_corners=align)
    feeds = {"x": rand_array(x_shape, "float32", 3, scale=3.0), "g": grid(g_shape, 4, reach=2.5)}
    check(dev, m, feeds, exact=mode == "nearest")


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_gridsample_opset16_names(dev, mode):
    m = gridsample((1, 2, 4, 5), (1, 3, 3, 2), opset=16, mode=mode, padding_mode="border")
    check(dev, m, {"x": rand_array((1, 2, 4, 5), "float32", 5), "g": grid((1, 3, 3, 2), 6)})


def test_gridsample_default_is_linear_zeros(dev):
    m = gridsample((1, 2, 4, 5), (1, 3, 3, 2), opset=20)
    check(dev, m, {"x": rand_array((1, 2, 4, 5), "float32", 7), "g": grid((1, 3, 3, 2), 8)})


def test_gridsample_exact_grid_points(dev):
    """Grid points on element centres and halfway between them (nearest's ties go to the even index)."""
    x_shape = (1, 1, 4, 6)
    xs = (np.arange(-1, 1.01, 1 / 6)).astype(np.float32)
    g = np.stack(np.meshgrid(xs, xs[::2]), axis=-1)[None].astype(np.float32)
    x = rand_array(x_shape, "float32", 9)
    for mode, align in itertools.product(MODES, [0, 1]):
        m = gridsample(x_shape, g.shape, mode=mode, align_corners=align, padding_mode="reflection")
        check(dev, m, {"x": x, "g": g}, exact=mode == "nearest")


def test_gridsample_grid_from_a_computation(dev):
    """The grid is computed at run time (a Tanh of an input), as a spatial transformer network's is."""
    x_shape, g_shape = (1, 3, 8, 8), (1, 5, 5, 2)
    nodes = [helper.make_node("Tanh", ["t"], ["g"]),
             helper.make_node("GridSample", ["x", "g"], ["y"], mode="linear", padding_mode="border")]
    m = onnx_model(nodes, [("x", "float32", x_shape), ("t", "float32", g_shape)], [("y", "float32")], opset=20)
    check(dev, m, {"x": rand_array(x_shape, "float32", 10), "t": grid(g_shape, 11, reach=3.0)})


@pytest.mark.parametrize("mode", MODES)
def test_gridsample_nan_and_inf_inputs(dev, mode):
    """NaN and infinities in X reach the outputs whose neighbours read them, as in onnxruntime."""
    x_shape, g_shape = (1, 1, 5, 5), (1, 6, 6, 2)
    x = rand_array(x_shape, "float32", 12)
    x[0, 0, 1, 1], x[0, 0, 3, 4], x[0, 0, 4, 0] = np.nan, np.inf, -np.inf
    m = gridsample(x_shape, g_shape, mode=mode, padding_mode="border")
    got = check(dev, m, {"x": x, "g": grid(g_shape, 13, reach=1.0)})
    assert not np.isfinite(got).all()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("padding", PADDINGS)
def test_gridsample_non_finite_grid_gives_nan(dev, mode, padding):
    """A NaN or infinite grid coordinate samples nothing: its outputs are NaN (onnxruntime casts it to an
    integer, which C++ leaves undefined); the other outputs are onnxruntime's."""
    x_shape, g_shape = (1, 2, 4, 4), (1, 2, 3, 2)
    g = grid(g_shape, 14)
    g[0, 0, 0, 0], g[0, 1, 2, 1], g[0, 1, 0, 0] = np.nan, np.inf, -np.inf
    x = rand_array(x_shape, "float32", 15)
    m = gridsample(x_shape, g_shape, mode=mode, padding_mode=padding)
    got = emu_outputs(dev, m, {"x": x, "g": g})[0]
    bad = np.zeros((2, 3), bool)
    bad[0, 0] = bad[1, 2] = bad[1, 0] = True
    assert np.isnan(got[:, :, bad]).all()
    want = run_ort(m, {"x": x, "g": g})[0]
    np.testing.assert_allclose(got[:, :, ~bad], want[:, :, ~bad], rtol=1e-5, atol=1e-6)


def test_gridsample_refusals():
    compile_error(gridsample((1, 1, 2, 3, 4), (1, 2, 2, 2, 3), mode="cubic"),
                  r"unsupported mode cubic on a 5-D input.*'GridSample'")
    compile_error(gridsample((1, 1, 2, 3, 4), (1, 2, 2, 2, 3), opset=16),
                  r"unsupported input rank 5 \(4-D, and 5-D from opset 20\)")
    compile_error(gridsample((1, 2, 4, 5), (1, 3, 3, 3)), r"grid shape \(1, 3, 3, 3\) is not \[N, \.\.\., 2\]")
    compile_error(gridsample((1, 2, 4, 5), (1, 3, 3, 2), padding_mode="wrap"), r"unsupported padding_mode 'wrap'")
    compile_error(gridsample((1, 2, 4, 5), (1, 3, 3, 2), mode="area"), r"unsupported mode 'area'")


F32 = accm.dtype_code(np.float32)


def gridsample_accm(x_dims, g_dims, y_dims, ints):
    tensors = [accm.Tensor("x", F32, accm.KIND_INPUT, x_dims), accm.Tensor("g", F32, accm.KIND_INPUT, g_dims),
               accm.Tensor("y", F32, accm.KIND_OUTPUT, y_dims)]
    node = accm.Node(accm.OPS["gridsample"], [0, 1], [2], name="n1", ints=list(ints))
    return accm.write(tensors, [node], [0, 1], [2])


@pytest.mark.parametrize("dims,ints,match", [
    (((1, 2, 4, 4), (1, 3, 3, 2), (1, 2, 3, 3)), (3, 0, 0), r"mode 3 is not 0..2"),
    (((1, 2, 4, 4), (1, 3, 3, 2), (1, 2, 3, 3)), (1, 5, 0), r"padding 5 is not 0..2"),
    (((1, 2, 4, 4), (1, 3, 3, 2), (1, 2, 3, 3)), (1, 0, 2), r"align_corners 2 is not 0 or 1"),
    (((1, 2, 2, 4, 4), (1, 1, 3, 3, 3), (1, 2, 1, 3, 3)), (2, 0, 0), r"cubic mode samples 2-D planes only"),
    (((1, 2, 4, 4), (1, 3, 3, 3), (1, 2, 3, 3)), (1, 0, 0), r"grid \[1,3,3,3\] is not \[N, \.\.\., 2\]"),
    (((1, 2, 4, 4), (1, 3, 3, 2), (1, 2, 3, 4)), (1, 0, 0), r"output \[1,2,3,4\] is not"),
    (((2, 4), (2, 2), (2, 2)), (1, 0, 0), r"input rank 2 is not 4 or 5"),
])
def test_gridsample_kernel_refuses_bad_nodes_at_load(dev, dims, ints, match):
    with pytest.raises(accel.AccelError, match=f"'n1'.*gridsample: .*{match}"):
        dev.load(gridsample_accm(*dims, ints))


# ---- AffineGrid --------------------------------------------------------------------------------------

def affinegrid(theta_shape, size, **attrs):
    node = helper.make_node("AffineGrid", ["theta", "size"], ["g"], **attrs)
    return onnx_model([node], [("theta", "float32", theta_shape)], [("g", "float32")],
                      {"size": np.asarray(size, np.int64)}, opset=20)


@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("size", [(2, 3, 5, 7), (1, 1, 1, 4), (2, 1, 3, 1), (2, 2, 3, 4, 5), (1, 1, 1, 2, 1)],
                         ids=str)
def test_affinegrid(dev, size, align):
    r = len(size) - 2
    theta = rand_array((size[0], r, r + 1), "float32", 16, scale=1.5)
    m = affinegrid(theta.shape, size, align_corners=align)
    check(dev, m, {"theta": theta})
    assert ops(m) == ["transpose", "matmul", "copy"]


def test_affinegrid_feeds_gridsample(dev):
    """A spatial transformer: AffineGrid's grid sampled by GridSample, theta given at run time."""
    nodes = [helper.make_node("AffineGrid", ["theta", "size"], ["g"]),
             helper.make_node("GridSample", ["x", "g"], ["y"], padding_mode="border")]
    m = onnx_model(nodes, [("x", "float32", (2, 3, 6, 8)), ("theta", "float32", (2, 2, 3))], [("y", "float32")],
                   {"size": np.asarray([2, 3, 4, 5], np.int64)}, opset=20)
    theta = np.array([[[0.9, 0.2, 0.1], [-0.1, 1.1, 0.05]], [[1.2, -0.3, -0.2], [0.4, 0.8, 0.3]]], np.float32)
    check(dev, m, {"x": rand_array((2, 3, 6, 8), "float32", 17), "theta": theta})


def test_affinegrid_refusals():
    node = helper.make_node("AffineGrid", ["theta", "size"], ["g"])
    m = onnx_model([node], [("theta", "float32", (1, 2, 3)), ("size", "int64", (4,))], [("g", "float32")], opset=20)
    compile_error(m, r"size \('size'\) must be a constant")
    compile_error(affinegrid((1, 2, 3), [1, 1, 4, 4, 4]), r"theta shape \(1, 2, 3\) is not \(1, 3, 4\)")
    compile_error(affinegrid((1, 2, 3), [1, 1, 4]), r"size \[1, 1, 4\] is not \[N, C, H, W\]")


def test_an_align_corners_other_than_0_or_1_is_refused_by_the_compiler():
    m = onnx_model([helper.make_node("GridSample", ["x", "g"], ["y"], name="gs", align_corners=2)],
                   [("x", "float32", (1, 1, 3, 3)), ("g", "float32", (1, 2, 2, 2))], [("y", "float32")], opset=20)
    compile_error(m, r"'gs' \(GridSample\): align_corners 2 is not 0 or 1")
