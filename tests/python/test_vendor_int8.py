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

import accel
from accel import compiler
from standin_toolchain import suffix_for, tool

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from models.device_qdq import (FA, FG, FH, FX, SA, SG, SM, SX, bpu_model, bpu_reference, dpu_model, dpu_reference,
                               tie_inputs)
from models.fixed_point import bpu_quantize, float2fix

pytestmark = pytest.mark.vendor


def _nhwc(a):
    return np.transpose(a, (0, 2, 3, 1)) if a.ndim == 4 else a


def _emulator(model, x, rules):
    with accel.open(f"emu:int8={rules}") as emu:
        m = emu.load(compiler.compile_model(model.SerializeToString(), int8=rules))
        return [np.asarray(o).copy() for o in m.run(x)]


def _report(label, got, want):
    differ = int(np.count_nonzero(got != want))
    print(f"\n{label}: {want.size} elements, {want.size - differ} identical, "
          f"largest difference {int(np.abs(got.astype(np.int64) - want).max())} LSB")
    return differ


@pytest.mark.vendor("vart")
def test_vart_runs_a_power_of_two_model_with_the_dpu_rules(dev, tmp_path):
    rng = np.random.default_rng(11)
    model, p = dpu_model(rng)
    path = tmp_path / "dpu_net.onnx"
    path.write_bytes(model.SerializeToString())
    m = dev.load(tool(".xmodel").build(str(path)))
    assert [i.quant.shifts for i in m.inputs] == [(FX,)]
    assert [o.quant.shifts for o in m.outputs] == [(FA,), (FH,), (FG,)]
    x = tie_inputs(rng)
    got = [np.asarray(o) for o in m.run(_nhwc(float2fix(x, FX)).astype(np.int8))]
    emu = _emulator(model, x, "dpu")
    differ = 0
    for g, w, e, fp, name in zip(got, dpu_reference(x, p), emu, (FA, FH, FG), ("add", "y_sig", "y_pool")):
        differ += _report(f"vart:0 {name} against the DPU reference", g, _nhwc(w))
        differ += _report(f"vart:0 {name} against emu:int8=dpu", g, _nhwc(np.rint(e * 2.0 ** fp).astype(np.int64)))
    assert differ == 0


@pytest.mark.vendor("bpu")
def test_bpu_runs_a_quantized_model_with_the_bpu_rules(dev, tmp_path):
    rng = np.random.default_rng(12)
    model, p = bpu_model(rng)
    path = tmp_path / "bpu_net.onnx"
    path.write_bytes(model.SerializeToString())
    t = tool(suffix_for("bpu"))
    m = dev.load(t.pack([t.model_record(path, {})]))
    assert m.inputs[0].dtype == np.int8 and m.inputs[0].quant.scales == pytest.approx((SX,))
    for o, s in zip(m.outputs, (SA, SG, SM)):
        assert o.dtype == np.int8 and o.quant.scales == pytest.approx((s,))
    x = rng.uniform(-2, 2, (1, 4, 8, 8)).astype(np.float32)
    got = [np.asarray(o) for o in m.run(bpu_quantize(x, SX).astype(np.int8))]
    emu = _emulator(model, x, "bpu")
    differ = 0
    for g, w, e, s, name in zip(got, bpu_reference(x, p), emu, (SA, SG, SM), ("add", "global pool", "matmul")):
        differ += _report(f"bpu:0 {name} against the bpu form", g, w)
        differ += _report(f"bpu:0 {name} against emu:int8=bpu", g,
                          np.rint(e.astype(np.float64) / np.float32(s)).astype(np.int64))
    assert differ == 0


def test_selftest_compares_the_device_with_the_emulator(tmp_path):
    """`accel selftest --compare`: the device's model against the ONNX model it was made from, run on the
    emulator with the device's rules (dpu for vart, bpu for bpu)."""
    from conftest import BACKEND, DEVICE_URI
    from accel.selftest import PASS, run_selftest

    if BACKEND == "vart":
        model, _ = dpu_model(np.random.default_rng(13))
        onnx_path = tmp_path / "net.onnx"
        onnx_path.write_bytes(model.SerializeToString())
        packed = tool(".xmodel").build(str(onnx_path))
    else:
        model, _ = bpu_model(np.random.default_rng(13))
        onnx_path = tmp_path / "net.onnx"
        onnx_path.write_bytes(model.SerializeToString())
        t = tool(suffix_for("bpu"))
        packed = t.pack([t.model_record(onnx_path, {})])
    path = tmp_path / f"net{suffix_for(BACKEND)}"
    path.write_bytes(packed)
    report = run_selftest(DEVICE_URI, path, quick=True, compare=onnx_path)
    result = report.result("compare")
    assert result.status == PASS, (result.summary, result.problems)
    assert result.data["rules"] == {"vart": "dpu", "bpu": "bpu"}[BACKEND]
    assert all(o["identical"] == o["elements"] and o["unit"] == "LSB" for o in result.data["outputs"])
