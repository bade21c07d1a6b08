"""What only a vendor device has, through the public Python API: padded (aligned) device layouts,
quantized int8 tensors with their scales, the vendors' layouts. Runs on the device under test when it is
a vendor device (ACCEL_TEST_DEVICE=bpu:0 or vart:0, with the stand-in SDKs); a test marked
``vendor("bpu")`` runs on that backend only. The emulator has no such models: on the emulator these tests
are deselected (conftest.py), and the vendor runs of the suite (ci/test.sh) run them.
"""
from __future__ import annotations


import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import rand
from standin_toolchain import suffix_for, tool

pytestmark = pytest.mark.vendor


def _double_onnx(shape):
    """y = 2 * x."""
    g = helper.make_graph(
        [helper.make_node("Mul", ["x", "two"], ["y"])], "double",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))],
        [numpy_helper.from_array(np.array(2.0, np.float32), "two")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m.SerializeToString()


# The BPU's model format: X3/X5's `.bin` or S100's `.hbm` (which has no layouts), as the run names it.
HBM = suffix_for("bpu") == ".hbm"


def _bin(onnx_bytes, spec):
    """A `.bin` (or `.hbm` on S100) of the model, its tensors described by `spec`."""
    from accel import compiler

    t = tool(suffix_for("bpu"))
    return t.pack([t.accm_record("double", compiler.compile_model(onnx_bytes), spec)])


def _int8(shape, seed):
    return np.random.default_rng(seed).integers(-60, 60, size=shape, dtype=np.int8)


@pytest.mark.vendor("bpu")
def test_bpu_padded_int8_tensors(dev):
    spec = {"inputs": {"x": {"type": "S8", "scale": [0.05], "aligned": [1, 4, 4, 8]}},
            "outputs": {"y": {"type": "S8", "scale": [0.1], "aligned": [1, 3, 4, 8]}}}
    model = dev.load(_bin(_double_onnx((1, 3, 4, 5)), spec))
    (x_info,), (y_info,) = model.inputs, model.outputs
    assert (x_info.dtype, x_info.shape, x_info.layout) == (np.int8, (1, 3, 4, 5), None if HBM else "NCHW")
    assert x_info.strides == (128, 32, 8, 1) and x_info.nbytes == 128 and not x_info.dense
    assert y_info.strides == (96, 32, 8, 1) and y_info.nbytes == 96
    assert x_info.quant.type == "per_tensor" and x_info.quant.scales == pytest.approx((0.05,))
    assert y_info.quant.scales == pytest.approx((0.1,))

    x = _int8((1, 3, 4, 5), 1)
    (y,) = model.run(x)
    # real y = 2 * 0.05 * x_q, stored with scale 0.1: y_q == x_q exactly (no saturation in range).
    np.testing.assert_array_equal(np.asarray(y), x)
    assert np.asarray(y).strides == (96, 32, 8, 1)
    # Async, and into a device tensor of the padded layout, agree.
    (y2,) = model.run_async(x).result(timeout=30)
    np.testing.assert_array_equal(np.asarray(y2), x)


@pytest.mark.vendor("bpu")
def test_bpu_float_model_layout(dev):
    """X3/X5 tensors say their layout (NHWC here); S100's have none."""
    spec = {"inputs": {"x": {"layout": "NHWC"}}, "outputs": {"y": {"layout": "NHWC"}}}
    model = dev.load(_bin(_double_onnx((1, 4, 4, 3)), {} if HBM else spec))
    assert model.inputs[0].layout == (None if HBM else "NHWC") and model.inputs[0].dtype == np.float32
    x = rand((1, 4, 4, 3), seed=2)
    np.testing.assert_array_equal(np.asarray(model.run(x)[0]), 2 * x)


@pytest.mark.vendor("bpu")
def test_bpu_input_of_wrong_dtype_is_refused(dev):
    import accel

    spec = {"inputs": {"x": {"type": "S8", "scale": [0.05]}}, "outputs": {"y": {"type": "S8", "scale": [0.1]}}}
    model = dev.load(_bin(_double_onnx((1, 3, 4, 5)), spec))
    with pytest.raises(accel.DTypeError, match="int8"):
        model.run(rand((1, 3, 4, 5)))


def test_model_from_onnx_is_refused_with_the_toolchain_named(dev, tiny_path):
    import accel

    with pytest.raises(accel.UnsupportedError, match="toolchain"):
        dev.load.__wrapped__(dev, str(tiny_path))


def _xmodel(tmp_path, onnx_bytes, fix_points):
    path = tmp_path / "double.onnx"
    path.write_bytes(onnx_bytes)
    return tool(".xmodel").build(str(path), fix_points)


@pytest.mark.vendor("vart")
def test_vart_xint8_nhwc_tensors_with_fix_points(dev, tmp_path):
    model = dev.load(_xmodel(tmp_path, _double_onnx((1, 3, 4, 5)), {"x": 6, "y": 5}))
    (x_info,), (y_info,) = model.inputs, model.outputs
    # The DPU's tensors: NHWC, int8, real = q * 2^-fix_point.
    assert (x_info.dtype, x_info.shape, x_info.layout) == (np.int8, (1, 4, 5, 3), "NHWC")
    assert x_info.quant.type == "shift" and x_info.quant.shifts == (6,)
    assert y_info.quant.type == "shift" and y_info.quant.shifts == (5,)

    x = _int8((1, 4, 5, 3), 3)
    (y,) = model.run(x)
    # real y = 2 * x_q / 64 = x_q / 32, stored with fix point 5: y_q == x_q.
    np.testing.assert_array_equal(np.asarray(y), x)
    (y2,) = model.run_async(x).result(timeout=30)
    np.testing.assert_array_equal(np.asarray(y2), x)


@pytest.mark.vendor("vart")
def test_vart_refuses_wrong_input_before_vart_sees_it(dev, tmp_path):
    import accel

    model = dev.load(_xmodel(tmp_path, _double_onnx((1, 3, 4, 5)), {"x": 6, "y": 5}))
    with pytest.raises(accel.ShapeError, match="x"):
        model.run(_int8((1, 3, 4, 5), 4))  # NCHW given to an NHWC tensor
    with pytest.raises(accel.DTypeError, match="int8"):
        model.run(rand((1, 4, 5, 3)))
    (y,) = model.run(_int8((1, 4, 5, 3), 5))  # the process is alive and the device usable
    assert np.asarray(y).shape == (1, 4, 5, 3)
