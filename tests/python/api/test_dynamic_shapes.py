"""Models whose input dims are set at run time (issue 36, item 1): an ONNX model with symbolic dims loads at once,
shows them (TensorInfo.shape -1, TensorInfo.symbols), compiles once per set of input shapes the runs bring (run,
run_async, run_batch with mixed shapes, imap) and gives onnxruntime's numbers at each; shape buckets (shapes= and
pad=True) pad a run up to a compiled shape and cut the outputs back; every misuse is refused naming the input, the
dim or the option. A real model from PyPI with an open batch and width (PP-OCR's recognizer) against onnxruntime."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import accel
from accel.runtime import dynamic_model

pytestmark = pytest.mark.emulator

W = np.random.default_rng(0).standard_normal((16, 8)).astype(np.float32)


def _save(tmp_path, nodes, inputs, outputs, inits=(), name="net"):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    path = tmp_path / f"{name}.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


@pytest.fixture
def mlp(tmp_path):
    """x [batch, 16] -> relu(x @ W) [batch, 8]."""
    return _save(tmp_path, [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Relu", ["m"], ["y"])],
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8])],
                 [numpy_helper.from_array(W, "w")], "mlp")


@pytest.fixture
def two_inputs(tmp_path):
    """a [n, 4] + b [n, 4] -> y [n, 4], z = a * b; and c [k] -> c2 = c + c (a symbol of its own)."""
    f = TensorProto.FLOAT
    return _save(tmp_path, [helper.make_node("Add", ["a", "b"], ["y"]), helper.make_node("Mul", ["a", "b"], ["z"]),
                            helper.make_node("Add", ["c", "c"], ["c2"])],
                 [helper.make_tensor_value_info("a", f, ["n", 4]), helper.make_tensor_value_info("b", f, ["n", 4]),
                  helper.make_tensor_value_info("c", f, ["k"])],
                 [helper.make_tensor_value_info(o, f, ["n", 4]) for o in ("y", "z")]
                 + [helper.make_tensor_value_info("c2", f, ["k"])], name="two")


@pytest.fixture(scope="module")
def emu():
    with accel.open("emu:cores=1") as d:
        yield d


def ort_run(path, feeds):
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)


def x_of(batch, seed=0):
    return np.random.default_rng(seed).standard_normal((batch, 16)).astype(np.float32)


def test_loads_at_once_shows_its_open_dims_and_compiles_per_shape(emu, mlp):
    model = emu.load(str(mlp))
    assert isinstance(model, accel.Model)
    (x,), (y,) = model.inputs, model.outputs
    assert (x.name, x.shape, x.symbols, x.dtype) == ("x", (-1, 16), ("batch", None), np.float32)
    assert (y.shape, y.symbols) == ((-1, 8), ("batch", None))
    assert str(x) == "x: float32[batch, 16]" and "shapes set at run time" in repr(model)
    assert model.compiled == []
    for batch in (1, 3, 3, 5, 1):
        (got,) = model.run(x_of(batch, batch))
        (want,) = ort_run(mlp, {"x": x_of(batch, batch)})
        assert got.shape == (batch, 8)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    compiled = model.compiled
    assert [c.shapes for c in compiled] == [{"x": (1, 16)}, {"x": (3, 16)}, {"x": (5, 16)}]
    assert [c.runs for c in compiled] == [2, 2, 1] and all(c.seconds >= 0 and c.padded == 0 for c in compiled)
    special = model.specialize({"x": (3, 16)})
    assert special.inputs[0].shape == (3, 16) and special.inputs[0].symbols is None
    assert len(model.compiled) == 3  # the same shape: no new compile


def test_async_batch_and_imap_with_mixed_shapes(emu, mlp):
    model = emu.load(str(mlp))
    sizes = [2, 4, 2, 1, 4]
    want = [ort_run(mlp, {"x": x_of(b, i)})[0] for i, b in enumerate(sizes)]
    got = model.run_async(x_of(2, 0)).result(timeout=60)[0]
    np.testing.assert_allclose(got, want[0], rtol=1e-5, atol=1e-6)
    batch = model.run_batch([x_of(b, i) for i, b in enumerate(sizes)])
    streamed = list(model.imap(iter([{"x": x_of(b, i)} for i, b in enumerate(sizes)]), jobs=2))
    for results in (batch, streamed):
        assert [r[0].shape[0] for r in results] == sizes  # in item order
        for (g,), w in zip(results, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert sorted(c.shapes["x"][0] for c in model.compiled) == [1, 2, 4]


def test_one_value_per_symbol_and_the_fixed_dims_are_checked(emu, two_inputs):
    model = emu.load(str(two_inputs))
    a, b, c = (np.ones(s, np.float32) for s in ((3, 4), (3, 4), (7,)))
    y, z, c2 = model.run({"a": a, "b": 2 * b, "c": c})
    assert y.shape == (3, 4) and np.all(y == 3) and np.all(z == 2) and c2.shape == (7,) and np.all(c2 == 2)
    with pytest.raises(accel.ShapeError, match=r"dim 'n' is 3 in input 'a' and 2 in input 'b': one run gives it one "
                                               r"value"):
        model.run([a, np.ones((2, 4), np.float32), c])
    with pytest.raises(accel.ShapeError, match=r"input 'a' has shape \(n, 4\), got \(3, 5\): dim 1 must be 4"):
        model.run([np.ones((3, 5), np.float32), np.ones((3, 5), np.float32), c])
    with pytest.raises(accel.ShapeError, match=r"input 'c' has 1 dims \(k\), got shape \(2, 2\)"):
        model.run([a, b, np.ones((2, 2), np.float32)])
    with pytest.raises(accel.InvalidArgumentError, match=r"model 'two' has no input 'd'"):
        model.run({"a": a, "b": b, "c": c, "d": c})
    with pytest.raises(accel.DTypeError):  # the shape-specific model's own checks still hold
        model.run([a.astype(np.float64), b, c])
    assert len(model.compiled) == 1


def test_input_shapes_fix_some_inputs_and_leave_the_others_open(emu, two_inputs):
    model = emu.load(str(two_inputs), input_shapes={"c": (5,)})
    assert [t.shape for t in model.inputs] == [(-1, 4), (-1, 4), (5,)]
    y, _, c2 = model.run([np.ones((6, 4), np.float32), np.ones((6, 4), np.float32), np.ones(5, np.float32)])
    assert y.shape == (6, 4) and c2.shape == (5,)
    with pytest.raises(accel.ShapeError, match=r"input 'c' has shape \(5\), got \(4,\): dim 0 must be 5"):
        model.run([np.ones((6, 4), np.float32), np.ones((6, 4), np.float32), np.ones(4, np.float32)])


def test_shape_buckets_pad_and_cut_back(emu, mlp):
    model = emu.load(str(mlp), shapes=[{"x": (4, 16)}, {"x": (8, 16)}], pad=True)
    assert [c.shapes["x"] for c in model.compiled] == [(4, 16), (8, 16)]  # compiled at load
    for batch, bucket in ((3, 4), (4, 4), (5, 8), (8, 8), (1, 4)):
        (got,) = model.run(x_of(batch, batch))
        (want,) = ort_run(mlp, {"x": x_of(batch, batch)})
        assert got.shape == (batch, 8), (batch, bucket)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    (late,) = model.run_async(x_of(6, 6)).result(timeout=60)
    np.testing.assert_allclose(late, ort_run(mlp, {"x": x_of(6, 6)})[0], rtol=1e-5, atol=1e-6)
    counts = {c.shapes["x"][0]: (c.runs, c.padded) for c in model.compiled}
    assert counts == {4: (1, 2), 8: (1, 2)} and len(model.compiled) == 2  # nothing else compiled
    with pytest.raises(accel.ShapeError, match=r"no compiled shape holds x: \[9, 16\] \(the shapes: x: \[4, 16\]; "
                                               r"x: \[8, 16\]\)"):
        model.run(x_of(9))
    out = model.specialize({"x": (4, 16)})
    with pytest.raises(accel.InvalidArgumentError, match="outputs given to a run padded from x: \\[3, 16\\] up to "
                                                         "x: \\[4, 16\\]"):
        model.run(x_of(3), [emu.empty(out.outputs[0].shape)])


def test_what_the_bucket_options_refuse(emu, mlp, tmp_path, tiny_path):
    with pytest.raises(accel.InvalidArgumentError, match=r"pad=True pads a run up to one of the shapes given with "
                                                         r"shapes=: give them"):
        emu.load(str(mlp), pad=True)
    with pytest.raises(accel.InvalidArgumentError, match=r"shapes= lists the shapes to compile a model whose input "
                                                         r"dims are set at run time; .* are fixed: x \[1, 16\]"):
        emu.load(str(tiny_path), shapes=[{"x": (1, 16)}])
    with pytest.raises(TypeError, match="shapes must be a list of dicts"):
        emu.load(str(mlp), shapes={"x": (4, 16)})
    with pytest.raises(accel.ShapeError, match=r"input 'x' has shape \(batch, 16\), got \(4, 15\)"):
        emu.load(str(mlp), shapes=[{"x": (4, 15)}])
    # An output dim computed from the inputs (a Flatten of [n, m] is [n * m]) cannot be cut back.
    flat = _save(tmp_path, [helper.make_node("Flatten", ["x"], ["y"], axis=0)],
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", "m"])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, None])], name="flat")
    with pytest.raises(accel.InvalidArgumentError, match=r"pad=True cannot cut output 'y' back: its dim 1 .*is not "
                                                         r"one of the inputs' dims \(m, n\), so padding would"):
        emu.load(str(flat), shapes=[{"x": (2, 2)}], pad=True)
    (y,) = emu.load(str(flat)).run(np.ones((2, 3), np.float32))  # compiled per shape, it runs
    assert y.shape == (1, 6)


def test_fixed_shape_requests_still_need_input_shapes(emu, mlp):
    with pytest.raises(accel.InvalidArgumentError, match="input_shapes"):
        emu.load(str(mlp), extra_outputs=["m"])


def test_only_the_last_shapes_stay_loaded(emu, mlp, monkeypatch):
    monkeypatch.setattr(dynamic_model, "MAX_SHAPES", 2)
    model = emu.load(str(mlp))
    for batch in (1, 2, 3, 1):
        (got,) = model.run(x_of(batch))
        assert got.shape == (batch, 8)
    assert len(model._loaded) == 2 and [c.shapes["x"][0] for c in model.compiled] == [1, 2, 3]
    assert model.compiled[0].runs == 2


def test_a_real_model_with_an_open_batch_and_width(emu):
    """PP-OCR's recognizer (PyPI's rapidocr-onnxruntime): batch and width open in the file. Loaded as it is, two
    widths and two batch sizes, each within 1e-4 of onnxruntime's largest output."""
    from accel.models import ppocr

    path = ppocr.fetch("ppocr_rec")
    model = emu.load(str(path))
    assert model.inputs[0].shape == (-1, 3, 48, -1) or model.inputs[0].shape[0] == -1
    for batch, width in ((1, 160), (2, 320)):
        x = np.random.default_rng(width).random((batch, 3, 48, width), np.float32)
        (got,) = model.run(x)
        (want,) = ort_run(path, {"x": x})
        err, bound = float(np.abs(got - want).max()), 1e-4 * float(np.abs(want).max())
        print(f"\nppocr_rec {batch}x3x48x{width}: max error {err:.3g} (bound {bound:.3g}), compiled in "
              f"{model.compiled[-1].seconds:.2f} s")
        assert got.shape == want.shape and err <= bound


def _if_on_rate(tmp_path):
    """y = x * 2 where sr == 16000, else x * 3: an If deciding on an input's value (as silero VAD's sample rate)."""
    f = TensorProto.FLOAT
    two, three = (numpy_helper.from_array(np.float32(v), n) for v, n in ((2, "two"), (3, "three")))
    then = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["a"])], "then", [],
                             [helper.make_tensor_value_info("a", f, None)])
    other = helper.make_graph([helper.make_node("Mul", ["x", "three"], ["b"])], "else", [],
                              [helper.make_tensor_value_info("b", f, None)])
    nodes = [helper.make_node("Equal", ["sr", "rate16k"], ["is16k"]),
             helper.make_node("If", ["is16k"], ["y"], then_branch=then, else_branch=other)]
    return _save(tmp_path, nodes, [helper.make_tensor_value_info("x", f, ["n"]),
                                   helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
                 [helper.make_tensor_value_info("y", f, ["n"])],
                 [two, three, numpy_helper.from_array(np.int64(16000), "rate16k")], name="rate")


def test_an_if_deciding_on_an_input_compiles_per_value_of_it(emu, tmp_path):
    model = emu.load(str(_if_on_rate(tmp_path)))
    x = np.arange(4, dtype=np.float32)
    for sr, factor in ((16000, 2), (8000, 3), (16000, 2)):
        (y,) = model.run({"x": x, "sr": np.array(sr, np.int64)})
        np.testing.assert_array_equal(y, x * factor)
    assert model.value_inputs == ["sr"]
    assert [(c.values, c.runs) for c in model.compiled] == [({"sr": 16000}, 2), ({"sr": 8000}, 1)]
    (y,) = model.run_async([x[:2], np.array(8000, np.int64)]).result(timeout=60)
    np.testing.assert_array_equal(y, x[:2] * 3)
    exact = model.specialize({"x": (4,), "sr": ()}, values={"sr": 8000})
    assert [t.name for t in exact.inputs] == ["x"]
    with pytest.raises(accel.InvalidArgumentError, match=r"compiled per value of 'sr': give values="):
        model.specialize({"x": (4,), "sr": ()})


def test_silero_vad_as_shipped_runs_its_if_on_the_sample_rate(emu):
    """silero VAD's model as its PyPI wheel ships it (silero-vad 6.2.3): input [?, ?], state [2, ?, 128] and sr, an
    If on sr at the top. Each sample rate compiles the branch it takes; both against onnxruntime."""
    from accel.models import ppocr

    path = ppocr.fetch("silero_vad")
    model = emu.load(str(path))
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    for sr, frame in ((16000, 512), (8000, 256)):
        state = np.zeros((2, 1, 128), np.float32)
        for step in range(3):  # the state carried from chunk to chunk, as the VAD runs
            feed = {"input": (rng.standard_normal((1, frame)) * 0.1).astype(np.float32), "state": state,
                    "sr": np.array(sr, np.int64)}
            got, want = model.run(feed), session.run(None, feed)
            for g, w in zip(got, want):
                err = float(np.abs(g - w).max())
                assert g.shape == w.shape and err <= 1e-4 * max(float(np.abs(w).max()), 1e-3), (sr, step, err)
            state = want[1]
        print(f"\nsilero_vad at {sr} Hz: 3 chunks within {err:.2g} of onnxruntime")
    assert model.value_inputs == ["sr"] and len(model.compiled) == 2
