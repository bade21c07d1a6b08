"""The shim launcher (accel.shims.launcher): `accel shim VENDOR [options] -- COMMAND` and `python -m accel.shims`
run the command with the vendor's names importable from accel and the options in its environment; an installed
real package is not shadowed without --force; --profile writes the per-layer trace of every job at exit."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import accel
from accel.shims import launcher

pytestmark = pytest.mark.emulator

TINY = Path(accel.__file__).resolve().parent / "models" / "tiny_cnn.onnx"


def shim(*args, cwd=None):
    """(exit code, stdout, stderr) of `python -m accel.shims ARGS`."""
    p = subprocess.run([sys.executable, "-m", "accel.shims", *map(str, args)], capture_output=True, text=True,
                       cwd=cwd, timeout=300)
    return p.returncode, p.stdout, p.stderr


def script(tmp_path, body: str) -> Path:
    path = tmp_path / "app.py"
    path.write_text(textwrap.dedent(body))
    return path


def test_the_vendors_names_come_from_accel_and_the_options_from_the_environment(tmp_path):
    app = script(tmp_path, """
        import os, hobot_dnn
        print(hobot_dnn.__file__)
        print(os.environ["ACCEL_SHIM_VENDOR"], os.environ.get("ACCEL_SHIM_DEVICE"), os.environ.get("ACCEL_SHIM_SOURCE"))
    """)
    code, out, err = shim("horizon", "--device", "emu:cores=1", "--source", "net.onnx", "--", sys.executable, app,
                          cwd=tmp_path)
    assert code == 0, err
    where, options = out.splitlines()
    assert where.startswith(str(launcher.importable("horizon")))
    assert options == f"horizon emu:cores=1 {tmp_path / 'net.onnx'}"


def test_an_installed_real_package_is_not_shadowed_without_force(tmp_path):
    pytest.importorskip("onnxruntime")  # installed with the test requirements: the case this checks
    app = script(tmp_path, "import onnxruntime, sys; sys.exit(0 if 'accel' in onnxruntime.__file__ else 3)\n")
    code, out, err = shim("onnxruntime", "--", sys.executable, app)
    assert code == 2 and "the real onnxruntime" in err and "is installed here" in err and "--force" in err, err
    assert out == ""


def test_exit_codes_and_usage_errors(tmp_path):
    app = script(tmp_path, "import sys; sys.exit(7)\n")
    assert shim("horizon", "--", sys.executable, app)[0] == 7
    code, _, err = shim("horizon")
    assert code == 2 and "no command to run" in err
    code, _, err = shim("horizon", "--", "no-such-command-here")
    assert code == 127 and "no such command: 'no-such-command-here'" in err
    code, _, err = shim("tensorflow", "--", sys.executable, app)
    assert code == 2 and "invalid choice: 'tensorflow'" in err
    code, _, err = shim("horizon", "--compare-json", "rows.json", "--", sys.executable, app)
    assert code == 2 and "--compare-json writes --compare's table: give --compare too" in err
    # The accel command is the same launcher.
    p = subprocess.run([sys.executable, "-c", "import sys; from accel.cli import main; sys.exit(main())", "shim",
                        "horizon", "--", sys.executable, app], capture_output=True, text=True, timeout=300)
    assert p.returncode == 7, p.stderr


def test_profile_writes_every_job_per_layer(tmp_path):
    app = script(tmp_path, f"""
        import numpy as np
        from accel.shims import session
        model = session.device().load({str(TINY)!r})
        for _ in range(3):
            model.run(np.zeros(model.inputs[0].shape, np.float32))
    """)
    trace = tmp_path / "trace.json"
    code, _, err = shim("onnxruntime", "--force", "--profile", trace, "--", sys.executable, app)
    assert code == 0, err
    assert f"3 jobs profiled: {trace}" in err
    events = json.loads(trace.read_text())["traceEvents"]
    assert len([e for e in events if e.get("ph") == "X"]) > 3  # the jobs and their layers
    assert os.path.getsize(trace) > 0
