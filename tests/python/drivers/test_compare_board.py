"""The board workflow of docs/find-the-layer.md on the stand-in SDKs (run with ACCEL_TEST_DEVICE=bpu:0): a QDQ model
compiled for the BPU with its layers as outputs (as Horizon's toolchain dumps them: dequantized, float32), run on the
"board" with `accel run --save`; on the PC `accel compare model_qdq.onnx run.npz --int8 bpu` holds the emulator's
int8 tensors against the board's, layer by layer. The stand-in computes with the emulator's bpu rules, so every
layer must agree to the integer; onnxruntime's rules, compared with the same record, say how far a CI run on them
would be from the board."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import DEVICE_URI

from accel import cli, compiler, run_record

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from models import quantized

pytestmark = pytest.mark.vendor("bpu")


def layer_dump(model: onnx.ModelProto) -> dict:
    """{DequantizeLinear output: (scale, zero point)} of every activation the model quantizes at run time: what a
    board model compiled to output its layers gives."""
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    quantized_at_run_time = {n.output[0] for n in model.graph.node if n.op_type == "QuantizeLinear"}
    own = {o.name for o in model.graph.output}
    return {n.output[0]: (float(inits[n.input[1]]), int(inits[n.input[2]])) for n in model.graph.node
            if n.op_type == "DequantizeLinear" and n.input[0] in quantized_at_run_time and n.output[0] not in own}


def board_model(path: Path, folder: Path) -> Path:
    """`path` (a QDQ ONNX model) as the stand-in's BPU model file, its layers as int8 outputs with their scales."""
    import standin_toolchain

    model = onnx.load(str(path))
    dump = layer_dump(model)
    accm = compiler.compile_model(str(path), int8="bpu", extra_outputs=list(dump))
    spec = {"outputs": {name: {"type": "S8", "scale": [scale], "zero_point": [zero]}
                        for name, (scale, zero) in dump.items()}}
    suffix = standin_toolchain.suffix_for("bpu")
    tool = standin_toolchain.tool(suffix)
    target = folder / f"{path.stem}{suffix}"
    target.write_bytes(tool.pack([tool.accm_record(path.stem, accm, spec)]))
    return target


def test_a_board_run_compared_layer_by_layer(tmp_path, capsys):
    path = quantized.static_model("tiny_cnn", activation="int8", symmetric=True)
    board = board_model(path, tmp_path)
    (x,) = quantized.make_feeds("tiny_cnn").values()
    np.save(tmp_path / "x.npy", x)
    saved = tmp_path / "run.npz"
    assert cli.main(["run", "--device", DEVICE_URI, str(board), "--input", str(tmp_path / "x.npy"),
                     "--save", str(saved), "--save-intermediates"]) == 0, capsys.readouterr()
    record = run_record.load(saved)
    dump = layer_dump(onnx.load(str(path)))
    assert list(record.outputs)[1:] == list(dump) and all(record.outputs[n].dtype == np.int8 for n in dump)
    assert all(record.quant[n].scales == (dump[n][0],) for n in dump)
    capsys.readouterr()

    rows = {}
    for rules in ("bpu", "ort"):
        report = tmp_path / f"{rules}.json"
        assert cli.main(["compare", str(path), str(saved), "--int8", rules, "--json", str(report)]) == 0
        out = capsys.readouterr().out
        print(f"\n--int8 {rules}:\n{out}")
        rows[rules] = json.loads(report.read_text())
    # Every layer of the dump, and the model's output, compared.
    assert len(rows["bpu"]) == len(dump) + 1
    for row in rows["bpu"]:
        assert row["cosine"] > 0.99999 and row["differing"] in (0, None), row
        assert row["max_abs_error"] <= 1e-6, row
    differing = sum(r["differing"] or 0 for r in rows["ort"])
    print(f"onnxruntime's rules against the board: {differing} int8 elements differ over {len(rows['ort'])} tensors")
    assert all(r["cosine"] > 0.9 for r in rows["ort"])
