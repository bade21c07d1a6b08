"""LayerNormalization bit for bit as onnxruntime's CPU kernel computes it (arithmetic `onnxruntime` of the
layernorm op): every element of Y compared with onnxruntime's as float32 bits, over row lengths on both sides of
onnxruntime's vector kernel (8) and every tail length of its lanes, with and without B, axis -1 and other
axes, inputs far from zero (where the variance's rounding shows); and a quantized model whose float
LayerNormalization lies between quantized MatMuls, whose int8 values must be onnxruntime's exactly (a float
rounding difference changes a quantized value only near a rounding boundary, so the float tests are the
sensitive ones; this one holds the whole island, DequantizeLinear -> LayerNormalization -> QuantizeLinear, to
onnxruntime's session). Each test prints how many elements differ."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import accel
from accel import compiler

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from models import ort_reference

pytestmark = pytest.mark.emulator

F = TensorProto.FLOAT


@pytest.fixture(scope="module")
def emu():
    with accel.open("emu:int8=ort") as d:
        yield d


def ln_model(shape, axis, bias, eps=1e-5, seed=1, runtime_params=False):
    norm = tuple(shape[axis:])
    rng = np.random.default_rng(seed)
    params = {"s": rng.standard_normal(norm).astype(np.float32)}
    if bias:
        params["b"] = rng.standard_normal(norm).astype(np.float32)
    node = helper.make_node("LayerNormalization", ["x", *params], ["y"], axis=axis, epsilon=eps)
    inputs = [helper.make_tensor_value_info("x", F, list(shape))]
    inits = []
    if runtime_params:
        inputs += [helper.make_tensor_value_info(k, F, list(v.shape)) for k, v in params.items()]
    else:
        inits = [numpy_helper.from_array(v, k) for k, v in params.items()]
    g = helper.make_graph([node], "ln", inputs, [helper.make_tensor_value_info("y", F, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m, (params if runtime_params else {})


def ort_run(m, feeds):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    return ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"]).run(None, feeds)


def differing(got, want) -> int:
    got, want = np.asarray(got, np.float32), np.asarray(want, np.float32)
    assert got.shape == want.shape
    return int(np.count_nonzero(got.view(np.int32) != want.view(np.int32)))


def check_bits(emu, m, feeds, label):
    want = ort_run(m, feeds)[0]
    got = emu.load(compiler.compile_model(m)).run(feeds)[0]
    bad = differing(got, want)
    print(f"{label}: {bad} of {want.size} elements differ from onnxruntime")
    assert bad == 0 and np.array_equal(np.asarray(got).view(np.int32), want.view(np.int32))


# Row lengths: 1 and the short rows onnxruntime computes in its operator's loop (< 8), then its vector kernel's
# whole groups of 8 with every tail length 1..7 (the tail has three forms), and transformer widths.
ROWS = (1, 2, 3, 7, 8, 9, 12, 13, 15, 16, 17, 20, 23, 31, 64, 100, 197, 384, 768)


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("n", ROWS)
def test_rows_bit_identical(emu, n, bias):
    m, _ = ln_model((24, n), -1, bias, seed=n)
    rng = np.random.default_rng(100 + n)
    x = (rng.standard_normal((24, n)) * 3 + 100).astype(np.float32)  # an offset: the variance's rounding shows
    check_bits(emu, m, {"x": x}, f"n={n} {'bias' if bias else 'no bias'}")


@pytest.mark.parametrize("shape,axis", [((2, 3, 4, 5), 0), ((2, 3, 4, 5), 1), ((2, 3, 4, 5), 2), ((2, 3, 4, 5), -1),
                                        ((3, 7, 11), 1), ((5, 1), -1), ((2, 197, 768), -1), ((4, 6, 129), 2)])
def test_axes_bit_identical(emu, shape, axis):
    m, _ = ln_model(shape, axis, True, eps=1e-6, seed=3)
    x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    check_bits(emu, m, {"x": x}, f"shape {shape} axis {axis}")


@pytest.mark.parametrize("offset,scale", [(0.0, 1.0), (1e4, 1.0), (-3e3, 0.01), (1e6, 50.0), (0.0, 1e-4)])
def test_offsets_bit_identical(emu, offset, scale):
    n = 61
    m, _ = ln_model((32, n), -1, True, seed=5)
    x = (np.random.default_rng(9).standard_normal((32, n)) * scale + offset).astype(np.float32)
    check_bits(emu, m, {"x": x}, f"offset {offset} scale {scale}")


@pytest.mark.parametrize("outputs", [("y", "mean", "isd"), ("y", "mean"), ("y", "", "isd")])
@pytest.mark.parametrize("shape,axis", [((4, 768), -1), ((3, 5), 1), ((2, 3, 4, 5), 1), ((2, 3, 4, 5), 0),
                                        ((6, 9, 7), -2)])
def test_mean_and_inv_std_dev_outputs(emu, shape, axis, outputs):
    """The outputs Mean and InvStdDev (shaped X.shape[:axis] followed by 1s), bit for bit, any of them used."""
    m, _ = ln_model(shape, axis, True, seed=2)
    m.graph.node[0].ClearField("output")
    m.graph.node[0].output.extend(outputs)
    del m.graph.output[:]
    m.graph.output.extend([helper.make_tensor_value_info(o, F, None) for o in outputs if o])
    x = (np.random.default_rng(4).standard_normal(shape) * 2 + 30).astype(np.float32)
    want = ort_run(m, {"x": x})
    got = emu.load(compiler.compile_model(m)).run({"x": x})
    for name, g, w in zip([o for o in outputs if o], got, want):
        bad = differing(g, w)
        print(f"{shape} axis {axis} {name}: {bad} of {w.size} differ")
        assert bad == 0 and np.asarray(g).shape == w.shape


def test_constant_rows_and_runtime_params(emu):
    """Rows of one repeated value (a zero variance: 1 / sqrt(epsilon)) and Scale, B given at run time."""
    m, params = ln_model((6, 40), -1, True, eps=1e-3, runtime_params=True)
    x = np.repeat(np.array([[0.0], [1.0], [-2.5], [1e4], [3.25], [7e-3]], np.float32), 40, axis=1)
    x[3, ::3] += 1  # one row not constant
    check_bits(emu, m, {"x": x, **params}, "constant rows, runtime Scale and B")


def _decomposed(n, square="Pow", scale_bias=False, seed=3):
    """(x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) over the last axis, written out as exporters write it."""
    sq = helper.make_node("Pow", ["d", "two"], ["p"]) if square == "Pow" else helper.make_node("Mul", ["d", "d"], ["p"])
    nodes = [helper.make_node("ReduceMean", ["x"], ["m"], axes=[-1]), helper.make_node("Sub", ["x", "m"], ["d"]), sq,
             helper.make_node("ReduceMean", ["p"], ["v"], axes=[-1]), helper.make_node("Add", ["v", "eps"], ["ve"]),
             helper.make_node("Sqrt", ["ve"], ["sd"]), helper.make_node("Div", ["d", "sd"], ["y" if not scale_bias
                                                                                             else "n"])]
    rng = np.random.default_rng(seed)
    inits = [numpy_helper.from_array(np.float32(2), "two"), numpy_helper.from_array(np.float32(1e-5), "eps")]
    if scale_bias:
        nodes += [helper.make_node("Mul", ["n", "s"], ["ns"]), helper.make_node("Add", ["ns", "b"], ["y"])]
        inits += [numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), k) for k in ("s", "b")]
    g = helper.make_graph(nodes, "dec", [helper.make_tensor_value_info("x", F, [64, n])],
                          [helper.make_tensor_value_info("y", F, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def _arithmetic(m):
    from accel.compiler import accm
    from accel.compiler.op_params import OPS, LayerNorm

    parsed = accm.read(compiler.compile_model(m))
    found = [LayerNorm.from_record(nd["ints"], nd["floats"]).arithmetic for nd in parsed["nodes"]
             if nd["op"] == OPS["layernorm"]]
    assert len(found) == 1, found
    return found[0], parsed["header"]["version_minor"]


@pytest.mark.parametrize("n", [7, 16, 768])
def test_decomposed_layernorm_is_onnxruntimes_fused_kernel_bit_for_bit(emu, n):
    """onnxruntime's optimizer fuses the ReduceMean, Sub, Pow, ..., Mul, Add form into its LayerNormalization kernel
    at its default level; so does the compiler, with that kernel's arithmetic."""
    from accel.compiler.op_params import LayerNormArithmetic

    m = _decomposed(n, scale_bias=True)
    assert _arithmetic(m) == (LayerNormArithmetic.ONNXRUNTIME, 6)
    x = (np.random.default_rng(n).standard_normal((64, n)) * 3 + 100).astype(np.float32)  # an offset: rounding shows
    check_bits(emu, m, {"x": x}, f"decomposed n={n}")


def test_other_decomposed_forms_keep_the_centered_arithmetic():
    # Without the scale and bias, or with Mul(d, d) for the square, onnxruntime runs the ops one by one: neither
    # arithmetic is bit for bit with those (left as it was).
    from accel.compiler.op_params import LayerNormArithmetic

    assert _arithmetic(_decomposed(16)) == (LayerNormArithmetic.CENTERED, 1)  # still a 1.1 file
    assert _arithmetic(_decomposed(16, square="Mul", scale_bias=True)) == (LayerNormArithmetic.CENTERED, 1)
    assert _arithmetic(ln_model((3, 16), -1, True)[0]) == (LayerNormArithmetic.ONNXRUNTIME, 6)


# ---------------------------------------------------------------------------------------------------------------
# A float LayerNormalization between quantized layers
# ---------------------------------------------------------------------------------------------------------------

def float_block(width=48, hidden=768, out=32, tokens=128):
    """x -> MatMul -> Add (an offset: LayerNorm's input is far from zero) -> LayerNormalization -> MatMul -> y."""
    rng = np.random.default_rng(11)
    inits = {"w1": (rng.standard_normal((width, hidden)) * 0.2).astype(np.float32),
             "b1": (rng.standard_normal(hidden) + 20).astype(np.float32),
             "s": (rng.standard_normal(hidden) * 0.5 + 1).astype(np.float32),
             "b": (rng.standard_normal(hidden) * 0.1).astype(np.float32),
             "w2": (rng.standard_normal((hidden, out)) * 0.2).astype(np.float32)}
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["hb"]),
             helper.make_node("LayerNormalization", ["hb", "s", "b"], ["ln"], axis=-1, epsilon=1e-5),
             helper.make_node("MatMul", ["ln", "w2"], ["y"])]
    g = helper.make_graph(nodes, "block", [helper.make_tensor_value_info("x", F, [1, tokens, width])],
                          [helper.make_tensor_value_info("y", F, None)],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


@pytest.mark.parametrize("activation", ["uint8", "int8"])
def test_quantized_model_with_layernorm_island(emu, tmp_path, activation):
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    shape = (1, 128, 48)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.feeds = iter([{"x": np.random.default_rng(s).standard_normal(shape).astype(np.float32)}
                               for s in range(8)])

        def get_next(self):
            return next(self.feeds, None)

    src, dst = tmp_path / "block.onnx", tmp_path / "block_q.onnx"
    onnx.save(float_block(), str(src))
    quantize_static(str(src), str(dst), Reader(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QUInt8 if activation == "uint8" else QuantType.QInt8,
                    weight_type=QuantType.QInt8)
    model = onnx.load(str(dst))
    assert [n.op_type for n in model.graph.node].count("LayerNormalization") == 1
    # The LayerNormalization's quantized output (its QuantizeLinear) is compared too.
    ln_out = next(n.output[0] for n in model.graph.node if n.op_type == "LayerNormalization")
    q_ln = next(n.output[0] for n in model.graph.node if n.op_type == "QuantizeLinear" and n.input[0] == ln_out)
    model.graph.output.append(onnx.helper.make_empty_tensor_value_info(q_ln))

    x = (np.random.default_rng(99).standard_normal(shape) * 1.5).astype(np.float32)
    sess = ort.InferenceSession(model.SerializeToString(), ort_reference.session_options(model),
                                providers=["CPUExecutionProvider"])
    want = sess.run(None, {"x": x})
    got = emu.load(compiler.compile_model(model)).run({"x": x})
    for name, g, w in zip(("y", q_ln), got, want):
        g = np.asarray(g)
        assert g.dtype == w.dtype and g.shape == w.shape
        bad = int(np.count_nonzero(g != w))
        print(f"{activation} {name}: {bad} of {w.size} differ from onnxruntime")
        assert bad == 0, f"{name}: {bad} of {w.size} elements differ"


# ---------------------------------------------------------------------------------------------------------------
# What the kernel refuses when the model loads
# ---------------------------------------------------------------------------------------------------------------

def ln_file(ints, stat_dims):
    """A layernorm node over X (2, 8) and S (8,), with Y (2, 8) and outputs of stat_dims after it."""
    from accel.compiler import accm

    f32 = accm.dtype_code(np.dtype(np.float32))
    dims = [(2, 8), (8,), (2, 8), *stat_dims]
    tensors = [accm.Tensor(f"t{i}", f32, accm.KIND_INPUT if i < 2 else accm.KIND_OUTPUT, d)
               for i, d in enumerate(dims)]
    outs = list(range(2, len(dims)))
    node = accm.Node(accm.OPS["layernorm"], [0, 1], outs, name="n1", ints=list(ints), floats=[1e-5])
    return accm.write(tensors, [node], [0, 1], outs)


@pytest.mark.parametrize("ints,stat_dims,match", [
    ((1, 5, 0), (), "arithmetic 5 is not 0"),
    ((1, 1, 2), ((2, 1),), "outputs mask 2 is not 0 or an odd"),
    ((1, 1, 7), ((2, 1),), "has 2 outputs where the outputs mask 7 names 3"),
    ((1, 0, 3), ((2, 1),), "only with arithmetic 1"),
    ((1, 1, 3), ((2, 8),), "statistics output shape"),
    ((1, 1, 0), ((2, 1),), "outputs where the outputs mask 0 names 1"),
])
def test_kernel_refuses_bad_nodes_at_load(emu, ints, stat_dims, match):
    with pytest.raises(accel.AccelError, match=f"'n1'.*layernorm: .*{match}"):
        emu.load(ln_file(ints, stat_dims))


def test_kernel_loads_good_statistics_node(emu):
    x = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32)
    s = np.ones(8, np.float32)
    y, mean, isd = emu.load(ln_file((1, 1, 7), ((2, 1), (2, 1)))).run({"t0": x, "t1": s})
    np.testing.assert_allclose(np.asarray(y), (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(mean).ravel(), x.mean(1), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(isd).ravel(), 1 / np.sqrt(x.var(1) + 1e-5), rtol=1e-5)
