"""accel's onnxruntime shim (accel.shims.ort): scripts written as onnxruntime's users write them, run unchanged with
``python -m accel.shims onnxruntime --force -- python script.py``, give the numbers accel's own API gives (bit for
bit) and onnxruntime's (the float model within float rounding; the int8 model bit for bit with the int8 options the
repo's reference uses); the same scripts' bad uses raise the classes and messages the real onnxruntime raises (each
bad-use script runs under both and the answers are compared); the launcher refuses to shadow the installed
onnxruntime without --force; and the shimmed process never imports the real package."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import accel

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from models import ort_reference, quantized

pytestmark = pytest.mark.emulator

TINY_CNN = Path(accel.__file__).resolve().parent / "models" / "tiny_cnn.onnx"


def shim(script: Path, *args: str, force: bool = True, device: str = "") -> subprocess.CompletedProcess:
    """Runs ``python script.py ARGS`` under the shim launcher, on `device` (default: the launcher's, the emulator)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACCEL_SHIM_")}
    cmd = [sys.executable, "-m", "accel.shims", "onnxruntime"] + (["--force"] if force else [])
    cmd += ["--device", device] if device else []
    return subprocess.run(cmd + ["--", sys.executable, str(script), *args], capture_output=True, text=True,
                          timeout=900, env=env, cwd=script.parent)


def plain(script: Path, *args: str) -> subprocess.CompletedProcess:
    """Runs the same script with the real onnxruntime."""
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=900,
                          cwd=script.parent)


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


def ok(p: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert p.returncode == 0, f"exit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    return p


@pytest.fixture(scope="module")
def mlp(tmp_path_factory) -> Path:
    """x[batch, 16] -> y = relu(x @ W + b), z = sigmoid(x @ W) [batch, 8]: a symbolic batch, two outputs,
    metadata to read back."""
    r = np.random.default_rng(7)
    w = helper.make_tensor("W", TensorProto.FLOAT, [16, 8], r.standard_normal((16, 8)).astype(np.float32).ravel())
    b = helper.make_tensor("b", TensorProto.FLOAT, [8], r.standard_normal(8).astype(np.float32))
    nodes = [helper.make_node("MatMul", ["x", "W"], ["mm"]), helper.make_node("Add", ["mm", "b"], ["pre"]),
             helper.make_node("Relu", ["pre"], ["y"]), helper.make_node("Sigmoid", ["mm"], ["z"])]
    g = helper.make_graph(nodes, "mlp_graph", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8]),
                           helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", 8])], [w, b],
                          doc_string="a graph")
    m = helper.make_model(g, producer_name="shim-test", opset_imports=[helper.make_opsetid("", 13)],
                          doc_string="an mlp", model_version=5, domain="test.accel")
    m.ir_version = 8
    helper.set_model_props(m, {"author": "accel", "classes": "8"})
    path = tmp_path_factory.mktemp("ort") / "mlp.onnx"
    onnx.save(m, str(path))
    return path


USERS_SCRIPT = """\
    # Written as onnxruntime's users write it: options, providers, run with a dict feed, all outputs and named ones,
    # a list as a feed, run_async with a callback, several sessions (one per thread, from bytes too).
    import json
    import sys
    import threading

    import numpy as np
    import onnxruntime as ort

    cnn_path, mlp_path, out = sys.argv[1:4]
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.log_severity_level = 3
    cnn = ort.InferenceSession(cnn_path, so, providers=["CPUExecutionProvider"])
    mlp = ort.InferenceSession(mlp_path, providers=ort.get_available_providers())

    rng = np.random.default_rng(0)
    image_in = cnn.get_inputs()[0]
    images = [rng.random((1, 3, 64, 64), dtype=np.float32) for _ in range(4)]
    x2 = rng.standard_normal((2, 16)).astype(np.float32)
    x5 = rng.standard_normal((5, 16)).astype(np.float32)
    saved = {f"image{i}": im for i, im in enumerate(images)}
    saved.update(x2=x2, x5=x5)

    saved["probs"] = cnn.run(None, {image_in.name: images[0]})[0]
    saved["y2"], saved["z2"] = mlp.run(None, {"x": x2})
    (saved["z5"],) = mlp.run(["z"], {"x": x5})
    (saved["y5"],) = mlp.run(["y"], {"x": x5.tolist()})

    done = threading.Event()
    lock = threading.Lock()
    got = {}
    threads = set()

    def on_done(results, index, err):
        with lock:
            got[index] = (results, err)
            threads.add(threading.get_ident())
            if len(got) == len(images):
                done.set()

    for i, im in enumerate(images):
        cnn.run_async(None, {image_in.name: im}, on_done, i)
    assert done.wait(120), "run_async never called back"
    mlp_done = threading.Event()
    mlp.run_async(["y"], {"x": x2}, lambda results, _, err: (saved.update(async_y2=results[0]), mlp_done.set()), None)
    assert mlp_done.wait(120), "run_async never called back"
    for i in range(len(images)):
        results, err = got[i]
        assert err == "", err
        saved[f"async{i}"] = results[0]

    def own_session(index):
        with open(cnn_path, "rb") as f:
            sess = ort.InferenceSession(f.read())
        saved[f"thread{index}"] = sess.run([sess.get_outputs()[0].name], {image_in.name: images[index]})[0]

    workers = [threading.Thread(target=own_session, args=(i,)) for i in (1, 2)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    np.savez(out, **saved)

    def args(nodes):
        return [[a.name, a.shape, a.type] for a in nodes]

    meta = mlp.get_modelmeta()
    print(json.dumps({
        "inputs": {"cnn": args(cnn.get_inputs()), "mlp": args(mlp.get_inputs())},
        "outputs": {"cnn": args(cnn.get_outputs()), "mlp": args(mlp.get_outputs())},
        "meta": [meta.producer_name, meta.graph_name, meta.domain, meta.description, meta.graph_description,
                 meta.version, meta.custom_metadata_map],
        "providers": [cnn.get_providers(), mlp.get_providers()],
        "provider_options": cnn.get_provider_options(),
        "callback_on_main_thread": threading.main_thread().ident in threads,
        "module": ort.__file__,
        "options": [cnn.get_session_options().intra_op_num_threads,
                    str(cnn.get_session_options().graph_optimization_level)],
    }))
"""


def node_args(nodes) -> List[list]:
    return [[a.name, a.shape, a.type] for a in nodes]


def test_users_script_gives_accels_numbers(tmp_path, mlp):
    script = write(tmp_path, "app.py", USERS_SCRIPT)
    p = ok(shim(script, str(TINY_CNN), str(mlp), str(tmp_path / "out.npz")))
    info = json.loads(p.stdout.strip().splitlines()[-1])
    saved = dict(np.load(tmp_path / "out.npz"))
    assert "accel" in info["module"] and "accel device 'emu'" in p.stderr

    # The same numbers as accel's own API, bit for bit.
    with accel.open("emu") as dev:
        cnn = dev.load(TINY_CNN)
        for i in range(4):
            (want,) = cnn.run(saved[f"image{i}"])
            np.testing.assert_array_equal(saved[f"async{i}"], want)
            if i == 0:
                np.testing.assert_array_equal(saved["probs"], want)
            if i in (1, 2):
                np.testing.assert_array_equal(saved[f"thread{i}"], want)
        y2, z2 = dev.load(mlp, input_shapes={"x": (2, 16)}).run(saved["x2"])
        y5, z5 = dev.load(mlp, input_shapes={"x": (5, 16)}).run(saved["x5"])
    for name, want in dict(y2=y2, z2=z2, y5=y5, z5=z5, async_y2=y2).items():
        np.testing.assert_array_equal(saved[name], want)

    # Close to onnxruntime's own (float: the emulator's kernels round differently from MLAS').
    cnn_ort = ort.InferenceSession(str(TINY_CNN), providers=["CPUExecutionProvider"])
    mlp_ort = ort.InferenceSession(str(mlp), providers=["CPUExecutionProvider"])
    worst = 0.0
    for i in range(4):
        (want,) = cnn_ort.run(None, {"image": saved[f"image{i}"]})
        worst = max(worst, float(np.abs(saved[f"async{i}"] - want).max()))
        np.testing.assert_allclose(saved[f"async{i}"], want, rtol=1e-4, atol=1e-6)
    for x, outs in (("x2", ("y2", "z2")), ("x5", ("y5", "z5"))):
        for name, want in zip(("y", "z"), mlp_ort.run(None, {"x": saved[x]})):
            got = saved[outs[0] if name == "y" else outs[1]]
            worst = max(worst, float(np.abs(got - want).max()))
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    print(f"\nfloat models: largest difference from onnxruntime {worst:.3g}")

    # What the sessions say, as onnxruntime says it.
    assert info["inputs"] == {"cnn": node_args(cnn_ort.get_inputs()), "mlp": node_args(mlp_ort.get_inputs())}
    assert info["outputs"] == {"cnn": node_args(cnn_ort.get_outputs()), "mlp": node_args(mlp_ort.get_outputs())}
    m = mlp_ort.get_modelmeta()
    assert info["meta"] == [m.producer_name, m.graph_name, m.domain, m.description, m.graph_description, m.version,
                            m.custom_metadata_map]
    assert info["providers"] == [["CPUExecutionProvider"]] * 2
    assert info["provider_options"] == {"CPUExecutionProvider": {}}
    assert info["callback_on_main_thread"] is False
    assert info["options"] == [1, "GraphOptimizationLevel.ORT_ENABLE_ALL"]


QUANTIZED_SCRIPT = """\
    import sys

    import numpy as np
    import onnxruntime as ort

    path, feeds_path, out = sys.argv[1:4]
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feeds = dict(np.load(feeds_path))
    results = sess.run([o.name for o in sess.get_outputs()], feeds)
    np.savez(out, *results)
"""


def test_quantized_qdq_model(tmp_path):
    path = quantized.static_model("tiny_cnn", activation="int8", symmetric=True)
    feeds = quantized.make_feeds("tiny_cnn")
    np.savez(tmp_path / "feeds.npz", **feeds)
    script = write(tmp_path, "quantized_app.py", QUANTIZED_SCRIPT)
    p = ok(shim(script, str(path), str(tmp_path / "feeds.npz"), str(tmp_path / "out.npz"), device="emu:cores=2"))
    assert "accel device 'emu:cores=2'" in p.stderr
    got = np.load(tmp_path / "out.npz")
    got = [got[f"arr_{i}"] for i in range(len(got.files))]
    with accel.open("emu") as dev:
        want = dev.load(path).run(feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    # onnxruntime with the repo's int8 reference options: the same integers, so the same floats.
    reference = quantized.reference(path, feeds)
    for g, w in zip(got, reference):
        np.testing.assert_array_equal(g, w)
    # onnxruntime with its default options (QDQ fusions it may compute in float): report how close.
    default = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)
    diff = max(float(np.abs(g - w).max()) for g, w in zip(got, default))
    print(f"\nint8 tiny_cnn: equal to onnxruntime with {ort_reference.__name__}'s options; largest difference "
          f"from onnxruntime's defaults {diff:.3g}")


COMPARE_SCRIPT = """\
    import sys
    import threading

    import numpy as np
    import onnxruntime as ort

    path, out = sys.argv[1:3]
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    xs = [np.random.default_rng(seed).random((1, 3, 64, 64), np.float32) for seed in range(4)]
    results = [sess.run(None, {name: x})[0] for x in xs[:2]]
    done = threading.Event()
    late = {}

    def callback(res, user_data, err):
        late[user_data] = res[0]
        if len(late) == 2:
            done.set()

    for k in (2, 3):
        sess.run_async(None, {name: xs[k]}, callback, k)
    assert done.wait(60)
    np.savez(out, inputs=np.stack(xs), outputs=np.stack(results + [late[2], late[3]]))
"""


@pytest.mark.parametrize("activation", ["int8", "uint8"])
def test_compare_holds_run_and_run_async_against_the_float_model(tmp_path, activation):
    """``--compare`` on a QDQ model, with run and run_async: the row of its output is the script's outputs against
    onnxruntime's run of the float model the quantizer started from, with the QDQ model's weights."""
    path = quantized.static_model("tiny_cnn", activation=activation, symmetric=activation == "int8")
    script = write(tmp_path, "compare_app.py", COMPARE_SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACCEL_SHIM_")}
    rows_path = tmp_path / "rows.json"
    p = ok(subprocess.run([sys.executable, "-m", "accel.shims", "onnxruntime", "--force", "--compare",
                           "--compare-json", str(rows_path), "--", sys.executable, str(script), str(path),
                           str(tmp_path / "out.npz")], capture_output=True, text=True, timeout=900, env=env))
    assert f"(runs: {Path(path).name} 4)" in p.stderr, p.stderr
    got = np.load(tmp_path / "out.npz")
    twin = ort.InferenceSession(quantized.float_twin("tiny_cnn", path, tmp_path).SerializeToString(),
                                providers=["CPUExecutionProvider"])
    want = np.stack([twin.run(None, {"image": x})[0] for x in got["inputs"]])
    err = np.abs(got["outputs"] - want)
    (row,) = json.loads(rows_path.read_text())
    print(f"\n{activation}: max error {row['max_abs_error']:.4g} (independently {err.max():.4g}), cosine "
          f"{row['cosine']:.6f}")
    assert row["tensor"] == "probabilities" and row["dtype_a"] == "float32" and row["differing"] is None
    assert row["max_abs_error"] == pytest.approx(float(err.max()), rel=1e-3, abs=1e-6)
    assert row["mean_abs_error"] == pytest.approx(float(err.mean()), rel=1e-3, abs=1e-7)
    assert 0.99 < row["cosine"] < 1.0


BAD_USE_SCRIPT = """\
    # Every mistake of onnxruntime's users this test knows, each answered by (class name, message); run under the
    # real onnxruntime and under accel's shim, the answers are compared.
    import json
    import sys
    import threading

    import numpy as np
    import onnxruntime as ort
    from onnxruntime.capi.onnxruntime_pybind11_state import Fail, InvalidArgument, InvalidProtobuf, NoSuchFile

    mlp_path = sys.argv[1]
    sess = ort.InferenceSession(mlp_path, providers=["CPUExecutionProvider"])
    x = np.ones((2, 16), np.float32)
    answers = {}

    def attempt(case, f):
        try:
            f()
            answers[case] = ["ok", ""]
        except (Fail, InvalidArgument, InvalidProtobuf, NoSuchFile, ValueError, TypeError, RuntimeError) as e:
            answers[case] = [type(e).__name__, str(e)]

    attempt("missing input", lambda: sess.run(None, {}))
    attempt("unknown input", lambda: sess.run(None, {"x": x, "nope": x}))
    attempt("unknown output", lambda: sess.run(["nope"], {"x": x}))
    attempt("wrong dtype", lambda: sess.run(None, {"x": x.astype(np.float64)}))
    attempt("wrong rank", lambda: sess.run(None, {"x": x[0]}))
    attempt("wrong dims", lambda: sess.run(None, {"x": np.ones((2, 15), np.float32)}))
    stop = ort.RunOptions()
    stop.terminate = True
    attempt("terminate", lambda: sess.run(None, {"x": x}, stop))
    attempt("no such file", lambda: ort.InferenceSession("no_such_model.onnx"))
    attempt("not a model", lambda: ort.InferenceSession(b"garbage bytes"))
    attempt("bytearray", lambda: ort.InferenceSession(bytearray(b"x")))
    attempt("missing config entry", lambda: ort.SessionOptions().get_session_config_entry("nope"))
    attempt("bad providers", lambda: ort.InferenceSession(mlp_path, providers=[1]))
    fixed = ort.SessionOptions()
    fixed.add_free_dimension_override_by_name("batch", 3)
    batch3 = ort.InferenceSession(mlp_path, fixed, providers=["CPUExecutionProvider"])
    answers["fixed batch"] = [batch3.get_inputs()[0].shape, ""]
    attempt("overridden dim", lambda: batch3.run(None, {"x": x}))

    called = threading.Event()
    def callback(results, user_data, err):
        answers["async error"] = [len(results), user_data, err]
        called.set()
    sess.run_async(None, {"x": x.astype(np.float64)}, callback, "data")
    called.wait(60)
    print(json.dumps({"answers": answers, "module": ort.__file__,
                      "real_modules": sorted(m for m, mod in sys.modules.items()
                                             if m.startswith("onnxruntime") and "site-packages" in
                                             str(getattr(mod, "__file__", ""))
                                             and "/accel/shims/" not in str(getattr(mod, "__file__", "")))}))
"""


def answers(p: subprocess.CompletedProcess) -> Dict[str, object]:
    return json.loads(ok(p).stdout.strip().splitlines()[-1])


def test_bad_use_raises_as_onnxruntime(tmp_path, mlp):
    script = write(tmp_path, "bad.py", BAD_USE_SCRIPT)
    real, ours = answers(plain(script, str(mlp))), answers(shim(script, str(mlp)))
    assert "accel" not in real["module"] and "accel" in ours["module"]
    assert ours["real_modules"] == []     # the shimmed process never imported the real package
    differing = {case: (real["answers"][case], ours["answers"].get(case)) for case in real["answers"]
                 if real["answers"][case] != ours["answers"].get(case)}
    # onnxruntime's protobuf message has nothing after it; the shim's says what the parser said.
    want, got = differing.pop("not a model", (None, None))
    if want is not None:
        assert got[0] == want[0] == "InvalidProtobuf" and got[1].startswith(want[1].rstrip("."))
    assert not differing, json.dumps(differing, indent=1)


def test_launcher_refuses_without_force(tmp_path):
    script = write(tmp_path, "app.py", "import onnxruntime\n")
    p = shim(script, force=False)
    assert p.returncode == 2
    assert "onnxruntime" in p.stderr and "is installed here" in p.stderr and "--force" in p.stderr


def test_launcher_reads_its_options_after_the_vendor(tmp_path):
    """``accel shim onnxruntime --device=URI --force -- python app.py``: options between VENDOR and -- are the
    launcher's, in either spelling, and the script sees the device it was given."""
    script = write(tmp_path, "env.py", "import os\nprint(os.environ['ACCEL_SHIM_DEVICE'])\n")
    cmd = [sys.executable, "-m", "accel.shims", "onnxruntime", "--device=emu:cores=1", "--force", "--",
           sys.executable, str(script)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout.strip() == "emu:cores=1", p.stderr


NOT_COVERED_SCRIPT = """\
    import sys

    import numpy as np
    import onnxruntime as ort
    from onnxruntime.capi.onnxruntime_pybind11_state import NotImplemented

    sess = ort.InferenceSession(sys.argv[1])
    for what in (sess.io_binding, lambda: sess.run_with_ort_values(None, {}),
                 lambda: ort.OrtValue.ortvalue_from_numpy(np.ones(1, np.float32))):
        try:
            what()
        except NotImplemented as e:
            print("refused:", e)
    try:
        sess.run(None, {"x": np.ones((1, 3, 4, 4), np.float32), "w": np.ones(1, np.float32)})
    except NotImplemented as e:
        print("refused:", e)
"""


def test_not_covered_is_refused_clearly(tmp_path):
    """io_binding, OrtValue (importable, refusing when used) and feeding an overridable initializer raise
    NOT_IMPLEMENTED naming the docs."""
    w = helper.make_tensor("w", TensorProto.FLOAT, [1], [2.0])
    g = helper.make_graph([helper.make_node("Mul", ["x", "w"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4]),
                           helper.make_tensor_value_info("w", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 4, 4])], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, str(tmp_path / "mul.onnx"))
    script = write(tmp_path, "not_covered.py", NOT_COVERED_SCRIPT)
    out = ok(shim(script, str(tmp_path / "mul.onnx"))).stdout
    refused = [line for line in out.splitlines() if line.startswith("refused:")]
    assert len(refused) == 4 and all("NOT_IMPLEMENTED" in r and "docs/shims/onnxruntime.md" in r for r in refused)


# -- in this process: accel.shims.ort imported under its own name, beside the real onnxruntime -------------------


def test_what_a_session_reports_matches_onnxruntime_and_runs_a_symbolic_model(tmp_path):
    """Symbolic and unknown dims, an output declared without a shape (onnxruntime infers it), an initializer that
    is also an input (overridable, not an input), int64 beside float: reported and run as onnxruntime does."""
    from accel.shims import ort as shim_ort

    w = helper.make_tensor("w", TensorProto.FLOAT, [1], [2.0])
    g = helper.make_graph([helper.make_node("Mul", ["x", "w"], ["y"]), helper.make_node("Identity", ["k"], ["z"])],
                          "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, None]),
                                helper.make_tensor_value_info("k", TensorProto.INT64, [2]),
                                helper.make_tensor_value_info("w", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("z", TensorProto.INT64, [2])], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    data = m.SerializeToString()
    ours = shim_ort.InferenceSession(data)
    real = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    for get in ("get_inputs", "get_outputs", "get_overridable_initializers"):
        assert node_args(getattr(ours, get)()) == node_args(getattr(real, get)()), get
    feed = {"x": np.arange(24, dtype=np.float32).reshape(2, 3, 4), "k": np.array([5, -7], np.int64)}
    for got, want in zip(ours.run(None, feed), real.run(None, feed)):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    (z,) = ours.run(["z"], {"x": np.ones((1, 3, 1), np.float32), "k": [1, 2]})   # a list converts, as in onnxruntime
    np.testing.assert_array_equal(z, [1, 2])


def test_providers_follow_the_device(monkeypatch):
    """The Vitis AI provider is available where the device is a Vitis AI board, and taken with its options there;
    elsewhere it is warned about and dropped, as onnxruntime does without it."""
    from accel.shims import session as shim_session
    from accel.shims.ort import providers

    asked = [("VitisAIExecutionProvider", {"config_file": "vaip_config.json", "num": 1}), "CPUExecutionProvider"]
    monkeypatch.setenv(shim_session.ENV_DEVICE, "vart:0")
    assert providers.available() == ["VitisAIExecutionProvider", "CPUExecutionProvider"]
    assert providers.normalize(asked, None) == (["VitisAIExecutionProvider", "CPUExecutionProvider"],
                                                [{"config_file": "vaip_config.json", "num": "1"}, {}])
    monkeypatch.setenv(shim_session.ENV_DEVICE, "emu")
    with pytest.warns(UserWarning, match="VitisAIExecutionProvider' is not in available provider names"):
        assert providers.normalize(asked, None) == (["CPUExecutionProvider"], [{}])
    with pytest.raises(ValueError, match="same length"):
        providers.normalize(["CPUExecutionProvider"], [{}, {}])
