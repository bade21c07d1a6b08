"""The data-movement ops end to end (ONNX -> accel.compiler -> the emulator), against onnxruntime:
Slice, Split, Gather, Expand, Tile, Cast/CastLike, Transpose, Concat, Trilu, EyeLike and the reshapes, on every
dtype accel has; shape subgraphs that must fold at compile time; CompileErrors; and the kernels' load-time
checks on hand-made .accm files."""
from __future__ import annotations

import functools

import numpy as np
import pytest
from conftest import assert_same_outputs, compile_error, elem, emu_outputs, onnx_model, rand_array, run_ort
from conftest import runtime_ops as ops
from onnx import TensorProto, helper, numpy_helper

import accel
from accel.compiler import accm


rand = functools.partial(rand_array, scale=100)


def check(dev, m, feeds):
    """The emulator's outputs are onnxruntime's: dtypes, shapes and every element (but NaN's payload)."""
    got = emu_outputs(dev, m, feeds)
    assert_same_outputs(got, run_ort(m, feeds))
    return got


INT64_MAX, INT64_MIN = 2**63 - 1, -2**63
ALL_DTYPES = ["float32", "float16", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
              "uint64", "bool"]
# One dtype of each element size, and float32.
SIZES = ["float32", "float16", "int64", "int8", "bool"]


# ---------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------


def const(name, values, dtype=np.int64):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(values, dtype)))


@pytest.fixture(scope="module")
def dev():
    d = accel.open("emu:cores=2")
    yield d
    d.close()


# ---------------------------------------------------------------------------------------------------
# Slice
# ---------------------------------------------------------------------------------------------------

SLICES = [  # starts, ends, axes, steps (None: input absent)
    ([1, 2], [3, 7], [1, 3], None),                        # inner run and outer window
    ([0, 0, 0, 0], [2, 3, 8, 10], None, [1, 1, 2, 3]),     # strided, axes absent
    ([-1], [INT64_MIN], [3], [-1]),                        # reversed last axis
    ([INT64_MAX, 5], [INT64_MIN, -INT64_MAX], [2, 3], [-3, -2]),  # clamped, negative steps
    ([-100, 1], [INT64_MAX, -1], [-1, -3], [4, 1]),        # clamped starts, negative axes
    ([1], [2], [0], None),                                 # one outer index
    ([0, 7], [3, 1], [1, 3], [5, -2]),                     # step larger than the dim
    ([-2], [-1], [-1], [1]),
]


@pytest.mark.parametrize("starts,ends,axes,steps", SLICES)
@pytest.mark.parametrize("dtype", SIZES)
def test_slice_inputs(dev, dtype, starts, ends, axes, steps):
    inits = {"s": np.array(starts, np.int64), "e": np.array(ends, np.int64)}
    names = ["x", "s", "e"]
    if axes is not None or steps is not None:
        names.append("a" if axes is not None else "")
        if axes is not None:
            inits["a"] = np.array(axes, np.int64)
    if steps is not None:
        names.append("k")
        inits["k"] = np.array(steps, np.int64)
    m = onnx_model([helper.make_node("Slice", names, ["y"])], [("x", dtype, (2, 3, 8, 10))],
                   [("y", dtype)], inits, opset=13)
    check(dev, m, {"x": rand((2, 3, 8, 10), dtype, 1)})
    assert "slice" in ops(m)


@pytest.mark.parametrize("opset", [1, 9])
def test_slice_attributes(dev, opset):
    kw = dict(starts=[1, -4, 0], ends=[INT64_MAX, -1, 2])
    if opset == 9:
        kw["axes"] = [0, -2, 2]
    m = onnx_model([helper.make_node("Slice", ["x"], ["y"], **kw)], [("x", "float32", (3, 4, 6))],
                   [("y", "float32")], opset=opset)
    check(dev, m, {"x": rand((3, 4, 6), "float32", 2)})


def test_slice_of_everything_is_a_copy(dev):
    m = onnx_model([helper.make_node("Slice", ["x", "s", "e"], ["y"]),
                    helper.make_node("Relu", ["y"], ["z"])],
                   [("x", "float32", (3, 4))], [("z", "float32")],
                   {"s": np.array([0, -10]), "e": np.array([INT64_MAX, 4])}, opset=13)
    check(dev, m, {"x": rand((3, 4), "float32")})
    assert ops(m) == ["activation"]


def test_yolo_focus_slices(dev):
    """YOLOv5's Focus: four strided slices of the image, concatenated along channels."""
    nodes, parts = [], []
    for i in range(4):
        nodes.append(helper.make_node("Slice", ["x", f"s{i}", "e", "a", "k"], [f"p{i}"]))
        parts.append(f"p{i}")
    nodes.append(helper.make_node("Concat", parts, ["y"], axis=1))
    inits = {"e": np.array([INT64_MAX, INT64_MAX]), "a": np.array([2, 3]), "k": np.array([2, 2])}
    for i, (h, w) in enumerate([(0, 0), (1, 0), (0, 1), (1, 1)]):
        inits[f"s{i}"] = np.array([h, w])
    m = onnx_model(nodes, [("x", "float32", (1, 3, 16, 16))], [("y", "float32")], inits, opset=13)
    check(dev, m, {"x": rand((1, 3, 16, 16), "float32", 3)})


@pytest.mark.parametrize("starts,ends,axes,steps,match", [
    ([2], [2], [0], [1], "empty"),
    ([0], [3], [0], [-1], "empty"),
    ([-1], [INT64_MAX], [0], [-1], "empty"),  # a negative step from the end with an end past it
    ([0], [3], [0], [0], "step of axis 0 is 0"),
    ([0, 0], [1, 1], [1, -2], [1, 1], "repeated axes"),
    ([0], [1], [3], [1], "axes 3 is out of range"),
    ([0, 1], [1], [0], [1], "differ in length"),
])
def test_slice_errors(starts, ends, axes, steps, match):
    inits = {"s": np.array(starts), "e": np.array(ends), "a": np.array(axes), "k": np.array(steps)}
    m = onnx_model([helper.make_node("Slice", ["x", "s", "e", "a", "k"], ["y"], name="sl")],
                   [("x", "float32", (3, 4, 5))], [("y", "float32")], inits, opset=13)
    compile_error(m, match)


def test_slice_runtime_starts_is_an_error():
    m = onnx_model([helper.make_node("Slice", ["x", "s", "e"], ["y"], name="sl")],
                   [("x", "float32", (3, 4)), ("s", "int64", (1,))], [("y", "float32")],
                   {"e": np.array([2])}, opset=13)
    compile_error(m, "'sl'.*starts.*constant")


# ---------------------------------------------------------------------------------------------------
# Split
# ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", SIZES)
def test_split_attribute_uneven_sizes(dev, dtype):
    m = onnx_model([helper.make_node("Split", ["x"], ["a", "b", "c"], axis=-1, split=[2, 5, 3])],
                   [("x", dtype, (2, 3, 10))], [("a", dtype), ("b", dtype), ("c", dtype)], opset=11)
    check(dev, m, {"x": rand((2, 3, 10), dtype, 4)})
    assert ops(m) == ["slice"] * 3


def test_split_input_and_equal_parts(dev):
    m = onnx_model([helper.make_node("Split", ["x", "sp"], ["a", "b"], axis=1),
                    helper.make_node("Split", ["x"], ["c", "d", "e"], axis=0)],
                   [("x", "int32", (3, 7))], [("a", "int32"), ("b", "int32"), ("c", "int32"), ("e", "int32")],
                   {"sp": np.array([3, 4])}, opset=13)
    check(dev, m, {"x": rand((3, 7), "int32", 5)})
    assert ops(m).count("slice") == 5 - 1  # output 'd' is not used: no node


def test_split_opset1_input(dev):
    """Split-1 took the sizes as an input of the data's type (onnxruntime cannot run it: numpy is the
    reference)."""
    m = onnx_model([helper.make_node("Split", ["x", "sp"], ["a", "b"], axis=0)], [("x", "float32", (5, 2))],
                   [("a", "float32"), ("b", "float32")], {"sp": np.array([1, 4], np.float32)}, opset=1)
    x = rand((5, 2), "float32", 19)
    a, b = dev.load(m.SerializeToString()).run(x)
    np.testing.assert_array_equal(np.array(a), x[:1])
    np.testing.assert_array_equal(np.array(b), x[1:])


@pytest.mark.parametrize("dim,parts", [(10, 4), (9, 3), (7, 2), (5, 5)])
def test_split_num_outputs(dev, dim, parts):
    outs = [f"y{i}" for i in range(parts)]
    m = onnx_model([helper.make_node("Split", ["x"], outs, axis=1, num_outputs=parts)],
                   [("x", "float16", (2, dim, 3))], [(o, "float16") for o in outs], opset=18)
    check(dev, m, {"x": rand((2, dim, 3), "float16", 6)})


def test_split_into_one_is_a_copy(dev):
    m = onnx_model([helper.make_node("Split", ["x"], ["y"], axis=0), helper.make_node("Relu", ["y"], ["z"])],
                   [("x", "float32", (4, 2))], [("z", "float32")], opset=13)
    check(dev, m, {"x": rand((4, 2), "float32")})
    assert ops(m) == ["activation"]


@pytest.mark.parametrize("kw,extra,opset,match", [
    (dict(axis=0), [], 13, "does not split evenly"),
    (dict(axis=0, split=[2, 2]), [], 11, r"split \[2, 2\] does not cut"),
    (dict(axis=0, num_outputs=3), [], 18, "num_outputs 3 but 2 outputs"),
    (dict(axis=0), [np.array([5, 0])], 13, r"unsupported empty output 'b' \(shape \(0, 2\)\)"),
])
def test_split_errors(kw, extra, opset, match):
    inputs = ["x"] + (["sp"] if extra else [])
    inits = {"sp": extra[0]} if extra else {}
    m = onnx_model([helper.make_node("Split", inputs, ["a", "b"], name="sp1", **kw)],
                   [("x", "float32", (5, 2))], [("a", "float32"), ("b", "float32")], inits, opset=opset)
    compile_error(m, match)


def test_split_num_outputs_that_do_not_fit():
    outs = ["a", "b", "c", "d"]
    m = onnx_model([helper.make_node("Split", ["x"], outs, axis=0, num_outputs=4)],
                   [("x", "float32", (5,))], [(o, "float32") for o in outs], opset=18)
    compile_error(m, "num_outputs 4 does not fit a dim of 5")


# ---------------------------------------------------------------------------------------------------
# Gather
# ---------------------------------------------------------------------------------------------------

GATHERS = [  # axis, indices
    (0, np.array([1, 0, 1, 1])),
    (1, np.array([[2, -1], [0, 3]])),
    (-1, np.array([4, 0, -5, 2])),   # one element per index
    (2, np.array(-2)),               # a scalar index removes the axis
    (0, np.array(1, np.int32)),
    (3, np.array([[1]], np.int32)),
]


@pytest.mark.parametrize("axis,indices", GATHERS)
@pytest.mark.parametrize("dtype", SIZES + ["uint32"])
def test_gather(dev, dtype, axis, indices):
    m = onnx_model([helper.make_node("Gather", ["x", "i"], ["y"], axis=axis)], [("x", dtype, (2, 4, 3, 5))],
                   [("y", dtype)], {"i": indices})
    check(dev, m, {"x": rand((2, 4, 3, 5), dtype, 7)})
    assert "gather" in ops(m)


def test_gather_scalar_from_a_vector_is_a_scalar(dev):
    m = onnx_model([helper.make_node("Gather", ["x", "i"], ["y"])], [("x", "int64", (6,))], [("y", "int64")],
                   {"i": np.array(-1)})
    (y,) = check(dev, m, {"x": rand((6,), "int64", 8)})
    assert y.shape == ()


def test_gather_every_index_in_order_is_a_copy(dev):
    m = onnx_model([helper.make_node("Gather", ["x", "i"], ["y"], axis=1), helper.make_node("Relu", ["y"], ["z"])],
                   [("x", "float32", (2, 3))], [("z", "float32")], {"i": np.array([0, 1, 2])})
    check(dev, m, {"x": rand((2, 3), "float32")})
    assert ops(m) == ["activation"]


@pytest.mark.parametrize("indices", [np.array([0, 3]), np.array([-4]), np.array([[1], [7]])])
def test_gather_out_of_range_is_an_error(indices):
    m = onnx_model([helper.make_node("Gather", ["x", "i"], ["y"], name="g", axis=1)], [("x", "float32", (2, 3))],
                   [("y", "float32")], {"i": indices})
    compile_error(m, "'g'.*index .* out of range for axis 1")


# ---------------------------------------------------------------------------------------------------
# Expand and Tile
# ---------------------------------------------------------------------------------------------------

EXPANDS = [  # input shape, shape input
    ((3, 1), (2, 3, 4)),
    ((1, 4), (3, 1)),          # bidirectional: (3, 4)
    ((2, 1, 5), (1, 6, 1)),
    ((1,), (7,)),
    ((4, 1, 1, 3), (4, 2, 5, 3)),
    ((), (2, 3)),
]


@pytest.mark.parametrize("shape,target", EXPANDS)
@pytest.mark.parametrize("dtype", SIZES)
def test_expand(dev, dtype, shape, target):
    m = onnx_model([helper.make_node("Expand", ["x", "s"], ["y"])], [("x", dtype, shape)], [("y", dtype)],
                   {"s": np.array(target, np.int64)})
    check(dev, m, {"x": rand(shape, dtype, 9)})
    assert ops(m) == ["expand"]


def test_expand_to_its_own_shape_is_a_copy(dev):
    m = onnx_model([helper.make_node("Expand", ["x", "s"], ["y"]), helper.make_node("Relu", ["y"], ["z"])],
                   [("x", "float32", (3, 4))], [("z", "float32")], {"s": np.array([1, 4])})
    check(dev, m, {"x": rand((3, 4), "float32")})
    assert ops(m) == ["activation"]


@pytest.mark.parametrize("target,match", [((3, 5), "do not broadcast"), ((0, 4), "empty")])
def test_expand_errors(target, match):
    m = onnx_model([helper.make_node("Expand", ["x", "s"], ["y"], name="ex")], [("x", "float32", (1, 4))],
                   [("y", "float32")], {"s": np.array(target, np.int64)})
    compile_error(m, match)


@pytest.mark.parametrize("shape,repeats", [((2, 3), (3, 2)), ((2, 1, 3), (1, 4, 1)), ((5,), (3,)),
                                            ((2, 3, 2, 2), (2, 1, 2, 3)), ((3, 2), (1, 1))])
@pytest.mark.parametrize("dtype", ["float32", "int64", "float16", "bool"])
def test_tile(dev, dtype, shape, repeats):
    m = onnx_model([helper.make_node("Tile", ["x", "r"], ["y"])], [("x", dtype, shape)], [("y", dtype)],
                   {"r": np.array(repeats, np.int64)})
    check(dev, m, {"x": rand(shape, dtype, 10)})


def test_tile_errors():
    m = onnx_model([helper.make_node("Tile", ["x", "r"], ["y"], name="t")], [("x", "float32", (1, 2, 1, 2, 1))],
                   [("y", "float32")], {"r": np.array([2] * 5)})
    compile_error(m, r"repeats .* rank 10 > 8.*'Tile' \(node 't'\)")
    m = onnx_model([helper.make_node("Tile", ["x", "r"], ["y"], name="t")], [("x", "float32", (2, 2))],
                   [("y", "float32")], {"r": np.array([2, 0])})
    compile_error(m, "empty")


# ---------------------------------------------------------------------------------------------------
# Cast
# ---------------------------------------------------------------------------------------------------

def cast_input(src, dst, seed):
    """Values of dtype src whose cast to dst ONNX defines (floats to integers: in the target's range)."""
    s, d = np.dtype(src), np.dtype(dst)
    r = np.random.default_rng(seed)
    if s.kind != "f" or d.kind not in "iu":
        x = rand((200,), s, seed)
        if s.kind == "f":  # specials: zeros, infinities, NaN, the float16 edges
            special = [0.0, -0.0, np.inf, -np.inf, np.nan, 65504, 65519.99, 65520, 1e-8, -3e-8, 6e-5, 1e6]
            with np.errstate(over="ignore"):  # float16 overflows to inf, as meant
                x[:12] = np.array(special, np.float32).astype(s)
        if s.kind in "iu":
            x[:3] = 0
        return x
    lo = max(float(np.iinfo(d).min), -float(np.finfo(s).max))
    hi = min(float(np.iinfo(d).max), float(np.finfo(s).max))
    x = r.uniform(lo * 0.99, hi * 0.99, 200).astype(s)
    special = np.array([0.0, -0.0, 0.9, 1.5, 2.5, 7.0, 126.9, 127.9, 255.5, -0.9, -1.5, -2.5, -127.9, -128.9], s)
    special = special[(special > lo - 1) & (special < hi + 1)]  # truncated into the range
    x[:special.size] = special
    return x


@pytest.mark.parametrize("dst", ALL_DTYPES)
@pytest.mark.parametrize("src", ALL_DTYPES)
def test_cast_every_pair(dev, src, dst):
    m = onnx_model([helper.make_node("Cast", ["x"], ["y"], to=elem(dst))], [("x", src, (200,))], [("y", dst)])
    check(dev, m, {"x": cast_input(src, dst, ALL_DTYPES.index(src) * 11 + ALL_DTYPES.index(dst))})
    assert ops(m) == (["copy"] if src == dst else ["cast"])


def test_cast_every_float16_to_float32_and_back(dev):
    """All 65536 float16 bit patterns to float32 (exact), and float32 values around every float16
    rounding boundary back to float16 (nearest, ties to even)."""
    h = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    m = onnx_model([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)], [("x", "float16", h.shape)],
                   [("y", "float32")])
    (y,) = check(dev, m, {"x": h})
    np.testing.assert_array_equal(y, h.astype(np.float32))
    finite = h[np.isfinite(h)].astype(np.float32)
    finite = np.sort(np.unique(finite))
    mid = ((finite[:-1].astype(np.float64) + finite[1:]) / 2).astype(np.float32)  # the ties, exact
    inf = np.float32(np.inf)
    f = np.concatenate([finite, mid, np.nextafter(mid, -inf), np.nextafter(mid, inf),
                        np.array([inf, -inf, np.nan, 65520, -65520, 1e-30, -1e-30, 1e30], np.float32)])
    m = onnx_model([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT16)], [("x", "float32", f.shape)],
                   [("y", "float16")])
    (y,) = check(dev, m, {"x": f})
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(y, f.astype(np.float16))


@pytest.mark.parametrize("dst", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"])
@pytest.mark.parametrize("src", ["float32", "float16"])
def test_cast_out_of_range_saturates(dev, src, dst):
    """ONNX leaves these unspecified: accel saturates, and NaN gives 0 (never a fault)."""
    info = np.iinfo(dst)
    with np.errstate(over="ignore"):  # float16 overflows to inf, as meant
        x = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 65504, -65504, 0.5], np.float32).astype(src)
    m = onnx_model([helper.make_node("Cast", ["x"], ["y"], to=elem(dst))], [("x", src, x.shape)], [("y", dst)])
    (y,) = dev.load(m.SerializeToString()).run({"x": x})
    big = min(info.max, 65504)
    want = [0, info.max, info.min, info.max, info.min, big, max(info.min, -65504), 0]
    assert np.array(y).tolist() == want


def test_castlike(dev):
    m = onnx_model([helper.make_node("CastLike", ["x", "t"], ["y"]),
                    helper.make_node("CastLike", ["c", "x"], ["z"]),
                    helper.make_node("Add", ["x", "z"], ["w"])],
                   [("x", "float32", (4, 3)), ("t", "int32", (1,))], [("y", "int32"), ("w", "float32")],
                   {"c": np.arange(12, dtype=np.int64).reshape(4, 3)}, opset=15)
    check(dev, m, {"x": rand((4, 3), "float32", 11), "t": np.zeros(1, np.int32)})
    assert sorted(ops(m)) == ["add", "cast"]  # CastLike of the constant folded


def test_pp_ocr_style_int_path(dev):
    """Slice, Cast, Squeeze, Transpose, Unsqueeze, Reshape on int64/float16 data, then back to float."""
    nodes = [helper.make_node("Slice", ["x", "s", "e", "a"], ["sl"]),
             helper.make_node("Cast", ["sl"], ["h"], to=TensorProto.FLOAT16),
             helper.make_node("Squeeze", ["h", "sq"], ["q"]),
             helper.make_node("Transpose", ["q"], ["t"], perm=[2, 0, 1]),
             helper.make_node("Unsqueeze", ["t", "sq"], ["u"]),
             helper.make_node("Reshape", ["u", "shp"], ["r"]),
             helper.make_node("Cast", ["r"], ["y"], to=TensorProto.INT64)]
    inits = {"s": np.array([0, 1]), "e": np.array([1, INT64_MAX]), "a": np.array([2, 3]),
             "sq": np.array([2]), "shp": np.array([0, -1])}
    m = onnx_model(nodes, [("x", "float32", (3, 4, 2, 5))], [("y", "int64")], inits, opset=13)
    check(dev, m, {"x": rand((3, 4, 2, 5), "float32", 12)})


def test_cast_errors():
    m = onnx_model([helper.make_node("Cast", ["x"], ["y"], name="to_double", to=TensorProto.DOUBLE)],
                   [("x", "float32", (2,))], [("y", "float64")])
    compile_error(m, "'to_double'.*'x' to float64")
    m = onnx_model([helper.make_node("Cast", ["x"], ["y"], name="to_str", to=TensorProto.STRING)],
                   [("x", "float32", (2,))], [("y", "float32")])
    compile_error(m, "'to_str'")


# ---------------------------------------------------------------------------------------------------
# Transpose, Concat and the reshapes on every element size
# ---------------------------------------------------------------------------------------------------

TRANSPOSES = [((2, 3, 5, 7), (0, 2, 3, 1)), ((1, 3, 6, 9, 17), (0, 1, 3, 4, 2)), ((33, 18), (1, 0)),
              ((4, 6, 5, 8), (0, 2, 1, 3)), ((2, 3, 4), (2, 1, 0)), ((70, 1, 65), (2, 1, 0)),
              ((5,), (0,))]


@pytest.mark.parametrize("shape,perm", TRANSPOSES)
@pytest.mark.parametrize("dtype", SIZES)
def test_transpose(dev, dtype, shape, perm):
    m = onnx_model([helper.make_node("Transpose", ["x"], ["y"], perm=list(perm))], [("x", dtype, shape)],
                   [("y", dtype)])
    check(dev, m, {"x": rand(shape, dtype, 13)})


@pytest.mark.parametrize("dtype", SIZES)
def test_concat_with_constants(dev, dtype):
    c = rand((2, 2, 3), dtype, 14)
    m = onnx_model([helper.make_node("Concat", ["x", "c", "x"], ["y"], axis=-2)], [("x", dtype, (2, 1, 3))],
                   [("y", dtype)], {"c": c})
    check(dev, m, {"x": rand((2, 1, 3), dtype, 15)})


@pytest.mark.parametrize("dtype", ["int64", "float16", "bool", "uint8"])
def test_reshapes_keep_any_dtype(dev, dtype):
    nodes = [helper.make_node("Identity", ["x"], ["i"]),
             helper.make_node("Unsqueeze", ["i", "ax"], ["u"]),
             helper.make_node("Flatten", ["u"], ["f"], axis=2),
             helper.make_node("Reshape", ["f", "shp"], ["r"]),
             helper.make_node("Squeeze", ["r"], ["y"])]
    m = onnx_model(nodes, [("x", dtype, (2, 3, 4))], [("y", dtype)],
                   {"ax": np.array([0, -1]), "shp": np.array([1, 6, 1, 4])}, opset=13)
    check(dev, m, {"x": rand((2, 3, 4), dtype, 16)})


# ---------------------------------------------------------------------------------------------------
# Shape subgraphs fold at compile time
# ---------------------------------------------------------------------------------------------------

def test_reshape_by_computed_shape_folds(dev):
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             const("zero", [0]), const("minus1", [-1]), const("ax", [0]),
             helper.make_node("Gather", ["s", "zero"], ["n0"], axis=0),
             helper.make_node("Squeeze", ["n0", "ax"], ["n"]),
             helper.make_node("Unsqueeze", ["n", "ax"], ["n1"]),
             helper.make_node("Concat", ["n1", "minus1"], ["shape"], axis=0),
             helper.make_node("Reshape", ["x", "shape"], ["y"])]
    m = onnx_model(nodes, [("x", "float32", (2, 3, 4))], [("y", "float32")], opset=13)
    check(dev, m, {"x": rand((2, 3, 4), "float32")})
    assert ops(m) == ["copy"]


def test_yolo_grid_folds(dev):
    """A YOLO head's grid: Range over the feature map's size (from Shape), Expand to a mesh, Concat,
    Cast, then added to the runtime predictions."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             const("i2", 2), const("i3", 3), const("zero", 0), const("one", 1), const("ax", [0]),
             const("ax_last", [-1]),
             helper.make_node("Gather", ["s", "i2"], ["ny"]), helper.make_node("Gather", ["s", "i3"], ["nx"]),
             helper.make_node("Range", ["zero", "ny", "one"], ["ry"]),
             helper.make_node("Range", ["zero", "nx", "one"], ["rx"]),
             helper.make_node("Unsqueeze", ["ny", "ax"], ["ny1"]), helper.make_node("Unsqueeze", ["nx", "ax"], ["nx1"]),
             helper.make_node("Concat", ["ny1", "nx1"], ["mesh_shape"], axis=0),
             helper.make_node("Unsqueeze", ["ry", "ax_last"], ["ry1"]),
             helper.make_node("Expand", ["ry1", "mesh_shape"], ["gy"]),
             helper.make_node("Expand", ["rx", "mesh_shape"], ["gx"]),
             helper.make_node("Unsqueeze", ["gx", "ax_last"], ["gx1"]),
             helper.make_node("Unsqueeze", ["gy", "ax_last"], ["gy1"]),
             helper.make_node("Concat", ["gx1", "gy1"], ["grid_i"], axis=-1),
             helper.make_node("Cast", ["grid_i"], ["grid"], to=TensorProto.FLOAT),
             helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 3, 1]),
             helper.make_node("Add", ["xt", "grid"], ["y"])]
    m = onnx_model(nodes, [("x", "float32", (1, 2, 5, 7))], [("y", "float32")], opset=13)
    check(dev, m, {"x": rand((1, 2, 5, 7), "float32", 17)})
    assert sorted(ops(m)) == ["add", "transpose"]


def test_constant_of_shape_folds(dev):
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("ConstantOfShape", ["s"], ["z"],
                              value=numpy_helper.from_array(np.array([1.5], np.float32))),
             helper.make_node("Add", ["x", "z"], ["y"])]
    m = onnx_model(nodes, [("x", "float32", (2, 3))], [("y", "float32")], opset=13)
    check(dev, m, {"x": rand((2, 3), "float32")})
    assert ops(m) == ["add"]


def test_torch_style_view_shape_folds(dev):
    """Slice, Mul, Div, Equal, Where and Cast on a shape, as torch's exporter writes x.view(b, -1)."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             const("st", [0]), const("en", [1]), const("st2", [1]), const("en2", [INT64_MAX]),
             const("one", [1]), const("minus1", [-1]),
             helper.make_node("Slice", ["s", "st", "en"], ["b"]),
             helper.make_node("Slice", ["s", "st2", "en2"], ["rest"]),
             helper.make_node("ReduceProd", ["rest"], ["p"], keepdims=1),
             helper.make_node("Div", ["p", "one"], ["q"]),
             helper.make_node("Mul", ["q", "one"], ["q2"]),
             helper.make_node("Concat", ["b", "q2"], ["t"], axis=0),
             helper.make_node("Equal", ["t", "minus1"], ["is_neg"]),
             helper.make_node("Where", ["is_neg", "one", "t"], ["t2"]),
             helper.make_node("Cast", ["t2"], ["t3"], to=TensorProto.INT64),
             helper.make_node("Reshape", ["x", "t3"], ["r"]),
             helper.make_node("Relu", ["r"], ["y"])]
    m = onnx_model(nodes, [("x", "float32", (2, 3, 4))], [("y", "float32")], opset=13)
    check(dev, m, {"x": rand((2, 3, 4), "float32")})
    assert ops(m) == ["copy", "activation"]


# ---------------------------------------------------------------------------------------------------
# The kernels' load-time checks (hand-made .accm files)
# ---------------------------------------------------------------------------------------------------

F32, I64 = accm.dtype_code(np.float32), accm.dtype_code(np.int64)


def accm_model(op, x_dims, y_dims, *, x_dtype=F32, y_dtype=F32, ints=(), extra=None):
    """One node `op`: x -> y, with an optional constant second input `extra` (an array)."""
    tensors = [accm.Tensor("x", x_dtype, accm.KIND_INPUT, x_dims), accm.Tensor("y", y_dtype, accm.KIND_OUTPUT, y_dims)]
    inputs = [0]
    if extra is not None:
        tensors.append(accm.Tensor("c", accm.dtype_code(extra.dtype), accm.KIND_CONSTANT, extra.shape, data=extra))
        inputs.append(2)
    return accm.write(tensors, [accm.Node(accm.OPS[op], inputs, [1], name="n1", ints=list(ints))], [0], [1])


@pytest.mark.parametrize("op,x,y,kw,match", [
    ("slice", (4, 5), (2, 5), dict(ints=[3, 0, 0, 0, 0, 0, 0, 0, 1, 1]), "axis 0: 2 elements from 3 by step 1"),
    ("slice", (4, 5), (2, 5), dict(ints=[1, 0, 0, 0, 0, 0, 0, 0, 0, 1]), "step of axis 0 is 0"),
    ("slice", (4, 5), (2, 5), dict(ints=[0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1]), "axis 2 .* must be 0"),
    ("slice", (4, 5), (2, 5), dict(ints=[0] * 8 + [1, 1], y_dtype=I64),
     "dtype float32 differs from output dtype int64"),
    ("gather", (4, 5), (2, 5), dict(extra=np.array([0, 1], np.float32)), "indices dtype float32 is not int32"),
    ("gather", (4, 5), (3, 5), dict(extra=np.array([0, 1], np.int64)), r"output shape \[3,5\]"),
    ("expand", (3, 2), (4, 3, 4), {}, r"\[3,2\] does not broadcast to output \[4,3,4\]"),
    ("cast", (3, 2), (2, 3), dict(y_dtype=I64), "output shape"),
    ("transpose", (3, 2), (2, 3), dict(ints=[1, 0], y_dtype=I64), "dtype"),
    ("concat", (3, 2), (3, 2), dict(y_dtype=I64), "dtype"),
])
def test_kernels_refuse_bad_nodes_at_load(dev, op, x, y, kw, match):
    with pytest.raises(accel.AccelError, match=f"'n1'.*{op}: .*{match}"):
        dev.load(accm_model(op, x, y, **kw))


@pytest.mark.parametrize("indices, bad", [([1, 9, 0], "index 9 at position 1"), ([0, -5], "index -5 at position 1")])
def test_gather_index_out_of_range_in_a_file_is_refused_at_load(dev, indices, bad):
    """The compiler never writes one; a hand-made file is refused when it loads, naming the index (a
    negative one counts from the end)."""
    with pytest.raises(accel.ModelFormatError, match=f"'n1'.*gather: {bad} is outside -4..3"):
        dev.load(accm_model("gather", (4, 2), (len(indices), 2), extra=np.array(indices, np.int64)))


# ---------------------------------------------------------------------------------------------------
# Trilu, EyeLike
# ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", SIZES)
@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("k", [None, 0, 2, -1, -7, 9])
def test_trilu(dev, dtype, upper, k):
    """Upper and lower triangles from diagonals inside and outside the matrix, over a batch of 2 x 3 matrices of
    4 x 6, bit-exact against onnxruntime and numpy."""
    x = rand((2, 3, 4, 6), dtype, 50)
    ins = ["x"] if k is None else ["x", "k"]
    inits = {} if k is None else {"k": np.array(k, np.int64)}
    m = onnx_model([helper.make_node("Trilu", ins, ["y"], upper=upper)], [("x", dtype, x.shape)], [("y", dtype)],
                   inits, opset=14)
    (got,) = emu_outputs(dev, m, {"x": x}) if dtype == "int8" else check(dev, m, {"x": x})  # onnxruntime: no int8
    assert_same_outputs([got], [(np.triu if upper else np.tril)(x, k or 0)])
    assert ops(m) == ["where"]


def test_trilu_refusals_name_the_node():
    m = onnx_model([helper.make_node("Trilu", ["x", "k"], ["y"], name="t1")],
                   [("x", "float32", (3, 3)), ("k", "int64", ())], [("y", "float32")], opset=14)
    compile_error(m, r"'t1'.*k \('k'\) must be a constant")
    m = onnx_model([helper.make_node("Trilu", ["x"], ["y"], name="t1")], [("x", "float32", (3,))],
                   [("y", "float32")], opset=14)
    compile_error(m, r"'t1'.*rank 1, Trilu takes rank >= 2")


@pytest.mark.parametrize("shape,k,dtype", [((4, 4), 0, None), ((3, 5), 1, "int32"), ((5, 3), -2, "int64"),
                                           ((2, 6), 7, "float32")])
def test_eyelike_is_a_constant(dev, shape, k, dtype):
    """The output depends on the input's shape alone: a constant, which reaches the graph output through a copy;
    against onnxruntime and numpy."""
    attrs = {"k": k} if dtype is None else {"k": k, "dtype": elem(dtype)}
    m = onnx_model([helper.make_node("EyeLike", ["x"], ["y"], **attrs), helper.make_node("Relu", ["x"], ["r"])],
                   [("x", "float32", shape)], [("y", dtype or "float32"), ("r", "float32")], opset=9)
    got = check(dev, m, {"x": rand(shape, "float32", 51)})
    np.testing.assert_array_equal(got[0], np.eye(*shape, k=k, dtype=dtype or "float32"))
    assert sorted(ops(m)) == ["activation", "copy"]


@pytest.mark.emulator
@pytest.mark.parametrize("training, ratio", [(None, None), (False, 0.5), (True, 0.0)])
def test_dropout_mask_where_nothing_is_dropped(dev, training, ratio):
    # Inference, or training with ratio 0: y is x and the mask all true, as onnxruntime gives them.
    inputs, inits = ["x"], {}
    if training is not None:
        inputs += ["r", "t"]
        inits = {"r": np.array(ratio, np.float32), "t": np.array(training)}
    m = onnx_model([helper.make_node("Dropout", inputs, ["y", "mask"])], [("x", "float32", (3, 4))],
                   [("y", "float32"), ("mask", "bool")], inits, opset=13)
    x = rand_array((3, 4), "float32")
    got = check(dev, m, {"x": x})
    assert got[1].dtype == np.bool_ and got[1].all()


def test_dropout_that_drops_at_random_is_refused():
    m = onnx_model([helper.make_node("Dropout", ["x", "r", "t"], ["y"], name="d")], [("x", "float32", (3, 4))],
                   [("y", "float32")], {"r": np.array(0.5, np.float32), "t": np.array(True)}, opset=13)
    compile_error(m, r"unsupported training_mode=True \(random\) with a ratio above 0 in op 'Dropout' \(node 'd'\)")


@pytest.mark.emulator
@pytest.mark.parametrize("axis, cond", [(0, [1, 0, 1]), (1, [0, 1]), (-1, [1, 1, 0, 1]), (None, [0, 1, 1, 0, 0, 1])])
def test_compress_of_a_constant_condition(dev, axis, cond):
    attrs = {} if axis is None else {"axis": axis}
    m = onnx_model([helper.make_node("Compress", ["x", "c"], ["y"], **attrs)], [("x", "float32", (3, 2, 4))],
                   [("y", "float32")], {"c": np.array(cond, bool)}, opset=11)
    check(dev, m, {"x": rand_array((3, 2, 4), "float32")})


def test_compress_of_a_condition_computed_at_run_time_is_refused():
    m = onnx_model([helper.make_node("Compress", ["x", "c"], ["y"], name="cp", axis=0)],
                   [("x", "float32", (3, 2)), ("c", "bool", (3,))], [("y", "float32")], opset=11)
    compile_error(m, r"'cp' \(Compress\): condition \('c'\) must be a constant")


@pytest.mark.emulator
@pytest.mark.parametrize("src, dst", [("float32", "int32"), ("int32", "float32"), ("uint32", "int32"),
                                      ("int8", "uint8"), ("uint16", "int16"), ("bool", "uint8"), ("float16", "int16"),
                                      ("int64", "uint64")])
def test_bitcast_reads_the_bytes_as_another_dtype(dev, src, dst):
    x = rand_array((2, 3), src, seed=5)
    if src == "float32":
        x[0, :2] = [np.nan, -0.0]
    m = onnx_model([helper.make_node("BitCast", ["x"], ["y"], to=elem(dst))], [("x", src, x.shape)], [("y", dst)],
                   opset=26)
    (got,) = emu_outputs(dev, m, {"x": x})
    assert got.dtype == np.dtype(dst)
    np.testing.assert_array_equal(got.view(np.uint8), x.view(np.uint8))


def test_bitcast_between_sizes_or_to_float64_is_refused():
    m = onnx_model([helper.make_node("BitCast", ["x"], ["y"], name="b", to=elem("int16"))], [("x", "float32", (2,))],
                   [("y", "int16")], opset=26)
    compile_error(m, r"'b' \(BitCast\): float32 and int16 differ in size \(4 and 2 bytes\)")
    m = onnx_model([helper.make_node("BitCast", ["x"], ["y"], name="b", to=elem("float64"))], [("x", "int64", (2,))],
                   [("y", "float64")], opset=26)
    compile_error(m, r"unsupported bitcast to float64: accel has no float64 tensors in op 'BitCast' \(node 'b'\)")
