"""One-op models in onnxruntime's operator form, one per quantized op kind the compiler reads (QLinearConv,
QLinearMatMul, com.microsoft QGemm, QLinearAdd, ..., MatMulInteger, ConvInteger and the dynamic ops), with
8-bit activations of one dtype, int8 weights, power-of-two scales and zero points 0: what the devices' rules
take when the dtype is int8, and refuse for uint8 alone.

    model = one_op("QLinearConv", "uint8")     # x: uint8 [1, 4, 4, 4] in, y: uint8 out
    KINDS["QLinearConv"]                        # the tensor a device's check meets first: "x"
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"
ONNX_TYPES = {"uint8": TensorProto.UINT8, "int8": TensorProto.INT8}
SCALE = 2.0 ** -4
SHAPE = [1, 4, 4, 4]
# kind -> the tensor a device's check meets first (an 8-bit activation of the model's dtype)
KINDS = {
    "QLinearConv": "x", "QLinearMatMul": "x", "QGemm": "x", "QLinearAdd": "x", "QLinearMul": "x",
    "QLinearSigmoid": "x", "QLinearLeakyRelu": "x", "QLinearAveragePool": "x", "QLinearGlobalAveragePool": "x",
    "QLinearConcat": "y", "QLinearSoftmax": "x", "MatMulInteger": "x", "ConvInteger": "x",
    "MatMulIntegerToFloat": "x",
}
# Ops whose activation is uint8 whatever the model: onnxruntime's dynamic quantization.
ALWAYS_UINT8 = {"DynamicQuantizeLinear": "y", "DynamicQuantizeMatMul": None}


class _Builder:
    def __init__(self, dtype: str):
        self.dtype, self.type = dtype, ONNX_TYPES[dtype]
        self.inits: list = []

    def const(self, name: str, array) -> str:
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def scale_zero(self, name: str, dtype=None) -> list:
        """Scale 2^-4 and zero point 0 (of the model's dtype, or `dtype`) constants for tensor `name`."""
        return [self.const(f"{name}_scale", np.float32(SCALE)),
                self.const(f"{name}_zero", np.zeros((), dtype or self.dtype))]

    def weight(self, name: str, shape) -> str:
        rng = np.random.default_rng(len(self.inits))
        return self.const(name, rng.integers(-8, 8, shape).astype(np.int8))


def one_op(kind: str, dtype: str = "int8") -> onnx.ModelProto:
    """A model of the one op `kind` (KINDS, ALWAYS_UINT8) over an 8-bit input x of `dtype` (float for the
    dynamic ops), its output y."""
    b = _Builder(dtype)
    x_shape = [2, 8] if kind in ("QLinearMatMul", "QGemm", "MatMulInteger", "MatMulIntegerToFloat") else SHAPE
    x_type, y_type, y_shape = b.type, b.type, list(x_shape)
    x = ["x", *b.scale_zero("x")]
    y = b.scale_zero("y")
    domain = MS
    attrs: dict = {}
    outputs = ["y"]
    if kind == "QLinearConv":
        ins, domain = [*x, b.weight("w", [4, 4, 1, 1]), *b.scale_zero("w", np.int8), *y], ""
    elif kind in ("QLinearMatMul", "QGemm"):
        ins, domain = [*x, b.weight("w", [8, 3]), *b.scale_zero("w", np.int8)], "" if kind == "QLinearMatMul" else MS
        ins += y if kind == "QLinearMatMul" else ["", *y]
        y_shape = [2, 3]
    elif kind in ("QLinearAdd", "QLinearMul"):
        ins = [*x, "x", *b.scale_zero("x2"), *y]
    elif kind in ("QLinearSigmoid", "QLinearLeakyRelu", "QLinearSoftmax", "QLinearGlobalAveragePool"):
        ins = [*x, *y]
        attrs = {"opset": 13} if kind == "QLinearSoftmax" else {}
        y_shape = [1, 4, 1, 1] if kind == "QLinearGlobalAveragePool" else y_shape
    elif kind == "QLinearAveragePool":
        ins, attrs, y_shape = [*x, *y], {"kernel_shape": [2, 2]}, [1, 4, 3, 3]
    elif kind == "QLinearConcat":
        ins, attrs, y_shape = [*y, *x, *x], {"axis": 1}, [1, 8, 4, 4]
    elif kind in ("MatMulInteger", "ConvInteger"):
        w = b.weight("w", [8, 3] if kind == "MatMulInteger" else [4, 4, 1, 1])
        ins, domain, y_type = ["x", w, x[2], b.const("w_zero", np.int8(0))], "", TensorProto.INT32
        y_shape = [2, 3] if kind == "MatMulInteger" else y_shape
    elif kind == "MatMulIntegerToFloat":
        ins = ["x", b.weight("w", [8, 3]), x[1], b.const("w_scale", np.float32(SCALE)), x[2],
               b.const("w_zero", np.int8(0))]
        y_type, y_shape = TensorProto.FLOAT, [2, 3]
    elif kind == "DynamicQuantizeLinear":
        ins, domain, x_type, y_type = ["x"], "", TensorProto.FLOAT, TensorProto.UINT8
        outputs = ["y", "y_scale_out", "y_zero_out"]
    elif kind == "DynamicQuantizeMatMul":
        ins = ["x", b.weight("w", [4, 3]), b.const("w_scale", np.float32(SCALE)), b.const("w_zero", np.int8(0))]
        x_type, y_type, y_shape = TensorProto.FLOAT, TensorProto.FLOAT, [1, 4, 4, 3]
    else:
        raise ValueError(f"unknown kind {kind!r}")
    node = helper.make_node(kind, ins, outputs, name=f"the_{kind}", domain=domain, **attrs)
    outs = [helper.make_tensor_value_info("y", y_type, y_shape)]
    if kind == "DynamicQuantizeLinear":
        outs += [helper.make_tensor_value_info("y_scale_out", TensorProto.FLOAT, []),
                 helper.make_tensor_value_info("y_zero_out", TensorProto.UINT8, [])]
    graph = helper.make_graph([node], kind, [helper.make_tensor_value_info("x", x_type, x_shape)], outs, b.inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(MS, 1)])


def feed(model: onnx.ModelProto) -> np.ndarray:
    """Random values for the model's input x, of its dtype."""
    t = model.graph.input[0].type.tensor_type
    shape = [d.dim_value for d in t.shape.dim]
    dtype = helper.tensor_dtype_to_np_dtype(t.elem_type)
    rng = np.random.default_rng(0)
    if dtype == np.float32:
        return rng.uniform(-2, 2, shape).astype(np.float32)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape).astype(dtype)
