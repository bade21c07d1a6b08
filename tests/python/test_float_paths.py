"""The float kernels' code paths (ACCEL_EMU_ISA caps the path a load picks: portable, avx2, avx512 for
avx512vnni and amx) each give onnxruntime's answer on the catalog's CNNs, so a CPU without AVX-512 runs
tested code. Each run checks, from the device's name, that the path under test is the one loads pick."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

import accel
from accel import compiler

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from models import catalog

pytestmark = pytest.mark.emulator

CAPS = {"portable": "portable", "avx2": "avx2", "avx512": "avx512vnni"}  # float path -> ACCEL_EMU_ISA
REL_TOL = 1e-4


def float_path(monkeypatch, cap: str) -> str:
    monkeypatch.setenv("ACCEL_EMU_ISA", cap)
    with accel.open("emu") as d:
        name = d.info.name
    return name.split("float: ", 1)[1].split(",", 1)[0]


def available(monkeypatch) -> list:
    return [path for path, cap in CAPS.items() if float_path(monkeypatch, cap) == path]


def test_the_portable_path_is_always_there(monkeypatch):
    assert available(monkeypatch)[0] == "portable"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return tmp_path_factory.mktemp("float_paths")


@pytest.mark.parametrize("name", ["resnet18", "mobilenetv2", "yolo", "ppocr_cls"])
def test_every_path_gives_onnxruntimes_answer(monkeypatch, built, name):
    spec = catalog.MODELS[name]
    path = catalog.model_path(name, built if spec.build else None)
    x = spec.make_input(spec.test_shape)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    want = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"]).run(None, {spec.input_name: x})
    accm = compiler.compile_model(str(path), {spec.input_name: spec.test_shape})
    paths = available(monkeypatch)
    for fpath in paths:
        monkeypatch.setenv("ACCEL_EMU_ISA", CAPS[fpath])
        with accel.open("emu:cores=1") as d:
            assert f"float: {fpath}," in d.info.name, d.info.name
            got = d.load(accm).run(x)
        for i, (g, w) in enumerate(zip(got, want)):
            err = float(np.max(np.abs(np.asarray(g) - w)))
            bound = REL_TOL * float(np.max(np.abs(w)))
            print(f"{name} output {i} on {fpath}: max abs error {err:.3g} (bound {bound:.3g})")
            assert err <= bound, f"{name} output {i} on the {fpath} path: max abs error {err:.3g} > {bound:.3g}"
    print(f"{name}: paths {', '.join(paths)}")
