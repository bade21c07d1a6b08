"""A quantized model's float counterpart (``Device.load(..., dequantized=True)``, accel.compiler.dequantize): the run
``accel shim --compare`` holds a deployed int8 model against. Held against references that do not go through the
pass: onnxruntime on the float model the quantizer started from with the QDQ model's own (dequantized) weights, and
for a .xmodel a float ONNX of the DPU network written here from its parameters; a .bin's is its source's. What has
no float counterpart (onnxruntime's operator form) is refused naming its nodes."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import accel
from accel import compile_cache
from accel.compiler import dequantize

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from models import quantized
from test_xmodel import FA, FB1, FP, FW1, FWD, FX, _network

@pytest.fixture(scope="module")
def emu():
    with accel.open("emu:cores=1") as dev:
        yield dev


@pytest.mark.parametrize("activation", ["int8", "uint8"])
def test_a_qdq_model_against_its_float_model_with_its_weights(emu, tmp_path, activation):
    """Every activation float: the counterpart computes what onnxruntime computes on the float model the quantizer
    started from, its weights replaced by the QDQ model's real values, to float rounding; and the int8 model is
    farther from that than its counterpart is."""
    path = quantized.static_model("tiny_cnn", activation=activation, symmetric=activation == "int8")
    base = quantized.float_twin("tiny_cnn", path, tmp_path)
    feeds = quantized.make_feeds("tiny_cnn")
    (want,) = ort.InferenceSession(base.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)

    counterpart = emu.load(str(path), dequantized=True)
    assert [(t.name, t.dtype, t.quant) for t in counterpart.inputs + counterpart.outputs] == \
        [("image", np.float32, None), ("probabilities", np.float32, None)]
    (got,) = counterpart.run(feeds)
    (int8,) = emu.load(str(path)).run(feeds)
    err, int8_err = float(np.abs(got - want).max()), float(np.abs(int8 - want).max())
    print(f"\n{activation}: the counterpart within {err:.2e} of onnxruntime's float run, the int8 model {int8_err:.2e}")
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert int8_err > 10 * err


def test_no_activation_is_quantized_and_the_weights_stay_as_quantized():
    qdq = onnx.load(str(quantized.static_model("tiny_cnn", activation="int8", symmetric=True)))
    f = dequantize.float_counterpart(qdq)
    constants = {i.name for i in f.graph.initializer}
    ops = list(f.graph.node)
    assert not any(n.op_type == "QuantizeLinear" for n in ops)
    dqs = [n for n in ops if n.op_type == "DequantizeLinear"]
    assert dqs and all(n.input[0] in constants for n in dqs)
    assert [n.op_type for n in ops if n.op_type not in ("DequantizeLinear", "Identity")] == \
        [n.op_type for n in qdq.graph.node if n.op_type not in ("DequantizeLinear", "QuantizeLinear")]
    assert dequantize.float_counterpart(f).SerializeToString() == f.SerializeToString()  # nothing left to remove
    assert len(qdq.graph.value_info) > 10  # quant_pre_process's shapes: the types of those made float are gone
    onnx.shape_inference.infer_shapes(f, check_type=True, strict_mode=True)
    onnx.checker.check_model(f, full_check=True)


def _conv(x, w, b, pad, groups=1):
    return helper.make_node("Conv", [x, w] + ([b] if b else []), [x + "_" + w], pads=[pad] * 4, group=groups)


def _float_network(p: dict) -> onnx.ModelProto:
    """The DPU network of test_xmodel._network in float, NHWC in and out, each constant its real value (q * 2^-fix),
    the leaky relu's slope the DPU's 26/256: what the .xmodel's float counterpart computes."""
    def real(a, fix):
        return numpy_helper.from_array((np.asarray(a, np.float64) * 2.0 ** -fix).astype(np.float32))

    consts = {"w1": real(p["w1"].transpose(0, 3, 1, 2), FW1), "b1": real(p["b1"], FB1),
              "wd": real(p["wd"].reshape(3, 3, 8).transpose(2, 0, 1)[:, None], FWD),
              "w3": real(p["w3"].transpose(0, 3, 1, 2), 6)}
    for name, t in consts.items():
        t.name = name
    shape = numpy_helper.from_array(np.array([1, 48], np.int64), "shape48")
    n = helper.make_node
    nodes = [
        n("Transpose", ["x"], ["xc"], perm=[0, 3, 1, 2]),
        n("Conv", ["xc", "w1", "b1"], ["c1"], pads=[1] * 4), n("Relu", ["c1"], ["r1"]),
        n("MaxPool", ["r1"], ["pool"], kernel_shape=[2, 2], strides=[2, 2]),
        n("Conv", ["pool", "wd"], ["d0"], pads=[1] * 4, group=8), n("LeakyRelu", ["d0"], ["d"], alpha=26 / 256),
        n("Add", ["pool", "d"], ["a0"]), n("Relu", ["a0"], ["add"]),
        n("Conv", ["add", "w3"], ["c3"]), n("Concat", ["add", "c3"], ["cat"], axis=1),
        n("AveragePool", ["cat"], ["avg"], kernel_shape=[2, 2], strides=[2, 2]),
        n("Transpose", ["avg"], ["avg_nhwc"], perm=[0, 2, 3, 1]), n("Reshape", ["avg_nhwc", "shape48"], ["flat"]),
        n("Transpose", ["add"], ["add_nhwc"], perm=[0, 2, 3, 1]),
    ]
    g = helper.make_graph(nodes, "float_net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 8, 3])],
                          [helper.make_tensor_value_info("flat", TensorProto.FLOAT, [1, 48]),
                           helper.make_tensor_value_info("add_nhwc", TensorProto.FLOAT, [1, 4, 4, 8])],
                          list(consts.values()) + [shape])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_a_compiled_xmodel_against_its_network_in_float(emu, tmp_path):
    """The DPU subgraph's float counterpart on a float emulator (the DPU's rules are not needed): float NHWC in and
    out under the subgraph's tensor names; fed the real values of the int8 input, it gives what onnxruntime gives on
    the network written in float, neither rounded nor saturated as the int8 run's are."""
    rng = np.random.default_rng(0)
    b, p = _network(rng)
    path = tmp_path / "net.xmodel"
    path.write_bytes(b.bytes())
    x = rng.integers(-128, 128, (1, 8, 8, 3)).astype(np.int8)
    real_x = (x.astype(np.float32) * np.float32(2.0 ** -FX))
    model = emu.load(str(path), dequantized=True)
    (inp,) = model.inputs
    assert (inp.name, inp.shape, inp.dtype, inp.layout, inp.quant) == ("x", (1, 8, 8, 3), np.float32, "NHWC", None)
    assert [(o.name, o.dtype) for o in model.outputs] == [("add_fix_download", np.float32),
                                                        ("flat_fix_download", np.float32)]
    add, flat = model.run(real_x)
    want_flat, want_add = ort.InferenceSession(_float_network(p).SerializeToString(),
                                               providers=["CPUExecutionProvider"]).run(None, {"x": real_x})
    np.testing.assert_allclose(add, want_add, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(flat, want_flat, rtol=1e-6, atol=1e-6)
    with accel.open("emu:cores=1,int8=dpu") as dpu:
        q_add, q_flat = dpu.load(str(path)).run(x)
    for name, q, real, fix in (("add", q_add, add, FA), ("flat", q_flat, flat, FP)):
        steps = real * 2.0 ** fix
        saturated = np.count_nonzero(np.abs(steps) > 127.5)
        unrounded = np.count_nonzero(steps != np.round(steps))
        print(f"\n{name}: of {q.size} float values {unrounded} are not on int8's grid and {saturated} outside its "
              f"range (the DPU saturates them: this network's fix points are small)")
        assert unrounded > q.size // 2 and np.count_nonzero(q != steps) > q.size // 2


def test_operator_form_has_no_float_counterpart(emu):
    path = quantized.operator_model("tiny_cnn")
    with pytest.raises(accel.UnsupportedError, match=r"has no float counterpart: QLinearConv \(node 'stem_quant'\).*"
                                                     r"the operator form"):
        emu.load(str(path), dequantized=True)
    emu.load(str(path))  # the model itself loads


def test_integers_read_by_an_integer_op_are_refused():
    """A DequantizeLinear reading an int8 tensor with other parameters than it was quantized with would leave the
    model partly quantized: refused naming the node."""
    s1, s2, z = (numpy_helper.from_array(np.array(v, t), n) for v, t, n in
                 ((0.5, np.float32, "s1"), (0.25, np.float32, "s2"), (0, np.int8, "z")))
    shape = numpy_helper.from_array(np.array([4], np.int64), "shape")
    nodes = [helper.make_node("QuantizeLinear", ["x", "s1", "z"], ["q"]),
             helper.make_node("Reshape", ["q", "shape"], ["r"]),
             helper.make_node("DequantizeLinear", ["r", "s2", "z"], ["y"], name="reread")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [s1, s2, z, shape])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(accel.compiler.NoFloatCounterpartError,
                       match=r"QuantizeLinear \(node 'q'\) of 'x' stays"):
        dequantize.float_counterpart(m)
    next(i for i in m.graph.initializer if i.name == "s2").CopyFrom(numpy_helper.from_array(np.float32(0.5), "s2"))
    f = dequantize.float_counterpart(m)  # the same parameters through a Reshape: the Reshape carries floats
    assert [n.op_type for n in f.graph.node] == ["Identity", "Reshape", "Identity"]
    x = np.array([[-100, 0.3], [0.7, 100]], np.float32)
    (y,) = ort.InferenceSession(f.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_array_equal(y, x.reshape(-1))  # neither rounded nor saturated
    z = next(i for i in m.graph.initializer if i.name == "z")
    z.CopyFrom(numpy_helper.from_array(np.array(0, np.uint8), "z"))
    f = dequantize.float_counterpart(m)  # uint8 from 0: the Relu a quantizer folds into such a range
    assert [n.op_type for n in f.graph.node] == ["Relu", "Reshape", "Identity"]


def test_options_and_the_cache_key(emu, tiny_path, tmp_path):
    path = quantized.static_model("tiny_cnn", activation="int8", symmetric=True)
    data = Path(path).read_bytes()
    assert compile_cache.cache_key(data, None) != compile_cache.cache_key(data, None, dequantized=True)
    assert compile_cache.cache_key(data, None) == compile_cache.cache_key(data, None, dequantized=False)
    with pytest.raises(TypeError, match="dequantized must be a bool, not str"):
        emu.load(str(path), dequantized="yes")
    accm = tmp_path / "tiny.accm"
    accel.compiler.compile_file(str(tiny_path), str(accm))
    with pytest.raises(accel.InvalidArgumentError, match=r"dequantized applies to ONNX and Vitis AI \.xmodel and "
                                                         r"Horizon \.bin models only; .* already compiled"):
        emu.load(str(accm), dequantized=True)
    float_model = emu.load(str(tiny_path), dequantized=True)  # a float model is its own counterpart
    x = np.random.default_rng(0).random((1, 16), np.float32)
    np.testing.assert_array_equal(float_model.run(x)[0], emu.load(str(tiny_path)).run(x)[0])


def test_quantization_inside_a_subgraph_is_refused():
    s, z = numpy_helper.from_array(np.float32(0.5), "s"), numpy_helper.from_array(np.int8(0), "z")
    branch = helper.make_graph([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
                                helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])], "then", [],
                               [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["y2"])], "else", [],
                              [helper.make_tensor_value_info("y2", TensorProto.FLOAT, [2])])
    g = helper.make_graph([helper.make_node("If", ["c"], ["out"], name="branch", then_branch=branch,
                                            else_branch=other)], "g",
                          [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                           helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2])], [s, z])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(accel.compiler.NoFloatCounterpartError, match=r"the subgraphs of 'branch' \(If\) quantize"):
        dequantize.float_counterpart(m)
