"""Generates accel._cffi, the cffi module of the cffi front-end (API mode, out of line).

The cdef is made from the real public header at build time, never copied by hand: the C compiler
preprocesses ``accel/accel.h`` (and ``cffi_helpers.h``, this front-end's few C helpers, which include the
front-ends' run core ``accel_runcore.h``) against empty
stand-ins of the system headers, so that only the library's own declarations remain and cffi knows the
fixed-width types itself; the header's integer macros (``ACCEL_MAX_DIMS``...) are added as
``#define NAME ...``, whose values cffi takes from the compiler. The C source is then written with
``emit_c_code`` and compiled by CMake (py_cffi/CMakeLists.txt), the pyzmq pattern.

    python build_ffi.py --cc gcc --include libaccel/include --include python/native \
        --helpers py_cffi/cffi_helpers.h --out _cffi.c
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import List

import cffi

MODULE = "accel._cffi"

# The system headers the public header may include; each is replaced by an empty file (cffi knows
# their types: size_t, the intN_t family).
SYSTEM_HEADERS = ("stddef.h", "stdint.h", "stdbool.h")

# The Python side of the run core: a job's completion hook (accel_runcore_set_completion_hook), given
# everything the job reports so that Python makes no call back into C; the exit drain's step that
# releases the job handles (accel_runcore_exit_steps).
EXTERN_PYTHON = """
extern "Python" void accel_cffi_job_done(void* user_data, accel_status status, const accel_job_timing* timing,
                                     const char* message);
extern "Python" void accel_cffi_release_jobs(void);
"""


def preprocess(cc: List[str], header: Path, include: List[Path], macros_only: bool = False) -> str:
    with tempfile.TemporaryDirectory() as stand_ins:
        for name in SYSTEM_HEADERS:
            (Path(stand_ins) / name).write_text("")
        cmd = [*cc, "-E", "-P", "-nostdinc", "-I", stand_ins]
        for d in include:
            cmd += ["-I", str(d)]
        if macros_only:
            cmd.append("-dM")
        cmd.append(str(header))
        return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def _wrapper_output(cc: List[str], headers: List[str], include: List[Path], macros_only: bool) -> str:
    # The headers preprocessed together, each once (by its include guard).
    with tempfile.TemporaryDirectory() as tmp:
        wrapper = Path(tmp) / "cdef.h"
        wrapper.write_text("".join(f"#include {h}\n" for h in headers))
        return preprocess(cc, wrapper, include, macros_only)


def declarations(cc: List[str], headers: List[str], include: List[Path]) -> str:
    """The headers' declarations, with no line markers or blank lines."""
    text = _wrapper_output(cc, headers, include, False)
    return "\n".join(line for line in text.splitlines() if line.strip())


INTEGER_MACRO = re.compile(r"#define (ACCEL_[A-Z0-9_]+) (.+)$")


def integer_macros(cc: List[str], headers: List[str], include: List[Path]) -> str:
    """``#define NAME ...`` for every ACCEL_* macro of the headers that has a value (the include
    guards and the export attribute have none)."""
    out = []
    for line in _wrapper_output(cc, headers, include, True).splitlines():
        m = INTEGER_MACRO.match(line.strip())
        if m and not m.group(2).startswith("__attribute__"):
            out.append(f"#define {m.group(1)} ...")
    return "\n".join(sorted(out))


def builder(cc: List[str], include: List[Path], helpers: Path) -> cffi.FFI:
    headers = ["<accel/accel.h>", f'"{helpers.name}"']
    all_includes = [*include, helpers.parent]
    ffi = cffi.FFI()
    ffi.cdef(declarations(cc, headers, all_includes))
    ffi.cdef(integer_macros(cc, headers, all_includes))
    ffi.cdef(EXTERN_PYTHON)
    ffi.set_source(MODULE, f'#include <accel/accel.h>\n#include "{helpers.name}"\n')
    return ffi


def main(argv: List[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cc", required=True, help="the C compiler (and any leading flags), for -E")
    p.add_argument("--include", required=True, type=Path, action="append",
                   help="an include directory: libaccel's public one, the run core's (repeatable)")
    p.add_argument("--helpers", required=True, type=Path, help="cffi_helpers.h")
    p.add_argument("--out", required=True, type=Path, help="the C file to write")
    args = p.parse_args(argv)
    ffi = builder(args.cc.split(";"), args.include, args.helpers)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    ffi.emit_c_code(str(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
