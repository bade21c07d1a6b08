"""One dtype table, checked: ``accel.runtime.dtypes`` (the package's table of libaccel's codes) against every other
copy, so that a code added or changed in one place and not in another fails here, naming both.

The authority is the C ABI: ``accel.h``'s enums (read through the cffi module, whose cdef the build makes
from the header) and libaccel's own ``accel_dtype_size`` and ``accel_dtype_name``. The copies checked
against it: ``accel.runtime.dtypes`` (codes, layouts, quantization schemes, ``MAX_DIMS``), the compiler's
``.accm`` writer (``accel.compiler.accm.DTYPES``), and the element types the DeviceTensor takes over each
binding's CoreTensor (accel.DeviceTensor checks them against the table; py_pybind/tensor.cpp maps each to its
buffer-protocol format, a copy only C can hold).
"""
from __future__ import annotations

import numpy as np
import pytest

from accel import _cffi_core, _pybind
from accel.runtime import dtypes
from accel._cffi import ffi, lib
from accel.runtime.device_tensor import tensor_class

CORES = {"pybind": _pybind, "cffi": _cffi_core}


def _enum(prefix: str) -> dict:
    """``{value: NAME}`` of accel.h's constants that start with ``prefix`` (``NAME`` without it)."""
    return {getattr(lib, n): n[len(prefix):] for n in dir(lib) if n.startswith(prefix)}


def test_dtype_codes_are_accel_h_s():
    header = _enum("ACCEL_DTYPE_")
    assert header.pop(0) == "UNKNOWN"
    assert sorted(dtypes.DTYPE_BY_CODE) == sorted(header), "accel.runtime.dtypes and accel.h list other codes"
    for code, name in header.items():
        expected = np.dtype(name.lower())  # ACCEL_DTYPE_FLOAT16 -> float16, ACCEL_DTYPE_BOOL -> bool
        assert dtypes.DTYPE_BY_CODE[code] == expected, f"code {code}: accel.h says {name}"


@pytest.mark.parametrize("code", sorted(dtypes.DTYPE_BY_CODE))
def test_libaccel_names_and_sizes_each_code_as_the_package_does(code):
    dt = dtypes.DTYPE_BY_CODE[code]
    assert lib.accel_dtype_size(code) == dt.itemsize, f"accel_dtype_size({code}) != {dt}.itemsize"
    assert ffi.string(lib.accel_dtype_name(code)).decode() == dt.name, f"accel_dtype_name({code})"
    assert dtypes.dtype_to_code(dt) == code and dtypes.dtype_from_code(code) is dt


def test_the_compiler_writes_the_same_codes():
    from accel.compiler import accm

    assert accm.DTYPES == dtypes.DTYPE_BY_CODE


def test_layouts_quantization_and_dims_are_accel_h_s():
    layouts = _enum("ACCEL_LAYOUT_")
    assert {c: (None if n == "NONE" else n) for c, n in layouts.items()} == dtypes.LAYOUT_BY_CODE
    quant = _enum("ACCEL_QUANT_")
    named = {"NONE": None, "PER_TENSOR": "per_tensor", "PER_AXIS": "per_axis", "SHIFT": "shift"}
    assert {c: named[n] for c, n in quant.items()} == dtypes.QUANT_TYPE_BY_CODE
    assert dtypes.MAX_DIMS == lib.ACCEL_MAX_DIMS


# Every NumPy dtype a caller might pass: the supported ones must be accepted, every other refused.
_PROBES = sorted({np.dtype(t) for t in np.sctypeDict.values() if np.dtype(t).kind in "biufcmMV?"}
                 | {d.newbyteorder() for d in dtypes.SUPPORTED_DTYPES if d.itemsize > 1}, key=str)


@pytest.mark.parametrize("frontend", CORES)
def test_each_binding_s_device_tensor_takes_exactly_the_table_s_dtypes(frontend):
    core = CORES[frontend]
    buffer = core.CoreDevice("emu").alloc(64)
    accepted = set()
    for dt in _PROBES:
        try:
            t = tensor_class(core.CoreTensor)(buffer, (2,), dt, None, "emu")
        except TypeError:
            continue
        assert t.numpy().dtype == dt and t.nbytes == 2 * dt.itemsize, (frontend, dt)
        accepted.add(dt)
    assert accepted == set(dtypes.SUPPORTED_DTYPES), (
        f"{frontend}: DeviceTensor takes {sorted(map(str, accepted - dtypes.SUPPORTED_DTYPES))} beyond the "
        f"table and refuses {sorted(map(str, dtypes.SUPPORTED_DTYPES - accepted))} of it")
