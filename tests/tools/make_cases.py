#!/usr/bin/env python3
"""Generates the C tests' cases at test time (a ctest FIXTURES_SETUP step).

For every op of the emulator's first op set (and its attribute variants) it builds a small ONNX model
with onnx.helper and random float32 weights (fixed seed), compiles it to .accm with accel.compiler,
draws random inputs and asks onnxruntime for the expected outputs. Everything lands in OUT_DIR:

    OUT_DIR/manifest.txt       the index the C tests read (format below)
    OUT_DIR/<case>.accm        the compiled model
    OUT_DIR/<case>.onnx        the source model (for debugging a failure by hand)
    OUT_DIR/<case>.in<i>.bin   input i, raw little-endian, C order
    OUT_DIR/<case>.out<i>.bin  expected output i (onnxruntime), raw little-endian, C order
    OUT_DIR/image_nv12.accm    a model whose input is an NV12 image (not in the manifest: written with
                               accel.compiler.accm directly; the image_info test loads it)

manifest.txt, one record per line, fields separated by single spaces (names never contain spaces):

    case <name> <tag> <model file> <n_inputs> <n_outputs>
    in <name> <dtype> <ndim> <d0> ... <dn-1> <data file>      (n_inputs lines, in model input order)
    out <name> <dtype> <ndim> <d0> ... <dn-1> <data file>     (n_outputs lines, in model output order)
    end
    compile_error <name> <message...>                          (accel.compiler refused the case)

Tags: "op" (a correctness case: run and compare), "slow" (a model that takes tens of ms per run on one
core: the scheduling tests keep a core busy with it), "tiny" (a trivial model for scheduling tests),
"base" (the base model of the corrupt-file test), "cnn" (the small CNN, also used by the concurrency test).

Usage: make_cases.py OUT_DIR
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from accel import compiler

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
import ort_reference  # tests/models/ort_reference.py: onnx and onnxruntime only

SEED = 20240601
F = TensorProto.FLOAT


class Builder:
    """A tiny ONNX graph builder: inputs, initializers (random float32 weights), nodes, outputs."""

    def __init__(self, rng: np.random.Generator, opset: int = 13):
        self.rng = rng
        self.opset = opset
        self.transform = None  # model -> model, applied to the finished model (e.g. quantize_dynamic)
        self.nodes = []
        self.inits = []
        self.inputs = []  # (name, shape, array)
        self.outputs = []  # names
        self.n = 0

    def name(self, hint: str) -> str:
        self.n += 1
        return f"{hint}_{self.n}"

    def input(self, name: str, shape, data: np.ndarray | None = None, scale: float = 1.0,
              dtype=np.float32) -> str:
        """An input of `dtype` (outputs are float32 only: the C tests compare float32)."""
        if data is None:
            data = (self.rng.standard_normal(shape) * scale).astype(np.float32)
        self.inputs.append((name, tuple(shape), np.ascontiguousarray(data, dtype=dtype)))
        return name

    def const(self, array: np.ndarray, hint: str = "w") -> str:
        n = self.name(hint)
        self.inits.append(numpy_helper.from_array(np.asarray(array), n))
        return n

    def weight(self, shape, hint: str = "w", scale: float | None = None) -> str:
        if scale is None:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else int(shape[0])
            scale = 1.0 / np.sqrt(max(fan_in, 1))
        return self.const((self.rng.standard_normal(shape) * scale).astype(np.float32), hint)

    def node(self, op: str, inputs, n_out: int = 1, outputs=None, **attrs):
        outs = outputs if outputs is not None else [self.name(op.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, list(inputs), outs, name=self.name("n_" + op.lower()), **attrs))
        return outs[0] if len(outs) == 1 else outs

    def output(self, name: str):
        self.outputs.append(name)

    def model(self, output_shapes=None) -> onnx.ModelProto:
        """output_shapes: None the first time (onnxruntime does not need them), then the shapes
        onnxruntime computed, so that the saved model is complete and passes the checker."""
        graph_inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), list(s))
                        for n, s, a in self.inputs]
        shapes = output_shapes or [None] * len(self.outputs)
        graph_outputs = [helper.make_tensor_value_info(n, F, None if s is None else list(s))
                         for n, s in zip(self.outputs, shapes)]
        g = helper.make_graph(self.nodes, "case", graph_inputs, graph_outputs, initializer=self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", self.opset)],
                              producer_name="accel-tests")
        m.ir_version = min(m.ir_version, 10)  # what onnxruntime 1.2x+ reads
        return self.transform(m) if self.transform else m


# ------------------------------------------------------------------------------------------------
# Cases. Each function fills a Builder; the registry maps case name -> (tag, function, opset).
# ------------------------------------------------------------------------------------------------

CASES: list[tuple[str, str, int, object]] = []


def case(name: str, tag: str = "op", opset: int = 13):
    def register(fn):
        CASES.append((name, tag, opset, fn))
        return fn
    return register


def conv_case(name, x_shape, w_shape, bias=True, **attrs):
    @case(name)
    def _(b: Builder):
        x = b.input("x", x_shape)
        ins = [x, b.weight(w_shape)]
        if bias:
            ins.append(b.weight((w_shape[0],), "b", scale=0.5))
        b.output(b.node("Conv", ins, outputs=["y"], **attrs))


conv_case("conv_basic", (1, 3, 8, 8), (4, 3, 3, 3), pads=[1, 1, 1, 1])
conv_case("conv_nobias", (1, 3, 8, 8), (4, 3, 3, 3), bias=False)
conv_case("conv_nobias_pads", (1, 3, 7, 9), (5, 3, 3, 3), bias=False, pads=[1, 1, 1, 1])
conv_case("conv_asym_pads", (1, 3, 8, 8), (4, 3, 3, 3), pads=[0, 1, 2, 1])
conv_case("conv_asym_pads2", (1, 2, 6, 7), (3, 2, 3, 2), pads=[2, 0, 1, 3])
conv_case("conv_stride2", (1, 3, 9, 9), (4, 3, 3, 3), strides=[2, 2], pads=[1, 1, 1, 1])
conv_case("conv_stride_hw", (1, 3, 9, 10), (4, 3, 3, 2), strides=[1, 2])
conv_case("conv_wide_odd", (1, 20, 13, 11), (36, 20, 3, 3), pads=[1, 1, 1, 1])
conv_case("conv_deep_s2", (1, 300, 9, 9), (10, 300, 3, 3), strides=[2, 2], pads=[1, 0, 1, 2])
conv_case("conv_dw_small", (1, 40, 7, 7), (40, 1, 5, 5), group=40, pads=[2, 1, 2, 3])
conv_case("conv_stride3_k2", (2, 3, 11, 11), (4, 3, 2, 2), strides=[3, 3])
conv_case("conv_dilation2", (1, 3, 10, 10), (4, 3, 3, 3), dilations=[2, 2], pads=[2, 2, 2, 2])
conv_case("conv_dilation_hw", (1, 2, 10, 12), (3, 2, 3, 3), dilations=[1, 3], pads=[1, 0, 1, 1],
          strides=[2, 1])
conv_case("conv_group2", (1, 4, 8, 8), (6, 2, 3, 3), group=2, pads=[1, 1, 1, 1])
conv_case("conv_group3_nobias", (1, 6, 7, 7), (9, 2, 3, 3), bias=False, group=3, strides=[2, 2])
conv_case("conv_depthwise", (1, 8, 8, 8), (8, 1, 3, 3), group=8, pads=[1, 1, 1, 1])
conv_case("conv_depthwise_stride2", (1, 8, 9, 9), (8, 1, 3, 3), group=8, pads=[1, 1, 1, 1], strides=[2, 2])
conv_case("conv_depthwise_mult2", (1, 4, 8, 8), (8, 1, 3, 3), group=4, pads=[1, 1, 1, 1])
conv_case("conv_depthwise_k5_asym", (1, 6, 9, 9), (6, 1, 5, 5), group=6, pads=[2, 1, 2, 3])
conv_case("conv_1x1", (1, 16, 5, 5), (8, 16, 1, 1))
conv_case("conv_1x1_stride2_nobias", (2, 8, 6, 6), (12, 8, 1, 1), bias=False, strides=[2, 2])
conv_case("conv_batch2", (2, 3, 6, 6), (4, 3, 3, 3), pads=[1, 1, 1, 1])
conv_case("conv_rect_kernel", (1, 3, 6, 10), (4, 3, 1, 5), pads=[0, 2, 0, 2])
conv_case("conv_same_upper", (1, 3, 7, 7), (4, 3, 3, 3), auto_pad="SAME_UPPER", strides=[2, 2])
conv_case("conv_same_lower", (1, 3, 8, 8), (4, 3, 4, 4), auto_pad="SAME_LOWER")
conv_case("conv_valid", (1, 3, 8, 8), (4, 3, 3, 3), auto_pad="VALID")
conv_case("conv1d", (1, 3, 12), (4, 3, 3), pads=[1, 2], strides=[2])


def gemm_case(name, a_shape, b_shape, c_shape=None, b_input=False, **attrs):
    @case(name)
    def _(b: Builder):
        a = b.input("a", a_shape)
        bb = b.input("b", b_shape) if b_input else b.weight(b_shape)
        ins = [a, bb]
        if c_shape is not None:
            ins.append(b.weight(c_shape, "c", scale=1.0))
        b.output(b.node("Gemm", ins, outputs=["y"], **attrs))


gemm_case("gemm_basic", (4, 5), (5, 6), (6,))
gemm_case("gemm_noc", (4, 5), (5, 6))
gemm_case("gemm_transA", (5, 4), (5, 6), (6,), transA=1)
gemm_case("gemm_transB", (4, 5), (6, 5), (4, 6), transB=1)
gemm_case("gemm_transAB_alpha_beta", (5, 4), (6, 5), (1, 6), transA=1, transB=1, alpha=0.5, beta=2.0)
gemm_case("gemm_c_column", (4, 5), (5, 6), (4, 1), alpha=-1.5)
gemm_case("gemm_c_scalar", (4, 5), (5, 6), (), beta=0.25)
gemm_case("gemm_c_one", (3, 7), (7, 2), (1,))
gemm_case("gemm_beta0", (4, 5), (5, 6), (4, 6), beta=0.0)
gemm_case("gemm_b_input", (4, 5), (5, 6), (6,), b_input=True)
gemm_case("gemm_fc", (2, 64), (10, 64), (10,), transB=1)


def matmul_case(name, a_shape, b_shape, b_input=True):
    @case(name)
    def _(b: Builder):
        a = b.input("a", a_shape)
        bb = b.input("b", b_shape) if b_input else b.weight(b_shape)
        b.output(b.node("MatMul", [a, bb], outputs=["y"]))


matmul_case("matmul_2d", (3, 4), (4, 5))
matmul_case("matmul_2d_const", (7, 16), (16, 9), b_input=False)
matmul_case("matmul_batched", (2, 3, 4, 5), (2, 3, 5, 6))
matmul_case("matmul_broadcast_rhs2d", (2, 3, 4, 5), (5, 6), b_input=False)
matmul_case("matmul_broadcast_lhs2d", (4, 5), (3, 5, 6))
matmul_case("matmul_broadcast_batch", (2, 1, 4, 5), (3, 5, 6))
matmul_case("matmul_1d_lhs", (5,), (5, 6))
matmul_case("matmul_1d_rhs", (3, 4, 5), (5,))
matmul_case("matmul_1d_lhs_batched", (5,), (2, 5, 3))
matmul_case("matmul_1d_both", (7,), (7,))


def binary_case(op, variant, a_shape, b_shape, b_const):
    name = f"{op.lower()}_{variant}"

    @case(name)
    def _(b: Builder):
        a = b.input("a", a_shape)
        shape_b = b_shape
        data = b.rng.standard_normal(shape_b).astype(np.float32)
        if op == "Div":  # keep denominators away from 0
            data = (np.sign(data) + (data == 0)) * (0.5 + np.abs(data))
            data = data.astype(np.float32)
        bb = b.const(data, "k") if b_const else b.input("b", shape_b, data=data)
        b.output(b.node(op, [a, bb], outputs=["y"]))


BINARY_VARIANTS = [
    ("same", (2, 3, 4, 5), (2, 3, 4, 5), False),
    ("scalar", (2, 3, 4, 5), (), True),
    ("one", (3, 5), (1,), True),
    ("per_channel", (1, 4, 5, 5), (4, 1, 1), True),
    ("per_channel_4d", (2, 4, 3, 3), (1, 4, 1, 1), False),
    ("row", (3, 4, 5), (5,), True),
    ("mixed_ranks", (4, 1), (3, 1, 5), False),
    ("both_broadcast", (2, 1, 4), (1, 3, 1), False),
    ("lhs_small", (5,), (2, 3, 5), False),
]
for _op in ("Add", "Sub", "Mul", "Div"):
    for _v in BINARY_VARIANTS:
        binary_case(_op, *_v)


def unary_case(name, op, shape=(2, 3, 4, 5), scale=4.0, extra_inputs=(), opset=13, **attrs):
    @case(name, opset=opset)
    def _(b: Builder):
        x = b.input("x", shape, scale=scale)
        ins = [x]
        for v in extra_inputs:
            ins.append("" if v is None else b.const(np.array(v, dtype=np.float32), "k"))
        b.output(b.node(op, ins, outputs=["y"], **attrs))


unary_case("relu", "Relu")
unary_case("relu_2d", "Relu", shape=(7, 13))
unary_case("clip_min_max", "Clip", extra_inputs=(-1.5, 2.0))
unary_case("clip_relu6", "Clip", extra_inputs=(0.0, 6.0), scale=8.0)
unary_case("clip_min_only", "Clip", extra_inputs=(-0.5,))
unary_case("clip_max_only", "Clip", extra_inputs=(None, 0.75))
unary_case("clip_opset6_attrs", "Clip", opset=6, min=-1.0, max=1.0)
unary_case("sigmoid", "Sigmoid", scale=8.0)
unary_case("hardsigmoid", "HardSigmoid")
unary_case("hardsigmoid_alpha_beta", "HardSigmoid", alpha=0.3, beta=0.4)
unary_case("hardswish", "HardSwish", opset=14)
unary_case("leakyrelu", "LeakyRelu")
unary_case("leakyrelu_alpha", "LeakyRelu", alpha=0.2)


def pool_case(name, op, x_shape, negative=False, **attrs):
    @case(name)
    def _(b: Builder):
        data = b.rng.standard_normal(x_shape).astype(np.float32)
        if negative:  # every value < 0: a zero from padding must never win the max
            data = (-np.abs(data) - 1.0).astype(np.float32)
        x = b.input("x", x_shape, data=data)
        b.output(b.node(op, [x], outputs=["y"], **attrs))


pool_case("maxpool_2x2", "MaxPool", (1, 3, 8, 8), kernel_shape=[2, 2], strides=[2, 2])
pool_case("maxpool_3x3_s1", "MaxPool", (2, 2, 6, 7), kernel_shape=[3, 3])
pool_case("maxpool_pads", "MaxPool", (1, 3, 8, 8), negative=True, kernel_shape=[3, 3], strides=[2, 2],
          pads=[1, 1, 1, 1])
pool_case("maxpool_asym_pads", "MaxPool", (1, 2, 7, 7), negative=True, kernel_shape=[2, 3],
          pads=[0, 1, 1, 0])
pool_case("maxpool_strides_hw", "MaxPool", (1, 2, 9, 10), kernel_shape=[3, 2], strides=[2, 3])
pool_case("maxpool_ceil", "MaxPool", (1, 3, 8, 8), kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
pool_case("maxpool_ceil_pads", "MaxPool", (1, 2, 9, 9), negative=True, kernel_shape=[3, 3],
          strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)
pool_case("maxpool_dilation", "MaxPool", (1, 2, 9, 9), kernel_shape=[2, 2], dilations=[2, 2])
pool_case("maxpool_same_upper", "MaxPool", (1, 2, 7, 7), negative=True, kernel_shape=[3, 3],
          strides=[2, 2], auto_pad="SAME_UPPER")
pool_case("avgpool_2x2", "AveragePool", (1, 3, 8, 8), kernel_shape=[2, 2], strides=[2, 2])
pool_case("avgpool_pads_exclude", "AveragePool", (1, 3, 6, 6), kernel_shape=[3, 3], pads=[1, 1, 1, 1])
pool_case("avgpool_pads_include", "AveragePool", (1, 3, 6, 6), kernel_shape=[3, 3], pads=[1, 1, 1, 1],
          count_include_pad=1)
pool_case("avgpool_asym_pads_include", "AveragePool", (1, 2, 7, 6), kernel_shape=[3, 2],
          strides=[2, 2], pads=[0, 1, 2, 1], count_include_pad=1)
pool_case("avgpool_asym_pads_exclude", "AveragePool", (1, 2, 7, 6), kernel_shape=[3, 2],
          strides=[2, 2], pads=[0, 1, 2, 1])
pool_case("avgpool_strides_hw", "AveragePool", (2, 2, 9, 10), kernel_shape=[3, 2], strides=[2, 3])
pool_case("avgpool_ceil", "AveragePool", (1, 3, 8, 8), kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
pool_case("avgpool_ceil_pads_include", "AveragePool", (1, 2, 9, 9), kernel_shape=[3, 3],
          strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=1)
pool_case("avgpool_ceil_pads_exclude", "AveragePool", (1, 2, 9, 9), kernel_shape=[3, 3],
          strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)
pool_case("globalavgpool", "GlobalAveragePool", (2, 3, 5, 7))
pool_case("globalavgpool_1x1", "GlobalAveragePool", (1, 16, 1, 1))


def batchnorm_params(b: Builder, c: int):
    scale = b.const((b.rng.standard_normal(c) * 0.5 + 1.0).astype(np.float32), "bn_scale")
    bias = b.const((b.rng.standard_normal(c) * 0.5).astype(np.float32), "bn_bias")
    mean = b.const((b.rng.standard_normal(c) * 0.5).astype(np.float32), "bn_mean")
    var = b.const((b.rng.uniform(0.5, 2.0, c)).astype(np.float32), "bn_var")
    return [scale, bias, mean, var]


@case("batchnorm")
def _(b: Builder):
    x = b.input("x", (2, 3, 4, 5))
    b.output(b.node("BatchNormalization", [x] + batchnorm_params(b, 3), outputs=["y"]))


@case("batchnorm_eps")
def _(b: Builder):
    x = b.input("x", (1, 8, 3, 3))
    b.output(b.node("BatchNormalization", [x] + batchnorm_params(b, 8), outputs=["y"], epsilon=1e-2))


@case("batchnorm_2d")
def _(b: Builder):
    x = b.input("x", (4, 6))
    b.output(b.node("BatchNormalization", [x] + batchnorm_params(b, 6), outputs=["y"]))


@case("conv_bn")
def _(b: Builder):
    x = b.input("x", (1, 3, 8, 8))
    y = b.node("Conv", [x, b.weight((6, 3, 3, 3)), b.weight((6,), "b", 0.5)], pads=[1, 1, 1, 1])
    b.output(b.node("BatchNormalization", [y] + batchnorm_params(b, 6), outputs=["y"]))


@case("conv_nobias_bn")
def _(b: Builder):
    x = b.input("x", (1, 4, 7, 7))
    y = b.node("Conv", [x, b.weight((4, 1, 3, 3))], group=4, strides=[2, 2])
    b.output(b.node("BatchNormalization", [y] + batchnorm_params(b, 4), outputs=["y"], epsilon=1e-3))


@case("conv_bn_relu")
def _(b: Builder):
    x = b.input("x", (1, 3, 10, 10))
    y = b.node("Conv", [x, b.weight((8, 3, 3, 3)), b.weight((8,), "b", 0.5)], pads=[1, 1, 1, 1],
               strides=[2, 2])
    y = b.node("BatchNormalization", [y] + batchnorm_params(b, 8))
    b.output(b.node("Relu", [y], outputs=["y"]))


@case("conv_relu6")
def _(b: Builder):
    x = b.input("x", (1, 3, 8, 8), scale=3.0)
    y = b.node("Conv", [x, b.weight((4, 3, 3, 3), scale=1.0), b.weight((4,), "b", 0.5)], pads=[1, 1, 1, 1])
    b.output(b.node("Clip", [y, b.const(np.array(0.0, np.float32)), b.const(np.array(6.0, np.float32))],
                    outputs=["y"]))


@case("conv_leakyrelu")
def _(b: Builder):
    x = b.input("x", (1, 3, 8, 8))
    y = b.node("Conv", [x, b.weight((4, 3, 3, 3)), b.weight((4,), "b", 0.5)])
    b.output(b.node("LeakyRelu", [y], outputs=["y"], alpha=0.1))


@case("conv_hardswish", opset=14)
def _(b: Builder):
    x = b.input("x", (1, 3, 8, 8), scale=3.0)
    y = b.node("Conv", [x, b.weight((4, 3, 3, 3), scale=1.0)], pads=[1, 1, 1, 1])
    b.output(b.node("HardSwish", [y], outputs=["y"]))


@case("add_relu")
def _(b: Builder):
    a = b.input("a", (1, 4, 5, 5))
    c = b.input("b", (1, 4, 5, 5))
    b.output(b.node("Relu", [b.node("Add", [a, c])], outputs=["y"]))


@case("gemm_relu")
def _(b: Builder):
    a = b.input("a", (3, 8))
    b.output(b.node("Relu", [b.node("Gemm", [a, b.weight((8, 5)), b.weight((5,), "c", 1.0)])], outputs=["y"]))


@case("flatten")
def _(b: Builder):
    b.output(b.node("Flatten", [b.input("x", (2, 3, 4, 5))], outputs=["y"]))


@case("flatten_axis0")
def _(b: Builder):
    b.output(b.node("Flatten", [b.input("x", (2, 3, 4))], outputs=["y"], axis=0))


@case("flatten_axis2")
def _(b: Builder):
    b.output(b.node("Flatten", [b.input("x", (2, 3, 4, 5))], outputs=["y"], axis=2))


@case("flatten_axis_neg1")
def _(b: Builder):
    b.output(b.node("Flatten", [b.input("x", (2, 3, 4))], outputs=["y"], axis=-1))


def reshape_case(name, x_shape, target):
    @case(name)
    def _(b: Builder):
        x = b.input("x", x_shape)
        b.output(b.node("Reshape", [x, b.const(np.array(target, dtype=np.int64), "shape")], outputs=["y"]))


reshape_case("reshape", (2, 3, 4), (4, 6))
reshape_case("reshape_minus1", (2, 3, 4, 5), (2, -1))
reshape_case("reshape_zero", (2, 3, 4, 5), (0, 3, -1))
reshape_case("reshape_to_1d", (2, 3, 4), (-1,))


@case("reshape_shape_subgraph")
def _(b: Builder):
    # shape = Concat(Shape(x)[0:1], [-1]): folded to a constant by the compiler.
    x = b.input("x", (2, 3, 4, 5))
    s = b.node("Shape", [x])
    first = b.node("Slice", [s, b.const(np.array([0], np.int64)), b.const(np.array([1], np.int64))])
    shape = b.node("Concat", [first, b.const(np.array([-1], np.int64))], axis=0)
    r = b.node("Reshape", [x, shape])
    b.output(b.node("Relu", [r], outputs=["y"]))


@case("reshape_then_conv")
def _(b: Builder):
    x = b.input("x", (1, 48))
    r = b.node("Reshape", [x, b.const(np.array([1, 3, 4, 4], np.int64))])
    b.output(b.node("Conv", [r, b.weight((2, 3, 3, 3))], outputs=["y"], pads=[1, 1, 1, 1]))


def transpose_case(name, x_shape, perm):
    @case(name)
    def _(b: Builder):
        x = b.input("x", x_shape)
        attrs = {} if perm is None else {"perm": list(perm)}
        b.output(b.node("Transpose", [x], outputs=["y"], **attrs))


transpose_case("transpose_nhwc", (2, 3, 4, 5), (0, 2, 3, 1))
transpose_case("transpose_nchw", (2, 4, 5, 3), (0, 3, 1, 2))
transpose_case("transpose_2d", (7, 9), (1, 0))
transpose_case("transpose_default", (2, 3, 4), None)
transpose_case("transpose_3d", (2, 3, 4), (2, 0, 1))
transpose_case("transpose_5d", (2, 1, 3, 2, 4), (4, 2, 0, 3, 1))


def concat_case(name, shapes, axis, const_index=None):
    @case(name)
    def _(b: Builder):
        ins = []
        for i, s in enumerate(shapes):
            if i == const_index:
                ins.append(b.weight(s, "k", 1.0))
            else:
                ins.append(b.input(f"x{i}", s))
        b.output(b.node("Concat", ins, outputs=["y"], axis=axis))


concat_case("concat_channels", [(1, 2, 4, 4), (1, 3, 4, 4)], 1)
concat_case("concat_axis0", [(2, 3), (1, 3), (3, 3)], 0)
concat_case("concat_last_const", [(2, 3, 2), (2, 3, 4), (2, 3, 1)], -1, const_index=1)
concat_case("concat_axis2", [(1, 2, 3, 4), (1, 2, 5, 4)], 2)
concat_case("concat_single", [(2, 5)], 1)


def softmax_case(name, shape, opset, axis=None, scale=1.0):
    @case(name, opset=opset)
    def _(b: Builder):
        x = b.input("x", shape, scale=scale)
        attrs = {} if axis is None else {"axis": axis}
        b.output(b.node("Softmax", [x], outputs=["y"], **attrs))


softmax_case("softmax13_last", (2, 3, 4), 13, -1)
softmax_case("softmax13_default", (3, 10), 13)
softmax_case("softmax13_axis1", (2, 3, 4), 13, 1)
softmax_case("softmax13_axis0", (3, 4), 13, 0)
softmax_case("softmax13_large", (2, 16), 13, -1, scale=40.0)
softmax_case("softmax11_axis1", (2, 3, 4), 11, 1)
softmax_case("softmax11_default", (2, 3, 4), 11)
softmax_case("softmax11_axis2", (2, 3, 4, 2), 11, 2)
softmax_case("softmax11_last", (2, 3, 4), 11, -1)
softmax_case("softmax11_large", (4, 8), 11, 1, scale=40.0)


@case("two_outputs")
def _(b: Builder):
    x = b.input("x", (2, 6), scale=3.0)
    b.output(b.node("Sigmoid", [x], outputs=["sig"]))
    b.output(b.node("Relu", [x], outputs=["rel"]))


@case("two_inputs_two_outputs")
def _(b: Builder):
    a = b.input("a", (3, 4))
    c = b.input("c", (4, 2))
    mm = b.node("MatMul", [a, c], outputs=["mm"])
    b.output(mm)
    b.output(b.node("Mul", [a, b.const(np.float32(2.0) * np.ones((1, 4), np.float32))], outputs=["scaled"]))


# ---- larger and odd shapes: the kernels' tiled, vectorized and special paths and their remainders ----
conv_case("conv_im2col_tiled", (1, 64, 32, 32), (16, 64, 3, 3), pads=[1, 1, 1, 1])
conv_case("conv_im2col_big_image", (1, 3, 112, 112), (8, 3, 3, 3), pads=[1, 1, 1, 1])
conv_case("conv_large_odd", (2, 13, 17, 19), (11, 13, 3, 3), pads=[1, 0, 2, 1], strides=[2, 1])
conv_case("conv_pointwise_grouped", (1, 8, 9, 9), (12, 4, 1, 1), group=2)
conv_case("conv_pointwise_large", (2, 37, 15, 13), (29, 37, 1, 1))
conv_case("conv_1x1_padded", (1, 4, 5, 5), (6, 4, 1, 1), pads=[1, 1, 1, 1])
conv_case("conv_depthwise_stride3", (1, 6, 11, 11), (6, 1, 3, 3), group=6, pads=[1, 1, 1, 1], strides=[3, 3])
conv_case("conv_depthwise_dilation", (1, 6, 11, 11), (6, 1, 3, 3), group=6, pads=[2, 2, 2, 2], dilations=[2, 2])
conv_case("conv_depthwise_large", (1, 32, 33, 33), (32, 1, 3, 3), group=32, pads=[1, 1, 1, 1], strides=[2, 2])
conv_case("conv_depthwise_rect", (2, 5, 12, 17), (5, 1, 3, 5), group=5, pads=[1, 2, 1, 2], strides=[1, 2])
conv_case("conv_depthwise_nopad_nobias", (1, 7, 10, 10), (7, 1, 3, 3), bias=False, group=7)
gemm_case("gemm_large_odd", (67, 129), (129, 33), (33,), alpha=0.7)
gemm_case("gemm_large_transAB", (129, 67), (33, 129), (67, 33), transA=1, transB=1, beta=0.3)
matmul_case("matmul_large_batched", (3, 37, 65), (3, 65, 29))
matmul_case("matmul_stacked", (4, 33, 47), (47, 18), b_input=False)
matmul_case("matmul_broadcast_b_batch", (33, 47), (4, 47, 18))
for _op in ("Add", "Sub", "Mul", "Div"):
    binary_case(_op, "large_channel", (1, 64, 17, 17), (64, 1, 1), True)
    binary_case(_op, "large_outer", (3, 1, 1001), (1, 7, 1), False)
    binary_case(_op, "interleaved", (2, 3, 4, 5), (2, 1, 4, 1), False)
    binary_case(_op, "small_lhs_large", (5, 1), (1, 1003), False)
unary_case("sigmoid_large", "Sigmoid", shape=(10007,), scale=30.0)
unary_case("relu_large", "Relu", shape=(3, 1031))
unary_case("leakyrelu_large", "LeakyRelu", shape=(1031,), alpha=0.05)
unary_case("hardswish_large", "HardSwish", shape=(2, 1031), opset=14)
unary_case("hardsigmoid_large", "HardSigmoid", shape=(1031,), alpha=0.25, beta=0.6)
unary_case("clip_large", "Clip", shape=(4, 1031), extra_inputs=(-0.3, 0.4))
unary_case("clip_inverted", "Clip", extra_inputs=(1.0, -1.0))
softmax_case("softmax13_wide", (3, 1000), 13, -1, scale=10.0)
softmax_case("softmax13_middle_large", (2, 300, 37), 13, 1, scale=5.0)
softmax_case("softmax13_first_axis", (50, 3, 7), 13, 0)
softmax_case("softmax11_flatten_large", (2, 5, 7, 9), 11, 1, scale=5.0)
pool_case("maxpool_large_ceil", "MaxPool", (1, 16, 33, 35), kernel_shape=[3, 3], strides=[2, 2],
          pads=[1, 1, 1, 1], ceil_mode=1)
pool_case("avgpool_large_ceil_include", "AveragePool", (1, 16, 33, 35), kernel_shape=[5, 5], strides=[3, 3],
          pads=[2, 1, 0, 2], ceil_mode=1, count_include_pad=1)
pool_case("avgpool_large_ceil_exclude", "AveragePool", (1, 16, 33, 35), kernel_shape=[5, 5], strides=[3, 3],
          pads=[2, 1, 0, 2], ceil_mode=1)
pool_case("globalavgpool_large", "GlobalAveragePool", (2, 64, 15, 17))
pool_case("globalavgpool_3d", "GlobalAveragePool", (2, 3, 17))
transpose_case("transpose_large", (1, 32, 17, 19), (0, 2, 3, 1))
concat_case("concat_large", [(1, 17, 9, 9), (1, 31, 9, 9), (1, 5, 9, 9)], 1)


# Quantized cases (QDQ, uint8 activations, int8 per-channel weights): the int8 ops through the ABI, and
# seeds of the fuzzers that reach the reader's quantization records.

def qdq(b: Builder, x: str, scale: float, zero: int) -> str:
    """x quantized to uint8 and dequantized again (a QuantizeLinear -> DequantizeLinear pair)."""
    s, z = b.const(np.array(scale, np.float32), "s"), b.const(np.array(zero, np.uint8), "z")
    return b.node("DequantizeLinear", [b.node("QuantizeLinear", [x, s, z]), s, z])


def qdq_weight(b: Builder, shape, x_scale: float):
    """Int8 weights with per-output-channel scales and an int32 bias, each behind its DequantizeLinear."""
    m = shape[0]
    scales = np.linspace(0.004, 0.012, m).astype(np.float32)
    q = b.rng.integers(-127, 128, shape).astype(np.int8)
    w = b.node("DequantizeLinear", [b.const(q, "wq"), b.const(scales, "ws"), b.const(np.zeros(m, np.int8), "wz")],
               axis=0)
    bias = b.node("DequantizeLinear", [b.const(b.rng.integers(-500, 500, m).astype(np.int32), "bq"),
                                       b.const((scales * np.float32(x_scale)).astype(np.float32), "bs"),
                                       b.const(np.zeros(m, np.int32), "bz")], axis=0)
    return w, bias


@case("qdq_conv")
def _(b: Builder):
    x = qdq(b, b.input("x", (1, 8, 11, 9)), 0.02, 128)
    w, bias = qdq_weight(b, (12, 8, 3, 3), 0.02)
    y = qdq(b, b.node("Conv", [x, w, bias], pads=[1, 1, 1, 1], strides=[2, 2]), 0.05, 100)
    b.output(b.node("Identity", [y], outputs=["y"]))


@case("qdq_block")
def _(b: Builder):
    x = qdq(b, b.input("x", (1, 6, 10, 10)), 0.03, 120)
    w, bias = qdq_weight(b, (6, 1, 3, 3), 0.03)
    d = qdq(b, b.node("Conv", [x, w, bias], group=6, pads=[1, 1, 1, 1]), 0.04, 110)
    r = qdq(b, b.node("Add", [d, x]), 0.05, 128)
    p = qdq(b, b.node("MaxPool", [r], kernel_shape=[2, 2], strides=[2, 2]), 0.05, 128)
    g = qdq(b, b.node("GlobalAveragePool", [p]), 0.02, 128)
    b.output(b.node("Sigmoid", [g], outputs=["y"]))


def small_cnn(b: Builder, hw: int, c: int = 16, classes: int = 10):
    x = b.input("image", (1, 3, hw, hw))
    y = b.node("Conv", [x, b.weight((c, 3, 3, 3)), b.weight((c,), "b", 0.1)], pads=[1, 1, 1, 1], strides=[2, 2])
    y = b.node("BatchNormalization", [y] + batchnorm_params(b, c))
    y = b.node("Relu", [y])
    stem = b.node("MaxPool", [y], kernel_shape=[2, 2], strides=[2, 2])
    # depthwise-separable block with a residual
    d = b.node("Conv", [stem, b.weight((c, 1, 3, 3))], group=c, pads=[1, 1, 1, 1])
    d = b.node("BatchNormalization", [d] + batchnorm_params(b, c))
    d = b.node("Clip", [d, b.const(np.array(0.0, np.float32)), b.const(np.array(6.0, np.float32))])
    p = b.node("Conv", [d, b.weight((c, c, 1, 1))])
    p = b.node("BatchNormalization", [p] + batchnorm_params(b, c))
    r = b.node("Add", [p, stem])
    r = b.node("Relu", [r])
    g = b.node("GlobalAveragePool", [r])
    f = b.node("Flatten", [g])
    logits = b.node("Gemm", [f, b.weight((classes, c)), b.weight((classes,), "fc_b", 0.1)], transB=1)
    b.output(b.node("Softmax", [logits], outputs=["probs"], axis=1))


@case("small_cnn", tag="cnn")
def _(b: Builder):
    small_cnn(b, 32)


@case("base", tag="base")
def _(b: Builder):
    small_cnn(b, 16, c=8, classes=5)


@case("tiny", tag="tiny")
def _(b: Builder):
    x = b.input("x", (1, 16))
    b.output(b.node("Add", [x, b.weight((1, 16), "k", 1.0)], outputs=["y"]))


def matmul_chain(b: Builder, layers: int):
    """layers x (256x1024 @ 1024x1024 + Relu): about 0.5 GFLOP a layer."""
    y = b.input("x", (256, 1024))
    for i in range(layers):
        y = b.node("MatMul", [y, b.weight((1024, 1024))])
        y = b.node("Relu", [y], outputs=["y"] if i == layers - 1 else None)
    b.output(y)


@case("slow", tag="slow")
def _(b: Builder):
    matmul_chain(b, 4)  # tens of ms per run on one core with a BLAS


@case("slower", tag="slow")
def _(b: Builder):
    # The run core's test needs a run to outlast its 20 ms slice even where the BLAS runs on every CPU of a
    # fast machine: three times "slow".
    matmul_chain(b, 12)


# ---- the emulator's op set 3: comparison, logic, selection, index, integer, pad, norm and recurrent ops ----
# Outputs are float32 (the C tests compare float32): an integer or bool result is Cast inside the model.
# Inputs may be of any dtype (the C tests feed their bytes), e.g. run-time int64 indices.

def small_ints(b: Builder, shape, lo: int = -2, hi: int = 3) -> np.ndarray:
    """Whole numbers as float32: comparisons of them have both outcomes, ties included."""
    return b.rng.integers(lo, hi, shape).astype(np.float32)


def as_float(b: Builder, x: str, name: str = "y") -> str:
    return b.node("Cast", [x], outputs=[name], to=F)


@case("compare_logic_where")
def _(b: Builder):
    a = b.input("a", (2, 3, 4), data=small_ints(b, (2, 3, 4)))
    c = b.input("b", (3, 1), data=small_ints(b, (3, 1)))
    eq = b.node("Equal", [a, c])
    gt = b.node("Greater", [a, b.const(np.array(-1.0, np.float32), "k")])
    sel = b.node("And", [b.node("Not", [eq]), gt])
    b.output(b.node("Where", [sel, a, c], outputs=["y"]))
    lt = b.node("Less", [a, c])
    ge = b.node("GreaterOrEqual", [c, b.const(np.zeros((1, 4), np.float32), "k")])
    b.output(as_float(b, b.node("Xor", [b.node("Or", [lt, eq]), ge]), "z"))
    b.output(as_float(b, b.node("LessOrEqual", [a, c]), "le"))


@case("where_broadcast")
def _(b: Builder):
    cond = b.input("cond", (1, 4, 1), data=b.rng.integers(0, 2, (1, 4, 1)).astype(bool), dtype=np.bool_)
    x = b.input("x", (3, 1, 5))
    b.output(b.node("Where", [cond, x, b.weight((4, 5), "k", 1.0)], outputs=["y"]))


def int_binary_case(op, dtype, a_shape, b_shape):
    @case(f"{op.lower()}_{np.dtype(dtype).name}")
    def _(b: Builder):
        a = b.input("a", a_shape, data=b.rng.integers(-50, 50, a_shape), dtype=dtype)
        den = b.rng.integers(1, 9, b_shape) * np.where(b.rng.random(b_shape) < 0.5, -1, 1)
        c = b.input("b", b_shape, data=den, dtype=dtype)
        b.output(as_float(b, b.node(op, [a, c])))


for _op in ("Add", "Sub", "Mul", "Div", "Min", "Max"):
    int_binary_case(_op, np.int32, (2, 3, 4), (3, 1))
int_binary_case("Add", np.int64, (4, 5), (5,))
int_binary_case("Div", np.int64, (3, 4), (3, 4))


def argreduce_case(name, op, shape, **attrs):
    @case(name)
    def _(b: Builder):
        x = b.input("x", shape, data=small_ints(b, shape))  # ties: select_last_index matters
        b.output(as_float(b, b.node(op, [x], **attrs)))


argreduce_case("argmax", "ArgMax", (2, 3, 5), axis=2)
argreduce_case("argmax_axis0_nokeep_last", "ArgMax", (4, 3), axis=0, keepdims=0, select_last_index=1)
argreduce_case("argmin_axis1", "ArgMin", (2, 6, 3), axis=1)


def topk_case(name, shape, k, **attrs):
    @case(name)
    def _(b: Builder):
        x = b.input("x", shape, data=b.rng.permutation(int(np.prod(shape))).reshape(shape).astype(np.float32))
        v, i = b.node("TopK", [x, b.const(np.array([k], np.int64), "k")], n_out=2, **attrs)
        b.output(b.node("Identity", [v], outputs=["values"]))
        b.output(as_float(b, i, "indices"))


topk_case("topk", (3, 10), 4)
topk_case("topk_axis0_smallest", (6, 2, 3), 2, axis=0, largest=0)


def cumsum_case(name, shape, axis, dtype=np.float32, **attrs):
    @case(name)
    def _(b: Builder):
        x = b.input("x", shape, data=b.rng.integers(-9, 10, shape), dtype=dtype)
        y = b.node("CumSum", [x, b.const(np.array(axis, np.int64), "axis")], **attrs)
        b.output(as_float(b, y) if dtype != np.float32 else b.node("Identity", [y], outputs=["y"]))


cumsum_case("cumsum", (3, 7), 1)
cumsum_case("cumsum_exclusive_reverse", (4, 3, 2), 0, exclusive=1, reverse=1)
cumsum_case("cumsum_int64", (2, 9), -1, np.int64, exclusive=1)
cumsum_case("cumsum_int32_reverse", (5, 2), 0, np.int32, reverse=1)


@case("onehot", opset=11)
def _(b: Builder):
    idx = b.input("i", (2, 4), data=b.rng.integers(-5, 7, (2, 4)), dtype=np.int64)  # some out of range
    vals = b.const(np.array([-1.0, 2.5], np.float32), "v")
    b.output(b.node("OneHot", [idx, b.const(np.array(5, np.int64), "depth"), vals], outputs=["y"], axis=1))


@case("gather_runtime_indices")
def _(b: Builder):
    x = b.input("x", (6, 4))
    idx = b.input("idx", (2, 3), data=b.rng.integers(-6, 6, (2, 3)), dtype=np.int64)
    b.output(b.node("Gather", [x, idx], outputs=["y"], axis=0))


@case("gather_runtime_indices_axis1")
def _(b: Builder):
    table = b.weight((3, 10, 2), "table", 1.0)
    idx = b.input("idx", (4,), data=b.rng.integers(-10, 10, 4), dtype=np.int64)
    b.output(b.node("Gather", [table, idx], outputs=["y"], axis=1))


@case("gather_negative_indices")
def _(b: Builder):
    """Fixed indices, negative ones among them: the data_faults test puts values outside -5..4 in their place."""
    x = b.input("x", (5, 3))
    idx = b.input("idx", (2, 3), data=np.array([[0, -1, 4], [-5, 2, -3]]), dtype=np.int64)
    b.output(b.node("Gather", [x, idx], outputs=["y"], axis=0))


def pad_case(name, shape, pads, mode, value=None, opset=13):
    @case(name, opset=opset)
    def _(b: Builder):
        x = b.input("x", shape)
        ins = [x, b.const(np.array(pads, np.int64), "pads")]
        if value is not None:
            ins.append(b.const(np.array(value, np.float32), "value"))
        b.output(b.node("Pad", ins, outputs=["y"], mode=mode))


pad_case("pad_constant", (1, 2, 4, 5), [0, 0, 1, 2, 0, 1, 2, 0], "constant", value=-1.5)
pad_case("pad_constant_default", (3, 4), [1, 0, 2, 3], "constant")
pad_case("pad_reflect", (1, 3, 5, 4), [0, 0, 2, 3, 0, 0, 4, 1], "reflect")
pad_case("pad_edge", (2, 3, 4), [0, 2, 1, 1, 3, 0], "edge")
pad_case("pad_wrap", (2, 5, 3), [0, 4, 2, 1, 6, 0], "wrap", opset=19)
pad_case("pad_negative", (2, 6, 5), [0, -1, 2, 1, 1, -2], "constant")


@case("groupnorm", opset=21)
def _(b: Builder):
    x = b.input("x", (2, 6, 3, 4), scale=3.0)
    ins = [x, b.weight((6,), "s", 1.0), b.weight((6,), "b", 1.0)]
    b.output(b.node("GroupNormalization", ins, outputs=["y"], num_groups=3, epsilon=1e-3))


@case("groupnorm_3d", opset=21)
def _(b: Builder):
    x = b.input("x", (1, 8, 5), scale=2.0)
    ins = [x, b.weight((8,), "s", 1.0), b.weight((8,), "b", 1.0)]
    b.output(b.node("GroupNormalization", ins, outputs=["y"], num_groups=2))


@case("instancenorm")
def _(b: Builder):
    x = b.input("x", (2, 3, 4, 5), scale=2.0)
    ins = [x, b.weight((3,), "s", 1.0), b.weight((3,), "b", 1.0)]
    b.output(b.node("InstanceNormalization", ins, outputs=["y"], epsilon=1e-4))


RNN_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def rnn_case(name, op, s=5, n=3, i=4, h=6, direction="bidirectional", lens=(5, 2, 0), quantize=False, **attrs):
    @case(name)
    def _(b: Builder):
        d = 2 if direction == "bidirectional" else 1
        g = RNN_GATES[op]
        x = b.input("x", (s, n, i))
        ins = [x, b.weight((d, g * h, i), "w", 0.5), b.weight((d, g * h, h), "r", 0.5),
               b.weight((d, 2 * g * h), "b", 0.5)]
        ins.append(b.input("lens", (n,), data=np.array(lens), dtype=np.int32) if lens is not None else "")
        ins.append(b.input("h0", (d, n, h)))
        outs = ["y", "y_h"] + (["y_c"] if op == "LSTM" else [])
        b.node(op, ins, outputs=outs, direction=direction, hidden_size=h, **attrs)
        for o in outs:
            b.output(o)
        if quantize:
            b.transform = quantize_dynamic_lstm


def quantize_dynamic_lstm(m: onnx.ModelProto) -> onnx.ModelProto:
    """The model with its LSTM as onnxruntime.quantization.quantize_dynamic makes it: DynamicQuantizeLSTM."""
    import tempfile

    from onnxruntime.quantization import quantize_dynamic

    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "f.onnx"), os.path.join(tmp, "q.onnx")
        onnx.save(m, src)
        quantize_dynamic(src, dst, op_types_to_quantize=["LSTM"])
        q = onnx.load(dst)
    assert "DynamicQuantizeLSTM" in [n.op_type for n in q.graph.node], [n.op_type for n in q.graph.node]
    return q


rnn_case("rnn_bidirectional", "RNN", activations=["Tanh", "Sigmoid"])
rnn_case("gru_bidirectional", "GRU", linear_before_reset=1)
rnn_case("gru_reverse", "GRU", direction="reverse", lens=None)
rnn_case("lstm_bidirectional", "LSTM", lens=(1, 5, 3))
rnn_case("lstm_dynamic_quantize", "LSTM", s=4, n=2, lens=(4, 2), quantize=True)


# The vector paths against the portable twin (test_isa_paths.c loads each model with ACCEL_EMU_ISA=portable
# and on the CPU's own path): float convs of every way the packed conv GEMM reads B (stride phases, in
# place, gathered panels), with weight panels and column tiles cut short, more than one depth block and a
# fused activation ("isa_f32"); int8 convs and a matmul, int8 and uint8 weights ("isa_q8"). Registered
# last, so that no other case's seed moves.

def isa_conv_case(name, x_shape, w_shape, relu=False, **attrs):
    @case(name, tag="isa_f32")
    def _(b: Builder):
        y = b.node("Conv", [b.input("x", x_shape), b.weight(w_shape), b.weight((w_shape[0],), "b", scale=0.5)],
                   **attrs)
        b.output(b.node("Relu" if relu else "Identity", [y], outputs=["y"]))


isa_conv_case("isa_conv3x3", (1, 20, 13, 11), (13, 20, 3, 3), pads=[1, 1, 1, 1])
isa_conv_case("isa_conv3x3_s2_deep", (1, 64, 15, 15), (19, 64, 3, 3), strides=[2, 2], pads=[1, 1, 1, 1])
isa_conv_case("isa_conv7x7_s2", (1, 3, 32, 30), (8, 3, 7, 7), strides=[2, 2], pads=[3, 3, 3, 3])
isa_conv_case("isa_conv1x1", (2, 40, 9, 7), (24, 40, 1, 1))
isa_conv_case("isa_conv1x1_deep", (1, 300, 5, 7), (10, 300, 1, 1))
isa_conv_case("isa_conv_dilated", (1, 6, 14, 13), (9, 6, 3, 3), dilations=[2, 2], pads=[2, 2, 2, 2])
isa_conv_case("isa_conv_s3", (1, 5, 20, 23), (7, 5, 2, 2), strides=[3, 3])
isa_conv_case("isa_conv_group", (1, 8, 10, 10), (12, 4, 3, 3), group=2, pads=[1, 1, 1, 1])
isa_conv_case("isa_conv_relu_wide", (1, 16, 28, 27), (32, 16, 3, 3), relu=True, pads=[1, 1, 1, 1])
# Two bands of output rows (stride phases) and two column blocks of gathered panels, each of two depth blocks.
isa_conv_case("isa_conv_bands", (1, 64, 40, 40), (10, 64, 3, 3), pads=[1, 1, 1, 1])
isa_conv_case("isa_conv_dilated_blocks", (1, 32, 30, 30), (6, 32, 3, 3), dilations=[2, 2], pads=[2, 2, 2, 2])


def qdq_weight_u8(b: Builder, shape, x_scale: float):
    """uint8 weights with one zero point far from 128 (the paths' column-sum correction) and an int32 bias."""
    m = shape[0]
    scale = np.float32(0.006)
    q = b.rng.integers(0, 256, shape).astype(np.uint8)
    w = b.node("DequantizeLinear",
               [b.const(q, "wq"), b.const(np.array(scale), "ws"), b.const(np.array(117, np.uint8), "wz")])
    bias = b.node("DequantizeLinear", [b.const(b.rng.integers(-500, 500, m).astype(np.int32), "bq"),
                                       b.const(np.array(scale * np.float32(x_scale)), "bs"),
                                       b.const(np.array(0, np.int32), "bz")])
    return w, bias


def isa_qconv_case(name, x_shape, w_shape, u8_weights=False, **attrs):
    @case(name, tag="isa_q8")
    def _(b: Builder):
        x = qdq(b, b.input("x", x_shape), 0.02, 128)
        w, bias = (qdq_weight_u8 if u8_weights else qdq_weight)(b, w_shape, 0.02)
        y = qdq(b, b.node("Conv", [x, w, bias], **attrs), 0.05, 100)
        b.output(b.node("Identity", [y], outputs=["y"]))


isa_qconv_case("isa_qconv3x3", (1, 19, 13, 11), (21, 19, 3, 3), pads=[1, 1, 1, 1])
isa_qconv_case("isa_qconv_s2", (1, 8, 17, 15), (12, 8, 3, 3), strides=[2, 2], pads=[1, 1, 1, 1])
isa_qconv_case("isa_qconv1x1", (1, 37, 7, 9), (29, 37, 1, 1))
isa_qconv_case("isa_qconv_deep", (1, 200, 6, 6), (16, 200, 3, 3), pads=[1, 1, 1, 1])
isa_qconv_case("isa_qconv_u8w", (1, 10, 9, 11), (11, 10, 3, 3), u8_weights=True, pads=[1, 1, 1, 1])


@case("isa_qconv_s8x", tag="isa_q8")
def _(b: Builder):
    """int8 activations and output (the portable path flips them to uint8; SDOT reads them as they are)."""
    def qdq_s8(t: str, scale: float, zero: int) -> str:
        s, z = b.const(np.array(scale, np.float32), "s"), b.const(np.array(zero, np.int8), "z")
        return b.node("DequantizeLinear", [b.node("QuantizeLinear", [t, s, z]), s, z])
    x = qdq_s8(b.input("x", (1, 13, 10, 9)), 0.02, -3)
    w, bias = qdq_weight(b, (17, 13, 3, 3), 0.02)
    y = qdq_s8(b.node("Conv", [x, w, bias], pads=[1, 1, 1, 1]), 0.05, 5)
    b.output(b.node("Identity", [y], outputs=["y"]))


@case("isa_qmatmul", tag="isa_q8")
def _(b: Builder):
    x = qdq(b, b.input("x", (3, 7, 45)), 0.02, 128)
    q = b.rng.integers(-127, 128, (45, 30)).astype(np.int8)
    w = b.node("DequantizeLinear", [b.const(q, "wq"), b.const(np.array(0.008, np.float32), "ws"),
                                    b.const(np.array(0, np.int8), "wz")])
    y = qdq(b, b.node("MatMul", [x, w]), 0.05, 100)
    b.output(b.node("Identity", [y], outputs=["y"]))


# ------------------------------------------------------------------------------------------------

def dims_text(shape) -> str:
    return " ".join([str(len(shape))] + [str(int(d)) for d in shape])


def run_onnxruntime(model: onnx.ModelProto, feeds: dict) -> list:
    sess = ort.InferenceSession(model.SerializeToString(), ort_reference.session_options(model),
                                providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return names, sess.run(names, feeds)


def write_image_model(out_dir: str) -> None:
    """image_nv12.accm: input 'frame', an NV12 image of 4x4 pixels (uint8 (1, 6, 4, 1)), cast to the
    float32 output 'pixels' of that shape. Written record by record, as no ONNX model says a tensor is an
    image: the C test checks what accel_tensor_info reports of it."""
    accm = compiler.accm
    u8, f32 = accm.dtype_code(np.uint8), accm.dtype_code(np.float32)
    tensors = [
        accm.Tensor("frame", u8, accm.KIND_INPUT, (1, 6, 4, 1), accm.LAYOUT_NHWC,
                    image_format=accm.IMAGE_FORMATS["nv12"]),
        accm.Tensor("pixels", f32, accm.KIND_OUTPUT, (1, 6, 4, 1), accm.LAYOUT_NHWC),
    ]
    nodes = [accm.Node(accm.OPS["cast"], [0], [1], name="to_float")]
    with open(os.path.join(out_dir, "image_nv12.accm"), "wb") as f:
        f.write(accm.write(tensors, nodes, [0], [1]))


def main(argv) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = argv[1]
    os.makedirs(out_dir, exist_ok=True)
    only = set(os.environ.get("ACCEL_TEST_CASES", "").split(",")) - {""}
    lines = []
    failures = []
    t0 = time.monotonic()
    for index, (name, tag, opset, fn) in enumerate(CASES):
        if only and name not in only:
            continue
        rng = np.random.default_rng(SEED + index)
        b = Builder(rng, opset)
        fn(b)
        feeds = {n: a for n, _, a in b.inputs}
        out_names, outs = run_onnxruntime(b.model(), feeds)
        assert out_names == b.outputs, (out_names, b.outputs)
        model = b.model([np.asarray(o).shape for o in outs])
        onnx.checker.check_model(model, full_check=True)
        onnx.save(model, os.path.join(out_dir, f"{name}.onnx"))
        try:
            accm = compiler.compile_model(model)
            if not isinstance(accm, (bytes, bytearray)) or len(accm) < 128:
                raise TypeError(f"compile_model returned {type(accm).__name__}, not .accm bytes")
        except Exception as e:
            # Recorded in the manifest: the ops test reports it as a failure of that case, and the
            # other cases still run.
            why = " ".join(f"{type(e).__name__}: {e}".split())
            failures.append(f"{name}: {why}")
            lines.append(f"compile_error {name} {why}")
            continue
        with open(os.path.join(out_dir, f"{name}.accm"), "wb") as f:
            f.write(accm)
        lines.append(f"case {name} {tag} {name}.accm {len(b.inputs)} {len(outs)}")
        for i, (n, _shape, arr) in enumerate(b.inputs):
            fname = f"{name}.in{i}.bin"
            arr.astype(arr.dtype.newbyteorder("<")).tofile(os.path.join(out_dir, fname))
            lines.append(f"in {n} {arr.dtype.name} {dims_text(arr.shape)} {fname}")
        for i, (n, arr) in enumerate(zip(out_names, outs)):
            arr = np.asarray(arr)
            assert arr.dtype == np.float32, (name, n, arr.dtype)
            fname = f"{name}.out{i}.bin"
            np.ascontiguousarray(arr).astype("<f4").tofile(os.path.join(out_dir, fname))
            lines.append(f"out {n} float32 {dims_text(arr.shape)} {fname}")
        lines.append("end")
    write_image_model(out_dir)
    # Written last, and atomically: a test never sees half a manifest.
    tmp = os.path.join(out_dir, "manifest.txt.tmp")
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, os.path.join(out_dir, "manifest.txt"))
    n_cases = sum(1 for ln in lines if ln.startswith("case "))
    print(f"make_cases: {n_cases} cases written to {out_dir} in {time.monotonic() - t0:.1f} s")
    if failures:
        # Not a failure of this step: the tests that need a case report it (the ops test names
        # every case that did not compile).
        print(f"make_cases: {len(failures)} case(s) did not compile:", file=sys.stderr)
        for f_ in failures:
            print("  " + f_, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
