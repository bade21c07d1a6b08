"""The cffi core of accel (see python/accel/CORE_API.md): Python classes over ``accel._cffi``, the cffi
module built from libaccel's public header (py_cffi/build_ffi.py)."""
from __future__ import annotations

import sys

from ._lib import lib
from .buffer import CoreBuffer
from .device import CoreDevice, abi_version, backends, version
from .job import CoreJob, inflight_callbacks, install_exit_hook
from .model import CoreModel
from .tensor import CoreTensor
from .uri import describe, parse_uri

__all__ = ["abi_version", "version", "backends", "inflight_callbacks", "CoreDevice", "CoreBuffer", "CoreModel",
           "CoreJob", "CoreTensor", "FEATURES", "parse_uri", "describe"]

# A libaccel of another ABI major version would misread every struct: refuse to load.
_abi = int(lib.accel_abi_version())
if (_abi >> 16) != lib.ACCEL_ABI_VERSION_MAJOR:
    raise ImportError(f"accel._cffi was built for libaccel ABI {lib.ACCEL_ABI_VERSION_MAJOR}.x, the loaded "
                      f"libaccel has ABI {_abi >> 16}.{_abi & 0xffff}")

#: How this core differs from the pybind11 one (merged into accel.frontend_features). A Python class
#: can offer the buffer protocol only from Python 3.12 on (``__buffer__``, PEP 688).
FEATURES = {"buffer_protocol": sys.version_info >= (3, 12)}

install_exit_hook()
