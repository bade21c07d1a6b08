"""Makes the BLAS that the emulator driver was built against loadable wherever pip installed it.

The wheel's driver finds libscipy_openblas through a RUNPATH relative to site-packages, which holds only
when scipy-openblas32 sits in the same site-packages as accel. In a virtualenv that sees the system's
packages, or with a user-site install, it may sit elsewhere: loading the library by its full path
first lets the driver's dependency resolve to it (the dynamic loader matches it by its soname).
"""
from __future__ import annotations

import ctypes
import os
import sys


def preload() -> None:
    """Loads scipy-openblas32's library, if that package is installed (quietly does nothing if not)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import scipy_openblas32
    except ImportError:  # a driver built with a system CBLAS or the portable GEMM needs nothing
        return
    lib_dir = scipy_openblas32.get_lib_dir()
    try:
        names = sorted(os.listdir(lib_dir))
    except OSError:
        return
    for name in names:
        if name.startswith("libscipy_openblas") and ".so" in name:
            try:
                ctypes.CDLL(os.path.join(lib_dir, name), mode=ctypes.RTLD_GLOBAL)
            except OSError:
                pass
            return
