"""The index ops end to end (ONNX -> accel.compiler -> the emulator), against onnxruntime element by element:
Gather and GatherElements with indices computed at run time, ArgMax/ArgMin, TopK, CumSum, CumProd and OneHot
on float32 and integer tensors; a model fed int64 token ids (embedding Gather -> ReduceMean -> MatMul ->
ArgMax); run-time indices outside their range refused as onnxruntime refuses them (the job fails naming the
node, the index and the range); where the emulator defines what onnxruntime leaves open (NaN in ArgMax);
Range and ConstantOfShape of run-time values (CompileErrors); and the kernels' load-time checks."""
from __future__ import annotations

import functools

import numpy as np
import pytest
from conftest import assert_same_outputs, compile_error, emu_outputs, onnx_model, rand_array, run_ort
from conftest import runtime_ops as ops
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import accel
from accel import compiler
from accel.compiler import accm


rand = functools.partial(rand_array, scale=10)


def check(dev, m, feeds):
    """The emulator's outputs equal onnxruntime's: dtypes, shapes and every element. Returns them."""
    got = emu_outputs(dev, m, feeds)
    assert_same_outputs(got, run_ort(m, feeds))
    return got


@pytest.fixture(scope="module")
def dev():
    d = accel.open("emu:cores=2")
    yield d
    d.close()


# ---------------------------------------------------------------------------------------------------
# Gather with run-time indices
# ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("idx_dtype", ["int64", "int32"])
@pytest.mark.parametrize("axis,ind_shape", [(0, (5,)), (1, (2, 3)), (-1, (4,)), (2, ()), (1, (1, 1, 2))])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "int8", "bool"])
def test_gather_runtime_indices(dev, dtype, axis, ind_shape, idx_dtype):
    shape = (3, 4, 5)
    dim = shape[axis]
    ind = rand(ind_shape, idx_dtype, 3, -dim, dim - 1)  # negative ones count from the end
    m = onnx_model([helper.make_node("Gather", ["x", "i"], ["y"], axis=axis)],
                   [("x", dtype, shape), ("i", idx_dtype, ind_shape)], [("y", dtype)])
    check(dev, m, {"x": rand(shape, dtype, 4), "i": ind})
    assert ops(m) == ["gather"]


@pytest.mark.parametrize("idx_dtype", ["int64", "int32"])
def test_gather_embedding_table(dev, idx_dtype):
    """A constant float table looked up by run-time ids: the embedding of a language model."""
    table = rand((50, 8), "float32", 5)
    ids = np.array([[0, 49, -1, 7], [3, 3, -50, 12]], idx_dtype)
    m = onnx_model([helper.make_node("Gather", ["w", "ids"], ["e"])], [("ids", idx_dtype, ids.shape)],
                   [("e", "float32")], {"w": table})
    (e,) = check(dev, m, {"ids": ids})
    np.testing.assert_array_equal(e, table[ids])


def gather_model(x_shape, x_dtype, idx_shape, idx_dtype, axis=0):
    return onnx_model([helper.make_node("Gather", ["x", "i"], ["y"], name="lookup", axis=axis)],
                      [("x", x_dtype, x_shape), ("i", idx_dtype, idx_shape)], [("y", x_dtype)])


# (x's shape and dtype, axis): one element per index (typed moves) and blocks of other sizes (memcpy)
GATHER_TABLES = [((4, 3), "float32", 0), ((5, 2, 3), "int16", 0), ((3, 4), "int8", 1), ((4, 2, 5), "float32", 2)]


@pytest.mark.parametrize("x_shape,x_dtype,axis", GATHER_TABLES)
@pytest.mark.parametrize("idx_dtype", ["int64", "int32"])
@pytest.mark.parametrize("bad", ["past the end", "before the start", "huge", "most negative"])
def test_gather_runtime_index_out_of_range_is_refused(dev, x_shape, x_dtype, axis, idx_dtype, bad):
    """An index a run brings outside -n..n-1 fails the run naming the node, the index, where it is and the
    range, as onnxruntime refuses it; the same model runs in-range indices (negative ones too) as
    onnxruntime does, before and after."""
    n = x_shape[axis]
    limits = np.iinfo(idx_dtype)
    value = {"past the end": n, "before the start": -n - 1, "huge": limits.max, "most negative": limits.min}[bad]
    x = rand(x_shape, x_dtype, 6)
    good = np.array([[0, -1, n - 1], [-n, 1, 0]], idx_dtype)
    m = gather_model(x_shape, x_dtype, good.shape, idx_dtype, axis)
    model = dev.load(m.SerializeToString())
    assert_same_outputs([np.array(a) for a in model.run({"x": x, "i": good})], run_ort(m, {"x": x, "i": good}))
    ind = good.copy()
    ind[1, 2] = value
    words = (rf"node 'lookup' \(gather\): index {value} at \[1, 2\] of input 1 \('i'\) is outside "
             rf"-{n}..{n - 1} \(input 0 \('x'\) has {n} along axis {axis}\)")
    with pytest.raises(accel.InvalidArgumentError, match=words):
        model.run({"x": x, "i": ind})
    with pytest.raises(Exception, match=r"out of data bounds|indices element"):
        run_ort(m, {"x": x, "i": ind})
    assert_same_outputs([np.array(a) for a in model.run({"x": x, "i": good})], run_ort(m, {"x": x, "i": good}))


def test_gather_refusal_names_the_first_bad_index_on_every_run_path(dev):
    """run, run_async, run_batch and imap fail alike (the same class and message; a batch's and a stream's
    prefixed by the item), with the first faulty position named; the items around a bad one are right."""
    x = rand((6, 4), "float32", 7)
    m = gather_model((6, 4), "float32", (2, 3), "int64")
    model = dev.load(m.SerializeToString())
    good = np.array([[5, -6, 0], [1, -1, 3]], np.int64)
    bad = good.copy()
    bad[0, 2], bad[1, 0] = -9, 6
    words = r"node 'lookup' \(gather\): index -9 at \[0, 2\] of input 1 \('i'\) is outside -6..5"
    with pytest.raises(accel.InvalidArgumentError, match=words):
        model.run({"x": x, "i": bad})
    with pytest.raises(accel.InvalidArgumentError, match=words):
        model.run_async({"x": x, "i": bad}).result()
    with pytest.raises(accel.InvalidArgumentError, match="run_batch: item 1: " + words):
        model.run_batch([{"x": x, "i": good}, {"x": x, "i": bad}, {"x": x, "i": good}])
    results = model.imap(iter([{"x": x, "i": good}, {"x": x, "i": bad}]))
    np.testing.assert_array_equal(next(results)[0], x[good])
    with pytest.raises(accel.InvalidArgumentError, match="imap: item 1: " + words):
        next(results)
    (y,) = model.run({"x": x, "i": good})
    np.testing.assert_array_equal(y, x[good])


def _np_gather_elements(x, ind, axis):
    """numpy's take_along_axis over the part of x the indices cover (their dims but axis' may be smaller)."""
    part = tuple(slice(None) if i == axis else slice(0, d) for i, d in enumerate(ind.shape))
    return np.take_along_axis(x[part], np.where(ind < 0, ind + x.shape[axis], ind).astype(np.int64), axis)


@pytest.mark.parametrize("idx_dtype", ["int64", "int32"])
@pytest.mark.parametrize("axis,ind_shape", [(0, (3, 4, 5)), (0, (7, 2, 5)), (1, (2, 9, 3)), (-1, (3, 4, 1)),
                                            (2, (1, 1, 8))])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "int8", "bool"])
def test_gather_elements_runtime_indices(dev, dtype, axis, ind_shape, idx_dtype):
    """Indices larger than X along axis and smaller on other dims, negative ones counting from the end, every
    element size; bit-exact against onnxruntime and numpy."""
    shape = (3, 4, 5)
    dim = shape[axis]
    ind = rand(ind_shape, idx_dtype, 9, -dim, dim - 1)
    x = rand(shape, dtype, 10)
    m = onnx_model([helper.make_node("GatherElements", ["x", "i"], ["y"], axis=axis)],
                   [("x", dtype, shape), ("i", idx_dtype, ind_shape)], [("y", dtype)])
    (got,) = check(dev, m, {"x": x, "i": ind})
    assert_same_outputs([got], [_np_gather_elements(x, ind, axis % 3)])
    assert ops(m) == ["gatherelements"]


def test_gather_elements_constant_indices_and_refusals(dev):
    """Constant indices against numpy; a constant one out of range, and indices of
    another rank, are CompileErrors naming the node; one a run brings fails the run naming node and index."""
    x = rand((4, 6), "float32", 11)
    ind = np.array([[0, -1, 3], [2, 1, -4]], np.int32)
    m = onnx_model([helper.make_node("GatherElements", ["x", "i"], ["y"], axis=0)], [("x", "float32", x.shape)],
                   [("y", "float32")], {"i": ind})
    (got,) = emu_outputs(dev, m, {"x": x})
    np.testing.assert_array_equal(got, _np_gather_elements(x, ind, 0))
    bad = onnx_model([helper.make_node("GatherElements", ["x", "i"], ["y"], name="ge", axis=0)],
                     [("x", "float32", x.shape)], [("y", "float32")], {"i": np.array([[0, 4]], np.int64)})
    compile_error(bad, r"'ge'.*index 4 is out of range for axis 0")
    bad = onnx_model([helper.make_node("GatherElements", ["x", "i"], ["y"], name="ge", axis=1)],
                     [("x", "float32", x.shape), ("i", "int64", (6,))], [("y", "float32")])
    compile_error(bad, r"'ge'.*are not of 'x' \(4, 6\)'s rank")
    m = onnx_model([helper.make_node("GatherElements", ["x", "i"], ["y"], name="ge", axis=1)],
                   [("x", "float32", x.shape), ("i", "int32", (2, 3))], [("y", "float32")])
    with pytest.raises(accel.InvalidArgumentError, match=r"node 'ge' \(gatherelements\): index 6 at \[1, 1\] of input "
                                                         r"1 \('i'\) is outside -6..5"):
        emu_outputs(dev, m, {"x": x, "i": np.array([[0, 5, -6], [1, 6, 2]], np.int32)})


def test_gather_index_through_a_cast_is_refused(dev):
    """Token ids of another integer type reach the gather through a Cast: the index is still checked, and
    the message names the gather and the tensor it reads."""
    table = rand((2, 8), "float32", 8)
    m = onnx_model([helper.make_node("Cast", ["ids"], ["ids64"], to=7),
                    helper.make_node("Gather", ["w", "ids64"], ["e"], name="token_type")],
                   [("ids", "int32", (1, 5))], [("e", "float32")], {"w": table})
    ids = np.array([[0, 1, 1, 0, 15]], np.int32)
    with pytest.raises(accel.InvalidArgumentError, match=r"node 'token_type' \(gather\): index 15 at \[0, 4\]"
                                                         r".* is outside -2..1 \(input 0 \('w'\) has 2 along axis 0\)"):
        emu_outputs(dev, m, {"ids": ids})
    ids[0, 4] = -2
    check(dev, m, {"ids": ids})


@pytest.mark.parametrize("bad", [2, -3])
def test_folding_refuses_positions_the_reference_evaluator_would_wrap(dev, bad):
    """Constant GatherElements indices and ReverseSequence lengths are folded at compile time by onnx's reference
    evaluator, which wraps or clamps one out of range (onnxruntime refuses it): the compiler refuses it, as a run
    does; in-range ones fold to onnxruntime's values."""
    t = np.array([[1, 2], [3, 4]], np.float32)

    def model(op, operand, **attrs):
        return onnx_model([helper.make_node(op, ["t", "i"], ["c"], name="n", **attrs),
                           helper.make_node("Add", ["c", "x"], ["y"])], [("x", "float32", (2, 2))], [("y", "float32")],
                          {"t": t, "i": np.asarray(operand, np.int64)})

    compile_error(model("GatherElements", [[bad, 0], [1, -1]]),
                  rf"'n' \(GatherElements\): index {bad} at \[0, 0\] of input 1 \('i'\) is outside -2..1 "
                  rf"\(input 0 \('t'\) has 2 along axis 0\)")
    compile_error(model("ReverseSequence", [1, bad + 1 if bad > 0 else -1], batch_axis=1, time_axis=0),
                  rf"'n' \(ReverseSequence\): sequence length {bad + 1 if bad > 0 else -1} at \[1\] of input 1 "
                  rf"\('i'\) is outside 0..2 \(input 0 \('t'\) has 2 along axis 0\)")
    x = np.zeros((2, 2), np.float32)
    check(dev, model("GatherElements", [[1, 0], [-2, -1]]), {"x": x})
    check(dev, model("ReverseSequence", [2, 0], batch_axis=1, time_axis=0), {"x": x})


def test_gather_file_minor():
    """Run-time (or int32) indices need a reader of minor 3; constant int64 ones keep minor 1."""
    m = onnx_model([helper.make_node("Gather", ["x", "i"], ["y"])], [("x", "float32", (4, 3)), ("i", "int64", (2,))],
                   [("y", "float32")])
    assert accm.read(compiler.compile_model(m))["header"]["version_minor"] == 3
    m = onnx_model([helper.make_node("Gather", ["x", "i"], ["y"])], [("x", "float32", (4, 3))],
                   [("y", "float32")], {"i": np.array([2, 0])})
    assert accm.read(compiler.compile_model(m))["header"]["version_minor"] == 1


def test_gather_float_runtime_indices_are_an_error():
    m = onnx_model([helper.make_node("Gather", ["x", "i"], ["y"], name="g")],
                   [("x", "float32", (4, 3)), ("i", "float32", (2,))], [("y", "float32")])
    compile_error(m, r"'g' \(Gather\): input 1 \('i'\) is a tensor\(float\), but Gather takes tensor\(int32\)")


# ---------------------------------------------------------------------------------------------------
# ArgMax / ArgMin
# ---------------------------------------------------------------------------------------------------

ARG_DTYPES = ["float32", "int32", "int64", "uint8", "int8", "int16", "uint16", "uint32", "uint64"]


@pytest.mark.parametrize("last", [0, 1])
@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
def test_argmax_argmin(dev, op, axis, keepdims, last):
    """Small integer values in float32: many ties, so the first/last choice shows."""
    x = rand((3, 7, 5), "int8", 8, -3, 3).astype(np.float32)
    m = onnx_model([helper.make_node(op, ["x"], ["y"], axis=axis, keepdims=keepdims, select_last_index=last)],
                   [("x", "float32", x.shape)], [("y", "int64")], opset=13)
    check(dev, m, {"x": x})
    assert ops(m) == ["argreduce"]


@pytest.mark.parametrize("dtype", ARG_DTYPES)
@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
def test_argmax_argmin_dtypes(dev, op, dtype):
    for x in (rand((4, 6), dtype, 9), rand((4, 6), dtype, 10, 0, 2)):  # full range, and ties
        m = onnx_model([helper.make_node(op, ["x"], ["y"], axis=1, keepdims=0)], [("x", dtype, x.shape)],
                       [("y", "int64")], opset=13)
        want = (np.argmax if op == "ArgMax" else np.argmin)(x, axis=1)
        (y,) = emu_outputs(dev, m, {"x": x})
        np.testing.assert_array_equal(y, want)
        if dtype in ("float32", "int32", "int64", "uint8", "int8"):  # onnxruntime's kernels
            assert_same_outputs([y], run_ort(m, {"x": x}))


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
def test_argmax_argmin_nan_as_numpy(dev, op):
    """A line holding NaN gives its first NaN (its last with select_last_index), as numpy and torch;
    onnxruntime skips NaN unless it comes first."""
    nan = np.nan
    x = np.array([[1, nan, 3, nan], [2, 5, 5, 1], [nan, 1, 2, 3], [-np.inf, np.inf, nan, 0]], np.float32)
    m = onnx_model([helper.make_node(op, ["x"], ["y"], axis=1, keepdims=0)], [("x", "float32", x.shape)],
                   [("y", "int64")], opset=13)
    (y,) = emu_outputs(dev, m, {"x": x})
    np.testing.assert_array_equal(y, (np.argmax if op == "ArgMax" else np.argmin)(x, axis=1))
    (ort_y,) = run_ort(m, {"x": x})
    assert ort_y[0] != 1 and ort_y[2] == 0  # onnxruntime: first line's NaN skipped; a leading NaN wins
    m = onnx_model([helper.make_node(op, ["x"], ["y"], axis=1, keepdims=0, select_last_index=1)],
                   [("x", "float32", x.shape)], [("y", "int64")], opset=13)
    (y,) = emu_outputs(dev, m, {"x": x})
    np.testing.assert_array_equal(y, [3, 2 if op == "ArgMax" else 3, 0, 2])


def test_argmax_opset_1_and_scalar_input_error(dev):
    x = rand((2, 3, 4), "float32", 11)
    m = onnx_model([helper.make_node("ArgMax", ["x"], ["y"], axis=2)], [("x", "float32", x.shape)],
                   [("y", "int64")], opset=1)
    check(dev, m, {"x": x})
    m = onnx_model([helper.make_node("ArgMax", ["x"], ["y"], name="a")], [("x", "float32", ())], [("y", "int64")])
    compile_error(m, "'a'.*scalar")
    m = onnx_model([helper.make_node("ArgMax", ["x"], ["y"], name="a")], [("x", "float64", (3,))], [("y", "int64")])
    compile_error(m, "float64 of input 'x'.*'ArgMax'")


# ---------------------------------------------------------------------------------------------------
# TopK
# ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("largest", [1, 0])
@pytest.mark.parametrize("axis,k", [(-1, 3), (0, 2), (1, 6), (1, 1)])
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
def test_topk(dev, dtype, axis, k, largest):
    x = rand((4, 6, 5), dtype, 12, -4, 4)  # ties
    if dtype == "float32":
        x = np.round(x)
    m = onnx_model([helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=axis, largest=largest)],
                   [("x", dtype, x.shape)], [("v", dtype), ("i", "int64")], {"k": np.array([k])}, opset=11)
    check(dev, m, {"x": x})
    assert ops(m) == ["topk"]


def test_topk_nan_and_signed_zero(dev):
    """NaN above every number, equal values (0 and -0 too) by lower index first, as onnxruntime."""
    nan = np.nan
    x = np.array([[nan, 1, nan, 5, 5, nan, -0.0, 0.0], [3, 1, 3, -0.0, 0.0, 5, 5, 1]], np.float32)
    for largest in (0, 1):
        m = onnx_model([helper.make_node("TopK", ["x", "k"], ["v", "i"], largest=largest)],
                       [("x", "float32", x.shape)], [("v", "float32"), ("i", "int64")], {"k": np.array([6])})
        check(dev, m, {"x": x})


def test_topk_unsorted_and_opset_1(dev):
    x = rand((3, 9), "float32", 13)
    m = onnx_model([helper.make_node("TopK", ["x", "k"], ["v", "i"], sorted=0)], [("x", "float32", x.shape)],
                   [("v", "float32"), ("i", "int64")], {"k": np.array([4])})
    v, i = emu_outputs(dev, m, {"x": x})
    wv, wi = run_ort(m, {"x": x})
    np.testing.assert_array_equal(np.sort(v, 1), np.sort(wv, 1))  # ONNX leaves the order open
    np.testing.assert_array_equal(np.sort(i, 1), np.sort(wi, 1))
    np.testing.assert_array_equal(np.take_along_axis(x, i, 1), v)
    m = onnx_model([helper.make_node("TopK", ["x"], ["v", "i"], k=2, axis=0)], [("x", "float32", x.shape)],
                   [("v", "float32"), ("i", "int64")], opset=1)
    check(dev, m, {"x": x})


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "uint16", "uint32", "uint64"])
def test_topk_other_integer_types(dev, dtype):
    """Types onnxruntime has no TopK kernel for (but uint64, whose kernel it has): against numpy's stable
    sort."""
    x = rand((3, 8), dtype, 23, 0, 5)  # ties
    for largest in (0, 1):
        m = onnx_model([helper.make_node("TopK", ["x", "k"], ["v", "i"], largest=largest)], [("x", dtype, x.shape)],
                       [("v", dtype), ("i", "int64")], {"k": np.array([5])})
        v, i = emu_outputs(dev, m, {"x": x})
        want_i = np.argsort(-x.astype(np.float64) if largest else x, axis=1, kind="stable")[:, :5]
        np.testing.assert_array_equal(i, want_i)
        np.testing.assert_array_equal(v, np.take_along_axis(x, want_i, 1))
        assert v.dtype == x.dtype


def test_topk_one_output_used(dev):
    x = rand((2, 7), "float32", 14)
    m = onnx_model([helper.make_node("TopK", ["x", "k"], ["v", "i"])], [("x", "float32", x.shape)],
                   [("i", "int64")], {"k": np.array([3])})
    check(dev, m, {"x": x})


def test_topk_errors():
    def model(k, dtype="float32", kin=None):
        return onnx_model([helper.make_node("TopK", ["x", "k"], ["v", "i"], name="t")],
                          [("x", dtype, (2, 5))] + ([("k", "int64", (1,))] if kin else []),
                          [("v", dtype), ("i", "int64")], {} if kin else {"k": np.array([k])})
    compile_error(model(6), r"'t'.*k 6 is outside 1..5")
    compile_error(model(0), r"'t'.*k 0 is outside 1..5")
    compile_error(model(2, "float64"), r"dtype float64 of input 'x'.*'TopK'")
    compile_error(model(2, kin=True), r"K \('k'\) must be a constant")


# ---------------------------------------------------------------------------------------------------
# CumSum, CumProd
# ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("reverse", [0, 1])
@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
def test_cumsum(dev, dtype, axis, exclusive, reverse):
    x = rand((3, 5, 4), dtype, 15)  # integers over the whole range: the sums wrap
    m = onnx_model([helper.make_node("CumSum", ["x", "a"], ["y"], exclusive=exclusive, reverse=reverse)],
                   [("x", dtype, x.shape)], [("y", dtype)], {"a": np.array(axis, np.int32)}, opset=14)
    check(dev, m, {"x": x})
    assert ops(m) == ["cumsum"]


def _np_cumprod(x, axis, exclusive, reverse):
    """numpy's running product (in x's dtype, in order), exclusive: shifted by one with 1 first."""
    v = np.flip(x, axis) if reverse else x
    p = np.cumprod(v, axis=axis, dtype=x.dtype)
    if exclusive:
        ones = np.ones_like(np.take(p, [0], axis=axis))
        p = np.concatenate([ones, np.take(p, range(p.shape[axis] - 1), axis=axis)], axis=axis)
    return np.flip(p, axis) if reverse else p


@pytest.mark.parametrize("reverse", [0, 1])
@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
def test_cumprod(dev, dtype, axis, exclusive, reverse):
    """Bit-exact against numpy's running product (float32 rounding each step in order; integers over their whole
    range, so the products wrap) and onnxruntime."""
    if dtype == "float32":
        x = (np.random.default_rng(16).uniform(0.5, 1.6, (3, 5, 4)) * np.sign(rand((3, 5, 4), dtype, 17))).astype(
            np.float32)
    else:
        x = rand((3, 5, 4), dtype, 16)
    m = onnx_model([helper.make_node("CumProd", ["x", "a"], ["y"], exclusive=exclusive, reverse=reverse)],
                   [("x", dtype, x.shape)], [("y", dtype)], {"a": np.array(axis, np.int64)}, opset=26)
    (got,) = check(dev, m, {"x": x})
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got, _np_cumprod(x, axis % 3, exclusive, reverse))
    assert ops(m) == ["cumprod"]


def test_cumsum_errors():
    m = onnx_model([helper.make_node("CumSum", ["x", "a"], ["y"], name="c")],
                   [("x", "float32", (3,)), ("a", "int64", ())], [("y", "float32")])
    compile_error(m, r"'c'.*axis \('a'\) must be a constant")
    m = onnx_model([helper.make_node("CumSum", ["x", "a"], ["y"], name="c")], [("x", "uint32", (3,))],
                   [("y", "uint32")], {"a": np.array(0)})
    compile_error(m, "dtype uint32 of input 'x'")


# ---------------------------------------------------------------------------------------------------
# OneHot
# ---------------------------------------------------------------------------------------------------

ONEHOT_IDX = np.array([[0, 3, -1, 4], [-4, -5, 2, 1]])  # negative ones count from the end; 4 and -5 are off


@pytest.mark.parametrize("axis", [-1, 0, 1, -3])
@pytest.mark.parametrize("idx_dtype,val_dtype", [("int64", "float32"), ("int64", "int64"), ("int32", "float32"),
                                                 ("float32", "float32"), ("float32", "int64")])
def test_onehot(dev, idx_dtype, val_dtype, axis):
    """Run-time indices and values, against onnxruntime (for the dtype pairs it has kernels for)."""
    ind = ONEHOT_IDX.astype(idx_dtype)
    # the depth dtypes onnxruntime has kernels for with these
    depth_dtype = "float32" if idx_dtype == "int32" or (idx_dtype, val_dtype) == ("float32", "float32") else "int64"
    m = onnx_model([helper.make_node("OneHot", ["i", "d", "v"], ["y"], axis=axis)],
                   [("i", idx_dtype, ind.shape), ("v", val_dtype, (2,))], [("y", val_dtype)],
                   {"d": np.array(4, depth_dtype)}, opset=11)
    check(dev, m, {"i": ind, "v": np.array([-2, 7], val_dtype)})
    assert ops(m) == ["onehot"]


@pytest.mark.parametrize("idx_dtype,val_dtype", [("uint8", "float16"), ("int16", "uint16"), ("int32", "int8")])
def test_onehot_other_dtypes(dev, idx_dtype, val_dtype):
    """Index and value dtypes onnxruntime has no kernel for: against onnx's reference evaluator."""
    ind = np.array([[0, 3, 2], [1, 9, 0]], idx_dtype)
    vals = np.array([0, 1], val_dtype)
    m = onnx_model([helper.make_node("OneHot", ["i", "d", "v"], ["y"], axis=1)], [("i", idx_dtype, ind.shape)],
                   [("y", val_dtype)], {"d": np.array(5), "v": vals}, opset=11)
    (y,) = emu_outputs(dev, m, {"i": ind})
    (want,) = ReferenceEvaluator(m).run(None, {"i": ind})
    assert y.dtype == want.dtype
    np.testing.assert_array_equal(y, want)


def test_onehot_float_indices_truncate(dev):
    ind = np.array([1.7, -1.5, 5, -0.5, np.nan, -4.2, 3.99], np.float32)
    m = onnx_model([helper.make_node("OneHot", ["i", "d", "v"], ["y"])], [("i", "float32", ind.shape)],
                   [("y", "float32")], {"d": np.array(4), "v": np.array([0, 1], np.float32)}, opset=11)
    (y,) = emu_outputs(dev, m, {"i": ind})
    want = np.zeros((7, 4), np.float32)
    for r, c in ((0, 1), (1, 3), (3, 0), (5, 0), (6, 3)):  # 5 and NaN are off
        want[r, c] = 1
    np.testing.assert_array_equal(y, want)


def test_onehot_errors():
    def model(**kw):
        inputs = [("i", "int64", (3,))] + kw.pop("inputs", [])
        return onnx_model([helper.make_node("OneHot", ["i", "d", "v"], ["y"], name="o", **kw.pop("attrs", {}))],
                          inputs, [("y", "float32")], kw.pop("inits"), opset=11)
    compile_error(model(inits={"v": np.array([0, 1], np.float32)}, inputs=[("d", "int64", ())]),
                  r"'o'.*depth \('d'\) must be a constant")
    compile_error(model(inits={"d": np.array(0), "v": np.array([0, 1], np.float32)}), "depth 0 is not >= 1")
    compile_error(model(inits={"d": np.array(3), "v": np.array([0, 1, 2], np.float32)}), "two elements")
    compile_error(model(inits={"d": np.array(3), "v": np.array([0, 1], np.float32)}, attrs={"axis": 2}),
                  "axis 2 is out of range")


# ---------------------------------------------------------------------------------------------------
# Range and ConstantOfShape
# ---------------------------------------------------------------------------------------------------

def test_range_and_constant_of_shape_of_runtime_values_are_errors():
    m = onnx_model([helper.make_node("Range", ["s", "n", "d"], ["y"], name="r")], [("n", "int64", ())],
                   [("y", "int64")], {"s": np.array(0), "d": np.array(1)}, opset=11)
    compile_error(m, r"'r' \(Range\): limit \('n'\) must be a constant .* sets? the output's length")
    m = onnx_model([helper.make_node("ConstantOfShape", ["s"], ["y"], name="c")], [("s", "int64", (2,))],
                   [("y", "float32")], opset=11)
    compile_error(m, r"'c' \(ConstantOfShape\): shape \('s'\) must be a constant .* the output's shape")


def test_range_and_constant_of_shape_from_shapes_fold(dev):
    """Range(0, Shape(x)[1], 1) (position ids) and ConstantOfShape(Shape(x)) fold; the ids feed a Gather."""
    x = rand((2, 5), "int64", 16, 0, 9)
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "one"], ["n"], axis=0),
             helper.make_node("Range", ["zero", "n", "one"], ["pos"]),
             helper.make_node("Gather", ["pe", "pos"], ["p"]),           # [5, 3], constant: folds
             helper.make_node("Gather", ["te", "x"], ["t"]),             # [2, 5, 3] at run time
             helper.make_node("Add", ["t", "p"], ["e"]),
             helper.make_node("ConstantOfShape", ["s"], ["c"],
                              value=numpy_helper.from_array(np.array([1.5], np.float32))),
             helper.make_node("ReduceSum", ["e"], ["r"], axes=[2], keepdims=0),
             helper.make_node("Mul", ["r", "c"], ["y"])]
    m = onnx_model(nodes, [("x", "int64", x.shape)], [("y", "float32")],
                   {"zero": np.array(0), "one": np.array(1), "pe": rand((8, 3), "float32", 17),
                    "te": rand((10, 3), "float32", 18)}, opset=11)
    (y,) = emu_outputs(dev, m, {"x": x})
    (want,) = run_ort(m, {"x": x})
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-5)
    assert "gather" in ops(m) and "range" not in ops(m)


# ---------------------------------------------------------------------------------------------------
# End to end: token ids in, a class id out
# ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("pool", ["ReduceMean", "MatMul"])
def test_token_ids_to_argmax(dev, pool):
    """int64 token ids -> embedding Gather -> ReduceMean over the sequence (or a MatMul with a position
    weighting) -> MatMul classifier -> ArgMax: the class ids equal onnxruntime's, the logits within float
    rounding."""
    vocab, dim, seq, classes = 100, 16, 7, 5
    ids = np.random.default_rng(19).integers(0, vocab, size=(3, seq)).astype(np.int64)
    ids[0, 0], ids[1, 2] = -1, -vocab  # negative ids count from the end, as ONNX says
    inits = {"emb": rand((vocab, dim), "float32", 20), "w": rand((dim, classes), "float32", 21)}
    nodes = [helper.make_node("Gather", ["emb", "ids"], ["e"])]
    if pool == "ReduceMean":
        nodes.append(helper.make_node("ReduceMean", ["e"], ["h"], axes=[1], keepdims=0))
    else:
        inits["pw"] = rand((1, seq), "float32", 22)
        nodes += [helper.make_node("MatMul", ["pw", "e"], ["h3"]),
                  helper.make_node("Reshape", ["h3", "shape"], ["h"])]
        inits["shape"] = np.array([3, dim])
    nodes += [helper.make_node("MatMul", ["h", "w"], ["logits"]),
              helper.make_node("ArgMax", ["logits"], ["cls"], axis=-1, keepdims=0)]
    m = onnx_model(nodes, [("ids", "int64", ids.shape)], [("cls", "int64"), ("logits", "float32")], inits, opset=13)
    cls, logits = emu_outputs(dev, m, {"ids": ids})
    want_cls, want_logits = run_ort(m, {"ids": ids})
    np.testing.assert_allclose(logits, want_logits, rtol=1e-5, atol=1e-4)
    # the class ids are those of the logits each computed (equal unless two logits are within rounding)
    assert cls.dtype == np.int64 and cls.shape == (3,)
    np.testing.assert_array_equal(cls, np.argmax(logits, axis=-1))
    np.testing.assert_array_equal(cls, want_cls)
    assert "gather" in ops(m) and "argreduce" in ops(m)


# ---------------------------------------------------------------------------------------------------
# The kernels' load-time checks (hand-made .accm files)
# ---------------------------------------------------------------------------------------------------

F32, I64, I32 = accm.dtype_code(np.float32), accm.dtype_code(np.int64), accm.dtype_code(np.int32)
F16 = accm.dtype_code(np.float16)


def accm_model(op, ins, outs, ints=()):
    """One node `op`; ins and outs: [(dims, dtype code)] (inputs are graph inputs)."""
    tensors = [accm.Tensor(f"x{i}", dt, accm.KIND_INPUT, d) for i, (d, dt) in enumerate(ins)]
    tensors += [accm.Tensor(f"y{i}", dt, accm.KIND_OUTPUT, d) for i, (d, dt) in enumerate(outs)]
    n_in = len(ins)
    node = accm.Node(accm.OPS[op], list(range(n_in)), list(range(n_in, n_in + len(outs))), name="n1",
                     ints=list(ints))
    return accm.write(tensors, [node], list(range(n_in)), list(range(n_in, n_in + len(outs))))


@pytest.mark.parametrize("op,ins,outs,ints,match", [
    ("argreduce", [((3, 4), F32)], [((3, 1), F32)], [1], "output dtype float32 is not int64"),
    ("argreduce", [((3, 4), F16)], [((3, 1), I64)], [1], "input dtype float16"),
    ("argreduce", [((3, 4), F32)], [((3, 2), I64)], [1], r"output shape \[3,2\]"),
    ("argreduce", [((3, 4), F32)], [((3,), I64)], [2], "axis 2 outside 0..1"),
    ("argreduce", [((3, 4), F32)], [((3,), I64)], [1, 2], "select_min is 2"),
    ("topk", [((3, 4), F32)], [((3, 5), F32), ((3, 5), I64)], [1, 5, 1, 1], "k 5 outside 1..4"),
    ("topk", [((3, 4), F32)], [((3, 2), F32), ((3, 2), I32)], [1, 2, 1, 1], "output 1 dtype int32"),
    ("topk", [((3, 4), F32)], [((3, 3), F32), ((3, 2), I64)], [1, 2, 1, 1], r"output 0 shape \[3,3\]"),
    ("cumsum", [((3, 4), F16)], [((3, 4), F16)], [1], "input dtype float16"),
    ("cumsum", [((3, 4), F32)], [((3, 4), F32)], [0, 0, 3], "reverse is 3"),
    ("onehot", [((3,), I64), ((3,), F32)], [((3, 4), F32)], [1, 4], "values have 3 elements"),
    ("onehot", [((3,), F16), ((2,), F32)], [((3, 4), F32)], [1, 4], "indices dtype float16"),
    ("onehot", [((3,), I64), ((2,), F32)], [((4, 3), F32)], [1, 4], r"output shape \[4,3\]"),
    ("onehot", [((3,), I64), ((2,), F32)], [((3, 4), F32)], [1, 0], "depth 0"),
    ("gather", [((4, 3), F32), ((2,), F32)], [((2, 3), F32)], [0], "indices dtype float32 is not int32 or int64"),
    ("cumprod", [((3, 4), F16)], [((3, 4), F16)], [1], "input dtype float16"),
    ("cumprod", [((3, 4), F32)], [((3, 4), F32)], [0, 2], "exclusive is 2"),
    ("gatherelements", [((4, 3), F32), ((2, 3), F32)], [((2, 3), F32)], [0], "indices dtype float32"),
    ("gatherelements", [((4, 3), F32), ((2, 4), I64)], [((2, 4), F32)], [0], r"indices shape \[2,4\]"),
    ("gatherelements", [((4, 3), F32), ((6,), I64)], [((6,), F32)], [0], r"indices shape \[6\]"),
    ("gatherelements", [((4, 3), F32), ((2, 3), I64)], [((3, 2), F32)], [0], "shape"),
    ("gatherelements", [((4, 3), F32), ((2, 3), I64)], [((2, 3), F32)], [2], "axis 2 outside 0..1"),
    ("bitcast", [((4, 3), F32)], [((4, 3), F16)], [], "element sizes differ: 4 and 2 bytes"),
    ("bitcast", [((4, 3), F32)], [((3, 4), I32)], [], r"output shape \[3,4\] differs from input shape \[4,3\]"),
])
def test_kernels_refuse_bad_nodes_at_load(dev, op, ins, outs, ints, match):
    with pytest.raises(accel.AccelError, match=f"'n1'.*{op}: .*{match}"):
        dev.load(accm_model(op, ins, outs, ints))
