"""RoiAlign (op 84) against onnxruntime (one thread, opset 16: onnxruntime has no opset 22 kernel) element by
element: avg and max, both coordinate modes, fixed and adaptive sampling, spatial_scale, regions reaching
outside the image, several images; rois and batch indices computed at run time; a batch index outside the
batch fails the run naming it; the refusals and the kernel's load-time checks."""
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

X = (3, 2, 10, 12)


@pytest.fixture(scope="module")
def dev():
    d = accel.open("emu:cores=2")
    yield d
    d.close()


def roialign(k, opset=16, x_shape=X, **attrs):
    node = helper.make_node("RoiAlign", ["x", "rois", "b"], ["y"], **attrs)
    return onnx_model([node], [("x", "float32", x_shape), ("rois", "float32", (k, 4)), ("b", "int64", (k,))],
                      [("y", "float32")], opset=opset)


def rois(k, seed, lo=-2.0, hi=13.0):
    """k regions (x1, y1, x2, y2) with corners over [lo, hi]: some reach outside the image, some are flat."""
    r = np.random.default_rng(seed).uniform(lo, hi, (k, 4)).astype(np.float32)
    r[:, 2:] = np.maximum(r[:, 2:], r[:, :2])
    r[0] = [1, 1, 1, 6]  # zero width
    return r


def check(dev, m, feeds):
    got = emu_outputs(dev, m, feeds)[0]
    want = run_ort(m, feeds)[0]
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * max(1.0, float(np.abs(want).max())))
    return got


@pytest.mark.parametrize("mode,coord", list(itertools.product(["avg", "max"], ["half_pixel", "output_half_pixel"])))
@pytest.mark.parametrize("ratio,out", [(2, (5, 5)), (0, (3, 4)), (1, (2, 7)), (3, (1, 1))], ids=str)
def test_roialign(dev, mode, coord, ratio, out):
    k = 6
    m = roialign(k, mode=mode, coordinate_transformation_mode=coord, sampling_ratio=ratio,
                 output_height=out[0], output_width=out[1])
    feeds = {"x": rand_array(X, "float32", 1, scale=3.0), "rois": rois(k, 2),
             "b": np.array([0, 2, 1, 1, 0, 2], np.int64)}
    check(dev, m, feeds)
    assert ops(m) == ["roialign"]


@pytest.mark.parametrize("scale", [0.5, 0.25, 1.7])
def test_roialign_spatial_scale(dev, scale):
    k = 5
    m = roialign(k, spatial_scale=scale, output_height=3, output_width=3)
    feeds = {"x": rand_array(X, "float32", 3), "rois": rois(k, 4, 0.0, 30.0), "b": np.arange(k, dtype=np.int64) % 3}
    check(dev, m, feeds)


def test_roialign_opset10_defaults_to_output_half_pixel(dev):
    m = roialign(4, opset=10, output_height=2, output_width=3, sampling_ratio=2)
    check(dev, m, {"x": rand_array(X, "float32", 5), "rois": rois(4, 6), "b": np.array([2, 0, 1, 0], np.int64)})


def test_roialign_batch_index_outside_the_batch_fails_the_run(dev):
    """As gather's indices: the run fails naming the node, the index and where it is; in-range runs after
    it are onnxruntime's."""
    m = roialign(3, output_height=2, output_width=2, name="ra")
    model = dev.load(m.SerializeToString())
    feeds = {"x": rand_array(X, "float32", 7), "rois": rois(3, 8), "b": np.array([0, 2, 1], np.int64)}
    want = run_ort(m, feeds)[0]
    np.testing.assert_allclose(np.array(model.run(feeds)[0]), want, rtol=1e-5, atol=1e-5)
    bad = dict(feeds, b=np.array([0, 3, 1], np.int64))
    with pytest.raises(accel.InvalidArgumentError, match=r"node 'ra' \(roialign\): batch index 3 at \[1\] of input 2"):
        model.run(bad)
    np.testing.assert_allclose(np.array(model.run(feeds)[0]), want, rtol=1e-5, atol=1e-5)


def test_roialign_rois_from_a_computation(dev):
    """Regions computed at run time (a detector's boxes scaled by a Mul)."""
    nodes = [helper.make_node("Mul", ["r", "s"], ["rois"]),
             helper.make_node("RoiAlign", ["x", "rois", "b"], ["y"], output_height=2, output_width=2)]
    m = onnx_model(nodes, [("x", "float32", X), ("r", "float32", (4, 4)), ("b", "int64", (4,))],
                   [("y", "float32")], {"s": np.asarray([12, 10, 12, 10], np.float32)}, opset=16)
    r = np.random.default_rng(9).uniform(0, 1, (4, 4)).astype(np.float32)
    r[:, 2:] = np.maximum(r[:, 2:], r[:, :2])
    check(dev, m, {"x": rand_array(X, "float32", 10), "r": r, "b": np.array([1, 1, 0, 2], np.int64)})


def test_roialign_refusals():
    compile_error(roialign(2, mode="median"), r"unsupported mode 'median'.*'RoiAlign'")
    compile_error(roialign(2, coordinate_transformation_mode="corner"),
                  r"unsupported coordinate_transformation_mode 'corner'")
    compile_error(roialign(2, sampling_ratio=5000), r"unsupported sampling_ratio 5000")


F32, I64 = accm.dtype_code(np.float32), accm.dtype_code(np.int64)


def roialign_accm(b=None, ints=(0, 1, 0), floats=(1.0,), y_dims=(2, 2, 3, 3), b_dtype=I64):
    const = b is not None
    tensors = [accm.Tensor("x", F32, accm.KIND_INPUT, (2, 2, 5, 5)), accm.Tensor("r", F32, accm.KIND_INPUT, (2, 4)),
               accm.Tensor("b", b_dtype, accm.KIND_CONSTANT if const else accm.KIND_INPUT, (2,),
                           data=np.asarray(b, np.int64) if const else None),
               accm.Tensor("y", F32, accm.KIND_OUTPUT, y_dims)]
    node = accm.Node(accm.OPS["roialign"], [0, 1, 2], [3], name="n1", ints=list(ints), floats=list(floats))
    return accm.write(tensors, [node], [0, 1] if const else [0, 1, 2], [3])


@pytest.mark.parametrize("kw,match", [
    (dict(b=[0, 2]), r"batch index 2 at position 1 is outside 0..1"),
    (dict(ints=(2, 1, 0)), r"mode 2 is not 0 or 1"),
    (dict(ints=(0, 3, 0)), r"half_pixel 3 is not 0 or 1"),
    (dict(ints=(0, 1, -1)), r"sampling_ratio -1 is outside 0..1024"),
    (dict(floats=(float("inf"),)), r"spatial_scale inf is not finite"),
    (dict(y_dims=(2, 3, 3, 3)), r"output \[2,3,3,3\] is not \[K, C, OH, OW\]"),
    (dict(b_dtype=F32), r"B is float32, not int64"),
])
def test_roialign_kernel_refuses_bad_nodes_at_load(dev, kw, match):
    with pytest.raises(accel.AccelError, match=f"'n1'.*roialign: .*{match}"):
        dev.load(roialign_accm(**kw))
