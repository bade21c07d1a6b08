"""Pow with an integer base or exponent (FORMAT.md op powcast): the forms onnxruntime's CPU Pow has beside float32
^ float32 (elementwise.py's lower_pow, which hands these here)."""
from __future__ import annotations

import numpy as np

from .context import broadcast_shape, unsupported

# Base (and output) and exponent dtypes of onnxruntime's Pow that accel has (it also takes float64, and
# float16 with float32 or float16; not here).
POW_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.int32, np.int64))


def is_mixed(x, e) -> bool:
    """Pow of x ^ e is powcast's: an integer operand (a constant exponent of float32 x stays lower_pow's)."""
    f32 = np.dtype(np.float32)
    return x.dtype != f32 or (e.dtype != f32 and not e.is_const)


def lower_pow_mixed(ctx, node, x, e):
    """Pow (opset 12+) with base int32 or int64 and exponent float32, int32 or int64 (run time or constant), or
    base float32 and exponent int32 or int64 computed at run time: numpy broadcasting, Y of the base's dtype =
    pow(double(x), double(e)) converted as onnxruntime converts it (float32 rounds to nearest; an integer
    truncates toward zero, and NaN or a power outside its range gives the most negative value, as onnxruntime on
    x86: 0 ^ -1 and 5 ^ 31 in int32 give -2147483648). Other dtypes (float16, uint32, uint64, ...) are not
    supported."""
    for v in (x, e):
        if v.dtype not in POW_DTYPES:
            raise unsupported(node, f"dtype {v.dtype} of input '{v.name}' (float32, int32 and int64 only)")
    shape = broadcast_shape(node, x.shape, e.shape)
    y = ctx.define(ctx.output(node), x.dtype, shape)
    ctx.emit("powcast", [x.name, e.name], [y], node.name)
