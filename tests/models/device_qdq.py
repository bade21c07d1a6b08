"""Symmetric QDQ test networks for the devices' int8 rules and their integers as the devices compute them
(fixed_point.py): a power-of-two one for the DPU (dpu_model, dpu_reference, on inputs that sit on ties) and
one of float scales for the BPU (bpu_model, bpu_reference). The emulator's tests and the stand-ins' run them.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from .fixed_point import (add_fix, avgpool_fix, bpu_add, bpu_avgpool, bpu_global_avg, bpu_quantize, bpu_requant,
                          const_dq, conv_fix, conv_sum, float2fix, global_avg_fix, hsigmoid_fix, maxpool, model_of,
                          qdq)

def run_on_emulator(model: onnx.ModelProto, x: np.ndarray, rules: str) -> list:
    """The model's outputs of x on emu:int8=<rules>, compiled with those rules."""
    import accel
    from accel import compiler

    data = compiler.compile_model(model.SerializeToString(), int8=rules)
    with accel.open(f"emu:int8={rules}") as dev:
        return [np.asarray(o).copy() for o in dev.load(data).run(x)]


def count_differing(label: str, got: np.ndarray, want: np.ndarray) -> int:
    """How many of the integers `got` differ from `want`, printed with the largest difference."""
    got, want = np.asarray(got, np.int64), np.asarray(want, np.int64)
    differ = int(np.count_nonzero(got != want))
    print(f"\n{label}: {want.size} elements, {want.size - differ} identical, "
          f"largest difference {int(np.abs(got - want).max()) if want.size else 0} LSB")
    return differ


def power_of_two(model: onnx.ModelProto) -> onnx.ModelProto:
    """A symmetric int8 QDQ model with every scale rounded to the nearest power of two, as Vitis AI's
    quantizer would give it: activations' scales moved, constant weights quantized again at theirs, each
    Conv's and Gemm's int32 bias at its input's scale times its weights'."""
    from onnx import numpy_helper

    m = onnx.ModelProto()
    m.CopyFrom(model)
    arrays = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    dqs = [n for n in m.graph.node if n.op_type == "DequantizeLinear"]

    def axis_shape(n, q):
        axis = next((a.i for a in n.attribute if a.name == "axis"), 1)
        shape = [1] * q.ndim
        if arrays[n.input[1]].size > 1:
            shape[axis] = -1
        return shape

    def real(n):
        q = arrays[n.input[0]].astype(np.float64)
        return q * arrays[n.input[1]].astype(np.float64).reshape(axis_shape(n, q))

    biases = {n.input[0] for n in dqs if n.input[0] in arrays and arrays[n.input[0]].dtype == np.int32}
    new = {}
    for n in m.graph.node:
        if n.op_type in ("QuantizeLinear", "DequantizeLinear") and n.input[0] not in biases:
            s = arrays[n.input[1]]
            new[n.input[1]] = np.exp2(np.round(np.log2(s.astype(np.float64)))).astype(np.float32)
    for n in dqs:
        if n.input[0] in arrays and n.input[0] not in biases:
            q = arrays[n.input[0]]
            s = new[n.input[1]].astype(np.float64).reshape(axis_shape(n, q))
            new[n.input[0]] = np.clip(np.rint(real(n) / s), -127, 127).astype(np.int8)
    by_output = {n.output[0]: n for n in dqs}
    for node in m.graph.node:
        if node.op_type in ("Conv", "Gemm") and len(node.input) > 2 and node.input[2] in by_output:
            b, x, w = (by_output.get(i) for i in node.input[:3][::-1][:1] + node.input[:2])
            if b is None or x is None or w is None or b.input[0] not in biases:
                continue
            sb = (new[x.input[1]].astype(np.float64).reshape(-1) * new[w.input[1]].astype(np.float64).reshape(-1))
            new[b.input[0]] = np.rint(real(b).reshape(-1) / sb).astype(np.int32)
            new[b.input[1]] = sb.astype(np.float32).reshape(arrays[b.input[1]].shape if sb.size == 1 else -1)
    for t in m.graph.initializer:
        if t.name in new:
            t.CopyFrom(numpy_helper.from_array(new[t.name].reshape(arrays[t.name].shape), t.name))
    return m


# ---- the DPU ------------------------------------------------------------------------------------------

FX, FW1, FB1, F1 = 5, 7, 4, 4      # input, conv1 weights, conv1 bias (int8), conv1 output
FW2, F2 = 6, 3                     # conv2 (1x1, leaky relu, int32 bias at FX... of its input F1 + FW2)
FA = 3                             # add output
FP = 4                             # avg pool output
FG = 5                             # global pool output
FH = 7                             # hard sigmoid output


def qdq_fp(nodes, inits, name, fp, out=None, dtype=TensorProto.INT8):
    return qdq(nodes, inits, name, 2.0 ** -fp, out, dtype)


def const_dq_fp(nodes, inits, name, values, fp, dtype=TensorProto.INT8):
    return const_dq(nodes, inits, name, values, 2.0 ** -fp, dtype)


def dpu_model(rng, scale=None):
    """A small power-of-two QDQ network and its integer parameters."""
    p = {"w1": rng.integers(-128, 128, (8, 4, 3, 3)), "b1": rng.integers(-128, 128, 8),
         "w2": rng.integers(-128, 128, (8, 8, 1, 1)), "b2": rng.integers(-2000, 2000, 8)}
    nodes, inits = [], []
    x = qdq_fp(nodes, inits, "x", FX)
    if scale is not None:  # a scale that is not a power of two, for the error test
        inits[0] = helper.make_tensor("x_s", TensorProto.FLOAT, [], [scale])
    w1 = const_dq_fp(nodes, inits, "w1", p["w1"], FW1)
    b1 = const_dq_fp(nodes, inits, "b1", p["b1"], FB1)
    nodes.append(helper.make_node("Conv", [x, w1, b1], ["c1"], pads=[1, 1, 1, 1]))
    nodes.append(helper.make_node("Relu", ["c1"], ["r1"]))
    r1 = qdq_fp(nodes, inits, "r1", F1)
    w2 = const_dq_fp(nodes, inits, "w2", p["w2"], FW2)
    b2 = const_dq_fp(nodes, inits, "b2", p["b2"], F1 + FW2, TensorProto.INT32)
    nodes.append(helper.make_node("Conv", [r1, w2, b2], ["c2"]))
    nodes.append(helper.make_node("LeakyRelu", ["c2"], ["l2"], alpha=26 / 256))
    l2 = qdq_fp(nodes, inits, "l2", F2)
    nodes.append(helper.make_node("Add", [r1, l2], ["a"]))
    nodes.append(helper.make_node("Relu", ["a"], ["ar"]))
    a = qdq_fp(nodes, inits, "ar", FA)
    nodes.append(helper.make_node("MaxPool", [a], ["mp"], kernel_shape=[2, 2], strides=[2, 2]))
    mp = qdq_fp(nodes, inits, "mp", FA)
    nodes.append(helper.make_node("AveragePool", [mp], ["ap"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                                  count_include_pad=1))
    ap = qdq_fp(nodes, inits, "ap", FP)
    nodes.append(helper.make_node("HardSigmoid", [ap], ["hs"], alpha=1 / 6, beta=0.5))
    qdq_fp(nodes, inits, "hs", FH, out="y_sig")
    nodes.append(helper.make_node("GlobalAveragePool", [ap], ["gp"]))
    qdq_fp(nodes, inits, "gp", FG, out="y_pool")
    graph = helper.make_graph(
        nodes, "dpu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
        [helper.make_tensor_value_info("ar_dq", TensorProto.FLOAT, [1, 8, 8, 8]),
         helper.make_tensor_value_info("y_sig", TensorProto.FLOAT, [1, 8, 4, 4]),
         helper.make_tensor_value_info("y_pool", TensorProto.FLOAT, [1, 8, 1, 1])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    return model, p


def dpu_reference(x, p):
    """The integers of the outputs, as the DPU computes them."""
    q = float2fix(x, FX)
    r1 = conv_fix(q, p["w1"], p["b1"], FX, FW1, FB1, F1, act="relu", pad=1)
    l2 = conv_fix(r1, p["w2"], p["b2"], F1, FW2, F1 + FW2, F2, act="leaky")
    a = add_fix(r1, F1, l2, F2, FA, relu=True)
    ap = avgpool_fix(maxpool(a, 2), 3, FA, FP, pad=1)
    return a, hsigmoid_fix(ap, FP, FH), global_avg_fix(ap, FP, FG)


def tie_inputs(rng):
    """Inputs half a step of the input's fix point apart: every one is a tie for float2fix."""
    return ((rng.integers(-300, 300, (1, 4, 8, 8)) + 0.5) / 2.0 ** FX).astype(np.float32)



# ---- the BPU ------------------------------------------------------------------------------------------

SX, S1, S2, SA, SP, SG, SM = 0.0173, 0.031, 0.047, 0.05, 0.021, 0.013, 0.019


def f64(v):
    """A scale as the model holds it (float32), widened."""
    return np.float64(np.float32(v))


def bpu_model(rng):
    p = {"w1": rng.integers(-127, 128, (8, 4, 3, 3)), "sw1": rng.uniform(0.002, 0.01, 8).astype(np.float32),
         "w2": rng.integers(-127, 128, (8, 8, 1, 1)), "sw2": rng.uniform(0.002, 0.01, 8).astype(np.float32),
         "w3": rng.integers(-127, 128, (8, 5)), "sw3": rng.uniform(0.002, 0.01, 5).astype(np.float32)}
    p["b1"] = rng.integers(-3000, 3000, 8)
    p["b2"] = rng.integers(-3000, 3000, 8)
    nodes, inits = [], []
    x = qdq(nodes, inits, "x", SX)
    w1 = const_dq(nodes, inits, "w1", p["w1"], p["sw1"], axis=0)
    b1 = const_dq(nodes, inits, "b1", p["b1"], np.float32(SX) * p["sw1"], TensorProto.INT32, axis=0)
    nodes += [helper.make_node("Conv", [x, w1, b1], ["c1"], pads=[1, 1, 1, 1]),
              helper.make_node("Relu", ["c1"], ["r1"])]
    r1 = qdq(nodes, inits, "r1", S1)
    w2 = const_dq(nodes, inits, "w2", p["w2"], p["sw2"], axis=0)
    b2 = const_dq(nodes, inits, "b2", p["b2"], np.float32(S1) * p["sw2"], TensorProto.INT32, axis=0)
    nodes.append(helper.make_node("Conv", [r1, w2, b2], ["c2"]))
    c2 = qdq(nodes, inits, "c2", S2)
    nodes += [helper.make_node("Add", [r1, c2], ["a"]), helper.make_node("Relu", ["a"], ["ar"])]
    a = qdq(nodes, inits, "ar", SA, out="y_add")
    nodes.append(helper.make_node("AveragePool", [a], ["ap"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                                  count_include_pad=1))
    ap = qdq(nodes, inits, "ap", SP)
    nodes.append(helper.make_node("GlobalAveragePool", [ap], ["gp"]))
    gp = qdq(nodes, inits, "gp", SG, out="y_pool")
    inits.append(helper.make_tensor("flat", TensorProto.INT64, [2], [1, 8]))
    nodes.append(helper.make_node("Reshape", [gp, "flat"], ["g2"]))
    g2 = qdq(nodes, inits, "g2", SG)
    w3 = const_dq(nodes, inits, "w3", p["w3"], p["sw3"], axis=1)
    nodes.append(helper.make_node("MatMul", [g2, w3], ["fc"]))
    qdq(nodes, inits, "fc", SM, out="y_fc")
    model = model_of(nodes, inits, {"x": [1, 4, 8, 8]}, {"y_add": [1, 8, 8, 8], "y_pool": [1, 8, 1, 1], "y_fc": [1, 5]})
    return model, p


def bpu_reference(x, p):
    q = bpu_quantize(x, SX)
    r1 = bpu_requant(conv_sum(q, p["w1"], pad=1) + p["b1"][None, :, None, None], f64(SX) * p["sw1"] / f64(S1),
                     relu=True)
    c2 = bpu_requant(conv_sum(r1, p["w2"]) + p["b2"][None, :, None, None], f64(S1) * p["sw2"] / f64(S2))
    a = bpu_add(r1, f64(S1), c2, f64(S2), f64(SA), relu=True)
    ap = bpu_avgpool(a, 3, f64(SA), f64(SP), pad=1)
    gp = bpu_global_avg(ap, f64(SP), f64(SG))
    fc = bpu_requant(gp.reshape(1, 8) @ p["w3"], f64(SG) * p["sw3"] / f64(SM))
    return a, gp, fc


