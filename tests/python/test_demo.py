"""The README's main job: the installed `accel-demo` compiles the bundled CNN, runs it on the emulator
through the C example program, and agrees with onnxruntime."""
import re
import shutil
import subprocess
import sys


def run_demo(*args):
    exe = shutil.which("accel-demo")
    cmd = [exe] if exe else [sys.executable, "-m", "accel.demo"]
    return subprocess.run(cmd + list(args), capture_output=True, text=True, timeout=300)


def test_demo_matches_onnxruntime():
    result = run_demo("--repeat", "5")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "accel-demo: OK" in result.stdout
    match = re.search(r"max abs difference from onnxruntime \S+: ([0-9.e+-]+)", result.stdout)
    assert match, result.stdout
    assert float(match.group(1)) <= 1e-4
    assert re.search(r"latency: median [0-9.]+ ms", result.stdout)


def test_demo_reports_a_bad_device_uri():
    result = run_demo("--uri", "emu:cores=0", "--repeat", "1")
    assert result.returncode != 0
    assert "cores='0'" in result.stderr
