"""Quantization of a tensor in the compiler's graph: its scale and zero point, per tensor or per axis, as
FORMAT.md's tensor record holds them; and the arithmetic the compiler itself does on constants (a
DequantizeLinear of a weight that no int8 op takes folds to float32 as onnxruntime computes it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import CompileError

QUANT_DTYPES = (np.dtype(np.int8), np.dtype(np.uint8))
I32 = np.dtype(np.int32)


@dataclass(frozen=True, eq=False)
class Quant:
    """real = (q - zero_point) * scale. scale is float32 and zero_point int64, both 1-D of one length:
    1 for per tensor (axis None), else the size of dim `axis`."""

    scale: np.ndarray
    zero_point: np.ndarray
    axis: int | None = None

    @property
    def per_tensor(self) -> bool:
        return self.axis is None

    def same(self, other: Quant | None) -> bool:
        """The same numbers (a per-axis record with one entry equals the per-tensor one)."""
        if other is None:
            return False
        if self.scale.size != other.scale.size or (self.scale.size > 1 and self.axis != other.axis):
            return False
        return bool(np.array_equal(self.scale.view(np.uint32), other.scale.view(np.uint32))
                    and np.array_equal(self.zero_point, other.zero_point))

    def broadcast(self, array: np.ndarray, rank: int) -> np.ndarray:
        """A per-axis array (scale or zero point) shaped to broadcast against a tensor of `rank`."""
        if self.axis is None:
            return array.reshape(())
        shape = [1] * rank
        shape[self.axis] = array.size
        return array.reshape(shape)


def make(scale, zero_point, axis, dtype, shape, what: str) -> Quant:
    """A Quant from an ONNX scale and zero point (constants), checked against the tensor's dtype and
    shape; `what` names the tensor for errors. axis is the ONNX attribute (used only for 1-D scales
    with more than one element, as ONNX says)."""
    s = np.asarray(scale)
    if s.dtype != np.float32:
        raise CompileError(f"{what}: scale of dtype {s.dtype} is not supported (float32 only)")
    z = np.zeros(s.shape, np.int64) if zero_point is None else np.asarray(zero_point)
    if zero_point is not None and z.dtype not in QUANT_DTYPES + (I32,):
        raise CompileError(f"{what}: zero point of dtype {z.dtype} is not supported (int8, uint8, int32)")
    if s.ndim > 1 or (z.shape != s.shape and not s.size == z.size == 1):
        raise CompileError(f"{what}: scale {s.shape} and zero point {z.shape} must be scalars or one 1-D "
                           f"shape (blocked quantization is not supported)")
    rank = len(shape)
    if s.size == 1:  # one scale is per tensor, whatever axis says
        norm_axis = None
    else:
        a = int(1 if axis is None else axis)
        norm_axis = a + rank if a < 0 else a
        if not 0 <= norm_axis < rank or shape[norm_axis] != s.size:
            raise CompileError(f"{what}: {s.size} scales along axis {a} do not fit shape {tuple(shape)}")
    flat_s = s.reshape(-1).astype(np.float32)
    if not (np.isfinite(flat_s).all() and (flat_s > 0).all()):
        raise CompileError(f"{what}: every scale must be finite and > 0, got {flat_s[:8].tolist()}")
    flat_z = z.reshape(-1).astype(np.int64)
    if dtype in QUANT_DTYPES:
        info = np.iinfo(dtype)
        if (flat_z < info.min).any() or (flat_z > info.max).any():
            raise CompileError(f"{what}: zero point {flat_z[:8].tolist()} outside {dtype}'s range")
    return Quant(flat_s, flat_z, norm_axis)


def dequantize(q: np.ndarray, quant: Quant) -> np.ndarray:
    """float32((q - z)) * s, as DequantizeLinear computes it."""
    z = quant.broadcast(quant.zero_point, q.ndim)
    s = quant.broadcast(quant.scale, q.ndim)
    return ((q.astype(np.int64) - z).astype(np.float32) * s).astype(np.float32)


def quantize(x: np.ndarray, quant: Quant, dtype) -> np.ndarray:
    """saturate(nearbyint(x / s) + z), as QuantizeLinear computes it (a float32 division, half to even)."""
    s = quant.broadcast(quant.scale, x.ndim)
    z = quant.broadcast(quant.zero_point, x.ndim)
    info = np.iinfo(dtype)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        r = np.rint(np.asarray(x, np.float32) / s).astype(np.float64) + z
    return np.clip(np.nan_to_num(r, nan=0.0), info.min, info.max).astype(dtype)
