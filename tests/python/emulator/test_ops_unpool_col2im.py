"""ReverseSequence, MaxUnpool, Col2Im and Mod of float16 end to end (ONNX -> accel.compiler -> the emulator),
element by element against onnxruntime on one-node models: every dtype the compiler takes for them, run-time
sequence lengths and unpooling indices (one out of range fails the run naming it, as onnxruntime fails it),
duplicate unpooling indices, overlapping Col2Im blocks with strides, dilations and pads in 1 to 3 spatial dims,
and Mod's float16 edge cases (signed zeros, infinities, NaN)."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same_outputs, compile_error, emu_outputs, onnx_model, rand_array, run_ort
from conftest import runtime_ops as ops
from onnx import helper

import accel
from accel.compiler import accm

# The emulator's compiler and kernels (a board's toolchain compiles what it supports itself).
pytestmark = pytest.mark.emulator


@pytest.fixture(scope="module")
def dev():
    d = accel.open("emu")
    yield d
    d.close()


def check(dev, m, feeds):
    got = emu_outputs(dev, m, feeds)
    assert_same_outputs(got, run_ort(m, feeds))
    return got


def one_node(op, inputs, out_dtype, opset=18, inits=None, name="n", order=None, **attrs):
    order = order or [i[0] for i in inputs] + list(inits or {})
    return onnx_model([helper.make_node(op, order, ["y"], name=name, **attrs)], inputs, [("y", out_dtype)],
                      inits or {}, opset=opset)


# ---------------------------------------------------------------------------------------------------
# ReverseSequence
# ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("batch_axis,time_axis,shape,lens", [(1, 0, (4, 4), [4, 3, 2, 1]), (0, 1, (4, 4), [1, 2, 3, 4]),
                                                             (0, 1, (3, 5, 2), [0, 5, 2]),
                                                             (1, 0, (6, 2, 3, 2), [6, 1]), (-2, -1, (2, 7), [3, 7])])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "int64", "bool"])
def test_reverse_sequence(dev, batch_axis, time_axis, shape, lens, dtype):
    m = one_node("ReverseSequence", [("x", dtype, shape), ("l", "int64", (len(lens),))], dtype, opset=10,
                 batch_axis=batch_axis, time_axis=time_axis)
    check(dev, m, {"x": rand_array(shape, dtype, 1), "l": np.array(lens, np.int64)})
    assert ops(m) == ["reversesequence"]


@pytest.mark.parametrize("bad", [5, -1])
def test_reverse_sequence_runtime_length_out_of_range_is_refused(dev, bad):
    x = rand_array((4, 3), "float32", 2)
    m = one_node("ReverseSequence", [("x", "float32", (4, 3)), ("l", "int64", (3,))], "float32", opset=10, name="rs")
    model = dev.load(m.SerializeToString())
    good = {"x": x, "l": np.array([4, 0, 2], np.int64)}
    assert_same_outputs([np.array(a) for a in model.run(good)], run_ort(m, good))
    bad_feeds = dict(good, l=np.array([4, bad, 2], np.int64))
    with pytest.raises(accel.InvalidArgumentError,
                       match=rf"node 'rs' \(reversesequence\): sequence length {bad} at \[1\] of input 1 \('l'\) is "
                             rf"outside 0..4"):
        model.run(bad_feeds)
    with pytest.raises(Exception, match=r"sequence length|seq_len|Invalid"):
        run_ort(m, bad_feeds)


def test_reverse_sequence_constant_lengths(dev):
    x = rand_array((3, 2, 2), "float32", 3)
    m = one_node("ReverseSequence", [("x", "float32", x.shape)], "float32", opset=10, inits={"l": np.array([3, 1])})
    check(dev, m, {"x": x})
    compile_error(one_node("ReverseSequence", [("x", "float32", x.shape)], "float32", opset=10,
                           inits={"l": np.array([4, 1])}),
                  r"sequence length 4 at \[0\] of input 1 \('l'\) is outside 0..3")


# ---------------------------------------------------------------------------------------------------
# MaxUnpool
# ---------------------------------------------------------------------------------------------------

def pool_indices(x_shape, out_spatial, seed, dup=False):
    """Positions in the flattened output tensor, one per input element (each in its own n, c plane)."""
    n, c = x_shape[:2]
    plane = int(np.prod(out_spatial))
    r = np.random.default_rng(seed)
    per = int(np.prod(x_shape[2:]))
    ind = np.empty((n, c, per), np.int64)
    for i in range(n):
        for j in range(c):
            pos = r.choice(plane, per, replace=dup)
            ind[i, j] = (i * c + j) * plane + pos
    return ind.reshape(x_shape)


@pytest.mark.parametrize("x_shape,kernel,strides,pads,out", [((1, 1, 2, 2), [2, 2], [2, 2], None, (4, 4)),
                                                             ((2, 3, 3, 2), [3, 2], [2, 2], [1, 0, 0, 1], (6, 3)),
                                                             ((1, 2, 5), [2], [2], None, (10,)),
                                                             ((1, 1, 2, 2, 2), [2, 2, 2], [2, 2, 2], None, (4, 4, 4))])
@pytest.mark.parametrize("dtype", ["float32", "float16"])  # MaxUnpool's dtypes (and float64, which accel has not)
def test_maxunpool(dev, x_shape, kernel, strides, pads, out, dtype):
    attrs = {"kernel_shape": kernel, "strides": strides}
    if pads:
        attrs["pads"] = pads
    ind = pool_indices(x_shape, out, 4)
    m = one_node("MaxUnpool", [("x", dtype, x_shape), ("i", "int64", x_shape)], dtype, opset=11, **attrs)
    check(dev, m, {"x": rand_array(x_shape, dtype, 5, 1, 100), "i": ind})
    assert "scatterelements" in ops(m)


def test_maxunpool_output_shape_and_duplicates(dev):
    """An output_shape larger than the default, and duplicate indices (the last wins, as onnxruntime)."""
    x_shape = (1, 2, 2, 2)
    ind = pool_indices(x_shape, (5, 5), 6, dup=True)
    ind[0, 0, 1, 1] = ind[0, 0, 0, 0]
    m = one_node("MaxUnpool", [("x", "float32", x_shape), ("i", "int64", x_shape)], "float32", opset=11,
                 inits={"s": np.array([1, 2, 5, 5], np.int64)}, kernel_shape=[2, 2], strides=[2, 2])
    check(dev, m, {"x": rand_array(x_shape, "float32", 7), "i": ind})


@pytest.mark.parametrize("bad", [16, -1])
def test_maxunpool_runtime_index_out_of_range_is_refused(dev, bad):
    """Negative indices are out of range too (onnxruntime refuses them: they are not positions)."""
    x = np.array([[[[1, 2], [3, 4]]]], np.float32)
    m = one_node("MaxUnpool", [("x", "float32", x.shape), ("i", "int64", x.shape)], "float32", opset=11, name="mu",
                 kernel_shape=[2, 2], strides=[2, 2])
    model = dev.load(m.SerializeToString())
    good = {"x": x, "i": np.array([[[[5, 7], [13, 15]]]], np.int64)}
    assert_same_outputs([np.array(a) for a in model.run(good)], run_ort(m, good))
    bad_feeds = dict(good, i=np.array([[[[5, bad], [13, 15]]]], np.int64))
    with pytest.raises(accel.InvalidArgumentError, match=rf"node 'mu' \(scatterelements\): index {bad} at \[1\] .*"
                                                         r"outside 0..15"):
        model.run(bad_feeds)
    with pytest.raises(Exception, match="out of bounds"):
        run_ort(m, bad_feeds)


# ---------------------------------------------------------------------------------------------------
# Col2Im
# ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("image,block,attrs", [
    ([5, 5], [1, 5], {}), ([5, 5], [2, 2], {"strides": [2, 2]}), ([5, 5], [2, 2], {}),
    ([6, 4], [3, 2], {"pads": [1, 0, 1, 1], "dilations": [1, 2]}), ([7], [3], {"strides": [2], "pads": [1, 2]}),
    ([3, 4, 5], [1, 2, 3], {}), ([4, 5, 3], [2, 2, 2], {"strides": [1, 2, 1]}),
    ([5, 6], [3, 3], {"pads": [2, 2, 2, 2], "strides": [3, 2], "dilations": [2, 2]}),
])
def test_col2im(dev, image, block, attrs):
    s = len(image)
    st, dl = attrs.get("strides", [1] * s), attrs.get("dilations", [1] * s)
    pads = attrs.get("pads", [0] * 2 * s)
    grid = [(image[d] + pads[d] + pads[s + d] - dl[d] * (block[d] - 1) - 1) // st[d] + 1 for d in range(s)]
    x_shape = (2, 3 * int(np.prod(block)), int(np.prod(grid)))
    m = one_node("Col2Im", [("x", "float32", x_shape)], "float32",
                 inits={"image": np.array(image, np.int64), "block": np.array(block, np.int64)}, **attrs)
    check(dev, m, {"x": rand_array(x_shape, "float32", 8, scale=3)})
    assert ops(m) == ["col2im"]


def test_col2im_3d_dilations_where_onnxruntime_is_wrong(dev):
    """onnxruntime 1.32's N-D Col2Im misplaces blocks when a dim of 3 spatial ones is dilated (its sums differ
    from the definition by whole elements); the emulator follows the definition, as onnx's reference does."""
    from onnx.reference import ReferenceEvaluator

    image, block, attrs = [4, 5, 3], [2, 2, 2], {"dilations": [2, 1, 2], "strides": [1, 2, 1]}
    grid = [(image[d] - attrs["dilations"][d] * (block[d] - 1) - 1) // attrs["strides"][d] + 1 for d in range(3)]
    x = rand_array((2, 16, int(np.prod(grid))), "float32", 10, scale=3)
    m = one_node("Col2Im", [("x", "float32", x.shape)], "float32",
                 inits={"image": np.array(image, np.int64), "block": np.array(block, np.int64)}, **attrs)
    (y,) = emu_outputs(dev, m, {"x": x})
    (want,) = ReferenceEvaluator(m).run(None, {"x": x})
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)
    assert np.abs(run_ort(m, {"x": x})[0] - want).max() > 0.1  # onnxruntime's bug: if it is fixed, test it as the rest


def test_col2im_refusals():
    compile_error(one_node("Col2Im", [("x", "float32", (1, 4, 10))], "float32",
                           inits={"image": np.array([3, 3], np.int64), "block": np.array([2, 2], np.int64)}),
                  r"input 'x' \(1, 4, 10\) is not \[N, C\*4, 4\]")
    four = np.array([2, 2, 2, 2], np.int64)
    compile_error(one_node("Col2Im", [("x", "float32", (1, 16, 1))], "float32", inits={"image": four, "block": four}),
                  r"unsupported image_shape \[2, 2, 2, 2\]")


# ---------------------------------------------------------------------------------------------------
# Mod of float16
# ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmod", [0, 1])
def test_mod_float16(dev, fmod):
    r = np.random.default_rng(9)
    a = np.concatenate([r.normal(0, 50, 200), [0, -0.0, np.inf, -np.inf, np.nan, 5, -5, 3, -3, 65504, -65504,
                                               1e-7]]).astype(np.float16)
    b = np.concatenate([r.normal(0, 5, 200), [3, 3, 2, 2, 2, np.inf, np.inf, -np.inf, 0, 3e-5, 7, -0.0]]).astype(
        np.float16)
    m = one_node("Mod", [("a", "float16", a.shape), ("b", "float16", b.shape)], "float16", opset=28, fmod=fmod)
    (y,) = check(dev, m, {"a": a, "b": b})
    assert np.array_equal(np.signbit(y), np.signbit(run_ort(m, {"a": a, "b": b})[0]))


# ---------------------------------------------------------------------------------------------------
# The kernels' load-time checks (a file the compiler would not write)
# ---------------------------------------------------------------------------------------------------

def accm_model(op, dtypes, dims, ints=()):
    n = len(dtypes)
    tensors = [accm.Tensor(f"t{i}", dt, accm.KIND_OUTPUT if i == n - 1 else accm.KIND_INPUT, d)
               for i, (dt, d) in enumerate(zip(dtypes, dims))]
    node = accm.Node(accm.OPS[op], list(range(n - 1)), [n - 1], name="n1", ints=list(ints))
    return accm.write(tensors, [node], list(range(n - 1)), [n - 1])


F32, I32, I64 = (accm.dtype_code(np.dtype(t)) for t in (np.float32, np.int32, np.int64))


@pytest.mark.parametrize("op,dtypes,dims,ints,match", [
    ("reversesequence", (F32, I64, F32), ((2, 3), (2,), (2, 3)), [0, 0], "are not 0 and 1"),
    ("reversesequence", (F32, I32, F32), ((2, 3), (2,), (2, 3)), [0, 1], "are not int64"),
    ("reversesequence", (F32, I64, F32), ((2, 3), (3,), (2, 3)), [0, 1], r"are not int64 \[2\]"),
    # col2im's ints: block, stride, dilation, pad_begin, pad_end, 3 slots each
    ("col2im", (F32, F32), ((1, 4, 5), (1, 1, 3, 3)), [2, 2, 0, 1, 1, 0, 1, 1, 0], r"is not \[1, 4, 4\]"),
    ("col2im", (F32, F32), ((1, 4, 4), (1, 1, 3, 3)), [2, 2, 0, 0, 1, 0, 1, 1, 0], "out of range"),
    ("col2im", (F32, F32), ((1, 4, 4), (1, 1, 3, 3)), [2, 2, 2, 1, 1, 0, 1, 1, 0], "must be 0"),
    ("powcast", (F32, F32, F32), ((2,),) * 3, [], "is op pow"),
    ("powcast", (I32, I64, I64), ((2,),) * 3, [], "input 0 dtype int32 differs"),
])
def test_kernels_refuse_bad_nodes_at_load(dev, op, dtypes, dims, ints, match):
    with pytest.raises(accel.AccelError, match=f"'n1'.*{op}: .*{match}"):
        dev.load(accm_model(op, dtypes, dims, ints))


def test_maxunpool_folding_refuses_a_negative_index():
    """All-constant MaxUnpool folds at compile time with onnx's reference evaluator, which wraps a negative index
    (onnxruntime refuses it): the compiler refuses it."""
    t = np.array([[[[1, 2], [3, 4]]]], np.float32)
    m = onnx_model([helper.make_node("MaxUnpool", ["t", "i"], ["c"], name="mu", kernel_shape=[2, 2], strides=[2, 2]),
                    helper.make_node("Add", ["c", "x"], ["y"])], [("x", "float32", (1, 1, 4, 4))], [("y", "float32")],
                   {"t": t, "i": np.array([[[[5, -1], [13, 15]]]], np.int64)}, opset=11)
    compile_error(m, r"'mu' \(MaxUnpool\): index -1 at \[0, 0, 0, 1\] of input 1 \('i'\) is negative")


def test_col2im_past_its_ops_limits_is_refused_by_the_compiler():
    # A stride past the image is valid ONNX (one block): the col2im op's limits refuse it at compile time.
    m = onnx_model([helper.make_node("Col2Im", ["x", "img", "blk"], ["y"], name="c2i", strides=[8, 1])],
                   [("x", "float32", (1, 2, 4))], [("y", "float32")],
                   {"img": np.array([5, 4], np.int64), "blk": np.array([2, 1], np.int64)}, opset=18)
    compile_error(m, r"unsupported block_shape \[2, 1\] or dilations .* strides \[8, 1\] .* past image_shape \[5, 4\]")
