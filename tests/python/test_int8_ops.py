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
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import accel
from accel import compiler

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import quant_report  # noqa: E402 - tests/ is put on the path just above

pytestmark = pytest.mark.emulator

DTYPES = {"uint8": (np.uint8, TensorProto.UINT8), "int8": (np.int8, TensorProto.INT8)}
RNG_SEED = 11


def _zero(dtype, value: int) -> np.ndarray:
    return np.array(value, dtype=dtype)


class QDQ:
    """A one-op QDQ model: integer graph inputs, each dequantized; constant weights, dequantized; the op;
    its output quantized as the graph output."""

    def __init__(self, dtype: str, opset: int = 13):
        self.np_dtype, self.onnx_dtype = DTYPES[dtype]
        self.opset = opset
        self.nodes: list = []
        self.inits: list = []
        self.inputs: list = []
        self.feeds: dict = {}
        self.rng = np.random.default_rng(RNG_SEED)

    def _dq(self, name: str, scale, zero, axis=None) -> str:
        s, z = f"{name}_scale", f"{name}_zero"
        self.inits += [numpy_helper.from_array(np.asarray(scale, np.float32), s),
                       numpy_helper.from_array(np.asarray(zero), z)]
        attrs = {} if axis is None else {"axis": axis}
        self.nodes.append(helper.make_node("DequantizeLinear", [name, s, z], [f"{name}_dq"], **attrs))
        return f"{name}_dq"

    def input(self, name: str, shape, scale: float, zero: int) -> str:
        """A graph input of random integers over the dtype's whole range."""
        info = np.iinfo(self.np_dtype)
        self.feeds[name] = self.rng.integers(info.min, info.max + 1, size=shape).astype(self.np_dtype)
        self.inputs.append(helper.make_tensor_value_info(name, self.onnx_dtype, list(shape)))
        return self._dq(name, scale, _zero(self.np_dtype, zero))

    def weight(self, name: str, q: np.ndarray, scale, zero, axis=None) -> str:
        self.inits.append(numpy_helper.from_array(q, name))
        return self._dq(name, scale, np.asarray(zero, q.dtype), axis)

    def bias(self, name: str, q: np.ndarray, scale) -> str:
        self.inits.append(numpy_helper.from_array(q.astype(np.int32), name))
        return self._dq(name, scale, np.zeros(np.shape(scale), np.int32), 0 if np.size(scale) > 1 else None)

    def op(self, op_type: str, inputs, **attrs) -> str:
        self.nodes.append(helper.make_node(op_type, list(inputs), ["y_float"], **attrs))
        return "y_float"

    def model(self, out_scale: float, out_zero: int) -> onnx.ModelProto:
        self.inits += [numpy_helper.from_array(np.asarray(out_scale, np.float32), "y_scale"),
                       numpy_helper.from_array(_zero(self.np_dtype, out_zero), "y_zero")]
        self.nodes.append(helper.make_node("QuantizeLinear", ["y_float", "y_scale", "y_zero"], ["y"]))
        graph = helper.make_graph(self.nodes, "qdq", self.inputs,
                                  [helper.make_tensor_value_info("y", self.onnx_dtype, None)], self.inits)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)])


def onnxruntime_int8(model: onnx.ModelProto, feeds: dict) -> list:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.add_session_config_entry("session.qdqisint8allowed", "1")
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"]).run(None, feeds)


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


def _weights(rng, shape, dtype=np.int8) -> np.ndarray:
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, size=shape).astype(dtype)


CONVS = {  # name: (input shape, weight shape, attributes)
    "1x1": ((1, 16, 9, 11), (24, 16, 1, 1), {}),
    "3x3_pad": ((1, 8, 12, 10), (16, 8, 3, 3), {"pads": [1, 1, 1, 1]}),
    "3x3_stride2": ((1, 6, 13, 13), (12, 6, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
    "7x7_stem": ((1, 3, 32, 32), (16, 3, 7, 7), {"strides": [2, 2], "pads": [3, 3, 3, 3]}),
    "grouped": ((1, 8, 10, 10), (8, 4, 3, 3), {"group": 2, "pads": [1, 1, 1, 1]}),
    "depthwise": ((1, 16, 14, 14), (16, 1, 3, 3), {"group": 16, "pads": [1, 1, 1, 1]}),
    "depthwise_s2": ((1, 24, 15, 15), (24, 1, 3, 3), {"group": 24, "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    "dilated": ((1, 4, 12, 12), (8, 4, 3, 3), {"dilations": [2, 2], "pads": [2, 2, 2, 2]}),
    "1d": ((1, 4, 20), (6, 4, 3), {"pads": [1, 1]}),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CONVS)
def test_conv(emu, dtype, case):
    xshape, wshape, attrs = CONVS[case]
    b = QDQ(dtype)
    zx = 3 if dtype == "uint8" else -5
    x = b.input("x", xshape, 0.02, zx)
    m = wshape[0]
    w = b.weight("w", _weights(b.rng, wshape), np.linspace(0.002, 0.01, m).astype(np.float32), np.zeros(m, np.int8),
                 axis=0)
    bias = b.bias("b", b.rng.integers(-2000, 2000, m), (0.02 * np.linspace(0.002, 0.01, m)).astype(np.float32))
    b.op("Conv", [x, w, bias], **attrs)
    check(emu, b.model(0.05, 128 if dtype == "uint8" else 2), b.feeds, f"conv {case} {dtype}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", [((2, 3, 4, 5), (2, 3, 4, 5)), ((2, 3, 4, 5), (1, 3, 1, 1)), ((1, 3, 1, 1), (2, 3, 4, 5)),
                                    ((4, 5), (5,)), ((5,), (4, 5)), ((), (3, 4)), ((3, 4), ()), ((3, 1), (1, 4))])
@pytest.mark.parametrize("op", ["Add", "Mul"])
def test_binary(emu, dtype, shapes, op):
    b = QDQ(dtype)
    za, zb, zy = (7, 200, 128) if dtype == "uint8" else (-3, 10, -1)
    a_ = b.input("a", shapes[0], 0.031, za)
    b_ = b.input("b", shapes[1], 0.017, zb)
    b.op(op, [a_, b_])
    check(emu, b.model(0.045 if op == "Add" else 0.2, zy), b.feeds, f"{op} {shapes} {dtype}")


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
    w = b.weight("w", _weights(b.rng, (33, 19)), 0.003, 0)
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
    w = b.weight("w", _weights(b.rng, wshape), scales, np.zeros(n, np.int8), axis=0 if trans_b else 1)
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
