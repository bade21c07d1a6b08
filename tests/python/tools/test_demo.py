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


def test_demo_checks_its_options_before_calling_the_runner():
    for args, option in ((["--repeat", "0"], "--repeat"), (["--repeat", "x"], "--repeat"), (["--uri", ""], "--uri")):
        result = run_demo(*args)
        assert result.returncode == 2 and option in result.stderr, (args, result.stderr)
        assert "usage: accel-demo" in result.stderr and "accel_run_model" not in result.stderr, result.stderr
    result = run_demo("--uri", "nope:0", "--repeat", "1")
    assert result.returncode == 2 and "--uri 'nope:0'" in result.stderr, result.stderr


def run_model_command():
    """The installed `accel_run_model` console script; it is installed beside `accel-demo` (a source tree on
    PYTHONPATH has neither: its function, then)."""
    exe = shutil.which("accel_run_model")
    if shutil.which("accel-demo"):
        assert exe, "accel-demo is installed but not accel_run_model"
    return [exe] if exe else [sys.executable, "-c", "import sys, accel.demo; sys.exit(accel.demo.run_model_main())"]


def test_the_c_runner_is_a_console_script_and_says_when_it_runs_on_zeros(tmp_path):
    from accel import compiler
    from accel.demo import MODEL

    accm = tmp_path / "cnn.accm"
    compiler.compile_file(MODEL, accm)
    result = subprocess.run(run_model_command() + [str(accm), "--repeat", "2"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "input 0 'image': no --input file given, running on zeros" in result.stdout, result.stdout
    assert re.search(r"latency: median [0-9.]+ ms", result.stdout)
