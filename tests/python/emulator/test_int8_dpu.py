"""The dpu int8 rules (emu:int8=dpu): the Vitis AI DPU's fix-point arithmetic, held bit for bit against an
independent numpy implementation of VART's reference ops (conv2d-fix with bias shift and fused relu / leaky
relu, eltwise-fix add with relu, pool-fix max and average with the DPU's coefficients, hard-sigmoid-fix,
float2fix), on power-of-two QDQ models whose inputs sit on ties, where rounding half up (the DPU) and half to
even (onnxruntime) give different numbers. `pytest -s` prints the counts.
"""
from __future__ import annotations

import re
import struct
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

import accel
from accel import compiler

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from models.device_qdq import (FA, FG, FH, FX, const_dq_fp, count_differing, dpu_model, dpu_reference, qdq_fp,
                               run_on_emulator, tie_inputs)
from models.fixed_point import avg_coef, avgpool_fix, conv_fix, conv_sum, float2fix, model_of, round_up, sat8

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dpu_rules_are_bit_exact_against_the_reference_ops(seed):
    rng = np.random.default_rng(seed)
    model, p = dpu_model(rng)
    x = tie_inputs(rng)
    got = run_on_emulator(model, x, "dpu")
    want = dpu_reference(x, p)
    for name, g, w, fp in zip(("add", "y_sig", "y_pool"), got, want, (FA, FH, FG)):
        assert count_differing(f"{name} against the DPU reference", np.rint(g.astype(np.float64) * 2.0 ** fp), w) == 0


def test_the_ort_rules_give_other_numbers_on_ties():
    rng = np.random.default_rng(5)
    model, _ = dpu_model(rng)
    x = tie_inputs(rng)
    dpu, ort = run_on_emulator(model, x, "dpu"), run_on_emulator(model, x, "ort")
    differ = sum(int(np.count_nonzero(a != b)) for a, b in zip(dpu, ort))
    total = sum(a.size for a in dpu)
    print(f"\ndpu against ort rules on the same model and ties: {differ} of {total} outputs differ")
    assert differ > 0


def test_an_input_quantized_half_up():
    # float2fix alone: x * 2^fp on a tie goes up (2.5 -> 3, -2.5 -> -2), where QuantizeLinear goes to even.
    nodes, inits = [], []
    qdq_fp(nodes, inits, "x", 1)
    nodes[-1] = helper.make_node("Identity", ["x_q"], ["y"])
    graph = helper.make_graph(nodes, "q", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6])],
                              [helper.make_tensor_value_info("y", TensorProto.INT8, [6])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    x = np.array([1.25, -1.25, 0.75, -0.75, 100.0, -100.0], np.float32)
    (y,) = run_on_emulator(model, x, "dpu")
    assert y.tolist() == [3, -2, 2, -1, 127, -128]
    (y,) = run_on_emulator(model, x, "ort")
    assert y.tolist() == [2, -2, 2, -2, 127, -128]


@pytest.mark.parametrize("k, want", [(2, (1, 2)), (3, (7, 6)), (4, (1, 4)), (10, (41, 12)), (7, (21, 10))])
def test_average_pool_coefficients(k, want):
    # The reference's coefficients (the DPU's table, else its search), held against what the emulator pools.
    assert avg_coef(k, k) == want
    rng = np.random.default_rng(k)
    nodes, inits = [], []
    x = qdq_fp(nodes, inits, "x", 4)
    nodes.append(helper.make_node("AveragePool", [x], ["p"], kernel_shape=[k, k]))
    qdq_fp(nodes, inits, "p", 6, out="y")
    graph = helper.make_graph(nodes, "p", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, k, k])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 1, 1])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    xv = (rng.integers(-128, 128, (1, 2, k, k)) / 16.0).astype(np.float32)
    (y,) = run_on_emulator(model, xv, "dpu")
    want_y = avgpool_fix(float2fix(xv, 4), k, 4, 6)
    assert np.array_equal(np.round(y * 64).astype(np.int64), want_y)


def test_a_scale_that_is_not_a_power_of_two_is_a_compile_error():
    model, _ = dpu_model(np.random.default_rng(0), scale=0.03)
    with pytest.raises(compiler.CompileError, match=r"tensor 'x_q' has scale 0\.03, not a power of two"):
        compiler.compile_model(model.SerializeToString(), int8="dpu")


@pytest.mark.parametrize("exponent", [-60, -31, 31, 100])
def test_a_power_of_two_out_of_the_fix_point_range_says_so(exponent):
    # 2^-60 and 2^100 are powers of two: what the DPU cannot hold is their fix point (60, -100).
    model, _ = dpu_model(np.random.default_rng(0), scale=2.0 ** exponent)
    with pytest.raises(compiler.CompileError) as e:
        compiler.compile_model(model.SerializeToString(), int8="dpu")
    assert re.search(rf"tensor 'x_q' has scale \S+ = 2\^{exponent}, a power of two, but its fix point {-exponent} "
                     r"is out of \[-30, 30\], the fix points the dpu int8 rules hold", str(e.value)), str(e.value)
    assert "not a power of two" not in str(e.value)


@pytest.mark.parametrize("exponent", [-60, 100])
def test_the_reader_says_the_same_of_a_model_compiled_elsewhere(exponent):
    # A model whose header says dpu rules without the compiler's check (written by another tool): the
    # emulator's reader refuses it with the same reason, the scale shown in full (once "0.000000").
    nodes, inits = [], []
    qdq_fp(nodes, inits, "x", -exponent, out="y")
    data = bytearray(compiler.compile_model(model_of(nodes, inits, {"x": [4]}, {"y": [4]}).SerializeToString()))
    data[44:48] = struct.pack("<I", compiler.accm.INT8_RULES["dpu"])  # the header's int8_rules
    with accel.open("emu:int8=dpu") as dev, pytest.raises(accel.ModelFormatError) as e:
        dev.load(bytes(data))
    assert re.search(rf"'x_q'\): scale \S+ = 2\^{exponent} is a power of two, but its fix point {-exponent} is out of "
                     r"\[-30, 30\], the fix points the dpu int8 rules hold", str(e.value)), str(e.value)
    assert "0.000000" not in str(e.value)


def _exact_conv_fix(acc, s: int, act) -> np.ndarray:
    """conv2d-fix's sat8(round_up(act(acc) / 2^s)) in Python's integers, for any shift s."""
    def one(a: int) -> int:
        num, sh = (a * 26, s + 8) if act == "leaky" and a < 0 else (a, s)
        v = (num + (1 << (sh - 1))) >> sh if sh > 0 else num << -sh
        return min(max(v, 0 if act == "relu" else -128), 127)
    return np.array([one(int(a)) for a in np.ravel(acc)]).reshape(acc.shape)


@pytest.mark.parametrize("act", [None, "relu", "leaky"])
@pytest.mark.parametrize("fx, fw, fy", [(30, 30, -30), (20, 20, -12), (20, 20, -13), (16, 16, 0), (-12, -12, 0),
                                        (-12, -13, 0), (-30, -30, 30)])
def test_every_shift_of_a_convolution_is_exact(fx, fw, fy, act):
    # The shift fx + fw - fy from -90 to 90: the emulator's epilogue holds -24 to 52, past which no result
    # changes (0 from 33 on, saturated from -8 on); such a model was refused at load ("a shift the device's rules
    # do not have").
    rng = np.random.default_rng(abs(fx + fw - fy))
    w = rng.integers(-128, 128, (8, 16, 3, 3))
    nodes, inits = [], []
    x = qdq_fp(nodes, inits, "x", fx)
    nodes.append(helper.make_node("Conv", [x, const_dq_fp(nodes, inits, "w", w, fw)], ["c"], pads=[1, 1, 1, 1]))
    last = "c"
    if act is not None:
        nodes.append(helper.make_node("Relu" if act == "relu" else "LeakyRelu", ["c"], ["r"],
                                      **({} if act == "relu" else {"alpha": 26 / 256})))
        last = "r"
    qdq_fp(nodes, inits, last, fy, out="y")
    model = model_of(nodes, inits, {"x": [1, 16, 5, 5]}, {"y": [1, 8, 5, 5]})
    xq = rng.integers(-128, 128, (1, 16, 5, 5))
    xq[0, 0] = 0  # some sums small, one of them 0
    (y,) = run_on_emulator(model, (xq * 2.0 ** -fx).astype(np.float32), "dpu")
    want = _exact_conv_fix(conv_sum(xq, w, pad=1), fx + fw - fy, act)
    steps = np.rint(y.astype(np.float64) * 2.0 ** fy).astype(np.int64) - want
    assert not steps.any(), f"shift {fx + fw - fy}: {np.count_nonzero(steps)} of {steps.size} differ"


def _qdq_only(dtype, zero):
    nodes, inits = [], []
    qdq_fp(nodes, inits, "x", 3, out="y", dtype=dtype)
    inits[1] = helper.make_tensor("x_z", dtype, [], [zero])
    graph = helper.make_graph(nodes, "u", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()


def test_uint8_and_zero_points_are_compile_errors():
    with pytest.raises(compiler.CompileError, match="tensor 'x_q' is uint8: the dpu int8 rules compute in int8"):
        compiler.compile_model(_qdq_only(TensorProto.UINT8, 0), int8="dpu")
    with pytest.raises(compiler.CompileError, match="tensor 'x_q' has zero point 3: the dpu int8 rules need zero"):
        compiler.compile_model(_qdq_only(TensorProto.INT8, 3), int8="dpu")


def test_a_device_refuses_a_model_of_other_rules():
    model, _ = dpu_model(np.random.default_rng(0))
    data = compiler.compile_model(model.SerializeToString(), int8="dpu")
    with accel.open("emu:int8=ort") as dev, pytest.raises(accel.UnsupportedError, match="other rules"):
        dev.load(data)
    with accel.open("emu:int8=dpu") as dev:
        assert "int8: dpu rules" in dev.info.name


@pytest.mark.parametrize("act", [None, "relu", "leaky"])
def test_depthwise_and_strided_convolutions(act):
    rng = np.random.default_rng(7)
    c, fw, fb, fy = 16, 7, 6, 3
    w, b = rng.integers(-128, 128, (c, 1, 3, 3)), rng.integers(-128, 128, c)
    nodes, inits = [], []
    x = qdq_fp(nodes, inits, "x", FX)
    wd = const_dq_fp(nodes, inits, "w", w, fw)
    bd = const_dq_fp(nodes, inits, "b", b, fb)
    nodes.append(helper.make_node("Conv", [x, wd, bd], ["c"], group=c, pads=[1, 1, 1, 1], strides=[2, 2]))
    last = "c"
    if act is not None:
        nodes.append(helper.make_node("Relu" if act == "relu" else "LeakyRelu", ["c"], ["r"],
                                      **({} if act == "relu" else {"alpha": 26 / 256})))
        last = "r"
    qdq_fp(nodes, inits, last, fy, out="y")
    graph = helper.make_graph(nodes, "dw", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, 20, 20])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c, 10, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    xv = ((rng.integers(-300, 300, (1, c, 20, 20)) + 0.5) / 2.0 ** FX).astype(np.float32)
    (y,) = run_on_emulator(model, xv, "dpu")
    q = float2fix(xv, FX)
    want = np.concatenate([conv_fix(q[:, i:i + 1], w[i:i + 1], b[i:i + 1], FX, fw, fb, fy, act, pad=1, stride=2)
                           for i in range(c)], axis=1)
    got = np.round(y.astype(np.float64) * 2.0 ** fy).astype(np.int64)
    print(f"\ndepthwise ({act}): {want.size} elements, {int(np.count_nonzero(got == want))} identical")
    assert np.array_equal(got, want)


@pytest.mark.parametrize("act", ["relu", "leaky"])
def test_a_fused_activation_on_a_gemm(act):
    rng = np.random.default_rng(22)
    fw, fb, fy = 7, 5, 3
    w, b = rng.integers(-128, 128, (16, 8)), rng.integers(-128, 128, 8)
    nodes, inits = [], []
    x = qdq_fp(nodes, inits, "x", FX)
    wd = const_dq_fp(nodes, inits, "w", w, fw)
    bd = const_dq_fp(nodes, inits, "b", b, fb)
    nodes.append(helper.make_node("Gemm", [x, wd, bd], ["g"]))
    nodes.append(helper.make_node("Relu", ["g"], ["a"]) if act == "relu" else
                 helper.make_node("LeakyRelu", ["g"], ["a"], alpha=26 / 256))
    qdq_fp(nodes, inits, "a", fy, out="y")
    model = model_of(nodes, inits, {"x": [3, 16]}, {"y": [3, 8]})
    xv = ((rng.integers(-300, 300, (3, 16)) + 0.5) / 2.0 ** FX).astype(np.float32)
    (got,) = run_on_emulator(model, xv, "dpu")
    acc = float2fix(xv, FX) @ w + (b.astype(np.int64) << (FX + fw - fb))
    s = FX + fw - fy
    want = sat8(np.maximum(round_up(acc, s), 0) if act == "relu" else
                np.where(acc < 0, round_up(acc * 26, s + 8), round_up(acc, s)))
    assert count_differing(f"gemm + {act} against the DPU reference", np.rint(got * 2.0 ** fy), want) == 0
