"""accel.compare and `accel compare`: two models on the same inputs, tensor by tensor. The figures on synthetic
arrays (per-axis dequantization, integers on the other side's grid, LSB counts, zero vectors, shapes); which
tensor stands for which in a QDQ graph; a float model against its QDQ model held against onnxruntime's own
intermediate values; a perturbed conv flagged first; a run record as B; JSON, plot and the command line."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from conftest import onnx_model, run_main
from onnx import helper, numpy_helper

import accel
from accel import cli, compiler
from accel.comparison import Comparison, Row, inputs, matching, metrics, quant_values, sides
from accel.comparison.compare_models import pair_rows
from accel.errors import InvalidArgumentError
from accel import Quantization, TensorInfo

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from models import ort_reference, quantized

pytestmark = pytest.mark.emulator

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def per_tensor(scale, zero=0):
    return Quantization("per_tensor", None, (float(scale),), (int(zero),), None)


def tensor(name, array, quant=None):
    return metrics.Tensor(name, [np.asarray(array)], quant)


# ---- the figures, on synthetic arrays ---------------------------------------------------------------------


def test_per_axis_dequantization():
    q = Quantization("per_axis", 1, (0.5, 2.0), (1, -1), None)
    ints = np.array([[[3], [0]], [[-1], [4]]], np.int8)  # shape (2, 2, 1): axis 1 has the two channels
    want = np.array([[[(3 - 1) * 0.5], [(0 + 1) * 2.0]], [[(-1 - 1) * 0.5], [(4 + 1) * 2.0]]])
    got = quant_values.dequantize(ints, q, "t")
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match=r"tensor 't'.*2 scales along axis 1"):
        quant_values.dequantize(np.zeros((2, 3), np.int8), q, "t")


def test_quantize_rounds_half_to_even_and_saturates():
    q = per_tensor(0.5, 10)
    values = np.array([0.25, 0.75, -0.25, 100.0, -100.0])  # 0.5, 1.5, -0.5 steps: to 0, 2, 0
    np.testing.assert_array_equal(quant_values.quantize(values, q, np.dtype(np.int8), "t"),
                                  [10, 12, 10, 127, -128])
    np.testing.assert_array_equal(quant_values.quantize(values, q, np.dtype(np.uint8), "t"), [10, 12, 10, 210, 0])


def test_lsb_counts_against_a_float_tensor():
    q = per_tensor(0.1, 0)
    real = np.array([0.0, 0.1, 0.2, 0.3, -0.5, 1.0], np.float32)
    ints = np.array([0, 1, 4, 3, -2, 10], np.int8)  # off by 2 steps at [2], 3 at [4]
    for a, b in ((tensor("f", real), tensor("q", ints, q)), (tensor("q", ints, q), tensor("f", real))):
        m = metrics.measure(a, b)
        assert (m.differing, m.max_lsb) == (2, 3)
        assert m.max_abs_error == pytest.approx(0.3, abs=1e-6)
        assert m.mean_abs_error == pytest.approx(0.5 / 6, abs=1e-6)


def test_lsb_counts_per_axis_on_the_quantized_sides_grid():
    q = Quantization("per_axis", 0, (1.0, 0.01), (0, 0), None)
    real = np.array([[1.0, 2.0], [0.05, 0.07]], np.float32)
    ints = np.array([[1, 2], [5, 9]], np.int8)  # row 1 is in steps of 0.01: 0.07 is 7, not 9
    m = metrics.measure(tensor("f", real), tensor("q", ints, q))
    assert (m.differing, m.max_lsb) == (1, 2)


def test_both_quantized_alike_compare_integers_and_else_on_bs_grid():
    q = per_tensor(0.5, 0)
    m = metrics.measure(tensor("a", np.array([1, 2, 3], np.int8), q), tensor("b", np.array([1, 5, 3], np.int8), q))
    assert (m.differing, m.max_lsb) == (1, 3)
    assert m.max_abs_error == 1.5
    # A in steps of 0.25 (its 2 is 0.5), B in steps of 0.5: A's values on B's grid are 0.5/0.5 = 1, 1.5/0.5 = 3.
    m = metrics.measure(tensor("a", np.array([2, 6], np.int8), per_tensor(0.25)),
                        tensor("b", np.array([1, 2], np.int8), q))
    assert (m.differing, m.max_lsb) == (1, 1)


def test_float_only_has_no_integer_figures():
    m = metrics.measure(tensor("a", np.array([1.0, 2.0])), tensor("b", np.array([1.0, 2.5])))
    assert m.differing is None and m.max_lsb is None
    assert m.cosine == pytest.approx((1 + 5) / (np.sqrt(5) * np.sqrt(7.25)))


def test_zero_vectors():
    zero, one = np.zeros(4, np.float32), np.ones(4, np.float32)
    assert metrics.measure(tensor("a", zero), tensor("b", zero)).cosine == 1.0
    assert metrics.measure(tensor("a", zero), tensor("b", one)).cosine == 0.0
    assert metrics.measure(tensor("a", one), tensor("b", zero)).cosine == 0.0
    assert metrics.cosine(-one.astype(np.float64), one.astype(np.float64)) == pytest.approx(-1.0)


def test_shapes_flattened_or_not_compared():
    m = metrics.measure(tensor("a", np.arange(6.0).reshape(2, 3)), tensor("b", np.arange(6.0).reshape(3, 2)))
    assert m.cosine == pytest.approx(1.0) and "flattened" in m.note
    m = metrics.measure(tensor("a", np.zeros((2, 3))), tensor("b", np.zeros(5)))
    assert m.cosine is None and m.max_abs_error is None and "shapes differ: (2, 3) against (5,)" in m.note


def test_several_input_sets_are_one_vector():
    a = metrics.Tensor("a", [np.array([1.0, 0.0]), np.array([0.0, 1.0])])
    b = metrics.Tensor("b", [np.array([1.0, 0.0]), np.array([0.0, -1.0])])
    assert metrics.measure(a, b).cosine == pytest.approx(0.0)  # (1 - 1) / 2
    assert metrics.measure(a, b).max_abs_error == 2.0


def test_sets_far_apart_in_magnitude_keep_an_exact_cosine():
    """The running sums scale each side by its largest value so far: squares of 1e200 do not overflow, and a
    set of tiny values after a huge one still counts."""
    a = metrics.Tensor("a", [np.array([1e200, 1e200]), np.array([1e-200, 0.0])])
    b = metrics.Tensor("b", [np.array([1e200, 1e200]), np.array([1e-200, 0.0])])
    assert metrics.measure(a, b).cosine == pytest.approx(1.0, abs=1e-15)
    assert metrics.cosine(np.array([1e200, 0.0]), np.array([1e200, 1e200])) == pytest.approx(2 ** -0.5)
    big_then_off = metrics.Tensor("c", [np.array([3.0, 0.0]), np.array([0.0, 4.0])])
    straight = metrics.Tensor("d", [np.array([3.0, 0.0]), np.array([0.0, -4.0])])
    assert metrics.measure(big_then_off, straight).cosine == pytest.approx((9 - 16) / 25)
    nan = metrics.Tensor("n", [np.array([1.0, 1.0]), np.array([np.nan, 1.0])])
    assert np.isnan(metrics.measure(nan, big_then_off).cosine)


# ---- which tensor stands for which ------------------------------------------------------------------------


def qdq_chain_model(path):
    """x -> Q -> DQ -> Relu (renamed y_QuantizeLinear_Input) -> Q -> DQ named y (the graph output), as
    onnxruntime's quantizer writes a graph output."""
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["x_q"]),
             helper.make_node("DequantizeLinear", ["x_q", "s", "z"], ["x_dq"]),
             helper.make_node("Relu", ["x_dq"], ["y_QuantizeLinear_Input"]),
             helper.make_node("QuantizeLinear", ["y_QuantizeLinear_Input", "s", "z"], ["y_q"]),
             helper.make_node("DequantizeLinear", ["y_q", "s", "z"], ["y"])]
    inits = {"s": np.array(0.1, np.float32), "z": np.array(0, np.int8)}
    onnx.save(onnx_model(nodes, [("x", np.float32, [1, 4])], [("y", np.float32)], inits), str(path))
    return path


def test_keys_follow_quantize_dequantize_chains(tmp_path):
    g = matching.graph_keys(qdq_chain_model(tmp_path / "chain.onnx"))
    assert {n: g.key(n) for n in ("x", "x_q", "x_dq")} == dict.fromkeys(("x", "x_q", "x_dq"), "x")
    assert {g.key(n) for n in ("y_QuantizeLinear_Input", "y_q", "y")} == {"y"}
    assert g.key("unknown") == "unknown"
    # Names no graph knows, in onnxruntime's quantizer's spelling: by the name they were made from.
    assert g.key("conv_QuantizeLinear_Output") == "conv" and g.key("conv_DequantizeLinear_Output") == "conv"
    assert g.positions["x"] < g.positions["x_q"] < g.positions["y_q"]


def test_rows_prefer_the_int8_tensor_and_follow_as_order(tmp_path):
    g = matching.graph_keys(qdq_chain_model(tmp_path / "chain.onnx"))
    q = per_tensor(0.1)
    a = sides.Side("A", [tensor("x", [[0.0, 0.1, 0.2, 0.3]]), tensor("y", [[0.0, 0.1, 0.2, 0.3]])], None)
    b = sides.Side("B", [tensor("x", [[0.0, 0.1, 0.2, 0.3]]), tensor("x_q", np.array([[0, 1, 2, 3]], np.int8), q),
                         tensor("y", [[0.0, 0.1, 0.2, 0.3]]), tensor("y_q", np.array([[0, 1, 2, 4]], np.int8), q)], g)
    rows = pair_rows(a, b, 0.99)
    assert [(r.tensor, r.tensor_b, r.key) for r in rows] == [("x", "x_q", "x"), ("y", "y_q", "y")]
    assert rows[0].differing == 0 and (rows[1].differing, rows[1].max_lsb) == (1, 1)
    assert rows[1].dtype_b == "int8"


def test_no_tensor_in_common_names_both_sides():
    a = sides.Side("model A (a.onnx)", [tensor("p", [1.0]), tensor("q", [1.0])], None)
    b = sides.Side("model B (b.onnx)", [tensor("r", [1.0])], None)
    with pytest.raises(ValueError, match=r"no tensor in common: A has p, q; B has r"):
        pair_rows(a, b, 0.99)


def test_comparison_flags_the_first_row_below():
    def row(name, cos):
        return Row(name, name, name, (2,), (2,), "float32", "int8", cos, 0.5, 0.25, 1, 2, cos < 0.9)

    c = Comparison([row("a", 0.99), row("b", 0.5), row("c", 0.2)], "a.onnx", "b.onnx", 0.9)
    assert len(c) == 3 and c[1].tensor == "b" and [r.tensor for r in c] == ["a", "b", "c"]
    assert c.first_below is c[1]
    lines = c.table().splitlines()
    assert lines[0].split()[:2] == ["#", "tensor"] and len(lines) == 4
    assert lines[2].endswith("<< first below") and lines[3].endswith("<") and not lines[1].endswith("<")
    assert "first tensor below cosine 0.9: b" in c.summary()
    assert Comparison([row("a", 0.99)], "a", "b", 0.9).first_below is None


def test_uri_with_int8():
    assert sides.uri_with_int8("emu", "bpu") == "emu:int8=bpu"
    assert sides.uri_with_int8("emu:cores=2,int8=ort", "dpu") == "emu:cores=2,int8=dpu"
    assert sides.uri_with_int8("bpu:0", None) == "bpu:0"
    with pytest.raises(ValueError, match="'bpu:0' is not the emulator"):
        sides.uri_with_int8("bpu:0", "bpu")
    with pytest.raises(ValueError, match="int8 must be one of ort, dpu, bpu"):
        sides.uri_with_int8("emu", "fast")


def test_given_inputs_by_name_and_order():
    infos = [TensorInfo("a", (2,), np.dtype(np.float32)), TensorInfo("b", (3,), np.dtype(np.float32))]
    x, y = np.zeros(2, np.float32), np.ones(3, np.float32)
    for given in ({"b": y, "a": x}, [x, y], [("b", y), x]):
        (feeds,) = inputs.given_sets(given, infos, "model A")
        assert list(feeds) == ["a", "b"] and feeds["a"] is x and feeds["b"] is y
    with pytest.raises(ValueError, match="input 'c' is not an input of model A: its inputs are a, b"):
        inputs.given_sets({"c": x}, infos, "model A")
    with pytest.raises(ValueError, match="no input given for 'b'"):
        inputs.given_sets([x], infos, "model A")


def test_random_inputs_are_seeded():
    infos = [TensorInfo("f", (3, 4), np.dtype(np.float32)), TensorInfo("q", (50,), np.dtype(np.int8))]
    one, two = list(inputs.random_sets(infos, 2, seed=5)), list(inputs.random_sets(infos, 2, seed=5))
    assert len(one) == 2 and all(np.array_equal(one[1][k], two[1][k]) for k in ("f", "q"))
    assert not np.array_equal(one[0]["f"], one[1]["f"])
    assert one[0]["f"].dtype == np.float32 and one[0]["f"].min() >= 0 and one[0]["f"].max() < 1
    assert one[0]["q"].dtype == np.int8 and one[0]["q"].min() < -64 and one[0]["q"].max() > 64


def test_plot_writes_a_png(tmp_path):
    rows = [Row(n, n, n, (2,), (2,), "float32", "float32", c, 0.0, 0.0, None, None, c < 0.9)
            for n, c in (("a", 1.0), ("b", 0.5))]
    path = tmp_path / "cos.png"
    Comparison(rows, "a", "b", 0.9).plot(path)
    assert path.read_bytes()[:8] == PNG_MAGIC


@pytest.mark.parametrize("count", [3, 41])  # 41: past the 40 the plot names, the axis shows numbers alone
def test_plot_numbers_tensors_as_the_table_does(tmp_path, monkeypatch, count):
    import matplotlib.figure

    cosines = [1.0] * count
    cosines[1] = 0.5
    rows = [Row(f"t{n}", f"t{n}", f"t{n}", (2,), (2,), "float32", "float32", c, 0.0, 0.0, None, None, c < 0.9)
            for n, c in enumerate(cosines)]
    comparison = Comparison(rows, "a", "b", 0.9)
    saved = []
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda figure, *_, **__: saved.append(figure))
    comparison.plot(tmp_path / "cos.png")
    (ax,) = saved[0].axes
    cosine_line, _threshold, first_mark = ax.lines
    assert list(cosine_line.get_xdata()) == list(range(1, count + 1))
    # The first below is row 2 in the table; the plot marks and names it there.
    assert re.search(r"^ *2 +t1 .*<< first below$", comparison.table(), re.M), comparison.table()
    assert list(first_mark.get_xdata()) == [2] and first_mark.get_label() == "first below: t1 (#2)"
    if count <= 40:
        assert list(ax.get_xticks()) == list(range(1, count + 1))


def test_plot_without_matplotlib_says_how_to_install_it(cnn_pair, tmp_path, monkeypatch, capsys):
    float_path, qdq_path, _ = cnn_pair
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    c = Comparison([], "a", "b", 0.9)
    with pytest.raises(ImportError, match=r"pip install accel\[plot\]"):
        c.plot(tmp_path / "cos.png")
    assert not (tmp_path / "cos.png").exists()
    code, out, err = run_main(capsys, "compare", float_path, qdq_path, "--plot", tmp_path / "cos.png")
    assert code == 1 and "accel compare: error: --plot: plotting a comparison needs matplotlib: pip install " \
                         "accel[plot]" in err and out == "", err


# ---- a float model against its QDQ model, held against onnxruntime -----------------------------------------


@pytest.fixture(scope="module")
def cnn_pair(tmp_path_factory):
    """(float tiny_cnn at its test shape, its QDQ model (int8, symmetric, quantized with onnxruntime's
    quantize_static), the test input by name)."""
    folder = tmp_path_factory.mktemp("compare")
    float_path = folder / "tiny_cnn.onnx"
    onnx.save(quantized.float_model("tiny_cnn"), str(float_path))
    qdq_path = quantized.static_model("tiny_cnn", activation="int8", symmetric=True)
    return float_path, qdq_path, quantized.make_feeds("tiny_cnn")


def ort_values(path, feeds, names):
    """onnxruntime's values of tensors `names` of the model at `path` (made graph outputs)."""
    m = onnx.load(str(path))
    have = {o.name for o in m.graph.output}
    m.graph.output.extend(helper.make_empty_tensor_value_info(n) for n in names if n not in have)
    sess = ort.InferenceSession(m.SerializeToString(), ort_reference.session_options(m),
                                providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


def ort_real(path, name, value):
    """`value` of tensor `name` as real numbers: dequantized with its QuantizeLinear's scale and zero point."""
    m = onnx.load(str(path))
    init = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    q = next((n for n in m.graph.node if n.op_type == "QuantizeLinear" and n.output[0] == name), None)
    if q is None:
        return value.astype(np.float64)
    scale, zero = float(init[q.input[1]]), int(init[q.input[2]])
    return (value.astype(np.float64) - zero) * scale


def simple_cosine(a, b):
    a, b = a.reshape(-1), b.reshape(-1)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_float_against_qdq_agrees_with_onnxruntime(cnn_pair):
    float_path, qdq_path, feeds = cnn_pair
    c = accel.compare(float_path, qdq_path, feeds)
    assert len(c) >= 12 and c[0].tensor == "image" and c[-1].tensor == "probabilities"
    assert all(r.dtype_b == "int8" and r.dtype_a == "float32" for r in c)
    ref_a = {**feeds, **ort_values(float_path, feeds, [r.tensor for r in c])}
    ref_b = ort_values(qdq_path, feeds, [r.tensor_b for r in c])
    for r in c:
        a = ref_a[r.tensor].astype(np.float64)
        b = ort_real(qdq_path, r.tensor_b, ref_b[r.tensor_b])
        err = np.abs(a - b)
        assert r.cosine == pytest.approx(simple_cosine(a, b), abs=0.01), r.tensor
        assert r.max_abs_error == pytest.approx(float(err.max()), abs=1e-4), r.tensor
        assert r.mean_abs_error == pytest.approx(float(err.mean()), abs=1e-4), r.tensor
        assert r.differing is not None and r.max_lsb is not None and r.max_lsb <= 8, r.tensor


def test_one_model_on_two_devices(cnn_pair):
    """The QDQ model under onnxruntime's rules against the BPU's: every int8 tensor, integer by integer, as the two
    devices' own extra outputs say; against itself, nothing differs."""
    _, qdq_path, feeds = cnn_pair
    c = accel.compare(qdq_path, qdq_path, feeds, device="emu:int8=ort", device_b="emu:int8=bpu")
    assert len(c) >= 12 and all(r.tensor == r.tensor_b for r in c)
    values = {}
    for rules in ("ort", "bpu"):
        with accel.open(f"emu:int8={rules}") as dev:
            m = dev.load(qdq_path, extra_outputs="all")
            values[rules] = dict(zip([o.name for o in m.outputs], m.run(feeds)))
    for r in c:
        a, b = values["ort"][r.tensor], values["bpu"][r.tensor]
        if a.dtype == np.int8:
            steps = np.abs(a.astype(np.int64) - b)
            assert (r.differing, r.max_lsb) == (int(np.count_nonzero(steps)), int(steps.max())), r
    print(f"\nort against bpu rules: {sum(r.differing or 0 for r in c)} int8 elements differ over {len(c)} tensors")
    same = accel.compare(qdq_path, qdq_path, feeds, int8="bpu")
    assert all(r.cosine == pytest.approx(1.0, abs=1e-9) and r.max_abs_error == 0.0 and r.differing in (0, None)
               for r in same)


def test_a_perturbed_conv_is_flagged_first(cnn_pair, tmp_path):
    float_path, qdq_path, feeds = cnn_pair
    assert accel.compare(float_path, qdq_path, feeds).first_below is None
    m = onnx.load(str(qdq_path))
    (w,) = (i for i in m.graph.initializer if i.name == "ConvBnFusion_W_pw.weight_quantized")
    weights = numpy_helper.to_array(w)
    w.CopyFrom(numpy_helper.from_array(np.clip(-weights.astype(np.int16), -127, 127).astype(np.int8), w.name))
    broken = tmp_path / "broken.onnx"
    onnx.save(m, str(broken))
    c = accel.compare(float_path, broken, feeds)
    first = c.first_below
    assert first is not None and first.key == "pw_bn" and first.tensor_b == "pw_bn_QuantizeLinear_Output"
    assert first.cosine < 0 and first.differing > first.shape[1]


def test_random_sets_and_int8_rules(cnn_pair):
    float_path, qdq_path, _ = cnn_pair
    one = accel.compare(float_path, qdq_path, random=2, seed=3, int8="bpu")
    again = accel.compare(float_path, qdq_path, random=2, seed=3, device="emu:cores=1,int8=ort", int8="bpu")
    assert [r.as_dict() for r in one] == [r.as_dict() for r in again]
    other = accel.compare(float_path, qdq_path, random=1, seed=3, int8="bpu")
    assert [r.cosine for r in one] != [r.cosine for r in other]
    with pytest.raises(ValueError, match="not the emulator"):
        accel.compare(float_path, qdq_path, int8="bpu", device="bpu:0")


def test_a_run_record_as_b(cnn_pair, tmp_path, capsys):
    float_path, qdq_path, feeds = cnn_pair
    x = tmp_path / "x.npy"
    np.save(x, feeds["image"])
    run = tmp_path / "run.npz"
    assert cli.main(["run", str(qdq_path), "--input", str(x), "--save", str(run), "--save-intermediates"]) == 0
    capsys.readouterr()
    from_record = accel.compare(float_path, run)  # the record's inputs are A's
    from_model = accel.compare(float_path, qdq_path, feeds)
    assert [r.as_dict() for r in from_record] == [r.as_dict() for r in from_model]
    # The board's workflow: the QDQ model on the emulator against a run saved elsewhere (here: the same rules).
    same = accel.compare(qdq_path, run)
    assert len(same) >= len(from_model) and all(r.differing == 0 and r.cosine == pytest.approx(1.0) for r in same)
    with pytest.raises(ValueError, match="random inputs cannot be held against"):
        accel.compare(float_path, run, random=1)


def test_a_compiled_model_gives_its_outputs(cnn_pair, tmp_path):
    float_path, qdq_path, feeds = cnn_pair
    accm = tmp_path / "tiny_cnn.accm"
    accm.write_bytes(compiler.compile_model(str(float_path)))
    c = accel.compare(accm, qdq_path, feeds)
    # Its input and its output, matched by name to the QDQ model's int8 tensors.
    assert [(r.tensor, r.tensor_b) for r in c] == [("image", "image_QuantizeLinear_Output"),
                                                   ("probabilities", "probabilities_QuantizeLinear_Output")]
    with_graph = {r.tensor: r for r in accel.compare(float_path, qdq_path, feeds)}
    for r in c:
        assert r.cosine == pytest.approx(with_graph[r.tensor].cosine, abs=1e-6)
        assert r.differing == with_graph[r.tensor].differing


def test_errors(cnn_pair, tmp_path):
    float_path, qdq_path, feeds = cnn_pair
    with pytest.raises(ValueError, match=r"input 'picture' is not an input of model A .*: its inputs are image"):
        accel.compare(float_path, qdq_path, {"picture": feeds["image"]})
    with pytest.raises(ValueError, match=r"model B 'x\.txt': unsupported file type '\.txt'"):
        accel.compare(float_path, "x.txt")
    with pytest.raises(FileNotFoundError, match=r"nope\.onnx"):
        accel.compare(float_path, tmp_path / "nope.onnx")
    with pytest.raises(ValueError, match="inputs or random, not both"):
        accel.compare(float_path, qdq_path, feeds, random=2)


def test_random_sets_are_made_run_and_dropped_one_at_a_time(tmp_path):
    """--random N keeps one set at a time: the peak of traced memory over 24 sets is about that of one (it was
    24 sets of every tensor of both sides)."""
    import tracemalloc

    path = tmp_path / "wide.onnx"
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Neg", ["r"], ["n"]),
             helper.make_node("Abs", ["n"], ["y"])]
    onnx.save(onnx_model(nodes, [("x", np.float32, [1, 1 << 16])], [("y", np.float32)]), str(path))
    accel.compare(path, path, random=1)  # compiled and cached before measuring

    def peak(count):
        tracemalloc.start()
        try:
            c = accel.compare(path, path, random=count)
            return tracemalloc.get_traced_memory()[1], c
        finally:
            tracemalloc.stop()

    one, _ = peak(1)
    many, c = peak(24)
    assert len(c) == 4 and all(r.cosine == pytest.approx(1.0) and r.max_abs_error == 0.0 for r in c)
    assert many < 1.5 * one + (1 << 20), (one, many)


def test_bad_numbers_are_refused_by_name(cnn_pair):
    float_path, qdq_path, feeds = cnn_pair
    for kwargs, words in [({"threshold": float("nan")}, "threshold must be a number in [-1, 1]"),
                          ({"threshold": float("inf")}, "threshold must be a number in [-1, 1]"),
                          ({"threshold": 1.5}, "threshold must be a number in [-1, 1]"),
                          ({"threshold": "0.9"}, "threshold must be a number in [-1, 1]"),
                          ({"random": 0}, "random must be an integer >= 1"),
                          ({"random": 2.5}, "random must be an integer >= 1"),
                          ({"random": True}, "random must be an integer >= 1"),
                          ({"seed": -1}, "seed must be an integer >= 0")]:
        with pytest.raises(InvalidArgumentError, match=re.escape(words)):
            accel.compare(float_path, qdq_path, **kwargs)
    assert accel.compare(float_path, qdq_path, feeds, threshold=-1).first_below is None


@pytest.mark.parametrize("option, value, words", [
    ("--threshold", "nan", "expected a number in [-1, 1], got 'nan'"),
    ("--threshold", "inf", "expected a number in [-1, 1], got 'inf'"),
    ("--threshold", "-1e999", "expected a number in [-1, 1], got '-1e999'"),
    ("--threshold", "1.01", "expected a number in [-1, 1], got '1.01'"),
    ("--threshold", "high", "expected a number in [-1, 1], got 'high'"),
    ("--random", "0", "expected an integer >= 1, got '0'"),
    ("--random", "-5", "expected an integer >= 1, got '-5'"),
    ("--random", "1e3", "expected an integer >= 1, got '1e3'"),
    ("--random", "nan", "expected an integer >= 1, got 'nan'"),
    ("--seed", "-1", "expected an integer >= 0, got '-1'"),
    ("--seed", "inf", "expected an integer >= 0, got 'inf'"),
])
def test_cli_refuses_bad_numbers_naming_the_option(cnn_pair, capsys, option, value, words):
    float_path, qdq_path, _ = cnn_pair
    code, out, err = run_main(capsys, "compare", float_path, qdq_path, f"{option}={value}")
    assert code == 2 and f"argument {option}: {words}" in err and not out, err


def test_cli_refuses_a_picture_input_naming_it(cnn_pair, tmp_path, capsys):
    """A picture's frame depends on each side's image input, which compare does not set: a usage error, not a
    failure inside a run ("expected dtype float32, got object")."""
    from PIL import Image  # the test extra's matplotlib brings Pillow

    float_path, qdq_path, _ = cnn_pair
    picture = tmp_path / "photo.png"
    Image.new("RGB", (8, 8)).save(picture)
    code, out, err = run_main(capsys, "compare", float_path, qdq_path, "--input", f"image={picture}")
    assert code == 2 and not out, err
    assert f"--input 'image={picture}': accel compare takes .npy arrays, not pictures" in err, err


# ---- the command line -------------------------------------------------------------------------------------


def test_cli_table_json_and_plot(cnn_pair, tmp_path, capsys):
    float_path, qdq_path, feeds = cnn_pair
    x = tmp_path / "x.npy"
    np.save(x, feeds["image"])
    js, png = tmp_path / "rows.json", tmp_path / "cos.png"
    code, out, err = run_main(capsys, "compare", float_path, qdq_path, "--input", f"image={x}", "--json", js,
                              "--plot", png, "--threshold", "0.9995")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["#", "tensor", "shape"] and "<< first below" in out
    rows = json.loads(js.read_text())
    assert all({"tensor", "cosine", "max_abs_error"} <= set(r) for r in rows) and len(rows) >= 12
    first = next(r for r in rows if r["cosine"] < 0.9995)
    assert first["below_threshold"] and not any(r["below_threshold"] for r in rows[:rows.index(first)])
    assert lines[-1].startswith(f"first tensor below cosine 0.9995: {first['tensor']} (")
    assert png.read_bytes()[:8] == PNG_MAGIC
    code, out, err = run_main(capsys, "compare", float_path, qdq_path, "--input", x, "--threshold", "0.5")
    assert code == 0 and out.splitlines()[-1].startswith("no tensor below cosine 0.5"), err


def test_cli_errors(cnn_pair, tmp_path, capsys):
    float_path, qdq_path, feeds = cnn_pair
    x = tmp_path / "x.npy"
    np.save(x, feeds["image"])
    code, _, err = run_main(capsys, "compare", float_path, qdq_path, "--input", f"picture={x}")
    assert code == 1 and "accel compare: error: input 'picture' is not an input of model A" in err, err
    assert "Traceback" not in err
    # Two models with no tensor in common: their inputs are paired by position.
    a, b = tmp_path / "a.onnx", tmp_path / "b.onnx"
    f32 = np.float32
    onnx.save(onnx_model([helper.make_node("Relu", ["x"], ["y"])], [("x", f32, [1, 4])], [("y", f32)]), str(a))
    onnx.save(onnx_model([helper.make_node("Neg", ["p"], ["q"])], [("p", f32, [1, 4])], [("q", f32)]), str(b))
    code, _, err = run_main(capsys, "compare", a, b)
    assert code == 1 and "have no tensor in common: A has x, y; B has p, q" in err, err
    code, _, err = run_main(capsys, "compare", float_path, qdq_path, "--int8", "bpu", "--device", "bpu:0")
    assert code == 1 and "not the emulator" in err, err
    code, _, err = run_main(capsys, "compare", float_path, qdq_path, "--input", x, "--random", "2")
    assert code == 2 and "give --input or --random, not both" in err, err
    code, _, err = run_main(capsys, "compare", float_path, tmp_path / "missing.onnx")
    assert code == 2 and "no such file" in err, err
