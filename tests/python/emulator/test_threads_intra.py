"""Intra-job threads (the emulator's ``threads`` option): a job's ops split their work over the core's
threads, and the answer is the same bit for bit whatever the thread count, on the catalog's CNNs and on
one-node models whose odd sizes leave ragged parts (convolutions on every float path this CPU has,
depthwise, pooling, activations, broadcast arithmetic, MatMul and Gemm cut into row or column bands, the
data moves, Resize, reductions, the norms, Cast), and the threaded ops still match onnxruntime. Also the
option's defaults, its report in ``dev.info``, and its errors."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import accel
from accel import compiler

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from models import catalog

pytestmark = pytest.mark.emulator

THREADS = (1, 2, 3, 4)
F = TensorProto.FLOAT
CAPS = {"portable": "portable", "avx2": "avx2", "avx512": "avx512vnni"}  # float path -> ACCEL_EMU_ISA


def runs_by_threads(accm, x, threads=THREADS):
    """{threads: outputs} of one compiled model on one input, one device per thread count."""
    got = {}
    for t in threads:
        with accel.open(f"emu:cores=1,threads={t}") as d:
            assert d.info.threads == t
            got[t] = [np.array(o, copy=True) for o in d.load(accm).run(x)]
    return got


def assert_bit_identical(got, what):
    ref = got[THREADS[0]]
    for t, outs in got.items():
        assert len(outs) == len(ref)
        for i, (a, b) in enumerate(zip(ref, outs)):
            assert a.shape == b.shape and a.dtype == b.dtype
            diff = np.flatnonzero(a.view(np.uint8) != b.view(np.uint8))
            assert diff.size == 0, (f"{what} output {i}: threads={t} differs from threads={THREADS[0]} at "
                                    f"{diff.size} bytes (first at byte {diff[0]})")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return tmp_path_factory.mktemp("threads_intra")


@pytest.mark.parametrize("name", ["resnet18", "mobilenetv2", "yolo"])
def test_catalog_models_are_bit_identical_whatever_the_thread_count(built, name):
    spec = catalog.MODELS[name]
    path = catalog.model_path(name, built if spec.build else None)
    x = spec.make_input(spec.test_shape)
    accm = compiler.compile_model(str(path), {spec.input_name: spec.test_shape})
    got = runs_by_threads(accm, x)
    assert all(np.isfinite(o).all() for o in got[1])
    assert_bit_identical(got, name)


def one_node(op, x_shape, inits=None, extra=(), after=(), y_type=F, **attrs):
    """A one-node ONNX model: y = op(x, *inits, *extra inputs), then the nodes `after` ((op, attrs) pairs,
    each taking the last one's output: an activation the compiler fuses into op). Initializers are float32,
    but those named ``i64_*`` (a Slice's starts, a Pad's pads), which are int64."""
    inits = {k: np.asarray(v, np.int64 if k.startswith("i64_") else np.float32) for k, v in (inits or {}).items()}
    names = ["y"] if not after else [f"t{i}" for i in range(len(after))] + ["y"]
    nodes = [helper.make_node(op, ["x", *inits, *[n for n, _ in extra]], [names[0]], **attrs)]
    nodes += [helper.make_node(o, [names[i]], [names[i + 1]], **kw) for i, (o, kw) in enumerate(after)]
    g = helper.make_graph(
        nodes, op, [helper.make_tensor_value_info("x", F, list(x_shape))]
        + [helper.make_tensor_value_info(n, F, list(s)) for n, s in extra],
        [helper.make_tensor_value_info("y", y_type, None)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def rnd(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def conv(x_shape, m, k, group=1, stride=1, pad=0):
    c = x_shape[1]
    return one_node("Conv", x_shape, {"w": rnd((m, c // group, k, k), 1) * 0.2, "b": rnd((m,), 2)},
                    kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4, group=group)


# Sizes chosen so that every kernel splits (outputs of 10^5 elements and more, GEMMs of millions of
# multiply-adds) into parts that do not divide evenly.
OP_MODELS = {
    "conv3x3": lambda: (conv((1, 13, 29, 31), 37, 3, pad=1), (1, 13, 29, 31)),
    "conv3x3_stride2": lambda: (conv((1, 19, 45, 41), 43, 3, stride=2, pad=1), (1, 19, 45, 41)),
    "conv1x1": lambda: (conv((1, 21, 37, 39), 45, 1), (1, 21, 37, 39)),
    "conv_small_plane": lambda: (conv((1, 136, 7, 9), 200, 3, pad=1), (1, 136, 7, 9)),
    "conv_grouped": lambda: (conv((2, 24, 33, 35), 36, 3, group=3, pad=1), (2, 24, 33, 35)),
    "depthwise": lambda: (conv((1, 37, 43, 47), 37, 3, group=37, pad=1), (1, 37, 43, 47)),
    "depthwise_small_plane": lambda: (conv((2, 101, 13, 11), 101, 5, group=101, pad=2), (2, 101, 13, 11)),
    "maxpool": lambda: (one_node("MaxPool", (1, 37, 65, 67), kernel_shape=[3, 3], strides=[2, 2],
                                 pads=[1, 1, 1, 1]), (1, 37, 65, 67)),
    "avgpool": lambda: (one_node("AveragePool", (1, 37, 65, 67), kernel_shape=[3, 3], strides=[1, 1],
                                 pads=[1, 1, 1, 1]), (1, 37, 65, 67)),
    "globalavgpool": lambda: (one_node("GlobalAveragePool", (3, 131, 23, 29)), (3, 131, 23, 29)),
    "sigmoid": lambda: (one_node("Sigmoid", (1, 37, 61, 67)), (1, 37, 61, 67)),
    "tanh": lambda: (one_node("Tanh", (3, 5, 7, 1999)), (3, 5, 7, 1999)),
    "add_same_shape": lambda: (one_node("Add", (1, 37, 61, 67), {"b": rnd((1, 37, 61, 67), 3)}), (1, 37, 61, 67)),
    "mul_per_channel": lambda: (one_node("Mul", (1, 37, 61, 67), {"b": rnd((1, 37, 1, 1), 4)}), (1, 37, 61, 67)),
    "sub_row_broadcast": lambda: (one_node("Sub", (3, 41, 1, 997), {"b": rnd((1, 1, 13, 997), 5)}), (3, 41, 1, 997)),
    "div_few_long_rows": lambda: (one_node("Div", (2, 1, 100003), {"b": rnd((2, 1, 1), 6)}), (2, 1, 100003)),
    "softmax_rows": lambda: (one_node("Softmax", (3, 12, 37, 129), axis=-1), (3, 12, 37, 129)),
    "layernorm": lambda: (one_node("LayerNormalization", (2, 333, 257), {"s": rnd((257,), 8), "b": rnd((257,), 9)},
                                   axis=-1), (2, 333, 257)),
    "matmul_batched": lambda: (one_node("MatMul", (4, 6, 50, 70), {"b": rnd((1, 6, 70, 61), 7)}), (4, 6, 50, 70)),
}

# The ops threaded for transformers and detection necks: one product cut into column bands (N > M) or row
# bands (a tall stack of rows against one B), few batches each cut, Gemm with its C, transposes and an
# activation fused in, a GEMV; the data moves, Resize, reductions, InstanceNorm and Cast.
THREADED_OPS = {
    "matmul_one_product": lambda: (one_node("MatMul", (1, 131, 200), {"b": rnd((200, 333), 10)}), (1, 131, 200)),
    "matmul_tall_rows": lambda: (one_node("MatMul", (3, 301, 97), {"b": rnd((97, 77), 11)}), (3, 301, 97)),
    "matmul_two_batches": lambda: (one_node("MatMul", (2, 150, 90), {"b": rnd((2, 90, 170), 12)}), (2, 150, 90)),
    "gemm_trans_bias_relu": lambda: (one_node(
        "Gemm", (203, 141), {"b": rnd((259, 203), 13), "c": rnd((259,), 14)}, after=[("Relu", {})],
        transA=1, transB=1, alpha=0.7, beta=1.3), (203, 141)),
    "gemm_row_bands_bias_column": lambda: (one_node("Gemm", (517, 120), {"b": rnd((120, 70), 15),
                                                                         "c": rnd((517, 1), 16)}), (517, 120)),
    "gemv": lambda: (one_node("Gemm", (1, 2000), {"b": rnd((2000, 777), 17), "c": rnd((777,), 18)}), (1, 2000)),
    "transpose_heads": lambda: (one_node("Transpose", (1, 197, 12, 65), perm=[0, 2, 1, 3]), (1, 197, 12, 65)),
    "transpose_nhwc": lambda: (one_node("Transpose", (2, 37, 61, 67), perm=[0, 2, 3, 1]), (2, 37, 61, 67)),
    "transpose_2d": lambda: (one_node("Transpose", (333, 517), perm=[1, 0]), (333, 517)),
    "slice_steps": lambda: (one_node("Slice", (3, 41, 131, 67), {"i64_s": [1, 2], "i64_e": [130, 66],
                                                                  "i64_a": [2, 3], "i64_p": [2, 1]}),
                            (3, 41, 131, 67)),
    "reshape_copy": lambda: (one_node("Reshape", (3, 41, 13, 997), {"i64_shape": [123, 12961]}), (3, 41, 13, 997)),
    "expand": lambda: (one_node("Expand", (3, 1, 1, 997), {"i64_shape": [3, 41, 13, 997]}), (3, 1, 1, 997)),
    "concat_channels": lambda: (one_node("Concat", (1, 37, 43, 47), {"b": rnd((1, 53, 43, 47), 19),
                                                                     "c": rnd((1, 11, 43, 47), 23)}, axis=1),
                                (1, 37, 43, 47)),
    "concat_last_axis": lambda: (one_node("Concat", (5, 97, 301), {"b": rnd((5, 97, 17), 20)}, axis=2),
                                 (5, 97, 301)),
    "pad_constant": lambda: (one_node("Pad", (1, 37, 61, 67), {"i64_pads": [0, 0, 1, 2, 0, 0, 3, 1]}),
                             (1, 37, 61, 67)),
    "pad_reflect": lambda: (one_node("Pad", (2, 29, 53, 59), {"i64_pads": [0, 0, 2, 2, 0, 0, 2, 2]},
                                     mode="reflect"), (2, 29, 53, 59)),
    "resize_nearest_2x": lambda: (one_node("Resize", (1, 67, 41, 43), {"roi": np.zeros(0, np.float32),
                                                                       "scales": [1, 1, 2, 2]}, mode="nearest"),
                                  (1, 67, 41, 43)),
    "resize_linear": lambda: (one_node("Resize", (1, 37, 41, 43), {"roi": np.zeros(0, np.float32),
                                                                   "scales": [1, 1, 1.75, 2.5]}, mode="linear"),
                              (1, 37, 41, 43)),
    "reduce_mean_rows": lambda: (one_node("ReduceMean", (3, 197, 771), axes=[-1]), (3, 197, 771)),
    "reduce_sum_leading_axis": lambda: (one_node("ReduceSum", (301, 997), {"i64_axes": [0]}), (301, 997)),
    "reduce_max_middle_axis": lambda: (one_node("ReduceMax", (7, 301, 97), axes=[1]), (7, 301, 97)),
    "reduce_logsumexp_rows": lambda: (one_node("ReduceLogSumExp", (131, 1003), axes=[1]), (131, 1003)),
    "reduce_l2_spatial": lambda: (one_node("ReduceL2", (2, 37, 61, 67), axes=[2, 3]), (2, 37, 61, 67)),
    "instancenorm": lambda: (one_node("InstanceNormalization", (2, 37, 61, 67), {"s": rnd((37,), 21),
                                                                               "b": rnd((37,), 22)}),
                             (2, 37, 61, 67)),
    "cast_to_int32": lambda: (one_node("Cast", (3, 41, 13, 997), y_type=TensorProto.INT32, to=TensorProto.INT32),
                              (3, 41, 13, 997)),
}
OP_MODELS.update(THREADED_OPS)


def float_paths(monkeypatch):
    """The float paths this CPU has, each as the ACCEL_EMU_ISA cap that picks it."""
    have = []
    for fpath, cap in CAPS.items():
        monkeypatch.setenv("ACCEL_EMU_ISA", cap)
        with accel.open("emu:threads=1") as d:
            if f"float: {fpath}," in d.info.name:
                have.append(cap)
    return have


@pytest.mark.parametrize("name", sorted(OP_MODELS))
def test_ops_with_odd_sizes_are_bit_identical_whatever_the_thread_count(monkeypatch, name):
    model, x_shape = OP_MODELS[name]()
    x = rnd(x_shape, 0)
    for cap in float_paths(monkeypatch):  # the paths differ most in the conv GEMMs (packed or im2col+sgemm)
        monkeypatch.setenv("ACCEL_EMU_ISA", cap)
        got = runs_by_threads(compiler.compile_model(model), x)
        assert_bit_identical(got, f"{name} ({cap})")


def assert_matches_ort(model, x, got, what):
    """Every element of the emulator's output against onnxruntime's: the same bits for ops that only move
    or convert data, else within the op tests' float bound (rtol 1e-4, atol 1e-4 of the output's scale)."""
    (want,) = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    assert got.shape == want.shape, what
    exact = model.graph.node[0].op_type in ("Transpose", "Slice", "Reshape", "Expand", "Concat", "Pad", "Cast") or (
        model.graph.node[0].op_type == "Resize" and "nearest" in what)
    if exact:
        bad = np.flatnonzero(got.view(np.uint8) != want.view(np.uint8))
        assert bad.size == 0, f"{what}: {bad.size} bytes differ from onnxruntime's"
        return
    scale = float(np.abs(want).max())
    err = np.abs(got.astype(np.float64) - want)
    bad = np.flatnonzero(err > 1e-4 * np.abs(want) + 1e-4 * scale)
    assert bad.size == 0, (f"{what}: {bad.size} of {want.size} elements off onnxruntime's by up to {err.max():g} "
                           f"(output scale {scale:g})")


@pytest.mark.parametrize("name", sorted(THREADED_OPS))
def test_threaded_ops_match_onnxruntime(name):
    model, x_shape = THREADED_OPS[name]()
    x = rnd(x_shape, 0)
    got = runs_by_threads(compiler.compile_model(model), x, threads=(3,))[3][0]
    assert_matches_ort(model, x, got, name)


def test_jobs_in_flight_on_several_cores_with_threads_agree(built):
    spec = catalog.MODELS["mobilenetv2"]
    path = catalog.model_path("mobilenetv2", built)
    xs = [spec.make_input(spec.test_shape, seed=s) for s in range(6)]
    accm = compiler.compile_model(str(path), {spec.input_name: spec.test_shape})
    with accel.open("emu:cores=1,threads=1") as d:
        m = d.load(accm)
        want = [np.array(m.run(x)[0], copy=True) for x in xs]
    with accel.open("emu:cores=2,threads=2") as d:
        m = d.load(accm)
        futures = [m.run_async(x) for x in xs]
        got = [np.asarray(f.result(timeout=60)[0]) for f in futures]
    for w, g in zip(want, got):
        assert np.array_equal(w.view(np.uint32), g.view(np.uint32))


def usable_cpus():
    return len(os.sched_getaffinity(0))


def test_defaults_one_core_on_every_cpu_and_cores_share_the_cpus():
    with accel.open("emu") as d:
        assert d.info.cores == 1
        assert d.info.threads == usable_cpus()
    with accel.open("emu:cores=2") as d:
        assert d.info.cores == 2
        assert d.info.threads == max(1, usable_cpus() // 2)
    with accel.open("emu:cores=3,threads=5") as d:
        assert (d.info.cores, d.info.threads) == (3, 5)


@pytest.mark.parametrize("value", ["0", "257", "-1", "two", "", "1.5"])
def test_bad_thread_counts_are_refused_naming_the_option(value):
    with pytest.raises(accel.InvalidArgumentError) as e:
        accel.open(f"emu:threads={value}")
    assert f"threads='{value}'" in str(e.value)
    assert "1 to 256" in str(e.value)


def test_unknown_option_lists_threads():
    with pytest.raises(accel.InvalidArgumentError, match=r"known: cores, threads,"):
        accel.open("emu:thread=2")
