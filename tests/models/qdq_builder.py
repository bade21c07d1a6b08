"""One-op QDQ models for the int8 tests: integer graph inputs of random values over their whole range, each
dequantized; constant weights, dequantized; one op; its output quantized as the graph output. The
convolution cases both the op tests and the code-path tests run are here too.

    b = QDQ("uint8")
    x = b.input("x", (1, 8, 12, 10), scale=0.02, zero=3)
    b.op("Sigmoid", [x])
    model = b.model(out_scale=0.004, out_zero=0)      # y: uint8; b.feeds holds x
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

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


def random_weights(rng, shape, dtype=np.int8) -> np.ndarray:
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
