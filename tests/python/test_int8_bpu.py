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
from models.device_qdq import S2, SA, SG, SM, SX, bpu_model, bpu_reference, count_differing, f64, run_on_emulator
from models.fixed_point import bpu_quantize, bpu_requant, const_dq, model_of, qdq

pytestmark = pytest.mark.emulator

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bpu_rules_are_bit_exact_against_their_documented_form(seed):
    rng = np.random.default_rng(seed)
    model, p = bpu_model(rng)
    x = rng.uniform(-2, 2, (1, 4, 8, 8)).astype(np.float32)
    got = run_on_emulator(model, x, "bpu")
    for name, g, w, s in zip(("add", "global pool", "matmul"), got, bpu_reference(x, p), (SA, SG, SM)):
        assert count_differing(f"{name} against the bpu form", np.rint(g.astype(np.float64) / f64(s)), w) == 0


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
    (got,) = run_on_emulator(model, xv, "bpu")
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


@pytest.mark.parametrize("op", ["MatMul", "Gemm"])
def test_a_fused_relu_on_a_matrix_product(op):
    rng = np.random.default_rng(21)
    w, sw = rng.integers(-127, 128, (16, 8)), rng.uniform(0.002, 0.01, 8).astype(np.float32)
    bias = rng.integers(-3000, 3000, 8)
    nodes, inits = [], []
    x = qdq(nodes, inits, "x", SX)
    wd = const_dq(nodes, inits, "w", w, sw, axis=1)
    ins = [x, wd] + ([const_dq(nodes, inits, "b", bias, np.float32(SX) * sw, TensorProto.INT32, axis=0)]
                     if op == "Gemm" else [])
    nodes += [helper.make_node(op, ins, ["p"]), helper.make_node("Relu", ["p"], ["r"])]
    qdq(nodes, inits, "r", SM, out="y")
    model = model_of(nodes, inits, {"x": [3, 16]}, {"y": [3, 8]})
    xv = rng.uniform(-2, 2, (3, 16)).astype(np.float32)
    (got,) = run_on_emulator(model, xv, "bpu")
    acc = bpu_quantize(xv, SX) @ w + (bias if op == "Gemm" else 0)
    want = bpu_requant(acc, f64(SX) * sw / f64(SM), relu=True)
    assert count_differing(f"{op} + relu against the bpu form", np.rint(got.astype(np.float64) / f64(SM)), want) == 0
