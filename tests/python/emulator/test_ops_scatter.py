"""GatherND, ScatterND, ScatterElements, the deprecated Scatter and TensorScatter end to end (ONNX ->
accel.compiler -> the emulator), element by element against onnxruntime on one-node models: every dtype the
compiler takes for them, batch_dims, negative indices, duplicate indices under every reduction (the order
onnxruntime applies them in, NaN in max and min), indices computed at run time (an out-of-range one fails the
run naming the node, the index and the range, as onnxruntime fails it) and constant ones (a CompileError), and
the declared refusals."""
from __future__ import annotations

import functools

import numpy as np
import pytest
from conftest import assert_same_outputs, compile_error, emu_outputs, onnx_model, rand_array, run_ort
from conftest import runtime_ops as ops
from onnx import helper

import accel
from accel import compiler
from accel.compiler import accm

# The emulator's compiler and kernels (a board's toolchain compiles what it supports itself).
pytestmark = pytest.mark.emulator

rand = functools.partial(rand_array, scale=10)

ALL_DTYPES = ["float32", "float16", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
              "bool"]
REDUCING_DTYPES = ["float32", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
REDUCTIONS = ["none", "add", "mul", "max", "min"]


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


def values(shape, dtype, seed):
    """Test data: small integers where a product of several must not lose its exactness in float32."""
    if dtype == "float32":
        return rand(shape, dtype, seed)
    return rand_array(shape, dtype, seed)


def one_node(op, inputs, out_dtype, opset=18, inits=None, name="n", order=None, **attrs):
    """A model of one node `op` of graph inputs [(name, dtype, shape)] and constants {name: array}, taken in the
    `order` of their names (default: the inputs, then the constants)."""
    order = order or [i[0] for i in inputs] + list(inits or {})
    return onnx_model([helper.make_node(op, order, ["y"], name=name, **attrs)], inputs, [("y", out_dtype)],
                      inits or {}, opset=opset)


# ---------------------------------------------------------------------------------------------------
# GatherND
# ---------------------------------------------------------------------------------------------------

# (data shape, indices shape, batch_dims)
GATHERND_SHAPES = [((2, 2), (2, 2), 0), ((2, 2, 2), (2, 1, 2), 0), ((2, 2, 2), (2, 1), 1), ((3, 4, 5), (6, 1), 0),
                   ((3, 4, 5), (2, 3, 3), 0), ((2, 3, 4, 5), (2, 3, 2, 1), 2), ((2, 3, 4), (2, 5, 2), 1),
                   ((4,), (3, 1), 0)]


def nd_indices(x_shape, ind_shape, b, seed, dtype="int64"):
    """Indices of every component's whole range, negative ones (counting from the end) included."""
    k = ind_shape[-1]
    r = np.random.default_rng(seed)
    ind = np.empty(ind_shape, np.int64)
    for c in range(k):
        n = x_shape[b + c]
        ind[..., c] = r.integers(-n, n, ind_shape[:-1])
    return ind.astype(dtype)


@pytest.mark.parametrize("x_shape,ind_shape,b", GATHERND_SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_gathernd_shapes(dev, x_shape, ind_shape, b, dtype):
    ind = nd_indices(x_shape, ind_shape, b, 1)
    m = one_node("GatherND", [("x", dtype, x_shape), ("i", "int64", ind_shape)], dtype, batch_dims=b)
    check(dev, m, {"x": values(x_shape, dtype, 2), "i": ind})
    assert ops(m) == ["gathernd"]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_gathernd_dtypes(dev, dtype):
    x_shape, ind_shape = (3, 4, 2), (5, 2)
    m = one_node("GatherND", [("x", dtype, x_shape), ("i", "int64", ind_shape)], dtype)
    check(dev, m, {"x": values(x_shape, dtype, 3), "i": nd_indices(x_shape, ind_shape, 0, 4)})


def test_gathernd_constant_indices_and_data(dev):
    """Constant indices (a table looked up by fixed positions) and constant data with run-time indices."""
    x = rand((4, 3, 2), "float32", 5)
    ind = np.array([[[-1, 0]], [[2, -3]]], np.int64)
    m = one_node("GatherND", [("x", "float32", x.shape)], "float32", inits={"i": ind})
    (y,) = check(dev, m, {"x": x})
    np.testing.assert_array_equal(y, x[ind[..., 0], ind[..., 1]])
    m = onnx_model([helper.make_node("GatherND", ["t", "i"], ["y"], batch_dims=1)], [("i", "int64", (4, 2, 1))],
                   [("y", "float32")], {"t": x})
    check(dev, m, {"i": np.array([[[0], [2]], [[-1], [1]], [[0], [0]], [[-3], [2]]], np.int64)})


@pytest.mark.parametrize("bad", ["past the end", "before the start", "most negative"])
def test_gathernd_runtime_index_out_of_range_is_refused(dev, bad):
    """A run-time index outside -n..n-1 fails the run naming the node, the index, where it is in the indices
    and the range, as onnxruntime fails it; in-range indices run before and after."""
    x = rand((3, 4, 5), "float32", 6)
    good = np.array([[0, -1], [2, 3], [-3, -4]], np.int64)
    m = one_node("GatherND", [("x", "float32", x.shape), ("i", "int64", good.shape)], "float32", name="gnd")
    model = dev.load(m.SerializeToString())
    assert_same_outputs([np.array(a) for a in model.run({"x": x, "i": good})], run_ort(m, {"x": x, "i": good}))
    value = {"past the end": 4, "before the start": -5, "most negative": np.iinfo(np.int64).min}[bad]
    ind = good.copy()
    ind[2, 1] = value
    words = (rf"node 'gnd' \(gathernd\): index {value} at \[2, 1\] of input 1 \('i'\) is outside -4..3 "
             rf"\(input 0 \('x'\) has 4 along axis 1\)")
    with pytest.raises(accel.InvalidArgumentError, match=words):
        model.run({"x": x, "i": ind})
    with pytest.raises(Exception, match="invalid index"):
        run_ort(m, {"x": x, "i": ind})
    assert_same_outputs([np.array(a) for a in model.run({"x": x, "i": good})], run_ort(m, {"x": x, "i": good}))


def test_gathernd_refusals():
    x = ("x", "float32", (3, 4))
    compile_error(one_node("GatherND", [x], "float32", inits={"i": np.array([[0, 4]], np.int64)}),
                  r"'n' \(GatherND\): index 4 at \(0, 1\) of 'i' is outside -4..3")
    compile_error(one_node("GatherND", [x, ("i", "int64", (2, 3))], "float32"),
                  r"the indices' last dim 3 is outside 1..2")
    compile_error(one_node("GatherND", [x, ("i", "int64", (2, 1))], "float32", batch_dims=1),
                  r"batch_dims 1 does not fit")


def test_gathernd_file_minor():
    """The ops of 1.6 make a 1.6 file."""
    m = one_node("GatherND", [("x", "float32", (3, 4)), ("i", "int64", (2, 2))], "float32")
    assert accm.read(compiler.compile_model(m))["header"]["version_minor"] == 6


# ---------------------------------------------------------------------------------------------------
# ScatterND
# ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", REDUCING_DTYPES)
def test_scatternd_reductions_with_duplicates(dev, reduction, dtype):
    """Duplicate index tuples (and negative ones) under every reduction: applied in the indices' order, as
    onnxruntime (the last one wins with none); integers wrap."""
    x_shape = (4, 3, 2)
    ind = np.array([[1, 2], [-3, -1], [0, 0], [1, 2], [3, -3], [-4, 0]], np.int64)
    u_shape = (6, 2)
    m = one_node("ScatterND", [("x", dtype, x_shape), ("i", "int64", ind.shape), ("u", dtype, u_shape)], dtype,
                 reduction=reduction)
    check(dev, m, {"x": values(x_shape, dtype, 7), "i": ind, "u": values(u_shape, dtype, 8)})
    assert ops(m) == ["scatternd"]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_scatternd_none_every_dtype(dev, dtype):
    x_shape = (3, 4)
    ind = np.array([[-1], [0]], np.int64)  # whole rows
    m = one_node("ScatterND", [("x", dtype, x_shape), ("i", "int64", ind.shape), ("u", dtype, (2, 4))], dtype)
    check(dev, m, {"x": values(x_shape, dtype, 9), "i": ind, "u": values((2, 4), dtype, 10)})


@pytest.mark.parametrize("reduction", ["max", "min", "add", "mul"])
def test_scatternd_nan_and_infinities(dev, reduction):
    """max and min as onnxruntime's std::max(u, y) / std::min(u, y): a NaN update is taken, a NaN in the data
    replaced; add and mul propagate NaN and infinities as IEEE."""
    x = np.array([np.nan, 1, 2, np.inf, -np.inf, -0.0, 0.0, 3], np.float32)
    u = np.array([5, np.nan, 1, -np.inf, np.nan, 0.0, -0.0, np.inf], np.float32)
    ind = np.arange(8, dtype=np.int64).reshape(8, 1)
    m = one_node("ScatterND", [("x", "float32", (8,)), ("i", "int64", (8, 1)), ("u", "float32", (8,))], "float32",
                 reduction=reduction)
    (y,) = check(dev, m, {"x": x, "i": ind, "u": u})
    assert np.array_equal(np.signbit(y), np.signbit(run_ort(m, {"x": x, "i": ind, "u": u})[0]))


def test_scatternd_constant_indices_opset_11(dev):
    """Constant indices and updates into run-time data; opset 11 (no reduction attribute)."""
    x = rand((4, 4, 4), "float32", 11)
    ind = np.array([[0], [2]], np.int64)
    upd = rand((2, 4, 4), "float32", 12)
    m = onnx_model([helper.make_node("ScatterND", ["x", "i", "u"], ["y"])], [("x", "float32", x.shape)],
                   [("y", "float32")], {"i": ind, "u": upd}, opset=11)
    (y,) = check(dev, m, {"x": x})
    want = x.copy()
    want[[0, 2]] = upd
    np.testing.assert_array_equal(y, want)


def test_scatternd_runtime_index_out_of_range_is_refused(dev):
    x = rand((3, 4), "float32", 13)
    good = np.array([[0, 1], [-1, -4]], np.int64)
    u = rand((2,), "float32", 14)
    m = one_node("ScatterND", [("x", "float32", x.shape), ("i", "int64", good.shape), ("u", "float32", (2,))],
                 "float32", name="snd", reduction="add")
    model = dev.load(m.SerializeToString())
    feeds = {"x": x, "i": good, "u": u}
    assert_same_outputs([np.array(a) for a in model.run(feeds)], run_ort(m, feeds))
    bad = dict(feeds, i=np.array([[0, 1], [3, 0]], np.int64))
    with pytest.raises(accel.InvalidArgumentError,
                       match=r"node 'snd' \(scatternd\): index 3 at \[1, 0\] of input 1 \('i'\) is outside -3..2"):
        model.run(bad)
    with pytest.raises(Exception, match="invalid indice"):
        run_ort(m, bad)
    assert_same_outputs([np.array(a) for a in model.run(feeds)], run_ort(m, feeds))


# ---------------------------------------------------------------------------------------------------
# ScatterElements and Scatter
# ---------------------------------------------------------------------------------------------------

# (data shape, indices shape, axis)
# (the indices may be longer than the data along axis: more updates than it holds, duplicates for sure)
SCATTER_EL_SHAPES = [((3, 3), (2, 3), 0), ((1, 5), (1, 2), 1), ((3, 4, 5), (2, 4, 3), -1), ((3, 4, 5), (3, 6, 2), 1),
                     ((6,), (9,), 0)]


def el_indices(x_shape, ind_shape, axis, seed, dtype="int64"):
    n = x_shape[axis]
    return np.random.default_rng(seed).integers(-n, n, ind_shape).astype(dtype)  # duplicates likely


@pytest.mark.parametrize("x_shape,ind_shape,axis", SCATTER_EL_SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("idx_dtype", ["int64", "int32"])
def test_scatterelements_shapes(dev, x_shape, ind_shape, axis, reduction, idx_dtype):
    ind = el_indices(x_shape, ind_shape, axis, 15, idx_dtype)
    m = one_node("ScatterElements", [("x", "float32", x_shape), ("i", idx_dtype, ind_shape),
                                     ("u", "float32", ind_shape)], "float32", axis=axis, reduction=reduction)
    check(dev, m, {"x": rand(x_shape, "float32", 16), "i": ind, "u": rand(ind_shape, "float32", 17)})
    assert ops(m) == ["scatterelements"]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", REDUCING_DTYPES)
def test_scatterelements_dtypes(dev, reduction, dtype):
    x_shape, ind_shape = (4, 3), (6, 3)
    ind = el_indices(x_shape, ind_shape, 0, 18)
    m = one_node("ScatterElements", [("x", dtype, x_shape), ("i", "int64", ind_shape), ("u", dtype, ind_shape)],
                 dtype, reduction=reduction)
    check(dev, m, {"x": values(x_shape, dtype, 19), "i": ind, "u": values(ind_shape, dtype, 20)})


@pytest.mark.parametrize("dtype", ["float16", "bool"])
def test_scatterelements_none_moves_any_dtype(dev, dtype):
    x_shape, ind_shape = (4, 3), (2, 3)
    m = one_node("ScatterElements", [("x", dtype, x_shape), ("i", "int64", ind_shape), ("u", dtype, ind_shape)],
                 dtype, axis=0)
    check(dev, m, {"x": values(x_shape, dtype, 21), "i": el_indices(x_shape, ind_shape, 0, 22),
                   "u": values(ind_shape, dtype, 23)})


@pytest.mark.parametrize("opset", [9, 10])
def test_scatter_deprecated(dev, opset):
    """Scatter, ScatterElements' older name (opset 9-10), with negative indices."""
    x = rand((3, 3), "float32", 24)
    ind = np.array([[1, 0, -1], [0, 2, 1]], np.int64)
    m = one_node("Scatter", [("x", "float32", (3, 3)), ("i", "int64", (2, 3)), ("u", "float32", (2, 3))],
                 "float32", opset=opset, axis=1)
    check(dev, m, {"x": x, "i": ind, "u": rand((2, 3), "float32", 25)})
    assert ops(m) == ["scatterelements"]


def test_scatterelements_runtime_index_out_of_range_is_refused(dev):
    x = rand((2, 5), "float32", 26)
    good = np.array([[1, -5]], np.int64)
    m = one_node("ScatterElements", [("x", "float32", x.shape), ("i", "int64", (1, 2)), ("u", "float32", (1, 2))],
                 "float32", name="se", axis=1)
    model = dev.load(m.SerializeToString())
    feeds = {"x": x, "i": good, "u": rand((1, 2), "float32", 27)}
    assert_same_outputs([np.array(a) for a in model.run(feeds)], run_ort(m, feeds))
    bad = dict(feeds, i=np.array([[1, 5]], np.int64))
    with pytest.raises(accel.InvalidArgumentError,
                       match=r"node 'se' \(scatterelements\): index 5 at \[0, 1\] of input 1 \('i'\) is outside "
                             r"-5..4 \(input 0 \('x'\) has 5 along axis 1\)"):
        model.run(bad)
    with pytest.raises(Exception, match="out of data bounds"):
        run_ort(m, bad)


def test_float16_reductions_compute_in_float32(dev):
    # lower/half.py: the float16 operands cast up, the reduction in float32, the result rounded once to float16.
    x, u = ("x", "float16", (3, 4)), ("u", "float16", (2, 4))
    m = one_node("ScatterElements", [x, ("i", "int64", (2, 4)), u], "float16", reduction="add")
    xv, uv = values((3, 4), "float16", 40), values((2, 4), "float16", 41)
    iv = np.array([[0, 1, 2, 0], [0, 1, 2, 2]], np.int64)
    (got,) = emu_outputs(dev, m, {"x": xv, "i": iv, "u": uv})
    want = xv.astype(np.float32)
    for (r, c), v in np.ndenumerate(uv.astype(np.float32)):
        want[iv[r, c], c] += v
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, want.astype(np.float16))


def test_scatter_refusals():
    compile_error(one_node("ScatterND", [("x", "bool", (3,)), ("i", "int64", (1, 1)), ("u", "bool", (1,))], "bool",
                           reduction="max"), r"unsupported reduction 'max' on dtype bool")
    compile_error(one_node("ScatterElements", [("x", "float32", (3, 4)), ("u", "float32", (1, 2))], "float32",
                           inits={"i": np.array([[0, 3]], np.int64)}, order=["x", "i", "u"], axis=0),
                  r"index 3 at \(0, 1\) of 'i' is outside -3..2")
    compile_error(one_node("ScatterND", [("x", "float32", (3, 4)), ("u", "float32", (2, 4))], "float32",
                           inits={"i": np.array([[0], [-4]], np.int64)}, order=["x", "i", "u"]),
                  r"index -4 at \(1, 0\) of 'i' is outside -3..2")


# ---------------------------------------------------------------------------------------------------
# TensorScatter (opset 24): a key/value cache update
# ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["linear", "circular"])
@pytest.mark.parametrize("shapes,axis,wi", [(((2, 1, 4, 5), (2, 1, 1, 5)), -2, [0, 3]),
                                            (((2, 1, 4, 5), (2, 1, 2, 5)), 2, [2, 1]),
                                            (((3, 4, 5), (3, 2, 5)), 1, [0, 2, 1]),
                                            (((2, 6), (2, 6)), 1, [0, 0])])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "int64"])
def test_tensorscatter(dev, mode, shapes, axis, wi, dtype):
    past, upd = shapes
    m = one_node("TensorScatter", [("p", dtype, past), ("u", dtype, upd), ("w", "int64", (past[0],))], dtype,
                 opset=24, axis=axis, mode=mode)
    check(dev, m, {"p": values(past, dtype, 28), "u": values(upd, dtype, 29), "w": np.array(wi, np.int64)})
    assert ops(m) == ["tensorscatter"]


def test_tensorscatter_circular_wraps_and_absent_indices(dev):
    """Circular writes past the end wrap to the start (a start index past the length too, as onnxruntime);
    without write_indices every batch writes from 0."""
    past, upd = (2, 3, 4, 2), (2, 3, 3, 2)
    m = one_node("TensorScatter", [("p", "float32", past), ("u", "float32", upd), ("w", "int64", (2,))], "float32",
                 opset=24, mode="circular")
    check(dev, m, {"p": rand(past, "float32", 30), "u": rand(upd, "float32", 31), "w": np.array([3, 9], np.int64)})
    m = one_node("TensorScatter", [("p", "float32", past), ("u", "float32", upd)], "float32", opset=24)
    check(dev, m, {"p": rand(past, "float32", 30), "u": rand(upd, "float32", 31)})


@pytest.mark.parametrize("mode,wi", [("linear", [0, 3]), ("linear", [-1, 0]), ("circular", [0, -2])])
def test_tensorscatter_runtime_write_index_out_of_range_is_refused(dev, mode, wi):
    past, upd = (2, 4, 3), (2, 2, 3)
    m = one_node("TensorScatter", [("p", "float32", past), ("u", "float32", upd), ("w", "int64", (2,))], "float32",
                 opset=24, name="ts", axis=1, mode=mode)
    model = dev.load(m.SerializeToString())
    feeds = {"p": rand(past, "float32", 32), "u": rand(upd, "float32", 33), "w": np.array([1, 0], np.int64)}
    assert_same_outputs([np.array(a) for a in model.run(feeds)], run_ort(m, feeds))
    bad = dict(feeds, w=np.array(wi, np.int64))
    with pytest.raises(accel.InvalidArgumentError, match=r"node 'ts' \(tensorscatter\): write index"):
        model.run(bad)
    with pytest.raises(Exception, match="TensorScatter"):
        run_ort(m, bad)
    assert_same_outputs([np.array(a) for a in model.run(feeds)], run_ort(m, feeds))


# ---------------------------------------------------------------------------------------------------
# The kernels' load-time checks (a file the compiler would not write)
# ---------------------------------------------------------------------------------------------------

def accm_model(op, dtypes, dims, ints=()):
    """One node `op` over inputs t0..t{n-2} and output t{n-1} of the given dtypes and dims."""
    n = len(dtypes)
    tensors = [accm.Tensor(f"t{i}", dt, accm.KIND_OUTPUT if i == n - 1 else accm.KIND_INPUT, d)
               for i, (dt, d) in enumerate(zip(dtypes, dims))]
    node = accm.Node(accm.OPS[op], list(range(n - 1)), [n - 1], name="n1", ints=list(ints))
    return accm.write(tensors, [node], list(range(n - 1)), [n - 1])


F32, F16, I32, I64, BOOL = (accm.dtype_code(np.dtype(t)) for t in (np.float32, np.float16, np.int32, np.int64,
                                                                      np.bool_))


@pytest.mark.parametrize("op,dtypes,dims,ints,match", [
    ("gathernd", (F32, I64, F32), ((3, 4), (2, 3), (2,)), [0], r"indices' last dim 3 is outside 1..2"),
    ("gathernd", (F32, F32, F32), ((3, 4), (2, 2), (2,)), [0], "indices dtype float32 is not int32 or int64"),
    ("gathernd", (F32, I64, F32), ((3, 4), (2, 1), (2, 4)), [2], r"batch_dims 2 is outside 0..1"),
    ("gathernd", (F32, I64, F32), ((3, 4), (2, 1), (2, 3)), [0], "output shape"),
    ("scatternd", (F16, I64, F16, F16), ((3,), (1, 1), (1,), (3,)), [1], "on dtype float16"),
    ("scatternd", (F32, I64, F32, F32), ((3,), (1, 1), (1,), (3,)), [7], "reduction 7 is not 0..4"),
    ("scatternd", (F32, I64, F32, F32), ((3, 2), (1, 1), (1, 3), (3, 2)), [0], "updates shape"),
    ("scatterelements", (F32, I64, F32, F32), ((3, 2), (2, 3), (2, 3), (3, 2)), [0, 0, 0], "at most its"),
    ("scatterelements", (F32, I64, F32, F32), ((3, 2), (2, 2), (2, 1), (3, 2)), [0, 0, 0], "updates shape"),
    ("scatterelements", (F32, I64, I32, F32), ((3, 2), (2, 2), (2, 2), (3, 2)), [0, 0, 0], "input 2 .updates."),
    ("tensorscatter", (F32, F32, I64, F32), ((2, 4), (2, 2), (2,), (2, 4)), [0, 0], r"axis 0 outside 1..1"),
    ("tensorscatter", (F32, F32, I64, F32), ((2, 4), (2, 5), (2,), (2, 4)), [1, 0], "update shape"),
    ("tensorscatter", (F32, F32, I32, F32), ((2, 4), (2, 2), (2,), (2, 4)), [1, 0], "write indices"),
])
def test_kernels_refuse_bad_nodes_at_load(dev, op, dtypes, dims, ints, match):
    with pytest.raises(accel.AccelError, match=f"'n1'.*{op}: .*{match}"):
        dev.load(accm_model(op, dtypes, dims, ints))


def test_gathernd_pooling_as_transformers_exports_it(dev):
    """The pattern of a transformers export (BERT's pooler over the last token, DETR's query selection): row
    numbers stacked with run-time positions (ArgMax here) into [batch, 2] indices for GatherND, against
    onnxruntime."""
    nodes = [helper.make_node("ArgMax", ["ids"], ["pos"], axis=1, keepdims=1),
             helper.make_node("Concat", ["rows", "pos"], ["idx"], axis=1),
             helper.make_node("GatherND", ["h", "idx"], ["pooled"]),
             helper.make_node("MatMul", ["pooled", "w"], ["y"])]
    m = onnx_model(nodes, [("h", "float32", (3, 6, 8)), ("ids", "int64", (3, 6))], [("y", "float32")],
                   {"rows": np.arange(3, dtype=np.int64).reshape(3, 1), "w": rand((8, 4), "float32", 40)})
    feeds = {"h": rand((3, 6, 8), "float32", 41), "ids": rand_array((3, 6), "int64", 42, 0, 1000)}
    check(dev, m, feeds)
    assert "gathernd" in ops(m)
