"""Comparison, boolean logic, Where and integer arithmetic end to end (ONNX -> accel.compiler -> the emulator),
against onnxruntime, every element: Equal / Greater / GreaterOrEqual / Less / LessOrEqual on float32 (NaN,
+-inf, -0) and on every integer dtype, IsNaN and IsInf, Not / And / Or / Xor, Where over every element size with
broadcasting over all three inputs, Add / Sub / Mul / Div / Min / Max on every integer dtype (wrapping, division
truncating toward zero, and the results accel defines where C does not: x / 0 and MIN / -1), bool tensors as
model inputs and outputs, and the CompileErrors and load-time checks. onnxruntime has no Min / Max kernel for
int16 / uint16: those compare with numpy."""
from __future__ import annotations

import functools

import numpy as np
import pytest
import conftest
from conftest import assert_same_outputs as same
from conftest import emu_outputs as run_emu
from conftest import run_ort
from conftest import runtime_ops as ops
from onnx import TensorProto, helper

import accel
from accel import compiler
from accel.compiler import accm

# The emulator's own ops: their semantics, not a device's (deselected on vendor devices).
pytestmark = pytest.mark.emulator

# This file's models: opset 18.
onnx_model = functools.partial(conftest.onnx_model, opset=18)


INT_DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
COMPARE_OPS = ["Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual"]
NUMPY_COMPARE = {"Equal": np.equal, "Greater": np.greater, "GreaterOrEqual": np.greater_equal, "Less": np.less,
                 "LessOrEqual": np.less_equal}
# Operand shapes that broadcast in the ways the kernel distinguishes: same shape, a row, a column, a scalar,
# both sides broadcast, and ranks that differ.
BCAST = [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((2, 3, 1), (1, 1, 4)), ((2, 3, 4), ()), ((3, 1), (2, 1, 5)),
         ((1,), (1,))]


# ---------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------


def check(dev, m, feeds, want=None):
    """The emulator's outputs equal onnxruntime's (or `want`, where onnxruntime has no kernel); returns them."""
    got = run_emu(dev, m, feeds)
    want = run_ort(m, feeds) if want is None else want
    assert len(got) == len(want)
    for g, w in zip(got, want):
        same(g, w)
    return got


def rand_int(shape, dtype, seed, lo=None, hi=None):
    """Integers over the dtype's whole range (or [lo, hi]), with its extremes and 0 among them."""
    info = np.iinfo(dtype)
    r = np.random.default_rng(seed)
    lo = info.min if lo is None else lo
    hi = info.max if hi is None else hi
    a = np.asarray(r.integers(lo, hi, size=shape, dtype=dtype, endpoint=True))
    flat = a.reshape(-1)
    for i, v in enumerate((info.min, info.max, 0)[:flat.size]):
        if lo <= v <= hi:
            flat[(i * 7) % flat.size] = v
    return a


SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -1.5, 3.0], np.float32)


def rand_float(shape, seed):
    """Small integers as floats (so that equal elements are common), with NaN, +-inf and +-0 among them."""
    r = np.random.default_rng(seed)
    a = r.integers(-3, 4, size=shape).astype(np.float32)
    flat = a.reshape(-1)
    k = min(flat.size, 3)
    flat[r.choice(flat.size, k, replace=False)] = r.choice(SPECIAL, k)
    return a


# ---------------------------------------------------------------------------------------------------
# comparisons
# ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", COMPARE_OPS)
@pytest.mark.parametrize("sa,sb", BCAST)
def test_compare_float32_with_nan_and_inf(dev, op, sa, sb):
    m = onnx_model([helper.make_node(op, ["a", "b"], ["y"])], [("a", "float32", sa), ("b", "float32", sb)],
                   [("y", "bool")])
    feeds = {"a": rand_float(sa, 1), "b": rand_float(sb, 2)}
    check(dev, m, feeds)
    assert ops(m) == ["compare"]


@pytest.mark.parametrize("op", COMPARE_OPS)
def test_compare_every_pair_of_special_floats(dev, op):
    """Every pair of NaN, +-inf, +-0 and finite values: NaN compares false (Equal(NaN, NaN) too), -0 == +0."""
    a, b = np.meshgrid(SPECIAL, SPECIAL, indexing="ij")
    m = onnx_model([helper.make_node(op, ["a", "b"], ["y"])], [("a", "float32", a.shape), ("b", "float32", b.shape)],
                   [("y", "bool")])
    (got,) = check(dev, m, {"a": a, "b": b})
    np.testing.assert_array_equal(got, NUMPY_COMPARE[op](a, b))
    assert not got[0].any() and not got[:, 0].any()  # NaN against anything (NaN too) is false, whatever the op


ISINF_ATTRS = [{}, {"detect_positive": 0}, {"detect_negative": 0}, {"detect_positive": 0, "detect_negative": 0}]


@pytest.mark.parametrize("op,attrs", [("IsNaN", {})] + [("IsInf", a) for a in ISINF_ATTRS],
                         ids=lambda v: v if isinstance(v, str) else "-".join(f"{k}={x}" for k, x in v.items()))
def test_isnan_isinf(dev, op, attrs):
    """Every element against onnxruntime and numpy, over NaN, +-inf, +-0, subnormals and the largest floats."""
    x = np.concatenate([SPECIAL, np.array([np.finfo(np.float32).max, -np.finfo(np.float32).max, 1e-45], np.float32),
                        rand_float((37,), 3)]).reshape(6, 8)
    m = onnx_model([helper.make_node(op, ["x"], ["y"], **attrs)], [("x", "float32", x.shape)], [("y", "bool")])
    (got,) = check(dev, m, {"x": x})
    pos, neg = attrs.get("detect_positive", 1), attrs.get("detect_negative", 1)
    want = np.isnan(x) if op == "IsNaN" else (pos & np.isposinf(x)) | (neg & np.isneginf(x))
    np.testing.assert_array_equal(got, want)
    assert got.any() or not (pos or neg)
    assert ops(m) == (["compare", "logic"] if op == "IsNaN" else ["activation", "compare"] if pos and neg else
                      ["compare"])


def test_isinf_refuses_float64_by_name():
    m = conftest.onnx_model([helper.make_node("IsInf", ["x"], ["y"], name="i1")], [("x", "float64", (2,))],
                            [("y", "bool")], opset=20)
    _compile_error(m, r"unsupported dtype float64 of input 'x'.*'IsInf' \(node 'i1'\)")


@pytest.mark.parametrize("op", COMPARE_OPS)
@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_compare_integers(dev, op, dtype):
    sa, sb = (3, 4, 5), (4, 1)
    a = rand_int(sa, dtype, 3)
    b = rand_int(sb, dtype, 4)
    a[0, :, 0] = b[:, 0]  # equal elements (and the extremes, from rand_int) against each other
    m = onnx_model([helper.make_node(op, ["a", "b"], ["y"])], [("a", dtype, sa), ("b", dtype, sb)], [("y", "bool")])
    check(dev, m, {"a": a, "b": b})


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("sa,sb", BCAST[1:4])
def test_compare_integers_broadcast(dev, dtype, sa, sb):
    m = onnx_model([helper.make_node("Less", ["a", "b"], ["y"])], [("a", dtype, sa), ("b", dtype, sb)],
                   [("y", "bool")])
    check(dev, m, {"a": rand_int(sa, dtype, 5, 0, 9), "b": rand_int(sb, dtype, 6, 0, 9)})


def test_equal_on_bool(dev):
    m = onnx_model([helper.make_node("Equal", ["a", "b"], ["y"])], [("a", "bool", (2, 4)), ("b", "bool", (4,))],
                   [("y", "bool")])
    r = np.random.default_rng(7)
    check(dev, m, {"a": r.random((2, 4)) < 0.5, "b": r.random(4) < 0.5})


def test_compare_with_a_constant_and_legacy_broadcast(dev):
    """A constant operand, and opset 1's broadcast=1 with axis (B aligned at axis 1)."""
    m = onnx_model([helper.make_node("Greater", ["a", "c"], ["y"])], [("a", "int32", (2, 3))], [("y", "bool")],
                   {"c": np.array([[0], [5]], np.int32)})
    check(dev, m, {"a": np.arange(-3, 3, dtype=np.int32).reshape(2, 3) * 3})
    legacy = onnx_model([helper.make_node("Less", ["a", "b"], ["y"], broadcast=1, axis=1)],
                        [("a", "float32", (2, 3, 2)), ("b", "float32", (3,))], [("y", "bool")], opset=6)
    a = rand_float((2, 3, 2), 8)
    b = np.array([0.0, 1.0, -1.0], np.float32)
    (got,) = run_emu(dev, legacy, {"a": a, "b": b})
    np.testing.assert_array_equal(got, a < b.reshape(3, 1))


# ---------------------------------------------------------------------------------------------------
# logic
# ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["And", "Or", "Xor"])
@pytest.mark.parametrize("sa,sb", BCAST)
def test_logic(dev, op, sa, sb):
    r = np.random.default_rng(9)
    m = onnx_model([helper.make_node(op, ["a", "b"], ["y"])], [("a", "bool", sa), ("b", "bool", sb)],
                   [("y", "bool")])
    check(dev, m, {"a": np.asarray(r.random(sa) < 0.5), "b": np.asarray(r.random(sb) < 0.5)})
    assert ops(m) == ["logic"]


def test_not(dev):
    m = onnx_model([helper.make_node("Not", ["a"], ["y"])], [("a", "bool", (3, 5))], [("y", "bool")])
    check(dev, m, {"a": np.random.default_rng(10).random((3, 5)) < 0.5})


def test_logic_chain_on_computed_conditions(dev):
    """(x > 0 and y <= 1) xor not (x == y), on float inputs with NaN."""
    nodes = [helper.make_node("Greater", ["x", "zero"], ["p"]),
             helper.make_node("LessOrEqual", ["y", "one"], ["q"]),
             helper.make_node("And", ["p", "q"], ["pq"]),
             helper.make_node("Equal", ["x", "y"], ["e"]),
             helper.make_node("Not", ["e"], ["ne"]),
             helper.make_node("Xor", ["pq", "ne"], ["out"])]
    m = onnx_model(nodes, [("x", "float32", (4, 6)), ("y", "float32", (6,))], [("out", "bool")],
                   {"zero": np.float32(0), "one": np.float32(1)})
    check(dev, m, {"x": rand_float((4, 6), 11), "y": rand_float((6,), 12)})


# ---------------------------------------------------------------------------------------------------
# Where
# ---------------------------------------------------------------------------------------------------

WHERE_SHAPES = [((2, 3, 4), (2, 3, 4), (2, 3, 4)), ((3, 1), (1, 4), (2, 3, 4)), ((4,), (2, 3, 4), ()),
                ((2, 1, 4), (), (3, 1)), ((), (2, 3), (2, 3)), ((1,), (1,), (1,))]


@pytest.mark.parametrize("sc,sx,sy", WHERE_SHAPES)
def test_where_broadcasts_over_all_three(dev, sc, sx, sy):
    r = np.random.default_rng(13)
    m = onnx_model([helper.make_node("Where", ["c", "x", "y"], ["z"])],
                   [("c", "bool", sc), ("x", "float32", sx), ("y", "float32", sy)], [("z", "float32")])
    feeds = {"c": np.asarray(r.random(sc) < 0.5), "x": rand_float(sx, 14), "y": rand_float(sy, 15)}
    check(dev, m, feeds)
    assert ops(m) == ["where"]


@pytest.mark.parametrize("dtype", ["float16", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                                   "uint64", "bool"])
def test_where_every_dtype(dev, dtype):
    r = np.random.default_rng(16)
    sc, sx, sy = (3, 1, 5), (4, 5), (3, 4, 1)
    if dtype == "bool":
        x, y = np.asarray(r.random(sx) < 0.5), np.asarray(r.random(sy) < 0.5)
    elif dtype == "float16":
        x, y = r.standard_normal(sx).astype(dtype), r.standard_normal(sy).astype(dtype)
    else:
        x, y = rand_int(sx, dtype, 17), rand_int(sy, dtype, 18)
    c = np.asarray(r.random(sc) < 0.5)
    m = onnx_model([helper.make_node("Where", ["c", "x", "y"], ["z"])],
                   [("c", "bool", sc), ("x", dtype, sx), ("y", dtype, sy)], [("z", dtype)])
    check(dev, m, {"c": c, "x": x, "y": y}, want=[np.where(c, x, y)])


def test_where_of_a_computed_condition_is_a_leaky_relu(dev):
    """Where(Greater(x, 0), x, 0.1 * x), against onnxruntime, NaN and infinities included."""
    nodes = [helper.make_node("Greater", ["x", "zero"], ["pos"]),
             helper.make_node("Mul", ["x", "slope"], ["neg"]),
             helper.make_node("Where", ["pos", "x", "neg"], ["y"])]
    m = onnx_model(nodes, [("x", "float32", (2, 8, 16))], [("y", "float32")],
                   {"zero": np.float32(0), "slope": np.float32(0.1)})
    x = (np.random.default_rng(19).standard_normal((2, 8, 16)) * 10).astype(np.float32)
    x.reshape(-1)[:4] = [np.nan, np.inf, -np.inf, -0.0]
    check(dev, m, {"x": x})
    assert ops(m) == ["compare", "mul", "where"]


def test_where_keeps_nan_payloads_bit_for_bit(dev):
    x = np.array([1, 0x7FC12345, 0xFFFFFFFF, 3], np.uint32).view(np.float32)
    c = np.array([True, True, True, False])
    m = onnx_model([helper.make_node("Where", ["c", "x", "y"], ["z"])],
                   [("c", "bool", (4,)), ("x", "float32", (4,)), ("y", "float32", (4,))], [("z", "float32")])
    (got,) = run_emu(dev, m, {"c": c, "x": x, "y": np.zeros(4, np.float32)})
    np.testing.assert_array_equal(got.view(np.uint32), [1, 0x7FC12345, 0xFFFFFFFF, 0])


# ---------------------------------------------------------------------------------------------------
# integer arithmetic
# ---------------------------------------------------------------------------------------------------

def trunc_div(a, b):
    """C's (and onnxruntime's) integer division: the quotient truncated toward zero, for b != 0."""
    q = np.floor_divide(a, b)
    return np.where((np.remainder(a, b) != 0) & ((a < 0) != (b < 0)), q + 1, q).astype(a.dtype)


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Min", "Max"])
@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_arithmetic_wraps(dev, op, dtype):
    """Over the whole range of the dtype (so add, sub and mul overflow and wrap), broadcasting a row."""
    sa, sb = (3, 4, 6), (4, 1)
    a, b = rand_int(sa, dtype, 20), rand_int(sb, dtype, 21)
    m = onnx_model([helper.make_node(op, ["a", "b"], ["y"])], [("a", dtype, sa), ("b", dtype, sb)], [("y", dtype)])
    want = None
    if op in ("Min", "Max") and dtype in ("int16", "uint16"):  # no onnxruntime kernel
        want = [(np.minimum if op == "Min" else np.maximum)(a, b)]
    check(dev, m, {"a": a, "b": b}, want=want)
    assert ops(m) == [op.lower()]


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("sa,sb", BCAST[:5])
def test_integer_division_truncates_toward_zero(dev, dtype, sa, sb):
    """Negative operands included (-7 / 2 = -3, 7 / -2 = -3), no zero divisor, no MIN / -1."""
    a = rand_int(sa, dtype, 22)
    b = rand_int(sb, dtype, 23)
    b[b == 0] = 3
    if np.iinfo(dtype).min < 0:
        b[b == -1] = -2
    m = onnx_model([helper.make_node("Div", ["a", "b"], ["y"])], [("a", dtype, sa), ("b", dtype, sb)],
                   [("y", dtype)])
    (got,) = check(dev, m, {"a": a, "b": b})
    np.testing.assert_array_equal(got, trunc_div(*np.broadcast_arrays(a, b)))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64"])
def test_integer_division_small_signed_cases(dev, dtype):
    a = np.array([7, -7, 7, -7, 6, -6, 1, -1, 0], dtype)
    b = np.array([2, 2, -2, -2, 3, -3, 5, 5, -4], dtype)
    m = onnx_model([helper.make_node("Div", ["a", "b"], ["y"])], [("a", dtype, a.shape), ("b", dtype, b.shape)],
                   [("y", dtype)])
    (got,) = check(dev, m, {"a": a, "b": b})
    np.testing.assert_array_equal(got, np.array([3, -3, -3, 3, 2, 2, 0, 0, 0], dtype))


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_division_by_zero_gives_zero_and_min_over_minus_one_wraps(dev, dtype):
    """What accel defines where C does not (onnxruntime may crash): x / 0 = 0, MIN / -1 = MIN."""
    info = np.iinfo(dtype)
    a = np.array([5, info.max, info.min, 0, info.min, info.min, 9], dtype)
    minus1 = -1 if info.min < 0 else 1
    b = np.array([0, 0, 0, 0, minus1, 1, 0], dtype)
    m = onnx_model([helper.make_node("Div", ["a", "b"], ["y"])], [("a", dtype, a.shape), ("b", dtype, b.shape)],
                   [("y", dtype)])
    (got,) = run_emu(dev, m, {"a": a, "b": b})
    np.testing.assert_array_equal(got, np.array([0, 0, 0, 0, info.min, info.min, 0], dtype))


def _ort_or_none(m, feeds):
    """onnxruntime's outputs, or None where it has no kernel for the dtype (then numpy is the reference)."""
    try:
        return run_ort(m, feeds)
    except Exception as e:  # onnxruntime's NotImplemented: no kernel registered for the type
        if "NOT_IMPLEMENTED" not in str(e) and "Could not find an implementation" not in str(e):
            raise
        return None


@pytest.mark.parametrize("fmod", [0, 1])
@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("sa,sb", [((3, 4, 6), (4, 1)), ((2, 5), ())])
def test_integer_mod(dev, fmod, dtype, sa, sb):
    """Over the dtype's whole range, broadcasting; fmod=0 takes B's sign (numpy's mod), fmod=1 A's (C's %):
    against numpy and onnxruntime, no zero divisor (below)."""
    a, b = rand_int(sa, dtype, 30), rand_int(sb, dtype, 31)
    b[b == 0] = 7
    m = onnx_model([helper.make_node("Mod", ["a", "b"], ["y"], fmod=fmod)], [("a", dtype, sa), ("b", dtype, sb)],
                   [("y", dtype)])
    (got,) = run_emu(dev, m, {"a": a, "b": b})
    want = (np.fmod if fmod else np.mod)(a, b)
    same([got], [want])
    ort_out = _ort_or_none(m, {"a": a, "b": b})
    if ort_out is not None:
        same([got], ort_out)
    assert ops(m) == ["fmod" if fmod else "mod"]


@pytest.mark.parametrize("fmod", [0, 1])
@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8", "uint64"])
def test_integer_mod_small_cases_zero_divisor_and_min(dev, fmod, dtype):
    """The signs case by case; what accel defines where C does not (onnxruntime may crash): x mod 0 = 0, and
    min mod -1 = 0 (C's min % -1 traps)."""
    info = np.iinfo(dtype)
    signed = info.min < 0
    a = np.array([7, -7, 7, -7, 6, 0, 5, info.max, info.min, info.min] if signed else
                 [7, 9, 6, 0, 5, info.max, info.max], dtype)
    b = np.array([3, 3, -3, -3, 3, 4, 0, 0, -1, 0] if signed else [3, 4, 3, 4, 0, 0, 1], dtype)
    m = onnx_model([helper.make_node("Mod", ["a", "b"], ["y"], fmod=fmod)], [("a", dtype, a.shape),
                                                                             ("b", dtype, b.shape)], [("y", dtype)])
    (got,) = run_emu(dev, m, {"a": a, "b": b})
    if signed:
        want = [1, -1, 1, -1, 0, 0, 0, 0, 0, 0] if fmod else [1, 2, -2, -1, 0, 0, 0, 0, 0, 0]
    else:
        want = [1, 1, 0, 0, 0, 0, 0]
    np.testing.assert_array_equal(got, np.array(want, dtype))


@pytest.mark.parametrize("fmod", [0, 1])
def test_float_mod_against_numpy_and_onnxruntime(dev, fmod):
    """fmod=1 is fmodf (A's sign); fmod=0 floored (B's sign, numpy's mod): exact, with ONNX's special cases:
    NaN for a zero divisor, an infinite dividend or a NaN; an infinite divisor gives A (or, fmod=0 with the
    signs apart, B); a zero result has A's sign (fmod=1) or B's (fmod=0)."""
    a = np.concatenate([np.random.default_rng(32).standard_normal(200) * 50,
                        [5.5, -5.5, 5.5, -5.5, 1.0, np.inf, -np.inf, 3.0, -3.0, np.nan, -0.0, 0.0, 6.0, -6.0,
                         1e30]]).astype(np.float32)
    b = np.concatenate([np.random.default_rng(33).standard_normal(200) * 5,
                        [2.0, 2.0, -2.0, -2.0, 0.0, 2.0, 1.0, np.inf, np.inf, 1.0, 3.0, -3.0, -3.0, 3.0,
                         7.0]]).astype(np.float32)
    m = onnx_model([helper.make_node("Mod", ["a", "b"], ["y"], fmod=fmod)],
                   [("a", "float32", a.shape), ("b", "float32", b.shape)], [("y", "float32")])
    (got,) = run_emu(dev, m, {"a": a, "b": b})
    with np.errstate(invalid="ignore", divide="ignore"):
        want = (np.fmod if fmod else np.mod)(a, b)
    same([got], [want])
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    if fmod:  # onnxruntime refuses a float Mod with fmod=0 before opset 28
        same([got], run_ort(m, {"a": a, "b": b}))
    assert ops(m) == ["fmod" if fmod else "mod"]


@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_bitwise(dev, op, dtype):
    sa, sb = (3, 4, 6), (4, 1)
    a, b = rand_int(sa, dtype, 34), rand_int(sb, dtype, 35)
    m = onnx_model([helper.make_node(op, ["a", "b"], ["y"])], [("a", dtype, sa), ("b", dtype, sb)], [("y", dtype)])
    (got,) = run_emu(dev, m, {"a": a, "b": b})
    fn = {"BitwiseAnd": np.bitwise_and, "BitwiseOr": np.bitwise_or, "BitwiseXor": np.bitwise_xor}[op]
    same([got], [fn(a, b)])
    ort_out = _ort_or_none(m, {"a": a, "b": b})
    if ort_out is not None:
        same([got], ort_out)
    assert ops(m) == [{"BitwiseAnd": "bitand", "BitwiseOr": "bitor", "BitwiseXor": "bitxor"}[op]]


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_bitwise_not(dev, dtype):
    a = rand_int((5, 7), dtype, 36)
    m = onnx_model([helper.make_node("BitwiseNot", ["a"], ["y"])], [("a", dtype, a.shape)], [("y", dtype)])
    (got,) = run_emu(dev, m, {"a": a})
    same([got], [np.invert(a)])
    ort_out = _ort_or_none(m, {"a": a})
    if ort_out is not None:
        same([got], ort_out)
    assert ops(m) == ["bitxor"]


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64"])
def test_bitshift_signed_opset_28(dev, dtype):
    """Opset 28's signed shifts: right arithmetic, left dropping bits past the sign; a negative shift or one of
    the width or more gives the sign extension alone (-1 right of a negative, else 0)."""
    bits, lo = np.iinfo(dtype).bits, np.iinfo(dtype).min
    a = np.array([5, -5, -128, 64, -1, 3, -7, -7, 9, lo], dtype)
    b = np.array([1, 1, 3, 1, 5, bits - 2, bits, -1, bits + 3, bits - 1], dtype)
    feeds = {"a": a, "b": b}
    for direction, want in (
            ("RIGHT", [2, -3, -16, 32, -1, 0, -1, -1, 0, -1]),
            ("LEFT", [10, -10, -1024, 128, -32, -(1 << (bits - 2)), 0, 0, 0, 0])):  # 0b11 << bits-2 wraps
        m = conftest.onnx_model([helper.make_node("BitShift", ["a", "b"], ["y"], direction=direction)],
                                [("a", dtype, a.shape), ("b", dtype, b.shape)], [("y", dtype)], opset=28)
        (got,) = run_emu(dev, m, feeds)
        want = np.array(want, np.int64).astype(dtype)  # wraps -1024 and 128 as the narrow dtype does
        np.testing.assert_array_equal(got, want, err_msg=direction)


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "uint64"])
def test_bitshift(dev, direction, dtype):
    """Shifts 0 .. width-1 against numpy and onnxruntime, broadcasting; then shifts of the width and more,
    which give 0 as numpy (C leaves them undefined)."""
    bits = np.iinfo(dtype).bits
    a = rand_int((4, 9), dtype, 37)
    b = np.random.default_rng(38).integers(0, bits, size=(9,)).astype(dtype)
    m = onnx_model([helper.make_node("BitShift", ["a", "b"], ["y"], direction=direction)],
                   [("a", dtype, a.shape), ("b", dtype, b.shape)], [("y", dtype)])
    (got,) = run_emu(dev, m, {"a": a, "b": b})
    fn = np.left_shift if direction == "LEFT" else np.right_shift
    same([got], [fn(a, b)])
    ort_out = _ort_or_none(m, {"a": a, "b": b})
    if ort_out is not None:
        same([got], ort_out)
    assert ops(m) == ["shl" if direction == "LEFT" else "shr"]
    b = np.array([bits, bits + 1, np.iinfo(dtype).max, bits - 1, 0, 1, bits, bits, bits], dtype)
    (got,) = run_emu(dev, m, {"a": a, "b": b})
    same([got], [fn(a, b)])
    assert not got[:, [0, 1, 2, 6, 7, 8]].any()


@pytest.mark.parametrize("nodes,ins,match", [
    ([helper.make_node("Mod", ["a", "b"], ["y"], name="n1", fmod=2)], "int32", r"'n1'.*fmod 2 must be 0 or 1"),
    ([helper.make_node("Mod", ["a", "b"], ["y"], name="n1", fmod=1)], "float64",
     r"unsupported dtype float64 of input 'a'.*'Mod' \(node 'n1'\)"),
    ([helper.make_node("BitShift", ["a", "b"], ["y"], name="n1", direction="UP")], "uint8",
     r"'n1'.*direction 'UP' is not LEFT or RIGHT"),
])
def test_integer_binary_refusals_name_the_node(nodes, ins, match):
    _compile_error(onnx_model(nodes, [("a", ins, (2,)), ("b", ins, (2,))], [("y", ins)]), match)


def test_integer_min_max_of_several_inputs(dev):
    d = "int32"
    ins = [("a", d, (2, 3)), ("b", d, (3,)), ("c", d, (2, 1))]
    feeds = {n: rand_int(s, d, 24 + i) for i, (n, _, s) in enumerate(ins)}
    for op in ("Min", "Max"):
        m = onnx_model([helper.make_node(op, ["a", "b", "c"], ["y"])], ins, [("y", d)])
        check(dev, m, feeds)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64"])
def test_integer_clip(dev, dtype):
    """Clip of integers: constant bounds, a bound computed at run time, one bound absent, min > max."""
    x = rand_int((3, 7), dtype, 26)
    lo, hi = np.array(2, dtype), np.array(90, dtype)
    for inputs, feeds_extra in ((["x", "lo", "hi"], {}), (["x", "", "hi"], {}), (["x", "rlo"], {"rlo": lo}),
                                (["x", "hi", "lo"], {})):
        ins = [("x", dtype, (3, 7))] + [(k, dtype, ()) for k in feeds_extra]
        m = onnx_model([helper.make_node("Clip", inputs, ["y"])], ins, [("y", dtype)], {"lo": lo, "hi": hi})
        check(dev, m, {"x": x, **feeds_extra})
    one = onnx_model([helper.make_node("Clip", ["x", "lo1"], ["y"])], [("x", dtype, ())], [("y", dtype)],
                     {"lo1": np.array([5], dtype)})
    (got,) = run_emu(dev, one, {"x": np.array(3, dtype)})
    assert got.shape == () and got == 5


def test_integer_arithmetic_with_constants_and_a_shape(dev):
    """int64 index math at run time: (x + 3) * 2 - x // 2, then compared and selected."""
    nodes = [helper.make_node("Add", ["x", "three"], ["a"]),
             helper.make_node("Mul", ["a", "two"], ["b"]),
             helper.make_node("Div", ["x", "two"], ["h"]),
             helper.make_node("Sub", ["b", "h"], ["c"]),
             helper.make_node("Less", ["c", "x"], ["lt"]),
             helper.make_node("Where", ["lt", "c", "x"], ["y"])]
    m = onnx_model(nodes, [("x", "int64", (5, 4))], [("y", "int64")],
                   {"three": np.int64(3), "two": np.array([2], np.int64)})
    check(dev, m, {"x": rand_int((5, 4), "int64", 30, -1000, 1000)})


def test_integer_model_is_format_1_3_and_float_models_stay_older():
    f = onnx_model([helper.make_node("Add", ["a", "b"], ["y"])], [("a", "float32", (2,)), ("b", "float32", (2,))],
                   [("y", "float32")])
    i = onnx_model([helper.make_node("Add", ["a", "b"], ["y"])], [("a", "int32", (2,)), ("b", "int32", (2,))],
                   [("y", "int32")])
    c = onnx_model([helper.make_node("Less", ["a", "b"], ["y"])], [("a", "float32", (2,)), ("b", "float32", (2,))],
                   [("y", "bool")])
    minor = [accm.read(compiler.compile_model(m))["header"]["version_minor"] for m in (f, i, c)]
    assert minor == [1, 3, 3]


# ---------------------------------------------------------------------------------------------------
# bool tensors at run time
# ---------------------------------------------------------------------------------------------------

def test_bool_input_and_output(dev):
    """A bool model input and bool outputs, through Not, Identity, Reshape, And, Cast and a compare."""
    nodes = [helper.make_node("Not", ["mask"], ["nm"]),
             helper.make_node("Identity", ["nm"], ["nmi"]),
             helper.make_node("Reshape", ["nmi", "shape"], ["nmr"]),
             helper.make_node("Greater", ["x", "zero"], ["pos"]),
             helper.make_node("And", ["nmr", "pos"], ["keep"]),
             helper.make_node("Cast", ["keep"], ["keepf"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["x", "keepf"], ["y"])]
    m = onnx_model(nodes, [("mask", "bool", (2, 6)), ("x", "float32", (3, 4))], [("keep", "bool"), ("y", "float32")],
                   {"shape": np.array([3, 4], np.int64), "zero": np.float32(0)})
    r = np.random.default_rng(31)
    feeds = {"mask": np.asarray(r.random((2, 6)) < 0.5), "x": r.standard_normal((3, 4)).astype(np.float32)}
    keep, _ = check(dev, m, feeds)
    assert keep.dtype == np.bool_
    model = dev.load(m.SerializeToString())
    assert model.inputs[0].dtype == np.dtype(np.bool_) and model.outputs[0].dtype == np.dtype(np.bool_)


def test_bool_passthrough(dev):
    m = onnx_model([helper.make_node("Identity", ["b"], ["y"])], [("b", "bool", (7,))], [("y", "bool")])
    b = np.array([1, 0, 0, 1, 1, 0, 1], np.bool_)
    (got,) = check(dev, m, {"b": b})
    assert got.dtype == np.bool_


# ---------------------------------------------------------------------------------------------------
# what is refused
# ---------------------------------------------------------------------------------------------------

def _compile_error(m, match):
    with pytest.raises(compiler.CompileError, match=match):
        compiler.compile_model(m)


@pytest.mark.parametrize("op,dtype,out", [
    ("Greater", "float64", "bool"), ("Equal", "float64", "bool"), ("Add", "float64", "float64"),
    ("Div", "float64", "float64"), ("Max", "float64", "float64"),
])
def test_unsupported_dtypes_are_named(op, dtype, out):
    m = onnx_model([helper.make_node(op, ["a", "b"], ["y"], name="n1")], [("a", dtype, (2,)), ("b", dtype, (2,))],
                   [("y", out)])
    _compile_error(m, rf"unsupported dtype {dtype} of input 'a'.*'{op}' \(node 'n1'\)")


def test_relu_on_integers_is_refused_not_fused():
    m = onnx_model([helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Relu", ["s"], ["y"], name="r")],
                   [("a", "int32", (2,)), ("b", "int32", (2,))], [("y", "int32")])
    _compile_error(m, r"unsupported dtype int32 of input 's'.*'Relu' \(node 'r'\)")


F32, BOOL, I32 = (accm.dtype_code(np.dtype(t)) for t in ("float32", "bool", "int32"))


def accm_model(op, dtypes, dims, ints=(), act=0):
    """One node `op` over inputs t0..t{n-2} and output t{n-1} of the given dtypes and dims."""
    n = len(dtypes)
    tensors = [accm.Tensor(f"t{i}", dt, accm.KIND_OUTPUT if i == n - 1 else accm.KIND_INPUT, d)
               for i, (dt, d) in enumerate(zip(dtypes, dims))]
    node = accm.Node(accm.OPS[op], list(range(n - 1)), [n - 1], name="n1", ints=list(ints), activation=act)
    return accm.write(tensors, [node], list(range(n - 1)), [n - 1])


@pytest.mark.parametrize("op,dtypes,dims,kw,match", [
    ("compare", (F32, F32, F32), ((2,), (2,), (2,)), dict(ints=[1]), "output dtype float32 is not bool"),
    ("compare", (F32, I32, BOOL), ((2,), (2,), (2,)), dict(ints=[1]), "input dtypes float32 and int32 differ"),
    ("compare", (F32, F32, BOOL), ((2,), (2,), (2,)), dict(ints=[9]), "unknown function 9"),
    ("compare", (F32, F32, BOOL), ((2,), (3,), (3,)), dict(ints=[1]), "do not broadcast"),
    ("logic", (BOOL, BOOL, BOOL), ((2,), (2,), (2,)), dict(ints=[4]), "expects 1 inputs, got 2"),
    ("logic", (BOOL, I32, BOOL), ((2,), (2,), (2,)), dict(ints=[1]), "input 1 dtype int32 is not bool"),
    ("where", (F32, F32, F32, F32), ((2,),) * 4, {}, r"condition \(input 0\) dtype float32 is not bool"),
    ("where", (BOOL, F32, F32, F32), ((2,), (3,), (2,), (3,)), {}, "do not broadcast"),
    ("where", (BOOL, F32, I32, F32), ((2,),) * 4, {}, "input 2 dtype int32 differs"),
    ("add", (I32, I32, I32), ((2,),) * 3, dict(act=1), "fused activation 1 on int32"),
    ("pow", (I32, I32, I32), ((2,),) * 3, {}, r"dtype int32 is not supported \(float32\)"),
    ("div", (BOOL, BOOL, BOOL), ((2,),) * 3, {}, "dtype bool is not supported"),
    ("mod", (BOOL, BOOL, BOOL), ((2,),) * 3, {}, r"dtype bool is not supported \(float32 or an integer dtype\)"),
    ("bitand", (F32, F32, F32), ((2,),) * 3, {}, r"dtype float32 is not supported \(an integer dtype\)"),
    ("shr", (F32, F32, F32), ((2,),) * 3, {}, r"dtype float32 is not supported \(an integer dtype\)"),
    ("shl", (I32, F32, I32), ((2,),) * 3, {}, r"input 1 dtype float32"),
    ("bitor", (I32, I32, I32), ((2,),) * 3, dict(act=1), "activation"),
    ("fmod", (I32, I32, I32), ((2,),) * 3, dict(act=1), "fused activation 1 on int32"),
])
def test_kernels_refuse_bad_nodes_at_load(dev, op, dtypes, dims, kw, match):
    with pytest.raises(accel.AccelError, match=f"'n1'.*{op}: .*{match}"):
        dev.load(accm_model(op, dtypes, dims, **kw))
