"""How close two tensors are: cosine similarity and absolute errors of their real values, and, where either
is quantized, how many of their integers differ and by how many quantization steps (LSBs).

A tensor is one array per input set (``accel compare --random N`` runs N sets); the metrics are computed over
all sets together, as if the sets were one long vector.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

import numpy as np

from ..tensor_info import Quantization
from . import quant_values

__all__ = ["Metrics", "Tensor", "cosine", "measure"]


@dataclass
class Tensor:
    """One side's tensor: its name, its array for each input set, and its quantization (None: float)."""

    name: str
    arrays: List[np.ndarray]
    quant: Optional[Quantization] = None

    @property
    def shape(self) -> Tuple[int, ...]:
        return tuple(self.arrays[0].shape)

    @property
    def dtype(self) -> np.dtype:
        return self.arrays[0].dtype

    def real(self, i: int) -> np.ndarray:
        """Set ``i``'s real values in float64 (dequantized if quantized)."""
        a = self.arrays[i]
        if self.quant is None:
            return a.astype(np.float64)
        return quant_values.dequantize(a, self.quant, self.name)


@dataclass
class Metrics:
    """The figures of one pair of tensors; ``cosine`` None (and a ``note``) when they cannot be compared."""

    cosine: Optional[float] = None
    max_abs_error: Optional[float] = None
    mean_abs_error: Optional[float] = None
    differing: Optional[int] = None
    max_lsb: Optional[int] = None
    note: str = ""


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """The cosine similarity of two flat float64 vectors: 1.0 if both are all zero, 0.0 if one is."""
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0.0 and nb == 0.0:
        return 1.0
    if na == 0.0 or nb == 0.0:
        return 0.0
    # Each vector scaled by its norm first: the dot product of large tensors could overflow otherwise.
    return float(np.dot(a / na, b / nb))


def measure(a: Tensor, b: Tensor) -> Metrics:
    """The metrics of ``a`` against ``b`` (the same number of sets). Shapes that differ but hold as many
    elements are compared flattened; other shapes give no figures, only a note."""
    if len(a.arrays) != len(b.arrays):
        raise ValueError(f"{a.name!r} has {len(a.arrays)} input sets, {b.name!r} {len(b.arrays)}")
    if a.arrays[0].size != b.arrays[0].size:
        return Metrics(note=f"shapes differ: {a.shape} against {b.shape}")
    real_a = np.concatenate([a.real(i).reshape(-1) for i in range(len(a.arrays))])
    real_b = np.concatenate([b.real(i).reshape(-1) for i in range(len(b.arrays))])
    note = "" if a.shape == b.shape else f"compared flattened: {a.shape} against {b.shape}"
    m = Metrics(note=note)
    m.cosine = cosine(real_a, real_b)
    err = np.abs(real_a - real_b)
    m.max_abs_error = float(err.max()) if err.size else 0.0
    m.mean_abs_error = float(err.mean()) if err.size else 0.0
    if a.quant is not None or b.quant is not None:
        steps = _lsb_differences(a, b)
        m.differing = int(np.count_nonzero(steps))
        m.max_lsb = int(steps.max()) if steps.size else 0
    return m


def _lsb_differences(a: Tensor, b: Tensor) -> np.ndarray:
    """``|qa - qb|`` per element over all sets, on one integer grid: the quantized side's, the float side
    quantized with its parameters. When both are quantized with other parameters, A's real values are
    quantized onto B's grid."""
    grid, other = (b, a) if b.quant is not None else (a, b)
    assert grid.quant is not None
    steps: List[np.ndarray] = []
    for i in range(len(grid.arrays)):
        ints = grid.arrays[i].astype(np.int64)
        if other.quant is not None and _same(other, grid, i):
            theirs = other.arrays[i].astype(np.int64).reshape(ints.shape)
        else:
            values = other.real(i).reshape(ints.shape)
            theirs = quant_values.quantize(values, grid.quant, grid.dtype, grid.name)
        steps.append(np.abs(ints - theirs).reshape(-1))
    return np.concatenate(steps)


def _same(x: Tensor, y: Tensor, i: int) -> bool:
    """Both tensors quantized alike (parameters, dtype, shape): their integers compare directly."""
    return x.quant == y.quant and x.dtype == y.dtype and x.arrays[i].shape == y.arrays[i].shape

