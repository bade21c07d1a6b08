"""Pow with an integer base or exponent (the powcast op) end to end, element by element against onnxruntime on
one-node models: every dtype pair the compiler takes, broadcasting, negative bases and exponents, powers past
the integer range, 0 ^ negative, NaN and infinities; and the declared refusals."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same_outputs, compile_error, emu_outputs, onnx_model, run_ort
from conftest import runtime_ops as ops
from onnx import helper

import accel

# The emulator's compiler and kernels (a board's toolchain compiles what it supports itself).
pytestmark = pytest.mark.emulator

PAIRS = [("int32", "int32"), ("int64", "int64"), ("int32", "int64"), ("int64", "int32"), ("int32", "float32"),
         ("int64", "float32"), ("float32", "int32"), ("float32", "int64")]


@pytest.fixture(scope="module")
def dev():
    d = accel.open("emu")
    yield d
    d.close()


def pow_model(a_dtype, a_shape, b_dtype, b_shape, opset=15):
    return onnx_model([helper.make_node("Pow", ["a", "b"], ["y"])], [("a", a_dtype, a_shape), ("b", b_dtype, b_shape)],
                      [("y", a_dtype)], opset=opset)


def operands(dtype, values):
    return np.array(values, dtype)


# Bases and exponents whose powers reach past int32 and int64 (-2147483648 and -9223372036854775808 in
# onnxruntime, x86's conversion), exact ones, negative exponents (truncated toward 0), 0 ^ -1 (inf).
BASES = [2, -3, 0, 5, 3, -2, 7, 1, -1, 10, 0, 2, -7, 3, 46341, 4]
EXPONENTS = [3, 3, -1, 31, 40, 63, 0, 100, 7, 18, 0, 62, 2, 39, 2, -2]


@pytest.mark.parametrize("a_dtype,b_dtype", PAIRS)
def test_pow_mixed_dtypes(dev, a_dtype, b_dtype):
    a, b = operands(a_dtype, BASES), operands(b_dtype, EXPONENTS)
    m = pow_model(a_dtype, a.shape, b_dtype, b.shape)
    assert_same_outputs(emu_outputs(dev, m, {"a": a, "b": b}), run_ort(m, {"a": a, "b": b}))
    assert ops(m) == ["powcast"]


@pytest.mark.parametrize("a_dtype", ["int32", "int64"])
def test_pow_integer_base_float_exponent_edges(dev, a_dtype):
    """Fractional exponents (truncated results), a negative base to a fractional power (NaN: the most negative
    value), NaN and infinite exponents."""
    a = operands(a_dtype, [2, 9, -8, 0, 5, 3, 0, 1, -1, 2, 7])
    b = np.array([0.5, 0.5, 1 / 3, 0.5, -0.5, np.nan, -np.inf, np.inf, 2.5, np.inf, 1e-3], np.float32)
    m = pow_model(a_dtype, a.shape, "float32", b.shape)
    assert_same_outputs(emu_outputs(dev, m, {"a": a, "b": b}), run_ort(m, {"a": a, "b": b}))


@pytest.mark.parametrize("b_dtype", ["int32", "int64"])
def test_pow_float_base_integer_exponent(dev, b_dtype):
    """A float32 base to run-time integer powers: pow in double rounded once to float32 (as onnxruntime),
    NaN, infinities, -0 and overflow included."""
    r = np.random.default_rng(3)
    a = np.concatenate([r.normal(0, 3, 40).astype(np.float32),
                        np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.1, -1.5, 3e10, 1e-30], np.float32)])
    b = np.concatenate([r.integers(-6, 12, 40), np.array([2, 3, 3, 3, -1, 9, 7, 5, 3])]).astype(b_dtype)
    m = pow_model("float32", a.shape, b_dtype, b.shape)
    (y,) = emu_outputs(dev, m, {"a": a, "b": b})
    (want,) = run_ort(m, {"a": a, "b": b})
    assert_same_outputs([y], [want])
    assert np.array_equal(np.signbit(y), np.signbit(want))


def test_pow_mixed_broadcast(dev):
    a = np.arange(-6, 6, dtype=np.int64).reshape(3, 1, 4)
    b = np.array([[0], [1], [2], [5]], np.int32)
    m = pow_model("int64", a.shape, "int32", b.shape)
    assert_same_outputs(emu_outputs(dev, m, {"a": a, "b": b}), run_ort(m, {"a": a, "b": b}))
    a = np.array([2, -3, 4], np.int32)
    m = onnx_model([helper.make_node("Pow", ["a", "e"], ["y"])], [("a", "int32", (3,))], [("y", "int32")],
                   {"e": np.array(3, np.int64)}, opset=15)  # a constant exponent of an integer base
    assert_same_outputs(emu_outputs(dev, m, {"a": a}), run_ort(m, {"a": a}))


def test_pow_mixed_refusals():
    compile_error(pow_model("float32", (3,), "uint32", (3,)),
                  r"unsupported dtype uint32 of input 'b' \(float32, int32 and int64 only\) in op 'Pow'")


def test_pow_of_a_float16_base_computes_in_float32(dev):
    # lower/half.py: the base cast up, the float32 power of the integer exponent, the result rounded to float16.
    a, b = np.array([1.5, -2.0, 3.25], np.float16), np.array([3, 2, -1], np.int32)
    (got,) = emu_outputs(dev, pow_model("float16", (3,), "int32", (3,)), {"a": a, "b": b})
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, np.power(a.astype(np.float64), b).astype(np.float32).astype(np.float16))
