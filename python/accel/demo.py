"""accel-demo: compile the bundled small CNN and run it on the emulator through the C ABI.

Compiles ``models/tiny_cnn.onnx`` to the emulator's format with ``accel.compiler``, runs it with the
C example program shipped in the package (``bin/accel_run_model``, which uses only libaccel's public
ABI), and compares the result with a reference runtime (onnxruntime when installed, else ONNX's own
reference evaluator). Exits non-zero if the numbers disagree by more than 1e-4 of their magnitude.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List, NoReturn, cast

import numpy as np

from ._lazy_import import import_or_undo

PACKAGE_DIR = Path(__file__).resolve().parent
MODEL = PACKAGE_DIR / "models" / "tiny_cnn.onnx"
TOLERANCE = 1e-4


def runner_path() -> Path:
    """The C example program: installed with the package, or ACCEL_RUN_MODEL in a development tree."""
    override = os.environ.get("ACCEL_RUN_MODEL")
    path = Path(override) if override else PACKAGE_DIR / "bin" / "accel_run_model"
    if not path.exists():
        raise SystemExit(f"accel-demo: the C runner {path} is missing; reinstall accel (pip install .)")
    return path


def runner_environment() -> dict[str, str]:
    """The environment for the C runner: its driver finds scipy-openblas32's library through a RUNPATH
    that holds only when that package sits beside accel (not in a venv over the system's packages), so
    add the package's library folder to the loader's path, as accel.runtime._blas does for this process."""
    env = dict(os.environ)
    try:
        with import_or_undo():
            import scipy_openblas32
    except ImportError:
        return env
    env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (scipy_openblas32.get_lib_dir(),
                                                         env.get("LD_LIBRARY_PATH")) if p)
    return env


def reference_outputs(model_path: Path, feeds: dict[str, np.ndarray]) -> tuple[str, list[np.ndarray]]:
    try:
        with import_or_undo():
            import onnxruntime as ort

        session = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
        return "onnxruntime " + ort.__version__, session.run(None, feeds)
    except ImportError:
        with import_or_undo():
            from onnx.reference import ReferenceEvaluator

        outputs = ReferenceEvaluator(str(model_path)).run(None, feeds)
        return "onnx.reference", cast(List[np.ndarray], outputs)  # a list when no output names are given


def _repeat(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return n


def _uri(text: str) -> str:
    """``text`` if libaccel's URI parser reads a scheme in it. A scheme of blanks, or one starting with "-"
    (which the C runner would read as one of its own options), names no device either."""
    from .errors import InvalidArgumentError
    from .runtime.device_uri import parse_uri

    try:
        scheme = parse_uri(text).scheme
    except InvalidArgumentError:  # no scheme: "" or ":x"
        scheme = ""
    if not scheme.strip() or scheme.startswith("-"):
        raise argparse.ArgumentTypeError(f"must be a device URI such as emu or emu:cores=2, got {text!r}")
    return text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The demo's options (shared by ``accel-demo`` and ``accel demo``), checked here, before the C runner is
    called: a bad value is a usage error (exit 2) naming the option, not the runner's own usage text."""
    parser.add_argument("--uri", default="emu", type=_uri, help="device URI (default: emu, the emulator)")
    parser.add_argument("--repeat", type=_repeat, default=50, help="timed runs, >= 1 (default 50)")


def run_model_main() -> NoReturn:
    """The ``accel_run_model`` console script: the package's C runner (``bin/accel_run_model``) with the
    process's arguments, in the environment it needs (see :func:`runner_environment`)."""
    path = runner_path()
    os.execve(str(path), [str(path), *sys.argv[1:]], runner_environment())  # replaces the process, or raises


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="accel-demo", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


def run(args: argparse.Namespace) -> int:
    """Compiles, runs and compares the bundled CNN with the options of :func:`add_arguments`."""
    import accel

    with import_or_undo():
        from . import compiler

    try:  # the device, before the runner: its error is then accel's own, naming the option
        accel.open(args.uri).close()
    except accel.AccelError as e:
        print(f"accel-demo: --uri {args.uri!r}: {e}", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory(prefix="accel-demo-") as tmp:
        work = Path(tmp)
        t0 = time.perf_counter()
        compiled = compiler.compile_model(str(MODEL))
        compile_ms = (time.perf_counter() - t0) * 1e3
        accm = work / "tiny_cnn.accm"
        accm.write_bytes(compiled)
        print(f"compiled {MODEL.name} -> {accm.name}: {len(compiled)} bytes in {compile_ms:.1f} ms")

        image = np.random.default_rng(0).random((1, 3, 64, 64), dtype=np.float32)
        (work / "image.bin").write_bytes(image.tobytes())
        cmd = [str(runner_path()), str(accm), "--uri", args.uri, "--input", str(work / "image.bin"),
               "--output-prefix", str(work / "out"), "--repeat", str(args.repeat)]
        result = subprocess.run(cmd, capture_output=True, text=True, env=runner_environment())
        sys.stdout.write(result.stdout)
        if result.returncode != 0:
            sys.stderr.write(result.stderr)
            return result.returncode
        got = np.frombuffer((work / "out0.bin").read_bytes(), dtype=np.float32).reshape(1, 10)

    name, (expected,) = reference_outputs(MODEL, {"image": image})
    error = float(np.max(np.abs(got - expected)))
    bound = TOLERANCE * max(1.0, float(np.max(np.abs(expected))))
    top = np.argsort(-got[0])[:3]
    print("top-3 classes: " + ", ".join(f"{int(c)} ({got[0, c]:.4f})" for c in top))
    print(f"max abs difference from {name}: {error:.2e} (bound {bound:.0e})")
    if error > bound:
        print("accel-demo: MISMATCH", file=sys.stderr)
        return 1
    print("accel-demo: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
