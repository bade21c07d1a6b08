"""Quantized tensors at the API: a model's int8/uint8 inputs and outputs report their scale and zero point
(TensorInfo.quant) and take and give the integers; accel.quantize and accel.dequantize use a tensor's own
parameters with onnxruntime's QuantizeLinear / DequantizeLinear arithmetic (checked element by element
against onnxruntime); the int8 rule set is a device option, recorded in the model and checked at load."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import accel
from accel import compiler
from accel.compiler import accm

pytestmark = pytest.mark.emulator

SCALES = np.array([0.02, 0.05, 0.011], np.float32)
ZEROS = np.array([3, 128, 250], np.uint8)


@pytest.fixture(scope="module")
def emu():
    with accel.open("emu") as d:
        yield d


def int_io_model() -> onnx.ModelProto:
    """q[2, 3, 4] uint8 (per-axis along dim 1) -> DequantizeLinear -> Abs -> QuantizeLinear -> y uint8 (per
    tensor): a model whose input and output are the integers."""
    nodes = [helper.make_node("DequantizeLinear", ["q", "s", "z"], ["x"], axis=1),
             helper.make_node("Abs", ["x"], ["f"]),
             helper.make_node("QuantizeLinear", ["f", "ys", "yz"], ["y"])]
    inits = [numpy_helper.from_array(SCALES, "s"), numpy_helper.from_array(ZEROS, "z"),
             numpy_helper.from_array(np.array(1 / 256, np.float32), "ys"),
             numpy_helper.from_array(np.array(0, np.uint8), "yz")]
    g = helper.make_graph(nodes, "int_io", [helper.make_tensor_value_info("q", TensorProto.UINT8, [2, 3, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.UINT8, [2, 3, 4])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def test_int8_inputs_and_outputs_report_their_quantization(emu):
    m = emu.load(compiler.compile_model(int_io_model()))
    (inp,), (out,) = m.inputs, m.outputs
    assert inp.dtype == np.uint8 and inp.quant.type == "per_axis" and inp.quant.axis == 1
    np.testing.assert_array_equal(np.float32(inp.quant.scales), SCALES)
    assert list(inp.quant.zero_points) == ZEROS.tolist()
    assert out.dtype == np.uint8 and out.quant.type == "per_tensor" and out.quant.axis is None
    assert out.quant.scales == (np.float32(1 / 256),) and tuple(out.quant.zero_points) == (0,)


def test_an_int8_model_takes_and_gives_the_integers(emu):
    model = int_io_model()
    m = emu.load(compiler.compile_model(model))
    q = np.random.default_rng(3).integers(0, 256, (2, 3, 4)).astype(np.uint8)
    (got,) = m.run(q)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"q": q})[0]
    assert np.asarray(got).dtype == np.uint8
    np.testing.assert_array_equal(np.asarray(got), want)


def quantize_model(dtype, axis, scales, zeros, shape) -> onnx.ModelProto:
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=axis),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["r"], axis=axis)]
    inits = [numpy_helper.from_array(scales, "s"), numpy_helper.from_array(zeros, "z")]
    onnx_type = TensorProto.INT8 if dtype == np.int8 else TensorProto.UINT8
    g = helper.make_graph(nodes, "q", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                          [helper.make_tensor_value_info("q", onnx_type, list(shape)),
                           helper.make_tensor_value_info("r", TensorProto.FLOAT, list(shape))], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_quantize_and_dequantize_are_onnxruntimes(emu, dtype):
    zeros = (ZEROS.astype(np.int64) - (128 if dtype == np.int8 else 0)).astype(dtype)
    shape = (2, 3, 50)
    model = quantize_model(dtype, 1, SCALES, zeros, shape)
    rng = np.random.default_rng(5)
    # Values on and near the half steps of each channel's scale, and far outside the range (saturation).
    steps = rng.integers(-400, 400, shape).astype(np.float32) / 2
    x = (steps * SCALES.reshape(1, 3, 1) + rng.choice([0, 1e-7, -1e-7], shape)).astype(np.float32)
    q_want, r_want = ort.InferenceSession(model.SerializeToString(),
                                          providers=["CPUExecutionProvider"]).run(None, {"x": x})
    m = emu.load(compiler.compile_model(model))
    info = m.outputs[0]
    assert info.quant.type == "per_axis"
    q = accel.quantize(x, info)
    assert q.dtype == dtype
    differ = int(np.count_nonzero(q != q_want))
    print(f"accel.quantize {np.dtype(dtype).name}: {q.size} elements, {q.size - differ} identical")
    assert differ == 0
    np.testing.assert_array_equal(accel.dequantize(q, info), r_want)
    q_emu, r_emu = (np.asarray(a) for a in m.run(x))  # the model's own QuantizeLinear on the emulator
    np.testing.assert_array_equal(q_emu, q_want)
    np.testing.assert_array_equal(r_emu, r_want)


def test_quantize_refuses_what_it_cannot_do(emu):
    m = emu.load(compiler.compile_model(int_io_model()))
    with pytest.raises(ValueError, match="'q' of shape"):
        accel.quantize(np.zeros((2, 3)), m.inputs[0])
    with pytest.raises(ValueError, match="dtype int8 does not match tensor 'q'"):
        accel.dequantize(np.zeros((2, 3, 4), np.int8), m.inputs[0])
    float_info = accel.TensorInfo("x", (2,), np.dtype(np.float32))
    with pytest.raises(ValueError, match="'x' is not quantized"):
        accel.quantize(np.zeros(2), float_info)


def test_the_int8_rules_are_a_device_option(emu):
    for rules in ("ort", "dpu", "bpu"):
        with accel.open(f"emu:int8={rules}") as d:
            assert f"int8: {rules} rules" in d.info.name
    known = r"int8='npu' is not a known rule set \(known: ort, dpu, bpu\)"
    with pytest.raises(accel.InvalidArgumentError, match=known):
        accel.open("emu:int8=npu")


def test_the_rules_are_recorded_and_checked_at_load(emu):
    data = bytearray(compiler.compile_model(int_io_model(), int8="ort"))
    header = accm.read(bytes(data))["header"]
    assert header["version_minor"] == 2 and header["int8_rules"] == accm.INT8_RULES["ort"]
    data[44] = 7  # a rule set this reader does not know
    with pytest.raises(accel.ModelFormatError, match="int8_rules 7 is unknown"):
        emu.load(bytes(data))
    with pytest.raises(ValueError, match="int8 must be one of ort, dpu, bpu, not 'npu'"):
        compiler.compile_model(int_io_model(), int8="npu")


def test_a_float_model_is_still_written_as_format_1_1():
    with_float = compiler.compile_model(str(Path(accel.__file__).parent / "models" / "tiny_cnn.onnx"))
    assert accm.read(with_float)["header"]["version_minor"] == accm.FLOAT_MINOR == 1


@pytest.mark.parametrize("rules", ["dpu", "bpu"])
def test_a_float_model_of_any_rules_loads_on_any_device(rules):
    # Format 1.1 reserves the header's int8_rules: a float model compiled for a device's rules keeps it 0.
    data = compiler.compile_model(str(Path(accel.__file__).parent / "models" / "tiny_cnn.onnx"), int8=rules)
    assert accm.read(data)["header"]["int8_rules"] == 0
    for device_rules in ("ort", "dpu", "bpu"):
        with accel.open(f"emu:int8={device_rules}") as d:
            assert d.load(data).outputs[0].shape == (1, 10)
