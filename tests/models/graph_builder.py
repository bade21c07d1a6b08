"""A small ONNX graph builder for the CNNs built here: convolutions with He-initialized weights,
BatchNormalization nodes with random statistics (kept in the graph), activations, a classifier head.

Every random draw comes from one seeded generator in a fixed order, so a builder run twice with the same
seed makes the same model, byte for byte.
"""
from __future__ import annotations

from typing import List, Tuple

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
IR_VERSION = 8


class GraphBuilder:
    """Appends nodes and initializers; names are ``<prefix>_<n>`` so that they are stable."""

    def __init__(self, name: str, seed: int) -> None:
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.nodes: List[onnx.NodeProto] = []
        self.inits: List[onnx.TensorProto] = []
        self._count = 0

    def _new(self, prefix: str) -> str:
        self._count += 1
        return f"{prefix}_{self._count}"

    def const(self, array: np.ndarray, prefix: str) -> str:
        name = self._new(prefix)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(self, op: str, inputs: List[str], prefix: str, **attrs) -> str:
        out = self._new(prefix)
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    # -- layers ----------------------------------------------------------------------------------------

    def conv(self, x: str, cin: int, cout: int, k: int, stride: int = 1, group: int = 1) -> str:
        """A bias-free k x k convolution with 'same'-style padding k // 2 (the BN after it has the bias).
        He (Kaiming normal) init over the fan-in keeps the activations' scale through ReLU layers."""
        fan_in = (cin // group) * k * k
        w = self.rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / fan_in)
        wname = self.const(w.astype(np.float32), "w")
        p = k // 2
        return self.node("Conv", [x, wname], "conv", kernel_shape=[k, k], strides=[stride, stride],
                         pads=[p, p, p, p], group=group)

    def batchnorm(self, x: str, channels: int, gain: float = 1.0) -> str:
        """Inference BatchNormalization with non-trivial scale, bias, mean and variance. `gain` scales
        gamma (below 1 on the last BN of a residual branch keeps sums of branches from growing)."""
        r = self.rng
        scale = r.uniform(0.5, 1.5, channels) * gain
        bias = r.normal(0.0, 0.2, channels)
        mean = r.normal(0.0, 0.2, channels)
        var = r.uniform(0.5, 2.0, channels)
        names = [self.const(a.astype(np.float32), p)
                 for a, p in ((scale, "bn_scale"), (bias, "bn_bias"), (mean, "bn_mean"), (var, "bn_var"))]
        return self.node("BatchNormalization", [x, *names], "bn", epsilon=1e-5)

    def relu(self, x: str) -> str:
        return self.node("Relu", [x], "relu")

    def relu6(self, x: str) -> str:
        """ReLU6 as ONNX exporters write it: Clip with min 0 and max 6 as inputs (opset 11+)."""
        lo = self.const(np.array(0.0, np.float32), "clip_min")
        hi = self.const(np.array(6.0, np.float32), "clip_max")
        return self.node("Clip", [x, lo, hi], "relu6")

    def add(self, a: str, b: str) -> str:
        return self.node("Add", [a, b], "add")

    def classifier(self, x: str, features: int, classes: int) -> str:
        """Global average pool, flatten, then a fully connected layer (Gemm with a bias)."""
        x = self.node("GlobalAveragePool", [x], "gap")
        x = self.node("Flatten", [x], "flatten", axis=1)
        w = self.rng.standard_normal((classes, features)) * np.sqrt(1.0 / features)
        b = self.rng.normal(0.0, 0.1, classes)
        wname = self.const(w.astype(np.float32), "fc_w")
        bname = self.const(b.astype(np.float32), "fc_b")
        return self.node("Gemm", [x, wname, bname], "fc", transB=1)

    # -- the model -------------------------------------------------------------------------------------

    def model(self, inp: Tuple[str, Tuple[int, ...]], out: Tuple[str, str, Tuple[int, ...]]) -> onnx.ModelProto:
        """The model with graph input `inp` = (name, shape) and output `out` = (new name, value, shape)
        (an Identity renames the last value to the output's name)."""
        out_name, value, out_shape = out
        self.nodes.append(helper.make_node("Identity", [value], [out_name], name="output"))
        g = helper.make_graph(
            self.nodes, self.name,
            [helper.make_tensor_value_info(inp[0], TensorProto.FLOAT, list(inp[1]))],
            [helper.make_tensor_value_info(out_name, TensorProto.FLOAT, list(out_shape))],
            self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="accel-tests")
        m.ir_version = IR_VERSION
        onnx.checker.check_model(m)
        return m
