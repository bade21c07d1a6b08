"""The int8 engine op by op against onnxruntime: one QDQ group per model (DequantizeLinear -> op ->
QuantizeLinear, with int8 or uint8 integers as the model's inputs and its output), run on the emulator and on
onnxruntime with int8 activations allowed (session.qdqisint8allowed=1, its default optimizations), every
output element compared: the count that differ and the largest difference in quantization steps (LSB).
The inputs are random integers over the whole range, so ties and saturation occur."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import accel
from accel import compiler

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import quant_report
from models import quantized
from models.qdq_builder import CONVS, DTYPES, QDQ, random_weights

pytestmark = pytest.mark.emulator

def onnxruntime_int8(model: onnx.ModelProto, feeds: dict) -> list:
    return quantized.reference_model(model, feeds)


def check(emu, model: onnx.ModelProto, feeds: dict, label: str) -> None:
    want = onnxruntime_int8(model, feeds)
    m = emu.load(compiler.compile_model(model))
    got = m.run([feeds[i.name] for i in m.inputs])
    for g, w in zip(got, want):
        stats = quant_report.lsb_diff(np.asarray(g), w)
        print(quant_report.format_row(label, "y", stats))
        assert stats["identical"] == stats["elements"], \
            f"{label}: {stats['elements'] - stats['identical']} of {stats['elements']} elements differ from " \
            f"onnxruntime, by up to {stats['max']} LSB"


@pytest.fixture(scope="module")
def emu():
    with accel.open("emu") as d:
        yield d


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CONVS)
def test_conv(emu, dtype, case):
    xshape, wshape, attrs = CONVS[case]
    b = QDQ(dtype)
    zx = 3 if dtype == "uint8" else -5
    x = b.input("x", xshape, 0.02, zx)
    m = wshape[0]
    scales = np.linspace(0.002, 0.01, m).astype(np.float32)
    w = b.weight("w", random_weights(b.rng, wshape), scales, np.zeros(m, np.int8), axis=0)
    bias = b.bias("b", b.rng.integers(-2000, 2000, m), (0.02 * scales).astype(np.float32))
    b.op("Conv", [x, w, bias], **attrs)
    check(emu, b.model(0.05, 128 if dtype == "uint8" else 2), b.feeds, f"conv {case} {dtype}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", [((2, 3, 4, 5), (2, 3, 4, 5)), ((2, 3, 4, 5), (1, 3, 1, 1)),
                                    ((1, 3, 1, 1), (2, 3, 4, 5)), ((4, 5), (5,)), ((5,), (4, 5)), ((), (3, 4)),
                                    ((3, 4), ()), ((3, 1), (1, 4))])
@pytest.mark.parametrize("op", ["Add", "Mul"])
def test_binary(emu, dtype, shapes, op):
    b = QDQ(dtype)
    za, zb, zy = (7, 200, 128) if dtype == "uint8" else (-3, 10, -1)
    a_ = b.input("a", shapes[0], 0.031, za)
    b_ = b.input("b", shapes[1], 0.017, zb)
    b.op(op, [a_, b_])
    check(emu, b.model(0.045 if op == "Add" else 0.2, zy), b.feeds, f"{op} {shapes} {dtype}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("first", [False, True], ids=["constant_second", "constant_first"])
@pytest.mark.parametrize("op", ["Add", "Mul"])
def test_binary_with_a_constant(emu, dtype, first, op):
    # One operand a single constant value (a model's "x + 3", "x * (1/6)"): a table made at load.
    b = QDQ(dtype)
    x = b.input("x", (2, 4, 6, 5), 0.031, 7 if dtype == "uint8" else -3)
    c = b.weight("c", np.array(77 if dtype == "uint8" else -45, b.np_dtype), 0.017, 100 if dtype == "uint8" else 5)
    b.op(op, [c, x] if first else [x, c])
    check(emu, b.model(0.045 if op == "Add" else 0.02, 128 if dtype == "uint8" else -1), b.feeds,
          f"{op} with a constant {'first' if first else 'second'} {dtype}")


UNARY = {  # op: attributes
    "Sigmoid": {}, "LeakyRelu": {"alpha": 0.1}, "HardSigmoid": {"alpha": 0.2, "beta": 0.5}, "HardSwish": {},
    "Tanh": {}, "Relu": {}, "Clip": {},
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", UNARY)
def test_unary(emu, dtype, op):
    b = QDQ(dtype, opset=14)
    x = b.input("x", (2, 3, 8, 8), 0.05, 128 if dtype == "uint8" else 0)
    b.op(op, [x], **UNARY[op])
    check(emu, b.model(0.004, 0 if dtype == "uint8" else -128), b.feeds, f"{op} {dtype}")


POOLS = {
    "max_2x2": ("MaxPool", {"kernel_shape": [2, 2], "strides": [2, 2]}),
    "max_3x3_pad": ("MaxPool", {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    "avg_2x2": ("AveragePool", {"kernel_shape": [2, 2], "strides": [2, 2]}),
    "avg_3x3_pad": ("AveragePool", {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1]}),
    "avg_3x3_pad_include": ("AveragePool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1}),
    "global_avg": ("GlobalAveragePool", {}),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", POOLS)
def test_pool(emu, dtype, case):
    op, attrs = POOLS[case]
    b = QDQ(dtype)
    z = 100 if dtype == "uint8" else -7
    x = b.input("x", (1, 5, 11, 9), 0.03, z)
    b.op(op, [x], **attrs)
    same = op == "MaxPool"  # the pair around MaxPool is dropped only with equal parameters
    check(emu, b.model(0.03 if same else 0.021, z if same else z + 3), b.feeds, f"{case} {dtype}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_concat(emu, dtype):
    b = QDQ(dtype)
    z = 128 if dtype == "uint8" else 0
    xs = [b.input(f"x{i}", (1, 2 + i, 5, 5), 0.01 * (i + 1), z + i) for i in range(3)]
    b.op("Concat", xs, axis=1)
    check(emu, b.model(0.02, z), b.feeds, f"concat {dtype}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_matmul(emu, dtype):
    b = QDQ(dtype)
    a = b.input("a", (2, 7, 33), 0.02, 5 if dtype == "uint8" else 1)
    w = b.weight("w", random_weights(b.rng, (33, 19)), 0.003, 0)
    b.op("MatMul", [a, w])
    check(emu, b.model(0.06, 120 if dtype == "uint8" else -2), b.feeds, f"matmul {dtype}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("trans_b", [0, 1])
def test_gemm(emu, dtype, trans_b):
    b = QDQ(dtype)
    a = b.input("a", (3, 40), 0.02, 5 if dtype == "uint8" else 1)
    n = 17
    wshape = (n, 40) if trans_b else (40, n)
    scales = np.linspace(0.001, 0.004, n).astype(np.float32)
    w = b.weight("w", random_weights(b.rng, wshape), scales, np.zeros(n, np.int8), axis=0 if trans_b else 1)
    c = b.bias("c", b.rng.integers(-3000, 3000, n), (0.02 * scales).astype(np.float32))
    b.op("Gemm", [a, w, c], transB=trans_b)
    check(emu, b.model(0.05, 128 if dtype == "uint8" else 0), b.feeds, f"gemm transB={trans_b} {dtype}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["Reshape", "Transpose", "Flatten"])
def test_data_movement(emu, dtype, op):
    b = QDQ(dtype)
    z = 9 if dtype == "uint8" else -9
    x = b.input("x", (2, 3, 4, 5), 0.05, z)
    if op == "Reshape":
        b.inits.append(numpy_helper.from_array(np.array([6, 20], np.int64), "shape"))
        b.op("Reshape", [x, "shape"])
    elif op == "Transpose":
        b.op("Transpose", [x], perm=[0, 2, 3, 1])
    else:
        b.op("Flatten", [x], axis=1)
    check(emu, b.model(0.05, z), b.feeds, f"{op} {dtype}")
