"""Quantized models through the vendor drivers and the stand-in SDKs, which compute as their devices do: a
power-of-two QDQ model packed as an `.xmodel` (its DPU tensors xint8 with the model's own fix points) on
`vart:0`, and a QDQ model of float scales packed as a `.bin` / `.hbm` (int8 tensors with the model's
scales) on `bpu:0`, each held bit for bit against the numpy form of its device's arithmetic
(tests/models/fixed_point.py) and against the emulator with the same rules. Deselected on the emulator
(conftest.py); the vendor runs of the suite (ci/test.sh) run them. `pytest -s` prints the counts.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from standin_toolchain import suffix_for, tool

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from models.device_qdq import (FA, FG, FH, FX, SA, SG, SM, SX, bpu_model, bpu_reference, count_differing, dpu_model,
                               dpu_reference, run_on_emulator, tie_inputs)
from models.fixed_point import bpu_quantize, float2fix

pytestmark = pytest.mark.vendor


def _nhwc(a):
    return np.transpose(a, (0, 2, 3, 1)) if a.ndim == 4 else a


def _onnx_file(tmp_path, model):
    path = tmp_path / "net.onnx"
    path.write_bytes(model.SerializeToString())
    return path


def _packed(backend, model, tmp_path):
    """The model in the backend's stand-in format: an .xmodel of its fix points, a .bin / .hbm of its scales."""
    path = _onnx_file(tmp_path, model)
    if backend == "vart":
        return tool(".xmodel").build(str(path))
    t = tool(suffix_for("bpu"))
    return t.pack([t.model_record(path, {})])


def _held(device, got, references, emulated, names, to_integers, layout=lambda a: a):
    """The device's outputs against the numpy form and the emulator's (real values, to_integers(value, i)
    makes them the device's integers): how many elements differ in all."""
    differ = 0
    for i, (g, w, e, name) in enumerate(zip(got, references, emulated, names)):
        differ += count_differing(f"{device} {name} against the numpy form", g, layout(w))
        differ += count_differing(f"{device} {name} against the emulator", g, layout(to_integers(e, i)))
    return differ


@pytest.mark.vendor("vart")
def test_vart_runs_a_power_of_two_model_with_the_dpu_rules(dev, tmp_path):
    rng = np.random.default_rng(11)
    model, p = dpu_model(rng)
    m = dev.load(_packed("vart", model, tmp_path))
    assert [i.quant.shifts for i in m.inputs] == [(FX,)]
    # The DPU subgraph's outputs in their tensors' name order (XIR's, which VART's runner keeps), where the ONNX
    # model has ar_dq, y_sig, y_pool.
    assert [o.name for o in m.outputs] == ["ar_dq", "y_pool", "y_sig"]
    assert [o.quant.shifts for o in m.outputs] == [(FA,), (FG,), (FH,)]
    order = (0, 2, 1)
    x = tie_inputs(rng)
    got = [np.asarray(o) for o in m.run(_nhwc(float2fix(x, FX)).astype(np.int8))]
    references, emulated = dpu_reference(x, p), run_on_emulator(model, x, "dpu")
    fps = (FA, FG, FH)
    assert _held("vart:0", got, [references[i] for i in order], [emulated[i] for i in order],
                 ("add", "y_pool", "y_sig"), lambda e, i: np.rint(e * 2.0 ** fps[i]).astype(np.int64), _nhwc) == 0


@pytest.mark.vendor("bpu")
def test_bpu_runs_a_quantized_model_with_the_bpu_rules(dev, tmp_path):
    rng = np.random.default_rng(12)
    model, p = bpu_model(rng)
    m = dev.load(_packed("bpu", model, tmp_path))
    assert m.inputs[0].dtype == np.int8 and m.inputs[0].quant.scales == pytest.approx((SX,))
    for o, s in zip(m.outputs, (SA, SG, SM)):
        assert o.dtype == np.int8 and o.quant.scales == pytest.approx((s,))
    x = rng.uniform(-2, 2, (1, 4, 8, 8)).astype(np.float32)
    got = [np.asarray(o) for o in m.run(bpu_quantize(x, SX).astype(np.int8))]
    scales = (SA, SG, SM)
    assert _held("bpu:0", got, bpu_reference(x, p), run_on_emulator(model, x, "bpu"), ("add", "global pool", "matmul"),
                 lambda e, i: np.rint(e.astype(np.float64) / np.float32(scales[i])).astype(np.int64)) == 0


def test_selftest_compares_the_device_with_the_emulator(tmp_path):
    """`accel selftest --compare`: the device's model against the ONNX model it was made from, run on the
    emulator with the device's rules (dpu for vart, bpu for bpu)."""
    from conftest import BACKEND, DEVICE_URI
    from accel.selftest import PASS, run_selftest

    model, _ = (dpu_model if BACKEND == "vart" else bpu_model)(np.random.default_rng(13))
    path = tmp_path / f"net{suffix_for(BACKEND)}"
    path.write_bytes(_packed(BACKEND, model, tmp_path))
    report = run_selftest(DEVICE_URI, path, quick=True, compare=_onnx_file(tmp_path, model))
    result = report.result("compare")
    assert result.status == PASS, (result.summary, result.problems)
    assert result.data["rules"] == {"vart": "dpu", "bpu": "bpu"}[BACKEND]
    assert all(o["identical"] == o["elements"] and o["unit"] == "LSB" for o in result.data["outputs"])
