"""The int8 convolutions split across a core's threads (the emulator's ``threads`` option) and give the same
bytes whatever the thread count: quantized one-node convs whose sizes leave ragged parts (channels off every
multiple of 4 and 16, planes like 7x7 and 13x17, strides 1 and 2, dilation, groups, depthwise, pointwise, two
images) and ConvInteger, each run at threads 1 to 4 on every int8 path this CPU has (ACCEL_EMU_ISA), every
output element equal to onnxruntime's; and the catalog's quantized ResNet-18 and MobileNetV2 bit for bit at
threads 1 and 2.

The cases are sized so that each way a conv splits is taken (ops/qconv.cc's conv_split): parts of the weight
rows sharing one build of the input's copies, parts of the output columns of that build, parts of the
output rows each building its own copies (an input too big for one build; a pointwise conv's read in place),
depthwise parts of channels, and convs too small to split."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import accel
from accel import compiler

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import quant_report
from models import quantized
from models.qdq_builder import DTYPES, QDQ, random_weights

pytestmark = pytest.mark.emulator

THREADS = (1, 2, 3, 4)
PATHS = ("portable", "avx2", "avx512vnni", "amx")

# name: (input shape, weight shape, attributes), grouped by the split each takes.
CONVS = {
    # weight-row parts over one shared build of the input's copies (a 7x7 plane: no column parts); a GEMM
    # splits in parts of about 2M multiply-adds or more, 8 at most
    "7x7_plane": ((1, 130, 7, 7), (150, 130, 3, 3), {"pads": [1, 1, 1, 1]}),
    "13x17_2images": ((2, 37, 13, 17), (70, 37, 3, 3), {"pads": [1, 1, 1, 1]}),
    "dilated": ((1, 20, 30, 30), (36, 20, 3, 3), {"dilations": [2, 2], "pads": [2, 2, 2, 2]}),
    # column parts of one shared build, with weight-row parts or alone
    "40x37_columns": ((1, 23, 40, 37), (40, 23, 3, 3), {"pads": [1, 1, 1, 1]}),
    "stem_7x7_stride2": ((1, 3, 131, 121), (20, 3, 7, 7), {"strides": [2, 2], "pads": [3, 3, 3, 3]}),
    # output-row parts, each building its own rows' copies (the whole build would outgrow the cache)
    "rows_stride2": ((1, 61, 221, 99), (37, 61, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
    # pointwise: shared (the input interleaved once), or rows read in place where that would outgrow the cache
    "pointwise_2images": ((2, 45, 61, 47), (70, 45, 1, 1), {}),
    "pointwise_7x7": ((1, 322, 7, 7), (650, 322, 1, 1), {}),
    "pointwise_rows": ((1, 63, 181, 190), (20, 63, 1, 1), {}),
    # groups: split ones, and ones too small to split (one task per image and group)
    "grouped": ((1, 40, 30, 30), (80, 20, 3, 3), {"group": 2, "pads": [1, 1, 1, 1]}),
    "grouped_small": ((2, 24, 19, 21), (36, 8, 3, 3), {"group": 3, "pads": [1, 1, 1, 1]}),
    # depthwise: parts of channels
    "depthwise": ((1, 150, 29, 31), (150, 1, 3, 3), {"group": 150, "pads": [1, 1, 1, 1]}),
    "depthwise_s2_2images": ((2, 99, 57, 45), (99, 1, 3, 3), {"group": 99, "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    "depthwise_5x5": ((1, 72, 27, 23), (72, 1, 5, 5), {"group": 72, "pads": [2, 2, 2, 2]}),
}


def path_of(monkeypatch, isa: str) -> str:
    """The path loads pick with ACCEL_EMU_ISA=isa (a CPU without it gives a slower one)."""
    monkeypatch.setenv("ACCEL_EMU_ISA", isa)
    with accel.open("emu") as d:
        name = d.info.name
    return name.rsplit(", ", 1)[1].rstrip(")")


@pytest.fixture(scope="module")
def paths():
    """The int8 paths this CPU has."""
    mp = pytest.MonkeyPatch()
    try:
        return [isa for isa in PATHS if path_of(mp, isa) == isa]
    finally:
        mp.undo()


def runs(monkeypatch, accm: bytes, feeds, paths, threads=THREADS) -> dict:
    """{(path, threads): outputs} of one compiled model on one input, a device per path and thread count."""
    got = {}
    for isa in paths:
        monkeypatch.setenv("ACCEL_EMU_ISA", isa)
        for t in threads:
            with accel.open(f"emu:cores=1,threads={t}") as d:
                assert d.info.threads == t and d.info.name.endswith(f", {isa})"), d.info.name
                got[isa, t] = [np.array(o, copy=True) for o in d.load(accm).run(feeds)]
    return got


def assert_all_equal(got: dict, want: list, label: str) -> None:
    """Every run's every output element equals want's (onnxruntime's or threads=1's)."""
    bad = []
    for key, outs in got.items():
        assert len(outs) == len(want)
        for i, (g, w) in enumerate(zip(outs, want)):
            w = np.asarray(w)
            assert g.shape == w.shape and g.dtype == w.dtype, f"{label} {key} output {i}: {g.shape} {g.dtype}"
            stats = quant_report.lsb_diff(g, w)
            differ = stats["elements"] - stats["identical"]
            print(f"{label} {key[0]} threads={key[1]} output {i}: {differ} of {stats['elements']} differ, "
                  f"max {stats['max']}")
            if differ:
                bad.append(f"{key} output {i}: {differ} of {stats['elements']} elements differ by up to "
                           f"{stats['max']}")
    assert not bad, f"{label}: " + "; ".join(bad)


def qdq_conv(dtype: str, case: str):
    xshape, wshape, attrs = CONVS[case]
    b = QDQ(dtype)
    x = b.input("x", xshape, 0.02, 3 if dtype == "uint8" else -5)
    m = wshape[0]
    scales = np.linspace(0.002, 0.01, m).astype(np.float32)
    w = b.weight("w", random_weights(b.rng, wshape), scales, np.zeros(m, np.int8), axis=0)
    bias = b.bias("b", b.rng.integers(-2000, 2000, m), (0.02 * scales).astype(np.float32))
    b.op("Conv", [x, w, bias], **attrs)
    return b.model(0.05 * np.sqrt(wshape[1] * wshape[2] * wshape[3] / 9), 128 if dtype == "uint8" else 2), b.feeds


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CONVS)
def test_convs_equal_onnxruntime_at_every_thread_count_on_every_path(monkeypatch, paths, dtype, case):
    model, feeds = qdq_conv(dtype, case)
    want = quantized.reference_model(model, feeds)
    got = runs(monkeypatch, compiler.compile_model(model), [feeds["x"]], paths)
    assert_all_equal(got, want, f"conv {case} {dtype}")


@pytest.mark.parametrize("case", ["7x7_plane", "40x37_columns", "pointwise_7x7", "rows_stride2", "grouped"])
def test_convs_with_weight_zero_points_give_the_same_bytes_at_every_thread_count_on_every_path(monkeypatch, paths,
                                                                                            case):
    """Nonzero weight zero points take X's column sums: computed once for the parts that share a build. (Compared
    with the portable path at one thread, as test_int8_paths does, not with onnxruntime.)"""
    xshape, wshape, attrs = CONVS[case]
    b = QDQ("uint8")
    x = b.input("x", xshape, 0.02, 7)
    m = wshape[0]
    zw = np.arange(m, dtype=np.int64) % 5 - 2
    w = b.weight("w", random_weights(b.rng, wshape), np.full(m, 0.004, np.float32), zw.astype(np.int8), axis=0)
    b.op("Conv", [x, w], **attrs)
    model = b.model(0.05 * np.sqrt(wshape[1] * wshape[2] * wshape[3] / 9), 128)
    want = quantized.reference_model(model, b.feeds)
    got = runs(monkeypatch, compiler.compile_model(model), [b.feeds["x"]], paths)
    assert_all_equal(got, want, f"conv {case} with weight zero points")


def conv_integer(xshape, wshape, attrs, x_zero: int, w_zero: int, seed: int = 5):
    """A ConvInteger node: uint8 X (zero point x_zero, a graph input), int8 W (constant, zero point w_zero)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, size=xshape).astype(np.uint8)
    w = rng.integers(-128, 128, size=wshape).astype(np.int8)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array(x_zero, np.uint8), "xz"),
             numpy_helper.from_array(np.array(w_zero, np.int8), "wz")]
    node = helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], **attrs)
    graph = helper.make_graph([node], "convinteger", [helper.make_tensor_value_info("x", TensorProto.UINT8, xshape)],
                              [helper.make_tensor_value_info("y", TensorProto.INT32, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), x


@pytest.mark.parametrize("case", [
    ((2, 13, 29, 31), (40, 13, 3, 3), {"pads": [1, 1, 1, 1]}, 17, -3),
    ((1, 30, 41, 37), (24, 15, 3, 3), {"group": 2, "strides": [2, 2], "pads": [1, 1, 1, 1]}, 0, 2),
    ((1, 64, 7, 7), (96, 64, 3, 3), {"pads": [1, 1, 1, 1]}, 128, 0),
], ids=["2images", "grouped_stride2", "7x7_unsplit"])
def test_convinteger_equals_onnxruntime_at_every_thread_count_on_every_path(monkeypatch, paths, case):
    xshape, wshape, attrs, xz, wz = case
    model, x = conv_integer(xshape, wshape, attrs, xz, wz)
    want = quantized.reference_model(model, {"x": x})
    got = runs(monkeypatch, compiler.compile_model(model), [x], paths)
    assert_all_equal(got, want, f"convinteger {xshape} {wshape}")


@pytest.mark.parametrize("name", ["resnet18", "mobilenetv2"])
def test_quantized_catalog_models_are_bit_identical_at_threads_1_and_2(monkeypatch, name):
    path = quantized.static_model(name)
    feeds = quantized.make_feeds(name)
    accm = compiler.compile_model(str(path))
    got = runs(monkeypatch, accm, feeds, [path_of(monkeypatch, "amx")], threads=(1, 2))
    ref = next(iter(got.values()))
    assert_all_equal(got, ref, name)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", [((2, 37, 61, 33), (2, 37, 61, 33)), ((2, 37, 61, 33), (1, 37, 1, 1)),
                                    ((1, 37, 1, 33), (3, 1, 61, 33)), ((150001,), (1,)), ((3, 1), (1, 70001))],
                         ids=["same", "per_channel", "both_broadcast", "one_row", "outer"])
@pytest.mark.parametrize("op", ["Add", "Mul"])
def test_qbinary_equals_onnxruntime_at_every_thread_count(monkeypatch, paths, dtype, shapes, op):
    """QLinearAdd/Mul's rows of the output's last dim in parts (a broadcast's odometer started mid-way)."""
    b = QDQ(dtype)
    za, zb, zy = (7, 200, 128) if dtype == "uint8" else (-3, 10, -1)
    a_ = b.input("a", shapes[0], 0.031, za)
    b_ = b.input("b", shapes[1], 0.017, zb)
    b.op(op, [a_, b_])
    model = b.model(0.045 if op == "Add" else 0.2, zy)
    want = quantized.reference_model(model, b.feeds)
    got = runs(monkeypatch, compiler.compile_model(model), b.feeds, paths)
    assert_all_equal(got, want, f"{op} {shapes} {dtype}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_qbinary_with_a_constant_equals_onnxruntime_at_every_thread_count(monkeypatch, paths, dtype):
    """One operand a single constant: a table over the other's bytes, in parts of 1024 bytes (a ragged last one)."""
    b = QDQ(dtype)
    x = b.input("x", (2, 41, 37, 29), 0.031, 7 if dtype == "uint8" else -3)
    c = b.weight("c", np.array(77 if dtype == "uint8" else -45, b.np_dtype), 0.017, 100 if dtype == "uint8" else 5)
    b.op("Add", [x, c])
    model = b.model(0.045, 128 if dtype == "uint8" else -1)
    want = quantized.reference_model(model, b.feeds)
    got = runs(monkeypatch, compiler.compile_model(model), b.feeds, paths)
    assert_all_equal(got, want, f"Add with a constant {dtype}")
