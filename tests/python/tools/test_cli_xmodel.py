"""The command line with Vitis AI .xmodel files (docs/xmodel.md's commands): a compiled file and the quantizer's
compile to .accm, run (with the tensors the DPU writes saved as extra outputs), bench, compare layer by layer and
serve as selftest's reference, each on the emulator with the DPU's rules."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import accel
from accel import cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "emulator"))
from test_xmodel import _network
from test_xmodel_quantized import _quantized

DPU = "emu:int8=dpu"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """(the compiled .xmodel, the quantizer's, an input .npy) of test_xmodel's network."""
    d = tmp_path_factory.mktemp("xmodel_cli")
    compiled, p = _network(np.random.default_rng(11))
    (d / "net.xmodel").write_bytes(compiled.bytes())
    (d / "net_int.xmodel").write_bytes(_quantized(p).bytes())
    np.save(d / "x.npy", np.random.default_rng(12).integers(-128, 128, (1, 8, 8, 3)).astype(np.int8))
    return d / "net.xmodel", d / "net_int.xmodel", d / "x.npy"


def test_compile_writes_the_dpu_parts_accm(files, tmp_path, capsys):
    net, quantized, x = files
    for src in (net, quantized):
        dst = tmp_path / f"{src.stem}.accm"
        assert cli.main(["compile", str(src), "-o", str(dst)]) == 0
        assert "load it on emu:int8=dpu" in capsys.readouterr().out
        with accel.open(DPU) as dev:
            from_accm, from_xmodel = dev.load(dst), dev.load(src)
            a, b = from_accm.run(np.load(x)), from_xmodel.run(np.load(x))
            assert [o.name for o in from_accm.outputs] == [o.name for o in from_xmodel.outputs]
            assert all(np.array_equal(u, v) for u, v in zip(a, b))
    assert cli.main(["compile", str(net), "-o", str(tmp_path / "bad.accm"), "--int8", "ort"]) == 1
    assert "open 'emu:int8=dpu'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["compile", str(net), "--check"])
    assert "--check applies to ONNX models" in capsys.readouterr().err


def test_run_saves_the_tensors_the_dpu_writes(files, tmp_path, capsys):
    net, _, x = files
    out = tmp_path / "out.npz"
    assert cli.main(["run", str(net), "--device", DPU, "--input", str(x), "--extra-outputs", "pool_fix,cat_fix",
                     "--output", str(out)]) == 0
    saved = np.load(out)
    assert saved["pool_fix"].shape == (1, 4, 4, 8) and saved["cat_fix"].shape == (1, 4, 4, 12)
    with pytest.raises(SystemExit):
        cli.main(["run", str(net), "--device", DPU, "--input", str(x), "--input-shape", "x=1,8,8,3"])
    assert "--input-shape applies to ONNX models only" in capsys.readouterr().err


def test_bench_runs_it(files, capsys):
    net, _, _ = files
    assert cli.main(["bench", str(net), "--device", DPU, "--runs", "20"]) == 0
    assert "latency" in capsys.readouterr().out


def test_compare_lists_each_layer_of_the_two_files(files, tmp_path, capsys):
    net, quantized, _ = files
    report = tmp_path / "cmp.json"
    assert cli.main(["compare", str(quantized), str(net), "--device", DPU, "--json", str(report)]) == 0
    rows = json.loads(report.read_text())
    assert [r["tensor"] for r in rows][:4] == ["x", "conv1_fix", "pool_fix", "dw_fix"]
    assert all(r["differing"] == 0 for r in rows)


def test_selftest_takes_a_xmodel_as_its_reference(files, capsys):
    """The device's model held against a .xmodel on the emulator (a board's vart:0 against its own file: the same
    call, tests/python/drivers/test_vendor_int8.py)."""
    from accel.selftest import PASS, run_selftest

    net, quantized, _ = files
    report = run_selftest(DPU, net, quick=True, compare=net)
    result = report.result("compare")
    assert result.status == PASS, (result.summary, result.problems)
    assert all(o["identical"] == o["elements"] for o in result.data["outputs"])
    # The quantizer's file gives the one output no op of it reads; the compiled file gives the add as well.
    assert run_selftest(DPU, net, quick=True, compare=quantized).result("compare").problems == [
        "the device's model has 2 outputs, net_int.xmodel 1"]
    capsys.readouterr()
    assert cli.main(["selftest", "--device", DPU, "--model", str(net), "--compare", str(net), "--quick"]) == 0
