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

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from models import quantized
from models.device_qdq import S2, SA, SG, SM, SX, bpu_model, bpu_reference, count_differing, f64, run_on_emulator
from models.fixed_point import bpu_quantize, bpu_requant, const_dq, conv_sum, model_of, qdq

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


def _exact(acc, k: int) -> np.ndarray:
    """sat8(floor(acc * 2^-k + 1/2)) in Python's integers, for any k: the exact requantization of each sum."""
    return np.array([min(max((int(a) + (1 << (k - 1))) >> k, -128), 127) for a in np.ravel(acc)]).reshape(acc.shape)


def _run_each_path(monkeypatch, data: bytes, x) -> dict:
    """The output of x on each int8 code path (ACCEL_EMU_ISA caps the path a load picks; a CPU without one
    gives a slower one, which must be exact as well)."""
    outs = {}
    for isa in ("portable", "avx2", "avx512vnni", "amx"):
        monkeypatch.setenv("ACCEL_EMU_ISA", isa)
        with accel.open("emu:int8=bpu") as dev:
            outs[isa] = np.asarray(dev.load(data).run(x)[0]).copy()
    return outs


@pytest.mark.parametrize("k", [16, 24, 31, 32, 33, 46, 47, 61, 62, 63, 77, 78, 80, 81, 90, 92, 93, 100])
def test_a_tiny_requantization_multiplier_is_exact(monkeypatch, k):
    # The multiplier s_x * s_w / s_y = 2^-k on sums up to 2^31: below 2^-32 every output is 0. The BPU's
    # form once capped its pre shift and left a post shift past 63 bits, the rounding term added and not
    # shifted out (+1 or -1 or saturated, by code path, from 2^-81).
    rng = np.random.default_rng(k)
    a, b = 40 if k > 60 else 10, 30 if k > 60 else 6
    sx, sw, sy = 2.0 ** -a, 2.0 ** -b, 2.0 ** (k - a - b)
    w = rng.integers(-128, 128, (8, 32, 3, 3))
    bias = rng.integers(-(2 ** 31) + 2 ** 24, 2 ** 31 - 2 ** 24, 8)
    nodes, inits = [], []
    x = qdq(nodes, inits, "x", sx)
    wd = const_dq(nodes, inits, "w", w, sw)
    bd = const_dq(nodes, inits, "b", bias, sx * sw, TensorProto.INT32)
    nodes.append(helper.make_node("Conv", [x, wd, bd], ["c"], pads=[1, 1, 1, 1]))
    qdq(nodes, inits, "c", sy, out="y")
    model = model_of(nodes, inits, {"x": [1, 32, 6, 6]}, {"y": [1, 8, 6, 6]})
    xq = rng.integers(-128, 128, (1, 32, 6, 6))
    xq[0, :, 0, 0] = 127  # sums at the edge of int32 too
    want = _exact(conv_sum(xq, w, pad=1) + bias[None, :, None, None], k)
    data = compiler.compile_model(model.SerializeToString(), int8="bpu")
    for isa, got in _run_each_path(monkeypatch, data, (xq * sx).astype(np.float32)).items():
        steps = np.rint(got.astype(np.float64) / sy).astype(np.int64) - want
        assert not steps.any(), (f"multiplier 2^-{k} on {isa}: {np.count_nonzero(steps)} of {steps.size} differ "
                                 f"from the exact result, by {sorted(set(steps[steps != 0].tolist()))} steps")


@pytest.mark.parametrize("ratio", [-90, -60, 20, 40, 100])
def test_an_add_of_extreme_scale_ratios_is_exact(ratio):
    # s_a / s_y = s_b / s_y = 2^ratio: the two multipliers once went past int32 from 2^31 (a wrapped sign).
    sa = 2.0 ** (ratio // 2)
    sy = sa / 2.0 ** ratio
    nodes, inits = [], []
    a, b = qdq(nodes, inits, "a", sa), qdq(nodes, inits, "b", sa)
    nodes.append(helper.make_node("Add", [a, b], ["s"]))
    qdq(nodes, inits, "s", sy, out="y")
    graph = helper.make_graph(nodes, "add", [helper.make_tensor_value_info(n, TensorProto.FLOAT, [256]) for n in "ab"],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [256])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    rng = np.random.default_rng(ratio + 1000)
    qa, qb = np.arange(-128, 128), rng.permutation(np.arange(-128, 128))
    qb[1:9] = -qa[1:9]  # sums of 0
    data = compiler.compile_model(model.SerializeToString(), int8="bpu")
    with accel.open("emu:int8=bpu") as dev:
        (got,) = dev.load(data).run({"a": (qa * sa).astype(np.float32), "b": (qb * sa).astype(np.float32)})
    total = qa + qb
    want = _exact(total << max(ratio, 0), max(-ratio, 0)) if ratio < 0 else np.clip(total << min(ratio, 20), -128, 127)
    steps = np.rint(got.astype(np.float64) / sy).astype(np.int64) - want
    bad = np.flatnonzero(steps)
    assert not steps.any(), (f"{np.count_nonzero(steps)} of {steps.size} differ, by up to {np.abs(steps).max()} steps "
                             f"(a {qa[bad].tolist()}, b {qb[bad].tolist()}, got {got[bad].tolist()})")
