"""The programs in examples/ run as a user would run them (a subprocess of the installed package, the C
one compiled against the headers and library the package installs), and what they print and save is
checked: numbers against onnxruntime, the OCR pipeline's text against the text it printed, the trace's
structure. The example files are also imported, for the helpers (model builders, the crop rule) the
checks reuse."""
from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

import accel
import accel.image as image
import c_programs
from accel.models import ppocr

pytestmark = pytest.mark.emulator  # every example opens the emulator itself

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
PACKAGE = Path(accel.__file__).resolve().parent
TINY_CNN = PACKAGE / "models" / "tiny_cnn.onnx"
REL_TOL = 1e-4


def run_example(name, *args, cwd=None, timeout=120):
    done = subprocess.run([sys.executable, str(EXAMPLES / name), *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, cwd=cwd)
    assert done.returncode == 0, f"{name} exited with {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def import_example(name):
    spec = importlib.util.spec_from_file_location(f"example_{Path(name).stem}", EXAMPLES / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def session(model):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    return ort.InferenceSession(model if isinstance(model, bytes) else str(model), opts,
                                providers=["CPUExecutionProvider"])


def assert_close(got, want, what):
    assert got.shape == want.shape, f"{what}: shape {got.shape}, onnxruntime {want.shape}"
    err = float(np.max(np.abs(got - want)))
    bound = REL_TOL * float(np.max(np.abs(want)))
    assert err <= bound, f"{what}: max abs error {err:.3g} > {bound:.3g} (1e-4 * max|onnxruntime|)"


def test_pipeline_futures(tmp_path):
    out = run_example("pipeline_futures.py", "--frames", 8, "--save", tmp_path / "r.npz")
    assert len(re.findall(r"^object at \(y= *\d+, x= *\d+\) -> class \d+ \(p=0\.\d+\)$", out, re.M)) == 8, out
    for way in ("one run after another", "concurrent.futures", "asyncio"):
        assert re.search(rf"^  {re.escape(way)} +\d+\.\d+ ms", out, re.M), out

    example = import_example("pipeline_futures.py")
    saved = np.load(tmp_path / "r.npz")
    detector, classifier = session(example.build_detector()), session(TINY_CNN)
    for i, frame in enumerate(saved["frames"]):
        (objectness,) = detector.run(None, {"frame": frame[None]})
        assert_close(saved["objectness"][i:i + 1], objectness, f"frame {i} objectness")
        crop, corner = example.crop_around_best_cell(frame[None], objectness)
        assert tuple(saved["corners"][i]) == corner, f"frame {i}: the crop is not where onnxruntime's best cell is"
        (probabilities,) = classifier.run(None, {"image": np.ascontiguousarray(crop)})
        assert_close(saved["probabilities"][i:i + 1], probabilities, f"frame {i} class scores")


def test_zero_copy_preprocessing(tmp_path):
    out = run_example("zero_copy_preprocessing.py", "--frames", 5, "--save", tmp_path / "r.npz")
    assert "5 frames through device tensors: bytes copied 0, allocations 0" in out, out
    assert re.search(r"1 frame as a NumPy array: +bytes copied 49152, allocations [1-9]", out), out

    saved = np.load(tmp_path / "r.npz")
    frame = saved["frame"]
    assert frame.dtype == np.uint8 and frame.shape == (64, 64, 3)
    mean, std = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])
    want_input = ((frame / 255.0 - mean) / std).transpose(2, 0, 1)[None].astype(np.float32)
    np.testing.assert_allclose(saved["input"], want_input, rtol=0, atol=1e-5)
    (want,) = session(TINY_CNN).run(None, {"image": want_input})
    assert_close(saved["probabilities"], want, "class scores")


def test_fusion_scope(tmp_path):
    out = run_example("fusion_scope.py", "--save", tmp_path / "r.npz")
    assert re.search(r"^eager ops: +3 jobs, result \(1, 16, 32, 32\)$", out, re.M), out
    assert re.search(r"^fusion scope: +1 job, +result \(1, 16, 32, 32\)$", out, re.M), out
    assert "inside the scope: PendingTensor(max_pool2d, shape=(1, 16, 32, 32), dtype=float32, pending)" in out, out
    assert "the fused model's nodes: conv+relu, maxpool" in out, out
    assert out.rstrip().endswith("ok")

    # The result against onnxruntime running the article's three ops as an ONNX model.
    from onnx import TensorProto, helper, numpy_helper

    saved = np.load(tmp_path / "r.npz")
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2])]
    graph = helper.make_graph(nodes, "seed", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 64, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 32, 32])],
                              [numpy_helper.from_array(saved["weight"], "w"),
                               numpy_helper.from_array(saved["bias"], "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    (want,) = session(model.SerializeToString()).run(None, {"x": saved["image"]})
    assert_close(saved["fused"], want, "fused conv, relu, pool")
    np.testing.assert_array_equal(saved["fused"], saved["eager"])


def test_profile_trace(tmp_path):
    out = run_example("profile_trace.py", "--runs", 4, cwd=tmp_path)
    assert re.search(r"^features +8 ", out, re.M) and re.search(r"^tiny_cnn +8 ", out, re.M), out
    trace = json.loads((tmp_path / "trace.json").read_text())
    events = trace["traceEvents"]
    jobs = [e for e in events if e["ph"] == "X"]
    meta = [e for e in events if e["ph"] == "M"]
    # 4 sync + 4 async runs of each of the two models, each one slice on the core that ran it.
    assert sorted(e["name"] for e in jobs) == ["features"] * 8 + ["tiny_cnn"] * 8
    assert all(e["ts"] >= 0 and e["dur"] > 0 and e["args"]["status"] == 0 for e in jobs)
    assert {(e["pid"], e["tid"]) for e in jobs} <= {
        (e["pid"], e["tid"]) for e in meta if e["name"] == "thread_name" and e["args"]["name"] == f"core {e['tid']}"}
    assert [e["args"]["name"] for e in meta if e["name"] == "process_name"] == ["emu:cores=2"]
    assert {e["tid"] for e in jobs} <= {0, 1}
    assert "wrote trace.json: 16 jobs on cores" in out



def test_profile_trace_ops(tmp_path):
    out = run_example("profile_trace.py", "--runs", 2, "--ops", cwd=tmp_path)
    assert "per op type" in out and "slowest nodes" in out and "Conv+Relu" in out, out
    events = json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
    jobs = [e for e in events if e["ph"] == "X" and e["cat"] == "job"]
    nodes = [e for e in events if e["ph"] == "X" and e["cat"] == "node"]
    assert len(jobs) == 8 and nodes
    # each node slice lies inside a job slice of its track (viewers nest it there)
    for n in nodes:
        inside = [j for j in jobs if j["tid"] == n["tid"] and j["ts"] - 1e-3 <= n["ts"]
                  and n["ts"] + n["dur"] <= j["ts"] + j["dur"] + 1e-3]
        assert len(inside) == 1, n

def test_c_example_builds_against_the_package_and_runs(tmp_path):
    exe = tmp_path / "hello_accel"
    c_programs.build(EXAMPLES / "hello_accel.c", exe, "-std=c99")
    model = tmp_path / "tiny_cnn.accm"
    from accel import compiler

    model.write_bytes(compiler.compile_model(str(TINY_CNN)))
    done = subprocess.run([str(exe), str(model), "emu:cores=2"], capture_output=True, text=True, timeout=60,
                          env=c_programs.environment())
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    jobs = re.findall(r"^job \d: ACCEL_OK on core [01], .* same scores as the synchronous run$", out, re.M)
    assert len(jobs) == 4, out
    assert re.search(r"^loading a missing file: ACCEL_ERR_NOT_FOUND \(.*no-such-model\.accm.*\)$", out, re.M), out
    assert out.rstrip().endswith("ok")

    # The program's input is the ramp (i % 255) / 255; its printed scores are onnxruntime's, to 6 decimals.
    x = ((np.arange(3 * 64 * 64) % 255).astype(np.float32) / np.float32(255)).reshape(1, 3, 64, 64)
    (want,) = session(TINY_CNN).run(None, {"image": x})
    scores = np.array(re.search(r"^scores:(.*)$", out, re.M).group(1).split(), np.float32)
    np.testing.assert_allclose(scores, want[0], rtol=0, atol=2e-6)
    assert f"class {int(np.argmax(want))}" in out


def test_ocr_pipeline_reads_the_printed_text(tmp_path):
    out = run_example("ocr_pipeline.py", "--save", tmp_path / "r.npz", timeout=600)
    assert "recognized: 'ACCEL 2026'" in out, out

    saved = np.load(tmp_path / "r.npz")
    (det,) = session(ppocr.fetch("ppocr_det")).run(None, {"x": saved["det_input"]})
    assert_close(saved["det_output"], det, "detector output")
    rec = session(ppocr.fetch("ppocr_rec"))
    assert len(saved["rec_inputs"]) >= 1
    for i, x in enumerate(saved["rec_inputs"]):
        (probs,) = rec.run(None, {"x": x[None]})
        assert_close(saved["rec_outputs"][i:i + 1], probs, f"recognizer output {i}")
        np.testing.assert_array_equal(saved["rec_outputs"][i].argmax(-1), probs[0].argmax(-1))


@pytest.mark.parametrize("text", ["CALL 1260", "TEXT 0162"])
def test_ocr_pipeline_reads_other_text(text):
    assert f"recognized: {text!r}" in run_example("ocr_pipeline.py", "--text", text, timeout=600)


@pytest.mark.parametrize("yuv_range", ["full", "video"])
def test_nv12_detector_sees_the_frame_as_accel_image_decodes_it(tmp_path, yuv_range):
    """The detector compiled with an NV12 input, fed the frame's bytes, gives what onnxruntime's float detector gives
    on the frame decoded by accel.image, and the same text boxes as on the original picture."""
    out = run_example("nv12_detector.py", "--range", yuv_range, "--save", tmp_path / "r.npz", timeout=600)
    assert "the NV12 detector takes 'x': uint8[1, 144, 512, 1], nv12 512x96, UV plane at byte 49152" in out, out
    assert "same 2 text boxes, edges within" in out, out
    saved = np.load(tmp_path / "r.npz")
    decoded = image.nv12_to_bgr(saved["nv12"], range=yuv_range)
    ocr = import_example("ocr_pipeline.py")
    x = ((decoded / 255.0 - ocr.MEAN) / ocr.STD).transpose(2, 0, 1)[None].astype(np.float32)
    (want,) = session(ppocr.fetch("ppocr_det")).run(None, {"x": x})
    assert_close(saved["frame_map"], want[0, 0], "NV12 detector against onnxruntime on the decoded frame")
    disagree = np.count_nonzero((saved["frame_map"] > 0.3) != (saved["bgr_map"] > 0.3))
    assert disagree < saved["frame_map"].size // 200, f"{disagree} pixels called text by one detector only"


def test_every_example_is_in_the_readme():
    readme = (EXAMPLES / "README.md").read_text()
    for path in EXAMPLES.iterdir():
        if path.suffix in (".py", ".c"):
            assert path.name in readme, f"examples/README.md does not mention {path.name}"
