"""tools/model_tour.py without torch: a cached ONNX file with open dims is loaded on the emulator without shapes,
run at each shape and held against onnxruntime; a wrong or refused model is a row saying why, not a crash."""
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tools"))

import model_tour  # noqa: E402


def _no_torch():
    raise AssertionError("the tour exported although the ONNX file is cached")


def _tiny(path: Path) -> Path:
    """x[batch, seq, 8] @ w[8, 4] + tanh: a model with two open dims."""
    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Tanh", ["m"], ["y"])], "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", 4])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path


def _family(name="tiny"):
    return model_tour.Family(name, _no_torch, {"x": "float"}, {"x": {0: "batch", 1: "seq"}}, ["y"],
                             [{"x": (1, 3, 8)}, {"x": (2, 5, 8)}])


def test_compare_runs_each_shape_against_onnxruntime(tmp_path):
    rows = model_tour.compare(_family(), _tiny(tmp_path / "tiny.onnx"), "emu", None)
    assert [r.shapes for r in rows] == ["1x3x8", "2x5x8"]
    for r in rows:
        assert r.status == "pass", r
        assert 0 < r.scale <= 1 and r.ratio <= model_tour.TOLERANCE
        assert r.compile_s is not None and r.compile_s >= 0


def test_main_uses_the_cached_file_and_prints_the_table(tmp_path, monkeypatch, capsys):
    _tiny(tmp_path / "dynamo" / "tiny.onnx")
    monkeypatch.setattr(model_tour, "FAMILIES", [_family()])
    assert model_tour.main(["--cache", str(tmp_path), "--markdown", str(tmp_path / "t.md")]) == 0
    out = capsys.readouterr().out
    assert "| tiny | 1x3x8 |" in out and "| tiny | 2x5x8 |" in out and "| pass |" in out
    assert (tmp_path / "t.md").read_text().count("| pass |") == 2


def test_a_model_that_does_not_load_is_a_row_with_the_reason(tmp_path, monkeypatch, capsys):
    bad = tmp_path / "dynamo" / "tiny.onnx"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"not an onnx model")
    monkeypatch.setattr(model_tour, "FAMILIES", [_family()])
    assert model_tour.main(["--cache", str(tmp_path)]) == 1
    line = [x for x in capsys.readouterr().out.splitlines() if x.startswith("| tiny |")]
    assert len(line) == 1 and "(load)" in line[0] and "ModelFormatError" in line[0], line


def test_an_unknown_family_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as e:
        model_tour.main(["--only", "no_such_model"])
    assert e.value.code == 2
    assert "unknown family 'no_such_model'" in capsys.readouterr().err


def test_inputs_are_seeded_and_filled_as_the_family_says():
    fam = model_tour.Family("t", _no_torch, {"ids": "ids:7", "mask": "mask", "tt": "zeros", "f": "float"}, {},
                            [], [])
    shapes = {"ids": (2, 8), "mask": (2, 8), "tt": (2, 8), "f": (2, 3)}
    a = model_tour.make_inputs(fam, shapes, seed=1)
    b = model_tour.make_inputs(fam, shapes, seed=1)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert a["ids"].dtype == np.int64 and a["ids"].min() >= 0 and a["ids"].max() < 7
    assert a["mask"].tolist() == [[1] * 6 + [0] * 2] * 2
    assert not a["tt"].any() and a["f"].dtype == np.float32
