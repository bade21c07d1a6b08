"""What ``accel.compare`` returns: one :class:`Row` per tensor the two models share, in graph order, and the
:class:`Comparison` of them all, which prints as a table, saves as JSON and plots as a PNG."""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union, overload

from .._wording import counted
from .plot import plot_cosines

__all__ = ["Comparison", "Row"]


@dataclass(frozen=True)
class Row:
    """One tensor of A against its counterpart in B.

    Attributes:
        tensor: A's tensor name. tensor_b: B's. key: the float ONNX tensor both stand for.
        shape: A's shape (one input set). shape_b: B's. dtype_a, dtype_b: their dtypes (``"int8"``, ...).
        cosine: cosine similarity of the real (dequantized) values, None when the shapes cannot be compared.
        max_abs_error, mean_abs_error: of the real values.
        differing: elements whose integers differ (the float side quantized with the quantized side's
            parameters), None when neither side is quantized. max_lsb: the largest difference, in
            quantization steps.
        below_threshold: cosine is below the comparison's threshold.
        note: why there are no figures, or that the tensors were compared flattened.
    """

    tensor: str
    tensor_b: str
    key: str
    shape: Tuple[int, ...]
    shape_b: Tuple[int, ...]
    dtype_a: str
    dtype_b: str
    cosine: Optional[float]
    max_abs_error: Optional[float]
    mean_abs_error: Optional[float]
    differing: Optional[int]
    max_lsb: Optional[int]
    below_threshold: bool
    note: str = ""

    def as_dict(self) -> Dict[str, Any]:
        """The row as JSON-ready values (shapes as lists, NaN as None)."""
        d = asdict(self)
        d["shape"], d["shape_b"] = list(self.shape), list(self.shape_b)
        for k, v in d.items():
            if isinstance(v, float) and not math.isfinite(v):
                d[k] = None
        return d


class Comparison(Sequence[Row]):
    """The rows of a comparison of model A with B, in A's graph order (a sequence: ``len``, index, iterate).

    Attributes:
        a, b: what was compared (file names). threshold: the cosine below which a row is flagged.
    """

    def __init__(self, rows: List[Row], a: str, b: str, threshold: float) -> None:
        self._rows = list(rows)
        self.a = a
        self.b = b
        self.threshold = threshold

    @overload
    def __getitem__(self, i: int) -> Row: ...
    @overload
    def __getitem__(self, i: slice) -> List[Row]: ...
    def __getitem__(self, i: Union[int, slice]) -> Union[Row, List[Row]]:
        return self._rows[i]

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[Row]:
        return iter(self._rows)

    def __repr__(self) -> str:
        first = self.first_below
        return (f"<accel Comparison {self.a!r} vs {self.b!r}: {len(self)} tensors, first below "
                f"{self.threshold:g}: {first.tensor if first else None!r}>")

    @property
    def first_below(self) -> Optional[Row]:
        """The first row (in graph order) whose cosine is below the threshold, or None."""
        return next((r for r in self._rows if r.below_threshold), None)

    def summary(self) -> str:
        """One line naming the first tensor below the threshold, or saying none is."""
        first = self.first_below
        if first is None:
            return f"no tensor below cosine {self.threshold:g} ({counted(len(self), 'tensor')} compared)"
        return (f"first tensor below cosine {self.threshold:g}: {first.key or first.tensor} "
                f"(cosine {first.cosine:.6f}, row {self._index(first) + 1} of {len(self)})")

    def _index(self, row: Row) -> int:
        return next(i for i, r in enumerate(self._rows) if r is row)

    def table(self) -> str:
        """The rows as aligned text columns, each named by the float tensor both sides stand for (:attr:`Row.key`;
        :meth:`to_json` has each side's own names); the first row below the threshold is marked
        ``<< first below``, the later ones ``<``."""
        head = ["#", "tensor", "shape", "dtypes", "cosine", "max abs err", "mean abs err", "differing", "max lsb"]
        first = self.first_below
        lines = [head]
        for n, r in enumerate(self._rows, 1):
            mark = "  << first below" if r is first else ("  <" if r.below_threshold else "")
            name = r.key or r.tensor
            lines.append([str(n), name, "x".join(map(str, r.shape)) or "scalar", f"{r.dtype_a}/{r.dtype_b}",
                          _num(r.cosine, ".6f"), _num(r.max_abs_error, ".4g"), _num(r.mean_abs_error, ".4g"),
                          "-" if r.differing is None else str(r.differing),
                          "-" if r.max_lsb is None else str(r.max_lsb)])
            lines[-1].append(mark + (f"  ({r.note})" if r.note else ""))
        widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
        left = {1, 2, 3}
        out = []
        for line in lines:
            cells = [c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))]
            out.append(("  ".join(cells) + (line[len(head)] if len(line) > len(head) else "")).rstrip())
        return "\n".join(out)

    def to_json(self, path: Union[str, Path]) -> None:
        """Writes the rows to ``path`` as a JSON list of :meth:`Row.as_dict` objects, in graph order."""
        rows = [r.as_dict() for r in self._rows]
        Path(path).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")

    def plot(self, path: Union[str, Path]) -> None:
        """Plots the cosine of each row (graph order), the threshold line and the first row below it, to an
        image file (``.png``; matplotlib's formats). ImportError if matplotlib is missing."""
        first = self.first_below
        index = None
        if first is not None and first.cosine is not None:
            index = next(n for n, row in enumerate(self) if row is first)
        plot_cosines([row.key or row.tensor for row in self], [row.cosine for row in self], self.threshold, index,
                     f"{self.a} vs {self.b}", Path(path))


def _num(v: Optional[float], fmt: str) -> str:
    return "-" if v is None else format(v, fmt)
