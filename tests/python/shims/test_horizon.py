"""Horizon's Python APIs under ``accel shim horizon`` (issue 35): scripts written as RDK's samples are
(horizon_scripts.py) run unchanged in a subprocess through ``python -m accel.shims horizon -- python script.py``
(the real hobot_dnn and hbm_runtime are not installed here) and give exactly what accel's own API gives for the
same model and input; bad uses give the errors docs/shims/horizon.md lists.

Models: the stand-in packer's .bin files (Horizon's real container, tests/standin/hbdnn/tools/make_bin.py) of the
bundled tiny_cnn: QDQ int8 with an NV12 input and hb_mapper's mean and scale, float with an RGB input, float with a
featuremap input; an .hbm (S100's, not readable on the emulator) with its calibrated ONNX beside it; a two-input
ONNX.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import accel
import accel.image as image

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # tests/: models
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/python: standin_toolchain
sys.path.insert(0, str(Path(__file__).resolve().parent))       # horizon_scripts
import horizon_scripts as scripts
from models import quantized
from standin_toolchain import tool

MEAN = (123.675, 116.28, 103.53)
SCALE = (1 / 58.395, 1 / 57.12, 1 / 57.375)
H = W = 64
DEVICE = "emu:int8=bpu"   # what the launcher opens for horizon by default
CNN = Path(accel.__file__).parent / "models" / "tiny_cnn.onnx"


def _two_io(path: Path) -> None:
    f = TensorProto.FLOAT
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["y"]), helper.make_node("Mul", ["a", "b"], ["z"])], "two_io",
        [helper.make_tensor_value_info(n, f, [1, 4]) for n in ("a", "b")],
        [helper.make_tensor_value_info(n, f, [1, 4]) for n in ("y", "z")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("horizon_shim")
    make_bin, make_hbm = tool(".bin"), tool(".hbm")
    qdq = folder / "qdq.onnx"
    qdq.write_bytes(Path(quantized.static_model("tiny_cnn", activation="int8", symmetric=True)).read_bytes())
    cnn = folder / "tiny_cnn.onnx"
    shutil.copy(CNN, cnn)
    nv12 = {"type": "NV12", "to": "rgb", "mean": list(MEAN), "scale": list(SCALE)}
    made = {"nv12_bin": (qdq, {"inputs": {"image": nv12}}),
            "rgb_bin": (cnn, {"inputs": {"image": {"type": "RGB", "to": "rgb", "mean": list(MEAN),
                                                   "scale": list(SCALE)}}}),
            "fm_bin": (cnn, {})}
    out = {"qdq": qdq, "cnn_onnx": cnn}
    for key, (source, spec) in made.items():
        path = folder / f"{key}.bin"
        path.write_bytes(make_bin.pack([make_bin.model_record(source, spec)]))
        out[key] = path
    # hb_mapper's calibrated model beside the .bin: the source taken when the launcher names none.
    shutil.copy(qdq, folder / "nv12_bin_calibrated_model.onnx")
    shutil.copy(cnn, folder / "fm_bin_calibrated_model.onnx")
    out["hbm"] = folder / "cnn.hbm"
    out["hbm"].write_bytes(make_hbm.pack([make_hbm.model_record(cnn, {})]))
    shutil.copy(cnn, folder / "cnn_calibrated_model.onnx")
    out["two_io"] = folder / "two_io.onnx"
    _two_io(out["two_io"])
    lonely = tmp_path_factory.mktemp("lonely")   # files with no ONNX beside them
    out["lonely_bin"] = lonely / "fm_bin.bin"
    shutil.copy(out["fm_bin"], out["lonely_bin"])
    out["lonely_hbm"] = lonely / "cnn.hbm"
    shutil.copy(out["hbm"], out["lonely_hbm"])
    return out


def shim(tmp_path: Path, script: str, *args, source=None, device=None, compare=None) -> dict:
    """Runs ``script`` under the launcher (``compare``: with --compare, the rows written there); returns its JSON
    report (stderr is kept in the failure message)."""
    path = tmp_path / "app.py"
    path.write_text(script)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACCEL_SHIM_")}
    options = [*(["--source", str(source)] if source else []), *(["--device", device] if device else []),
               *(["--compare", "--compare-json", str(compare)] if compare else [])]
    command = [sys.executable, "-m", "accel.shims", "horizon", *options,
               "--", sys.executable, str(path), *map(str, args)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900)
    assert done.returncode == 0, f"exit {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    report = json.loads(done.stdout.strip().splitlines()[-1])
    report["_stderr"] = done.stderr
    return report


def picture(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (H, W, 3), dtype=np.uint8)


def test_pyeasy_dnn_nv12_frame_as_accel(files, tmp_path):
    """The X5 sample pattern on the NV12 .bin, its source named to the launcher: the same int8 outputs as
    Device.load(bin, source=...).run(frame), the properties libdnn gives (NV12, NCHW (1, 3, H, W), the output's
    scale), the frame untouched, and the launcher's one line saying what runs in the BPU part's place."""
    bgr = picture(1)
    np.save(tmp_path / "bgr.npy", bgr)
    report = shim(tmp_path, scripts.PYEASY_NV12, files["nv12_bin"], tmp_path / "bgr.npy", tmp_path / "out.npz",
                  source=files["qdq"])
    with accel.open(DEVICE) as dev:
        model = dev.load(files["nv12_bin"], source=files["qdq"])
        want = model.run(image.bgr_to_nv12(bgr))
        out_info = model.outputs[0]
    got = np.load(tmp_path / "out.npz")
    assert [got[k].dtype for k in got.files] == [w.dtype for w in want]
    assert all(np.array_equal(got[f"arr_{i}"], w) for i, w in enumerate(want))
    (inp,) = report["inputs"]
    assert (inp["name"], inp["tensor_type"], inp["dtype"], inp["layout"]) == ("image", "NV12", "uint8", "NCHW")
    assert inp["shape"] == inp["validShape"] == inp["alignedShape"] == [1, 3, H, W]
    assert inp["scale_data"] == [] and inp["quantiType"] == 0
    out = report["outputs"][0]
    assert (out["tensor_type"], out["dtype"], out["quantiType"]) == ("int8", "int8", 2)
    assert out["shape"] == list(out_info.shape)
    assert np.float32(out["scale_data"][0]) == np.float32(out_info.quant.scales[0])
    assert report["count"] == 1 and report["latency"] == 100
    said = [line for line in report["_stderr"].splitlines() if line.startswith("accel shim:")]
    assert len(said) == 1 and "BPU part is not emulated" in said[0] and "qdq.onnx runs in its place" in said[0]


def _compared(files, tmp_path, device=None):
    """The NV12 sample under --compare: (the JSON rows by output, the script's outputs, the float twin's outputs on
    the same frame, the output infos, stderr)."""
    bgr = picture(7)
    np.save(tmp_path / "bgr.npy", bgr)
    rows_path = tmp_path / "rows.json"
    report = shim(tmp_path, scripts.PYEASY_NV12, files["nv12_bin"], tmp_path / "bgr.npy", tmp_path / "out.npz",
                  device=device, compare=rows_path)
    with accel.open("emu") as dev:
        twin = dev.load(files["nv12_bin"], source=files["qdq"], dequantized=True)
        floats = twin.run(image.bgr_to_nv12(bgr))
    with accel.open(DEVICE) as dev:
        infos = dev.load(files["nv12_bin"], source=files["qdq"]).outputs
    got = np.load(tmp_path / "out.npz")
    rows = {r["tensor"]: r for r in json.loads(rows_path.read_text())}
    return rows, [got[f"arr_{i}"] for i in range(len(infos))], floats, infos, report["_stderr"]


def _check_rows(rows, outputs, floats, infos):
    assert sorted(rows) == sorted(i.name for i in infos)
    for q, want, info in zip(outputs, floats, infos):
        real = (q.astype(np.float32) - np.float32(info.quant.zero_points[0])) * np.float32(info.quant.scales[0])
        err = np.abs(real - want)
        row = rows[info.name]
        print(f"\n{info.name}: max error {row['max_abs_error']:.4g} ({row['max_lsb']} steps), cosine "
              f"{row['cosine']:.6f}")
        assert row["dtype_a"] == "int8" and row["shape"] == list(q.shape)
        assert row["max_abs_error"] == pytest.approx(float(err.max()), rel=1e-5, abs=1e-7)
        assert 0.99 < row["cosine"] < 1.0 and 0 < row["max_lsb"] < 8


def test_compare_holds_the_bin_against_its_float_run(files, tmp_path):
    """``--compare`` on the NV12 .bin: each output's row is the script's int8 output, dequantized, against the .bin's
    float counterpart (its source with float activations, behind the same NV12 interface) on the same frame."""
    rows, outputs, floats, infos, err = _compared(files, tmp_path)
    _check_rows(rows, outputs, floats, infos)
    assert "accel shim --compare: every output against its model's float run on 'emu' (runs: nv12_bin.bin 10)" in err


def test_pyeasy_dnn_rgb_frame_not_written(files, tmp_path):
    """An RGB input: the board's X5 binding subtracts 128 from the caller's picture in place; the shim leaves it
    as it was and computes what the model computes from it (accel's own run of the same .bin)."""
    rgb = picture(2)
    np.save(tmp_path / "rgb.npy", rgb)
    report = shim(tmp_path, scripts.PYEASY_RGB, files["rgb_bin"], tmp_path / "rgb.npy", tmp_path / "out.npz",
                  source=files["cnn_onnx"])
    with accel.open(DEVICE) as dev:
        (want,) = dev.load(files["rgb_bin"], source=files["cnn_onnx"]).run(rgb)
    assert report["unchanged"] and report["tensor_type"] == "RGB"
    assert np.array_equal(np.load(tmp_path / "out.npz")["arr_0"], want)


def test_pyeasy_dnn_bad_use(files, tmp_path):
    """Each use that the board's binding would turn into a wrong copy, stale data or a crash is an accel error
    naming the input and what it takes; a featuremap is read in its logical order whatever its shape."""
    r = shim(tmp_path, scripts.PYEASY_BAD, files["fm_bin"], files["nv12_bin"], files["lonely_bin"])
    assert r["flat_same"]

    def raised(case, cls, *words):
        assert r[case] is not None, f"{case}: nothing raised"
        classes, message = r[case]
        assert cls in classes, (case, classes, message)
        for word in words:
            assert word in message, (case, message)

    raised("float64", "DTypeError", "'image'", "float32", "float64")
    raised("short", "ShapeError", "12288 elements", "12287")
    raised("count", "InvalidArgumentError", "1 input, given 2")
    raised("none", "InvalidArgumentError", "given 0")
    raised("list_item", "TypeError", "input 0 is a list")
    raised("not_container", "TypeError", "not str")
    raised("priority", "InvalidArgumentError", "priority=300")
    raised("core_id", "InvalidArgumentError", "core_id=7")
    raised("frame_float", "DTypeError", "NV12 frame of 64x64", "float32")
    raised("frame_short", "ShapeError", "6144 bytes", "6142")
    raised("no_source", "InvalidArgumentError", "--source", "fm_bin_calibrated_model.onnx")
    raised("missing", "FileNotFoundError", ".nope")
    raised("load_type", "TypeError", "string or a list")


def test_hbm_runtime_forms_as_accel(files, tmp_path):
    """The S100 quick-start patterns over three files (an .hbm, its calibrated ONNX beside it running in its
    place; an ONNX; an X5 .bin): metadata by model name, every input form, scheduling defaults and per-call
    overrides, threads sharing one runtime; outputs equal accel's own runs."""
    rng = np.random.default_rng(3)
    x = rng.random((1, 3, 64, 64), dtype=np.float32)
    a, b = rng.random((1, 4), dtype=np.float32), rng.random((1, 4), dtype=np.float32)
    frame = image.bgr_to_nv12(picture(4))
    with accel.open(DEVICE) as dev:
        binfo = dev.load(files["nv12_bin"], source=files["qdq"])
        frame4 = frame.reshape(binfo.inputs[0].shape)
        (want_frame,) = binfo.run(frame4)
        (want_cnn,) = dev.load(files["cnn_onnx"]).run(x)
        want_y, want_z = dev.load(files["two_io"]).run({"a": a, "b": b})
        bin_quant = binfo.outputs[0].quant
    np.savez(tmp_path / "in.npz", x=x, a=a, b=b, frame=frame4)
    r = shim(tmp_path, scripts.HBM_RUN, files["hbm"], files["two_io"], files["nv12_bin"], tmp_path / "in.npz",
             tmp_path / "out.npz")
    got = np.load(tmp_path / "out.npz")
    for key in ("cnn", "cnn_dict", "multi_cnn"):
        assert np.array_equal(got[key], want_cnn), key
    assert np.array_equal(got["y"], want_y) and np.array_equal(got["z"], want_z)
    assert np.array_equal(got["frame_out"], want_frame)
    cnn, pair, bin_model = r["model_names"]
    assert (cnn, pair, r["model_count"]) == ("cnn", "two_io", 3)
    assert r["input_names"][pair] == ["a", "b"] and r["input_counts"][pair] == 2
    assert r["input_shapes"][cnn] == {"image": [1, 3, 64, 64]}
    assert r["input_shapes"][bin_model] == {"image": list(frame4.shape)}
    assert r["input_dtypes"][cnn] == {"image": "hbDNNDataType.F32"}
    assert r["input_dtypes"][bin_model] == {"image": "hbDNNDataType.U8"}
    assert list(r["output_dtypes"][bin_model].values()) == ["S8"]
    kind, scale, zero, axis = r["quant"]
    assert (kind, zero, axis) == ("SCALE", [0], -1) and np.float32(scale[0]) == np.float32(bin_quant.scales[0])
    assert r["input_quant"] == "NONE"
    assert r["keys"] == {cnn: ["probabilities"], pair: ["y", "z"], bin_model: r["output_names"][bin_model]}
    assert r["by_name_keys"] == [cnn]
    assert r["sched"][cnn] == [5, [0], 0, 0] and r["sched"][pair] == [7, [-1], 0, 0]   # run()'s were per call
    assert r["sched"][bin_model] == [0, [-1], 0, 0]
    assert "cnn_calibrated_model.onnx runs in its place" in r["_stderr"]


def test_hbm_runtime_bad_use(files, tmp_path):
    """Bad inputs and scheduling arguments are accel errors before anything runs (a dtype mismatch is also the
    ValueError the original raises); nothing a bad call gave is kept."""
    r = shim(tmp_path, scripts.HBM_BAD, files["cnn_onnx"], files["two_io"], files["lonely_hbm"])

    def raised(case, classes, *words):
        assert r[case] is not None, f"{case}: nothing raised"
        got, message = r[case]
        assert set(classes) <= set(got), (case, got, message)
        for word in words:
            assert word in message, (case, message)

    raised("dtype", ["InputDTypeError", "DTypeError", "ValueError"], "float32", "float64")
    raised("shape", ["ShapeError", "ValueError"], "[1, 3, 64, 64]", "[1, 3, 64, 63]")
    raised("which_model", ["InvalidArgumentError"], "model_name=")
    raised("two_inputs", ["InvalidArgumentError"], "2 inputs")
    raised("unknown_input", ["InvalidArgumentError"], "no ['nope']", "missing ['image']")
    raised("missing_input", ["InvalidArgumentError"], "missing ['b']")
    raised("unknown_model", ["InvalidArgumentError"], "no model 'nope'")
    raised("not_array", ["TypeError"], "not a NumPy array")
    raised("priority", ["InvalidArgumentError"], "priority['tiny_cnn']=300", "0..255")
    raised("priority_model", ["InvalidArgumentError"], "'nope'")
    raised("cores_empty", ["InvalidArgumentError"], "[-1]")
    raised("cores_type", ["TypeError"], "list of core indices")
    raised("no_source", ["InvalidArgumentError"], "--source", "cnn_calibrated_model.onnx")
    raised("ctor_type", ["TypeError"], "model file path")
    assert r["sched_unchanged"] == [0, [-1]]


@pytest.mark.vendor("bpu", formats=(".bin",))
def test_pyeasy_dnn_on_the_board(files, tmp_path):
    """The same script with --device bpu:0 (CI: accel's BPU driver over the libdnn stand-in): the .bin loads as it
    is, nothing is said about a source, and the int8 outputs are the emulator's for the same frame."""
    bgr = picture(5)
    np.save(tmp_path / "bgr.npy", bgr)
    report = shim(tmp_path, scripts.PYEASY_NV12, files["nv12_bin"], tmp_path / "bgr.npy", tmp_path / "out.npz",
                  device="bpu:0")
    with accel.open(DEVICE) as dev:
        want = dev.load(files["nv12_bin"], source=files["qdq"]).run(image.bgr_to_nv12(bgr))
    got = np.load(tmp_path / "out.npz")
    assert all(np.array_equal(got[f"arr_{i}"], w) for i, w in enumerate(want))
    assert report["inputs"][0]["tensor_type"] == "NV12" and report["inputs"][0]["shape"] == [1, 3, H, W]
    assert "accel shim:" not in report["_stderr"]


@pytest.mark.vendor("bpu", formats=(".bin",))
def test_compare_on_the_board(files, tmp_path):
    """--compare with --device bpu:0: the board runs the .bin as it is; its float run is the source beside it on the
    host's emulator. A .bin with no source beside it runs uncompared, said once."""
    rows, outputs, floats, infos, _ = _compared(files, tmp_path, device="bpu:0")
    _check_rows(rows, outputs, floats, infos)
    lonely = ("import sys, numpy as np\nfrom hobot_dnn import pyeasy_dnn as dnn\nm = dnn.load(sys.argv[1])[0]\n"
              "m.forward(np.zeros((1, 3, 64, 64), np.float32))\nprint('{}')\n")
    report = shim(tmp_path, lonely, files["lonely_bin"], device="bpu:0", compare=tmp_path / "lonely.json")
    said = [line for line in report["_stderr"].splitlines() if "uncompared" in line]
    assert len(said) == 2 and "fm_bin.bin runs uncompared: no float run" in said[0], report["_stderr"]
    assert json.loads((tmp_path / "lonely.json").read_text()) == []


@pytest.mark.vendor("bpu", formats=(".hbm",))
def test_hbm_runtime_on_the_board(files, tmp_path):
    """HB_HBMRuntime on an S100 .hbm through accel's BPU driver (CI: the hbUCP stand-in): the file loads as it is
    and gives the emulator's outputs of the ONNX it was made from."""
    x = np.random.default_rng(6).random((1, 3, 64, 64), dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    report = shim(tmp_path, scripts.HBM_ONE, files["hbm"], tmp_path / "x.npy", tmp_path / "out.npz",
                  device="bpu:0")
    with accel.open(DEVICE) as dev:
        (want,) = dev.load(files["cnn_onnx"]).run(x)
    np.testing.assert_allclose(np.load(tmp_path / "out.npz")["out"], want, rtol=1e-5, atol=1e-6)
    assert report["model_names"] == ["cnn"] and "accel shim:" not in report["_stderr"]
