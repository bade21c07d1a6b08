"""The bpu int8 rules (emu:int8=bpu): the Horizon BPU's documented form, integer multipliers of 15 significant
bits and right shifts rounding half toward +inf over float scales, held bit for bit against an independent numpy
implementation of that form (tests/models/fixed_point.py) on a conv / relu / add / average pool / global pool /
matmul network; and against onnxruntime's float requantization, which it may differ from by one step per
rounding (what only a board can settle). `pytest -s` prints the counts.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

import accel
from accel import compiler

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from models import quantized
from models.fixed_point import (bpu_add, bpu_avgpool, bpu_global_avg, bpu_quantize, bpu_requant, const_dq, conv_sum,
                                model_of, qdq)

pytestmark = pytest.mark.emulator

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


def reference(x, p):
    q = bpu_quantize(x, SX)
    r1 = bpu_requant(conv_sum(q, p["w1"], pad=1) + p["b1"][None, :, None, None], f64(SX) * p["sw1"] / f64(S1),
                     relu=True)
    c2 = bpu_requant(conv_sum(r1, p["w2"]) + p["b2"][None, :, None, None], f64(S1) * p["sw2"] / f64(S2))
    a = bpu_add(r1, f64(S1), c2, f64(S2), f64(SA), relu=True)
    ap = bpu_avgpool(a, 3, f64(SA), f64(SP), pad=1)
    gp = bpu_global_avg(ap, f64(SP), f64(SG))
    fc = bpu_requant(gp.reshape(1, 8) @ p["w3"], f64(SG) * p["sw3"] / f64(SM))
    return a, gp, fc


def _run(model, x, int8):
    data = compiler.compile_model(model.SerializeToString(), int8=int8)
    with accel.open(f"emu:int8={int8}") as dev:
        return [np.asarray(o).copy() for o in dev.load(data).run(x)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bpu_rules_are_bit_exact_against_their_documented_form(seed):
    rng = np.random.default_rng(seed)
    model, p = bpu_model(rng)
    x = rng.uniform(-2, 2, (1, 4, 8, 8)).astype(np.float32)
    got = _run(model, x, "bpu")
    for name, g, w, s in zip(("add", "global pool", "matmul"), got, reference(x, p), (SA, SG, SM)):
        gi = np.rint(g.astype(np.float64) / f64(s)).astype(np.int64)
        differ = int(np.count_nonzero(gi != w))
        print(f"\n{name}: {w.size} elements, {w.size - differ} identical to the bpu form, "
              f"largest difference {int(np.abs(gi - w).max())} LSB")
        assert differ == 0


def test_one_layer_is_within_one_step_of_onnxruntime():
    # A convolution's requantization: the 15-bit multiplier and half-up shift against onnxruntime's float
    # multiply rounded half to even, on the same integer sums.
    rng = np.random.default_rng(3)
    nodes, inits = [], []
    x = qdq(nodes, inits, "x", SX)
    sw = rng.uniform(0.002, 0.01, 16).astype(np.float32)
    w = const_dq(nodes, inits, "w", rng.integers(-127, 128, (16, 8, 3, 3)), sw, axis=0)
    b = const_dq(nodes, inits, "b", rng.integers(-3000, 3000, 16), np.float32(SX) * sw, TensorProto.INT32, axis=0)
    nodes.append(helper.make_node("Conv", [x, w, b], ["c"], pads=[1, 1, 1, 1]))
    qdq(nodes, inits, "c", S2, out="y")
    model = model_of(nodes, inits, {"x": [1, 8, 16, 16]}, {"y": [1, 16, 16, 16]})
    xv = rng.uniform(-2, 2, (1, 8, 16, 16)).astype(np.float32)
    (got,) = _run(model, xv, "bpu")
    (want,) = quantized.reference_model(model, {"x": xv})
    steps = np.abs(np.rint((got.astype(np.float64) - want) / f64(S2))).astype(np.int64)
    print(f"\nbpu against onnxruntime, one conv: {steps.size} elements, {int(np.count_nonzero(steps == 0))} "
          f"identical, largest difference {int(steps.max())} LSB")
    assert steps.max() <= 1


def test_the_bpu_rules_need_symmetric_int8():
    nodes, inits = [], []
    qdq(nodes, inits, "x", 0.1, out="y", dtype=TensorProto.INT8, zero=4)
    model = model_of(nodes, inits, {"x": [4]}, {"y": [4]})
    with pytest.raises(compiler.CompileError, match="tensor 'x_q' has zero point 4: the bpu int8 rules need zero"):
        compiler.compile_model(model.SerializeToString(), int8="bpu")
    with accel.open("emu:int8=bpu") as dev:
        assert "int8: bpu rules" in dev.info.name
