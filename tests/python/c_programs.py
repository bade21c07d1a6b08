"""C programs built and run against the installed package, as a user of the pip package would: its
headers (accel/include), its libaccel (accel/lib, found again at run time through an rpath) and the
emulator driver beside it. Used by the tests of the docs' and the examples' C programs."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Dict, Optional

import accel
from accel.demo import runner_environment

PACKAGE = Path(accel.__file__).resolve().parent


def build(source: Path, out: Path, *flags: str) -> None:
    """Compiles `source` into `out` with every warning an error; `flags` add a standard, -shared..."""
    lib = PACKAGE / "lib"
    assert (lib / "libaccel.so").exists(), f"no libaccel.so in {lib}"
    cmd = [os.environ.get("CC", "cc"), "-Wall", "-Wextra", "-Werror", "-pedantic", "-I", str(PACKAGE / "include"),
           *flags, str(source), "-o", str(out), "-L", str(lib), "-laccel", f"-Wl,-rpath,{lib}"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{' '.join(cmd)}\n{done.stderr}"


def environment(driver_path: Optional[str] = None) -> Dict[str, str]:
    """The environment to run such a program in: the emulator driver's BLAS found wherever pip put it
    (accel.demo.runner_environment), and ACCEL_DRIVER_PATH when given ("" for the package's drivers)."""
    env = runner_environment()
    if driver_path is not None:
        env["ACCEL_DRIVER_PATH"] = driver_path
    return env
