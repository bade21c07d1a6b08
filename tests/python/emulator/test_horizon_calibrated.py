"""Horizon's calibrated ONNX (*_calibrated_model.onnx, issue 34 item 4): HzCalibration, HzPreprocess, HzQuantize and
HzDequantize (domain "horizon") compile as the QDQ nodes and the convolution they stand for (horizon_ops.py); every
other Horizon op is refused by name, and malformed attributes with a message naming the node.

The calibrated models are made here from onnxruntime's quantize_static QDQ model of a small CNN: each
QuantizeLinear -> DequantizeLinear pair becomes one HzCalibration with the same scale and zero point; in the
Horizon form the weights are float behind an HzCalibration (per output channel or per tensor) and the bias is float,
as hb_mapper writes them. Every output element is compared with the QDQ model's on emu:int8=bpu (`pytest -s`
prints the counts).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from accel import compiler

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from models.device_qdq import run_on_emulator

pytestmark = pytest.mark.emulator

F = TensorProto.FLOAT
SHAPE = (1, 3, 12, 12)


def float_cnn(seed: int = 0) -> onnx.ModelProto:
    """conv3x3 (3->8) + relu -> conv1x1 (8->6) + relu: y [1, 6, 12, 12]."""
    rng = np.random.default_rng(seed)
    inits = [numpy_helper.from_array(rng.normal(0, 0.4, (8, 3, 3, 3)).astype(np.float32), "w1"),
             numpy_helper.from_array(rng.normal(0, 0.1, 8).astype(np.float32), "b1"),
             numpy_helper.from_array(rng.normal(0, 0.3, (6, 8, 1, 1)).astype(np.float32), "w2"),
             numpy_helper.from_array(rng.normal(0, 0.1, 6).astype(np.float32), "b2")]
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2"),
             helper.make_node("Relu", ["c2"], ["y"], name="relu2")]
    graph = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", F, SHAPE)],
                              [helper.make_tensor_value_info("y", F, [1, 6, 12, 12])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def qdq_cnn(tmp_path: Path, per_channel: bool) -> onnx.ModelProto:
    """quantize_static's QDQ model of float_cnn: symmetric int8 activations and weights."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self):
            rng = np.random.default_rng(7)
            self.it = iter([{"x": rng.uniform(-1, 1, SHAPE).astype(np.float32)} for _ in range(8)])

        def get_next(self):
            return next(self.it, None)

    src, dst = tmp_path / "float.onnx", tmp_path / f"qdq_{per_channel}.onnx"
    onnx.save(float_cnn(), src)
    quantize_static(str(src), str(dst), Reader(), quant_format=QuantFormat.QDQ, per_channel=per_channel,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                    extra_options={"ActivationSymmetric": True})
    return onnx.load(dst)


def _values(model: onnx.ModelProto) -> dict:
    return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


def hz_calibration(x: str, y: str, name: str, scales, zero=0, axis=None, **attrs) -> onnx.NodeProto:
    kw = {"scales": [float(s) for s in np.asarray(scales).reshape(-1)], **attrs}
    if zero is not None:
        kw["zero_point"] = [int(z) for z in np.asarray(zero).reshape(-1)][:1]
    if axis is not None:
        kw["axis"] = axis
    kw.setdefault("qtype", "int8")
    return helper.make_node("HzCalibration", [x], [y], name=name, domain="horizon", **kw)


def calibrated_form(qdq: onnx.ModelProto, weights: bool) -> onnx.ModelProto:
    """The QDQ model with each Q -> DQ pair as one HzCalibration; with `weights`, also each weight DQ as an
    HzCalibration of the float weights (axis 0 when per channel) and each bias DQ as the float bias."""
    vals = _values(qdq)
    g = qdq.graph
    producer = {o: n for n in g.node for o in n.output}
    nodes, inits, dropped = [], list(g.initializer), set()
    for n in g.node:
        if n.op_type != "DequantizeLinear":
            nodes.append(n)
            continue
        s = vals[n.input[1]]
        z = vals[n.input[2]] if len(n.input) > 2 and n.input[2] else np.zeros(1, np.int8)
        q = producer.get(n.input[0])
        if q is not None and q.op_type == "QuantizeLinear":
            nodes.append(hz_calibration(q.input[0], n.output[0], n.name or n.output[0], s, z))
            dropped.add(id(q))
        elif weights and n.input[0] in vals:
            ints = vals[n.input[0]]
            axis = next((a.i for a in n.attribute if a.name == "axis"), 1) if s.size > 1 else None
            shape = [1] * ints.ndim
            if axis is not None:
                shape[axis] = s.size
            real = ((ints.astype(np.int64) - z.reshape(shape)).astype(np.float32) * s.reshape(shape)).astype(np.float32)
            if ints.dtype == np.int32:  # a bias: the float values themselves
                inits.append(numpy_helper.from_array(real, n.output[0]))
            else:
                fname = f"{n.input[0]}_float"
                inits.append(numpy_helper.from_array(real, fname))
                nodes.append(hz_calibration(fname, n.output[0], n.name or n.output[0], s, z, axis))
        else:
            nodes.append(n)
    nodes = [n for n in nodes if id(n) not in dropped]
    graph = helper.make_graph(nodes, "calibrated", g.input, g.output, inits)
    opsets = list(qdq.opset_import) + [helper.make_opsetid("horizon", 1)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=qdq.ir_version)


def output_scale(qdq: onnx.ModelProto) -> float:
    vals = _values(qdq)
    last = next(n for n in qdq.graph.node if n.output[0] == qdq.graph.output[0].name)
    return float(vals[last.input[1]])


def differing(label: str, got: np.ndarray, want: np.ndarray, scale: float) -> int:
    steps = np.abs(np.rint((got.astype(np.float64) - want.astype(np.float64)) / scale)).astype(np.int64)
    differ = int(np.count_nonzero(got != want))
    print(f"\n{label}: {want.size} elements, {differ} differ, largest difference {int(steps.max())} steps")
    return differ


@pytest.mark.parametrize("per_channel", [True, False], ids=["weights per axis", "weights per tensor"])
@pytest.mark.parametrize("weights", [False, True], ids=["activations", "activations+float weights"])
@pytest.mark.parametrize("rules", ["bpu", "ort"])
def test_the_calibrated_model_computes_its_qdq_model(tmp_path, per_channel, weights, rules):
    qdq = qdq_cnn(tmp_path, per_channel)
    hz = calibrated_form(qdq, weights)
    assert sum(n.op_type == "HzCalibration" for n in hz.graph.node) >= (7 if weights else 5)
    ops = [[n["op_name"] for n in compiler.accm.read(compiler.compile_model(m, int8=rules))["nodes"]]
           for m in (qdq, hz)]
    assert ops[0] == ops[1] and ops[0].count("qconv") == 2, ops  # both convolutions int8 in both forms
    x = np.random.default_rng(11).uniform(-1.2, 1.2, SHAPE).astype(np.float32)
    (want,) = run_on_emulator(qdq, x, rules)
    (got,) = run_on_emulator(hz, x, rules)
    assert differing(f"calibrated vs QDQ on int8={rules} ({'per axis' if per_channel else 'per tensor'}"
                     f"{', float weights' if weights else ''})", got, want, output_scale(qdq)) == 0


def _single(node: onnx.NodeProto, shape, out_shape=None, out_type=F, extra=()) -> onnx.ModelProto:
    graph = helper.make_graph([*extra, node], "one", [helper.make_tensor_value_info("x", F, shape)],
                              [helper.make_tensor_value_info(node.output[0], out_type, out_shape or shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("horizon", 1)],
                             ir_version=8)


def fake_quant(x, s, lo=-128, hi=127, axis=None):
    shape = [1] * x.ndim
    if axis is not None:
        shape[axis] = np.size(s)
    s = np.asarray(s, np.float32).reshape(shape)
    return (np.clip(np.rint(x / s), lo, hi) * s).astype(np.float32)


@pytest.mark.parametrize("case", ["per axis", "per tensor", "uint8", "bits 8", "switch OFF", "float32"])
def test_hzcalibration_is_fake_quantization(case):
    rng = np.random.default_rng(3)
    x = rng.uniform(-3, 3, (1, 4, 5, 5)).astype(np.float32)
    x[0, 0, 0, :4] = [0.25, -0.75, 1.25, 100.0]  # ties (scale 0.5) and saturation
    s4 = np.array([0.5, 0.02, 0.01, 0.03], np.float32)
    node, want = {
        "per axis": (hz_calibration("x", "y", "cal", s4, axis=1), fake_quant(x, s4, axis=1)),
        "per tensor": (hz_calibration("x", "y", "cal", [0.5]), fake_quant(x, 0.5)),
        "uint8": (hz_calibration("x", "y", "cal", [0.02], zero=None, qtype="uint8"), fake_quant(x, 0.02, 0, 255)),
        "bits 8": (helper.make_node("HzCalibration", ["x"], ["y"], name="cal", domain="horizon", scales=[0.5], bits=8),
                   fake_quant(x, 0.5)),
        "switch OFF": (hz_calibration("x", "y", "cal", [0.5], switch="OFF"), x),
        "float32": (hz_calibration("x", "y", "cal", [0.5], qtype="float32"), x),
    }[case]
    rules = "ort" if case == "uint8" else "bpu"  # the bpu rules hold int8 only
    (got,) = run_on_emulator(_single(node, list(x.shape)), x, rules)
    assert np.array_equal(got, want), f"{int(np.count_nonzero(got != want))} of {want.size} differ"


@pytest.mark.parametrize("group", [1, 3])
def test_hzpreprocess_is_its_1x1_convolution(group):
    rng = np.random.default_rng(5)
    w = rng.normal(0, 0.02, (3, 3 // group, 1, 1)).astype(np.float32)
    b = rng.normal(0, 1, 3).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]
    hz = helper.make_node("HzPreprocess", ["x", "w", "b"], ["y"], name="pre", domain="horizon", channel_group=group,
                          data_format="NCHW", input_type="rgb")
    conv = helper.make_node("Conv", ["x", "w", "b"], ["y"], name="conv", group=group)
    x = rng.uniform(-128, 127, (1, 3, 6, 6)).astype(np.float32)
    outs = []
    for node in (hz, conv):
        m = _single(node, [1, 3, 6, 6])
        m.graph.initializer.extend(inits)
        outs.append(run_on_emulator(m, x, "ort")[0])
    assert np.array_equal(outs[0], outs[1])


def test_hzquantize_and_hzdequantize_are_linear():
    rng = np.random.default_rng(9)
    x = rng.uniform(-2, 2, (2, 4, 3)).astype(np.float32)
    s = np.array([0.01, 0.02, 0.015, 0.03], np.float32)
    inits = [numpy_helper.from_array(s, "s"), numpy_helper.from_array(np.zeros(4, np.int8), "z")]
    q = helper.make_node("HzQuantize", ["x", "s", "z"], ["q"], name="q", domain="horizon", bits=8, axis=1)
    dq = helper.make_node("HzDequantize", ["q", "s", "z"], ["y"], name="dq", domain="horizon", axis=1)
    m = _single(dq, [2, 4, 3], extra=[q])
    m.graph.initializer.extend(inits)
    (got,) = run_on_emulator(m, x, "bpu")
    assert np.array_equal(got, fake_quant(x, s, axis=1))
    mq = _single(q, [2, 4, 3], out_type=TensorProto.INT8)
    mq.graph.initializer.extend(inits)
    (ints,) = run_on_emulator(mq, x, "bpu")
    assert ints.dtype == np.int8
    assert np.array_equal(ints, np.clip(np.rint(x / s.reshape(1, 4, 1)), -128, 127).astype(np.int8))


@pytest.mark.parametrize("op, words", [
    ("HzSQuantizedConv", "HzSQuantizedConv (node 'n'): Horizon's quantized ONNX ops are not publicly described; "
                         "compile the model's *_calibrated_model.onnx"),
    ("HzFrobnicate", "HzFrobnicate (node 'n'): not one of the Horizon ops the compiler reads (HzCalibration, "
                     "HzPreprocess, HzQuantize, HzDequantize"),
])
def test_other_horizon_ops_are_refused_by_name(op, words):
    m = _single(helper.make_node(op, ["x"], ["y"], name="n", domain="horizon"), [1, 4])
    with pytest.raises(compiler.CompileError, match=r"^Horizon ops the compiler does not read: ") as e:
        compiler.compile_model(m, int8="bpu")
    assert words in str(e.value)
    rows = {u.op: u.supported for u in compiler.coverage.of_model(m)}
    assert rows == {op: False}


def test_the_coverage_report_counts_the_calibrated_ops_as_supported():
    m = _single(hz_calibration("x", "y", "cal", [0.5]), [1, 4])
    assert all(u.supported for u in compiler.coverage.of_model(m))


@pytest.mark.parametrize("node, shape, words", [
    (hz_calibration("x", "y", "cal", [0.5], qtype="int4"), [1, 4], "HzCalibration (node 'cal'): unknown qtype 'int4'"),
    (hz_calibration("x", "y", "cal", [0.5], qtype="int16"), [1, 4], "qtype 'int16' is not supported: the emulator's "
                                                                    "quantized ops are 8-bit"),
    (helper.make_node("HzCalibration", ["x"], ["y"], name="cal", domain="horizon", scales=[0.5], bits=7), [1, 4],
     "HzCalibration (node 'cal'): bits 7 is not a width HzCalibration quantizes to (8, 16 or 32)"),
    (hz_calibration("x", "y", "cal", [0.5, 0.5, 0.5], axis=1), [1, 4, 2],
     "HzCalibration (node 'cal'): 3 scales along axis 1, but 'x' has 4 there (shape (1, 4, 2))"),
    (hz_calibration("x", "y", "cal", [0.5, 0.25]), [1, 2],
     "HzCalibration (node 'cal'): 2 scales but no axis attribute"),
    (hz_calibration("x", "y", "cal", [0.5, 0.5], axis=3), [1, 2], "axis 3 is out of range for 'x' of rank 2"),
    (hz_calibration("x", "y", "cal", [0.0]), [1, 4], "every scale must be finite and > 0, got [0.0]"),
    (helper.make_node("HzCalibration", ["x"], ["y"], name="cal", domain="horizon", qtype="int8"), [1, 4],
     "HzCalibration (node 'cal'): no scales attribute"),
    (hz_calibration("x", "y", "cal", [0.5], zero=300), [1, 4], "zero point 300 is outside int8's range"),
    (helper.make_node("HzPreprocess", ["x", "x"], ["y"], name="pre", domain="horizon", channel_group=1,
                      data_format="NHWC", input_type="rgb"), [1, 3, 4, 4],
     "HzPreprocess (node 'pre'): data_format 'NHWC' is not supported"),
    (helper.make_node("HzPreprocess", ["x", "x"], ["y"], name="pre", domain="horizon", input_type="rgb"), [1, 3, 4, 4],
     "HzPreprocess (node 'pre'): channel_group None must be an integer >= 1"),
    (helper.make_node("HzQuantize", ["x", "x"], ["y"], name="q", domain="horizon"), [1, 4],
     "HzQuantize (node 'q'): the scale (input 1) must be a constant"),
])
def test_malformed_attributes_are_refused_clearly(node, shape, words):
    with pytest.raises(compiler.CompileError) as e:
        compiler.compile_model(_single(node, shape), int8="bpu")
    assert words in str(e.value)


def test_a_model_without_horizon_ops_is_passed_on_as_it_is():
    m = float_cnn()
    assert compiler.horizon_ops.rewrite(m) is m


def test_the_bpu_rules_refuse_an_unsigned_calibration_as_any_qdq_model():
    m = _single(hz_calibration("x", "y", "cal", [0.02], zero=None, qtype="uint8"), [1, 4])
    with pytest.raises(compiler.CompileError, match=r"node 'cal_quantize' \(QuantizeLinear\): tensor 'y_quantized' "
                                                    r"is uint8: the bpu int8 rules compute in int8"):
        compiler.compile_model(m, int8="bpu")
    compiler.compile_model(m, int8="ort")  # onnxruntime's rules take it
