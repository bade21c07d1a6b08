"""The tensor record's quantization (emulator/FORMAT.md, minor 2): float32 scales and int32 zero points, one pair
for the tensor or one along an axis, or u8 power-of-two shifts (real = q / 2^shift: a fix-point device's record of
the scales 2^-shift). The record's fields and its bytes in the data section for the writer, the values back for the
reader (accm.py)."""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

__all__ = ["QUANT_NONE", "QUANT_PER_AXIS", "QUANT_PER_TENSOR", "QUANT_SHIFT", "quant_bytes", "quant_fields",
           "read_quant"]

QUANT_NONE, QUANT_PER_TENSOR, QUANT_PER_AXIS, QUANT_SHIFT = 0, 1, 2, 3


def quant_bytes(t) -> Optional[bytes]:
    """The data-section bytes of accm.Tensor `t`'s quantization (4-aligned by the writer), None without one;
    ValueError for parameters the record cannot hold."""
    if t.scales is not None:
        scales = np.asarray(t.scales, "<f4").reshape(-1)
        zeros = np.asarray(t.zero_points, "<i4").reshape(-1)
        if scales.size != zeros.size or scales.size < 1:
            raise ValueError(f"tensor '{t.name}': {scales.size} scales and {zeros.size} zero points")
        return scales.tobytes() + zeros.tobytes()
    if t.shifts is not None:
        shifts = np.asarray(t.shifts).reshape(-1)
        if shifts.size < 1 or shifts.min() < 0 or shifts.max() > 255:
            raise ValueError(f"tensor '{t.name}': shifts {shifts.tolist()[:8]} (1 or more, each 0..255)")
        return shifts.astype(np.uint8).tobytes()
    return None


def quant_fields(t) -> Tuple[int, int, int]:
    """The record's (quant_type, quant_axis, quant_count) of accm.Tensor `t`."""
    axis = -1 if t.quant_axis is None else int(t.quant_axis)
    if t.scales is not None:
        return (QUANT_PER_TENSOR if t.quant_axis is None else QUANT_PER_AXIS), axis, int(np.asarray(t.scales).size)
    if t.shifts is not None:
        return QUANT_SHIFT, axis, int(np.asarray(t.shifts).size)
    return QUANT_NONE, -1, 0


def read_quant(t: dict, buf, data0: int, check_range) -> None:
    """Sets a read tensor record `t`'s "scales" and "zero_points", or "shifts", from the data section at `data0`
    of `buf`; check_range(what, offset, size) refuses a range outside the data section."""
    count, offset = t["quant_count"], t["quant_offset"]
    if t["quant_type"] in (QUANT_PER_TENSOR, QUANT_PER_AXIS):
        check_range(f"tensor '{t['name']}' quantization", offset, 8 * count)
        t["scales"] = np.frombuffer(buf, "<f4", count, data0 + offset).astype(np.float32)
        t["zero_points"] = np.frombuffer(buf, "<i4", count, data0 + offset + 4 * count).astype(np.int32)
    elif t["quant_type"] == QUANT_SHIFT:
        check_range(f"tensor '{t['name']}' quantization", offset, count)
        t["shifts"] = np.frombuffer(buf, np.uint8, count, data0 + offset).copy()
