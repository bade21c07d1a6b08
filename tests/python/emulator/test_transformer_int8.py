"""The dynamically quantized transformer on the int8 GEMM (issue 36 item 7): a BERT-shaped encoder
(tests/models/encoder.py) quantized by onnxruntime's quantize_dynamic matches onnxruntime element by element
(its integer tensors exactly, its float outputs within the float kernels' bound), and the threaded int8 ops
(matmulinteger with a constant B packed in column parts, with a B computed at run time split by batches,
qmatmul, dynquant's range scan and quantization) give the same bytes for any thread count and on every int8
code path this CPU has."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import accel
from accel import compiler

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import quant_report
from models.encoder import encoder
from models.qdq_builder import QDQ, random_weights
from test_int8_paths import assert_same_bytes, run_each_path

pytestmark = pytest.mark.emulator

THREADS = (1, 2, 3)
INTEGER_OPS = ("DynamicQuantizeLinear", "MatMulInteger")
# Outside the integer ops the model computes in float32 (LayerNormalization, Softmax, Erf), where the
# emulator's kernels and onnxruntime's differ in the last bits, which the next layers carry on.
FLOAT_ATOL = 1e-4


@pytest.fixture(scope="module")
def quantized_encoder(tmp_path_factory):
    """A 2-layer encoder (hidden 200 in 4 heads, FFN 800, seq 96: the GEMMs split into column parts whose
    last one is ragged, the FFN's activation's quantization into 2 parts), quantized with quantize_dynamic's
    defaults, every integer tensor an output too."""
    from onnxruntime.quantization import quantize_dynamic

    folder = tmp_path_factory.mktemp("transformer_int8")
    onnx.save(encoder(2, 96, hidden=200, heads=4, ffn=800, seed=3), folder / "f.onnx")
    quantize_dynamic(str(folder / "f.onnx"), str(folder / "q.onnx"))
    model = onnx.load(folder / "q.onnx")
    ops = [n.op_type for n in model.graph.node]
    assert ops.count("MatMulInteger") == 12 and ops.count("DynamicQuantizeLinear") == 8, ops
    outputs = {o.name for o in model.graph.output}
    for node in model.graph.node:
        if node.op_type in INTEGER_OPS:
            for o in node.output:
                if o not in outputs:
                    model.graph.output.append(helper.make_empty_tensor_value_info(o))
                    outputs.add(o)
    x = np.random.default_rng(5).standard_normal((1, 96, 200)).astype(np.float32)
    return model, {"x": x}


def ort_outputs(model, feeds):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"]).run(None, feeds)


def test_the_quantized_encoder_matches_onnxruntime_element_by_element(quantized_encoder):
    """Every activation's quantized integers (in each layer, past LayerNormalization, Softmax and the erf-GELU) are
    onnxruntime's bit for bit. A scale may differ by a few float32 steps where the range's end is a float result that
    differs in its last bit: Erf's, and at onnxruntime's default optimization level its fused SkipLayerNormalization
    and Gelu, whose arithmetic is not LayerNormalization's (with ORT_ENABLE_BASIC only the Erf one is left). The float
    output stays within the float kernels' bound."""
    model, feeds = quantized_encoder
    want = ort_outputs(model, feeds)
    with accel.open("emu") as d:
        m = d.load(compiler.compile_model(model))
        got = [np.asarray(g) for g in m.run(feeds)]
    exact = 0
    for info, g, w in zip(m.outputs, got, want):
        stats = quant_report.lsb_diff(g, w)
        print(quant_report.format_row("encoder dynamic", info.name, stats))
        if g.dtype == np.uint8:
            exact += 1
            assert stats["identical"] == stats["elements"], f"{info.name}: {stats}"
        elif info.name.endswith("_scale"):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=0, err_msg=info.name)
        elif info.name == "y":
            print(f"y: {stats['elements'] - stats['identical']} of {stats['elements']} elements differ from "
                  f"onnxruntime's, by {stats['max_abs']:.3g} at most")
            np.testing.assert_allclose(g, w, rtol=0, atol=FLOAT_ATOL)
    assert exact == 2 * 8  # each DynamicQuantizeLinear's quantized output and zero point


def runs_by_threads(accm, feeds):
    got = {}
    for t in THREADS:
        with accel.open(f"emu:cores=1,threads={t}") as d:
            got[t] = [np.array(o, copy=True) for o in d.load(accm).run(feeds)]
    return got


def bytes_differ(a, b) -> int:
    """Bytes in which two arrays of one shape and dtype differ (0-d ones too: a scale, a zero point)."""
    assert a.shape == b.shape and a.dtype == b.dtype
    return int(np.count_nonzero(a.reshape(-1).view(np.uint8) != b.reshape(-1).view(np.uint8)))


def same_bytes_on_every_path(outs: dict, label: str) -> None:
    """assert_same_bytes (test_int8_paths.py) for outputs that may be 0-d."""
    assert_same_bytes({isa: [np.atleast_1d(o) for o in got] for isa, got in outs.items()}, label)


def assert_bit_identical(got, what):
    ref = got[THREADS[0]]
    for t, outs in got.items():
        for i, (a, b) in enumerate(zip(ref, outs)):
            differ = bytes_differ(a, b)
            assert differ == 0, f"{what} output {i}: threads={t} differs from threads=1 in {differ} bytes"


def matmulinteger_with_b_at_run_time():
    """A [3, 5, 40, 70] uint8 by B [3, 5, 70, 90] int8 (an input): the batches split across the threads."""
    g = helper.make_graph(
        [helper.make_node("MatMulInteger", ["a", "b", "az"], ["y"])], "mmi",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [3, 5, 40, 70]),
         helper.make_tensor_value_info("b", TensorProto.INT8, [3, 5, 70, 90])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [3, 5, 40, 90])],
        [numpy_helper.from_array(np.array(131, np.uint8), "az")])
    rng = np.random.default_rng(7)
    feeds = {"a": rng.integers(0, 256, (3, 5, 40, 70), dtype=np.uint8),
             "b": rng.integers(-128, 128, (3, 5, 70, 90), dtype=np.int8)}
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), feeds


def qdq_matmul():
    """A QDQ MatMul of [96, 300] by a constant [300, 700]: qmatmul in 8 column parts, the last ragged."""
    b = QDQ("uint8")
    a = b.input("a", (96, 300), 0.02, 100)
    w = b.weight("w", random_weights(b.rng, (300, 700)), 0.003, 0)
    b.op("MatMul", [a, w])
    return b.model(0.06, 120), b.feeds


def test_the_quantized_encoder_is_bit_identical_whatever_the_thread_count(quantized_encoder):
    model, feeds = quantized_encoder
    assert_bit_identical(runs_by_threads(compiler.compile_model(model), feeds), "encoder")


@pytest.mark.parametrize("case", [matmulinteger_with_b_at_run_time, qdq_matmul])
def test_int8_products_are_bit_identical_whatever_the_thread_count(case):
    model, feeds = case()
    assert_bit_identical(runs_by_threads(compiler.compile_model(model), feeds), case.__name__)


def test_the_quantized_encoder_gives_the_same_bytes_on_every_int8_path(monkeypatch, quantized_encoder):
    model, feeds = quantized_encoder
    same_bytes_on_every_path(run_each_path(monkeypatch, compiler.compile_model(model), feeds), "encoder")


@pytest.mark.parametrize("case", [matmulinteger_with_b_at_run_time, qdq_matmul])
def test_int8_products_give_the_same_bytes_on_every_int8_path(monkeypatch, case):
    model, feeds = case()
    same_bytes_on_every_path(run_each_path(monkeypatch, compiler.compile_model(model), feeds), case.__name__)


def test_a_matmulinteger_at_run_time_matches_numpy():
    model, feeds = matmulinteger_with_b_at_run_time()
    with accel.open("emu:cores=1,threads=2") as d:
        got = np.asarray(d.load(compiler.compile_model(model)).run(feeds)[0])
    want = np.matmul(feeds["a"].astype(np.int64) - 131, feeds["b"].astype(np.int64)).astype(np.int32)
    np.testing.assert_array_equal(got, want)


def test_the_linear_layers_fuse_into_matmulintegerf_with_the_same_bits(quantized_encoder):
    """Without the integer tensors as outputs, quantize_dynamic's MatMulInteger -> Cast -> Mul -> Add chains
    become matmulintegerf; the encoder's output is the unfused model's bit for bit, and onnxruntime's
    within the float bound."""
    from conftest import runtime_ops

    model, feeds = quantized_encoder
    plain = onnx.ModelProto()
    plain.CopyFrom(model)
    del plain.graph.output[1:]
    ops = runtime_ops(plain)
    assert ops.count("matmulintegerf") == 12 and "matmulinteger" not in ops and "cast" not in ops, ops
    assert "matmulinteger" in runtime_ops(model)  # the chains whose sums are outputs stay apart
    with accel.open("emu") as d:
        fused = np.asarray(d.load(compiler.compile_model(plain)).run(feeds)[0])
        unfused = np.asarray(d.load(compiler.compile_model(model)).run(feeds)[0])
    assert bytes_differ(fused, unfused) == 0
    np.testing.assert_allclose(fused, ort_outputs(plain, feeds)[0], rtol=0, atol=FLOAT_ATOL)


def matmul_integer_to_float(a_dtype, b_dtype, per_column, bias):
    """com.microsoft MatMulIntegerToFloat of A [3, 50, 70] (an input, its scale and zero point inputs too) by a
    constant B [70, 130]: B's scale and zero point one value or one per column, a bias or none."""
    rng = np.random.default_rng(11)
    lo, hi = (-128, 128) if b_dtype == np.int8 else (0, 256)
    n = 130
    inits = [numpy_helper.from_array(rng.integers(lo, hi, (70, n)).astype(b_dtype), "b"),
             numpy_helper.from_array((rng.random(n if per_column else 1) * 0.01 + 0.001).astype(np.float32)
                                     .reshape([n] if per_column else []), "b_scale"),
             numpy_helper.from_array(rng.integers(lo // 4 + 16, hi // 4, n if per_column else 1).astype(b_dtype)
                                     .reshape([n] if per_column else []), "b_zero")]
    ins = ["a", "b", "a_scale", "b_scale", "a_zero", "b_zero"]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "bias"))
        ins.append("bias")
    a_type = TensorProto.UINT8 if a_dtype == np.uint8 else TensorProto.INT8
    g = helper.make_graph(
        [helper.make_node("MatMulIntegerToFloat", ins, ["y"], domain="com.microsoft")], "mmitf",
        [helper.make_tensor_value_info("a", a_type, [3, 50, 70]),
         helper.make_tensor_value_info("a_scale", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("a_zero", a_type, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 50, n])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                          ir_version=8)
    alo, ahi = (-128, 128) if a_dtype == np.int8 else (0, 256)
    feeds = {"a": rng.integers(alo, ahi, (3, 50, 70)).astype(a_dtype), "a_scale": np.array(0.0173, np.float32),
             "a_zero": np.array(alo + 77, a_dtype)}
    return m, feeds


@pytest.mark.parametrize("a_dtype, b_dtype", [(np.uint8, np.int8), (np.uint8, np.uint8), (np.int8, np.int8)])
@pytest.mark.parametrize("per_column", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_matmulintegertofloat_matches_onnxruntime_bit_for_bit(a_dtype, b_dtype, per_column, bias):
    from conftest import runtime_ops

    model, feeds = matmul_integer_to_float(a_dtype, b_dtype, per_column, bias)
    assert runtime_ops(model).count("matmulintegerf") == 1
    want = ort_outputs(model, feeds)[0]
    got = runs_by_threads(compiler.compile_model(model), feeds)
    assert_bit_identical(got, "MatMulIntegerToFloat")
    stats = quant_report.lsb_diff(got[1][0], want)
    print(quant_report.format_row("MatMulIntegerToFloat", "y", stats))
    assert stats["identical"] == stats["elements"], stats


def test_matmulintegerf_gives_the_same_bytes_on_every_int8_path(monkeypatch):
    model, feeds = matmul_integer_to_float(np.uint8, np.int8, True, True)
    same_bytes_on_every_path(run_each_path(monkeypatch, compiler.compile_model(model), feeds), "matmulintegerf")


@pytest.mark.parametrize("dtypes, dims, match", [
    (("uint8", "int8", "float32", "float32"), ((2, 3), (3, 4), (1,), (2, 4)), "B 't1' is not a constant"),
    (("uint8", "int8", "float32", "int32"), ((2, 3), (3, 4), (1,), (2, 4)), "gives float32 Y"),
    (("float32", "int8", "float32", "float32"), ((2, 3), (3, 4), (1,), (2, 4)), "takes int8 or uint8 A and B"),
])
def test_matmulintegerf_refuses_bad_nodes_at_load(dtypes, dims, match):
    """What the compiler never makes, a hand-written file may hold: the kernel's check refuses it at load."""
    from accel.compiler import accm

    codes = [accm.dtype_code(np.dtype(t)) for t in dtypes]
    n = len(codes)
    tensors = [accm.Tensor(f"t{i}", dt, accm.KIND_OUTPUT if i == n - 1 else accm.KIND_INPUT, d)
               for i, (dt, d) in enumerate(zip(codes, dims))]
    node = accm.Node(accm.OPS["matmulintegerf"], list(range(n - 1)), [n - 1], name="n1")
    blob = accm.write(tensors, [node], list(range(n - 1)), [n - 1])
    with accel.open("emu") as d, pytest.raises(accel.AccelError, match=f"'n1'.*matmulintegerf: .*{match}"):
        d.load(blob)
