"""How close two tensors are: cosine similarity and absolute errors of their real values, and, where either
is quantized, how many of their integers differ and by how many quantization steps (LSBs).

A tensor is one array per input set (``accel compare --random N`` runs N sets); the metrics are computed over
all sets together, as if the sets were one long vector, from running sums (:class:`Tally`) that a comparison
adds to set after set, keeping no set once it is counted.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Optional, Tuple

import numpy as np

from ..runtime.tensor_info import Quantization
from . import quant_values

__all__ = ["Metrics", "Tally", "Tensor", "cosine", "measure"]


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
    sums = _CosineSums()
    sums.add(a, b)
    return sums.value()


def measure(a: Tensor, b: Tensor) -> Metrics:
    """The metrics of ``a`` against ``b`` (the same number of sets). Shapes that differ but hold as many
    elements are compared flattened; other shapes give no figures, only a note."""
    tally = Tally()
    tally.add(a, b)
    return tally.metrics()


class Tally:
    """The metrics of one pair of tensors, added set after set (:meth:`add`) as running sums, so that a
    comparison over many input sets keeps none of them; :meth:`metrics` gives the figures so far. Shapes are
    judged by the first pair added."""

    def __init__(self) -> None:
        self._note: Optional[str] = None  # None: nothing added yet
        self._comparable = True
        self._quantized = False
        self._cosine = _CosineSums()
        self._max_error = 0.0
        self._error_sum = 0.0
        self._count = 0
        self._differing = 0
        self._max_lsb = 0

    def add(self, a: Tensor, b: Tensor) -> None:
        """Adds every set of ``a`` against the same set of ``b``."""
        if len(a.arrays) != len(b.arrays):
            raise ValueError(f"{a.name!r} has {len(a.arrays)} input sets, {b.name!r} {len(b.arrays)}")
        if self._note is None:
            self._comparable = a.arrays[0].size == b.arrays[0].size
            self._quantized = a.quant is not None or b.quant is not None
            self._note = ("" if a.shape == b.shape else f"compared flattened: {a.shape} against {b.shape}"
                          if self._comparable else f"shapes differ: {a.shape} against {b.shape}")
        if not self._comparable:
            return
        for i in range(len(a.arrays)):
            real_a, real_b = a.real(i).reshape(-1), b.real(i).reshape(-1)
            self._cosine.add(real_a, real_b)
            err = np.abs(real_a - real_b)
            if err.size:
                self._max_error = float(np.max([self._max_error, err.max()]))  # NaN stays NaN
                self._error_sum += float(err.sum())
                self._count += err.size
            if self._quantized:
                steps = _lsb_differences(a, b, i)
                self._differing += int(np.count_nonzero(steps))
                self._max_lsb = max(self._max_lsb, int(steps.max()) if steps.size else 0)

    def metrics(self) -> Metrics:
        if not self._comparable:
            return Metrics(note=self._note or "")
        m = Metrics(note=self._note or "", cosine=self._cosine.value(), max_abs_error=self._max_error,
                    mean_abs_error=self._error_sum / self._count if self._count else 0.0)
        if self._quantized:
            m.differing, m.max_lsb = self._differing, self._max_lsb
        return m


class _CosineSums:
    """Sums of squares and products of two vectors given in pieces, each side scaled by the largest magnitude
    seen so far (rescaling the sums when a larger one comes): no overflow, whatever the values."""

    def __init__(self) -> None:
        self._scale = [0.0, 0.0]
        self._squares = [0.0, 0.0]
        self._dot = 0.0
        self._finite = True

    def add(self, a: np.ndarray, b: np.ndarray) -> None:
        peaks = [float(np.max(np.abs(v), initial=0.0)) for v in (a, b)]
        if not all(math.isfinite(p) for p in peaks):
            self._finite = False  # an inf or NaN: the cosine is NaN (below any threshold)
        if not self._finite:
            return
        for k, peak in enumerate(peaks):
            if peak > self._scale[k]:
                ratio = self._scale[k] / peak
                self._squares[k] *= ratio * ratio
                self._dot *= ratio
                self._scale[k] = peak
        x = a / self._scale[0] if self._scale[0] else a
        y = b / self._scale[1] if self._scale[1] else b
        self._squares[0] += float(np.dot(x, x))
        self._squares[1] += float(np.dot(y, y))
        self._dot += float(np.dot(x, y))

    def value(self) -> float:
        """The cosine: 1.0 if both vectors are all zero, 0.0 if one is, NaN if either holds an inf or NaN."""
        if not self._finite:
            return math.nan
        qa, qb = self._squares
        if qa == 0.0 and qb == 0.0:
            return 1.0
        if qa == 0.0 or qb == 0.0:
            return 0.0
        return self._dot / (math.sqrt(qa) * math.sqrt(qb))


def _lsb_differences(a: Tensor, b: Tensor, i: int) -> np.ndarray:
    """``|qa - qb|`` per element of set ``i``, on one integer grid: the quantized side's, the float side
    quantized with its parameters. When both are quantized with other parameters, A's real values are
    quantized onto B's grid."""
    grid, other = (b, a) if b.quant is not None else (a, b)
    assert grid.quant is not None
    ints = grid.arrays[i].astype(np.int64)
    if other.quant is not None and _same(other, grid, i):
        theirs = other.arrays[i].astype(np.int64).reshape(ints.shape)
    else:
        values = other.real(i).reshape(ints.shape)
        theirs = quant_values.quantize(values, grid.quant, grid.dtype, grid.name)
    steps: np.ndarray = np.abs(ints - theirs).reshape(-1)
    return steps


def _same(x: Tensor, y: Tensor, i: int) -> bool:
    """Both tensors quantized alike (parameters, dtype, shape): their integers compare directly."""
    return x.quant == y.quant and x.dtype == y.dtype and x.arrays[i].shape == y.arrays[i].shape
