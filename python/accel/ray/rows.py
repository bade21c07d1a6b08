"""A batch of rows (Ray Data's ``{column: array}``, the first axis the row) as runs of a model, and the runs'
outputs back as columns. NumPy only: no Ray here, so the main suite tests it without Ray.

A column's rows are each either the model's input without its first axis, the batch axis (then ``B`` rows go
into one run, ``B`` the model's batch), or the whole input tensor (one row a run: for a model without a batch
axis). Size-1 axes may be left out of a row: an NV12 frame input ``(1, H*3/2, W, 1)`` takes rows ``(H*3/2, W)``,
as ``accel.image`` makes frames. The rows are cut into chunks of ``B``, the last one padded with zeros and its
outputs trimmed; each output becomes a column of ``n`` rows, in the same form as the inputs' rows.

Nothing is cast: a column of another dtype is refused, with the column, its dtype and the input's. A column of
Python objects (ragged rows, None) is checked row by row, and the first bad row is named by its index in the
batch (and its id, when an id column is given).
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

__all__ = ["RowPlan", "Split", "Columns", "describe_row"]

#: Output name -> column, or the output names (each written to a column of its own name).
Columns = Union[Mapping[str, str], Sequence[str], None]
Shape = Tuple[int, ...]


def _squeezed(shape: Sequence[int]) -> Shape:
    return tuple(int(d) for d in shape if d != 1)


def describe_row(batch: Mapping[str, Any], index: int, id_column: Optional[str]) -> str:
    """``row 3 of the batch``, or with an id column ``row path='a.jpg' (row 3 of its batch)``: Ray Data gives a batch
    no global row numbers, so an id column (``accel batch``'s ``index``) is how a row is found again."""
    if id_column is None or id_column not in batch:
        return f"row {index} of the batch"
    value = batch[id_column][index]
    return f"row {id_column}={value.item() if isinstance(value, np.generic) else value!r} (row {index} of its batch)"


class Split(NamedTuple):
    """A batch cut into runs: its row count, one ``{input name: array}`` per run, the rows a run takes, and
    whether the rows were inputs without their batch axis (``B`` rows a run) or whole inputs (one a run)."""

    rows: int
    runs: List[Dict[str, np.ndarray]]
    per_run: int
    batched: bool

    def first_row(self, run: int) -> int:
        return run * self.per_run


class _Input:
    """One model input and the column it reads."""

    def __init__(self, info: Any, column: str) -> None:
        self.name: str = info.name
        self.column = column
        self.dtype = np.dtype(info.dtype)
        self.shape: Shape = tuple(int(d) for d in info.shape)

    def spec(self, shape: Sequence[int]) -> str:
        return f"{self.dtype}{list(shape)}"


class RowPlan:
    """How a model's inputs read a batch's columns and where its outputs go (checked against the model once,
    when the Predictor loads it); :meth:`split` and :meth:`columns` do the work for each batch."""

    def __init__(self, inputs: Sequence[Any], outputs: Sequence[Any], input_columns: Optional[Mapping[str, str]] = None,
                 output_columns: Columns = None) -> None:
        """``inputs``/``outputs``: the model's TensorInfos; ``input_columns``: {input name: column} (default: each
        input reads the column of its own name); ``output_columns``: {output name: column} or a list of output
        names (default: every output, to the column of its own name). ValueError for a name the model lacks."""
        names = [i.name for i in inputs]
        given = dict(input_columns or {})
        unknown = [n for n in given if n not in names]
        if unknown:
            raise ValueError(f"inputs: the model has no input {unknown[0]!r} (its inputs: {', '.join(names)})")
        self.inputs = [_Input(i, given.get(i.name, i.name)) for i in inputs]
        out_names = [o.name for o in outputs]
        if output_columns is None:
            wanted = {n: n for n in out_names}
        elif isinstance(output_columns, Mapping):
            wanted = dict(output_columns)
        elif isinstance(output_columns, str):
            raise TypeError("outputs must be a mapping {output name: column} or a list of output names, not a str")
        else:
            wanted = {n: n for n in output_columns}
        unknown = [n for n in wanted if n not in out_names]
        if unknown:
            raise ValueError(f"outputs: the model has no output {unknown[0]!r} (its outputs: {', '.join(out_names)})")
        if len(set(wanted.values())) < len(wanted):
            raise ValueError(f"outputs: two outputs are written to one column: {wanted}")
        #: (output index, its shape, its dtype, the column it is written to), in the model's output order.
        self.outputs = [(k, tuple(int(d) for d in o.shape), np.dtype(o.dtype), wanted[o.name])
                        for k, o in enumerate(outputs) if o.name in wanted]
        shapes = [i.shape for i in self.inputs] + [s for _, s, _, _ in self.outputs]
        firsts = {s[0] if s else None for s in shapes}
        #: The model's batch: the first axis every input and written output shares, or None (no batch axis).
        self.batch: Optional[int] = firsts.pop() if len(firsts) == 1 and None not in firsts else None

    # -- a batch in ---------------------------------------------------------------------------------------

    def split(self, batch: Mapping[str, Any], id_column: Optional[str] = None) -> Split:
        """The batch as runs: one ``{input name: array}`` per run, each array a view of its column where it can
        be (the last chunk is padded with zeros). ValueError naming the column (and the
        row, for a column of objects) for rows the model cannot take; TypeError for a batch that is not a
        mapping of columns."""
        if not isinstance(batch, Mapping):
            raise TypeError(f"a batch is a mapping {{column: array}} (Ray Data's batch_format='numpy'), not "
                            f"{type(batch).__name__}")
        self._check_written(batch)
        columns = [self._column(batch, i, id_column) for i in self.inputs]
        counts = {len(c) for c in columns}
        if len(counts) > 1:
            raise ValueError("the input columns differ in length: " + ", ".join(
                f"{i.column!r} {len(c)}" for i, c in zip(self.inputs, columns)))
        n = counts.pop() if counts else 0
        batched = self._batched(columns)
        per = self.batch if batched and self.batch is not None else 1
        runs: List[Dict[str, np.ndarray]] = []
        for start in range(0, n, per):
            run: Dict[str, np.ndarray] = {}
            for i, column in zip(self.inputs, columns):
                rows = column[start:start + per]
                if len(rows) < per:  # the last chunk: zeros after the rows left
                    padded = np.zeros((per,) + rows.shape[1:], i.dtype)
                    padded[:len(rows)] = rows
                    rows = padded
                run[i.name] = rows.reshape(i.shape)
            runs.append(run)
        return Split(n, runs, per, batched)

    def _check_written(self, batch: Mapping[str, Any]) -> None:
        taken = [c for _, _, _, c in self.outputs if c in batch]
        if taken:
            raise ValueError(f"output column {taken[0]!r} is already a column of the batch: name another with "
                             f"outputs={{output: column}}")

    def _column(self, batch: Mapping[str, Any], i: _Input, id_column: Optional[str]) -> np.ndarray:
        if i.column not in batch:
            raise ValueError(f"input {i.name!r} reads column {i.column!r}, which the batch does not have (its columns: "
                             f"{', '.join(map(str, batch)) or 'none'}); map inputs to columns with inputs={{input: "
                             f"column}}")
        given = batch[i.column]
        column: np.ndarray = (given if isinstance(given, np.ndarray) else np.asarray(given, dtype=object)
                              if isinstance(given, (list, tuple)) else np.asarray(given))
        if column.dtype == object:
            column = self._stack(batch, i, column, id_column)
        if column.ndim == 0:
            raise ValueError(f"column {i.column!r} is a scalar, not a column of rows")
        if column.dtype != i.dtype:
            raise ValueError(f"column {i.column!r} is {column.dtype}; input {i.name!r} takes {i.dtype} (accel never "
                             f"casts: convert the column first, e.g. in a map_batches step before this one)")
        if not self._row_fits(i, column.shape[1:]):
            raise ValueError(f"column {i.column!r} has rows of shape {list(column.shape[1:])}; input {i.name!r} "
                             f"{i.spec(i.shape)} takes rows of {self._row_forms(i)}")
        return column

    def _stack(self, batch: Mapping[str, Any], i: _Input, column: np.ndarray, id_column: Optional[str]) -> np.ndarray:
        """A column of objects (ragged rows, None) as one array, each row checked; ValueError at the first bad one."""
        rows: List[np.ndarray] = []
        for k, value in enumerate(column):
            row = None if value is None else np.asarray(value)
            if row is None or row.dtype != i.dtype or not self._row_fits(i, row.shape):
                got = "None" if row is None else f"{row.dtype}{list(row.shape)}"
                raise ValueError(f"{describe_row(batch, k, id_column)}: column {i.column!r} holds {got}; input "
                                 f"{i.name!r} takes {i.dtype} rows of {self._row_forms(i)}")
            rows.append(row.reshape(rows[0].shape) if rows else row)
        if not rows:
            return np.zeros((0,) + (i.shape[1:] if self.batch is not None else i.shape), i.dtype)
        return np.stack(rows)

    def _row_forms(self, i: _Input) -> str:
        forms = ([list(i.shape[1:])] if self.batch is not None else []) + [list(i.shape)]
        return " or ".join(map(str, forms)) + " (axes of size 1 may be left out)"

    def _row_fits(self, i: _Input, row: Sequence[int]) -> bool:
        row = tuple(row)
        return (self.batch is not None and row == i.shape[1:]) or row == i.shape or _squeezed(row) == _squeezed(i.shape)

    def _batched(self, columns: Sequence[np.ndarray]) -> bool:
        """Whether the rows are inputs without their batch axis (B to a run) rather than whole inputs (one a run)."""
        if self.batch is None:
            return False
        forms = set()
        for i, c in zip(self.inputs, columns):
            row = tuple(c.shape[1:])
            forms.add(row == i.shape[1:] or (row != i.shape and self.batch == 1))
        if len(forms) > 1:
            raise ValueError("some input columns have rows without the batch axis and some with it: give every input's "
                             "rows in one form")
        return forms.pop() if forms else True

    # -- the outputs out ----------------------------------------------------------------------------------

    def columns(self, split: Split, results: Sequence[Sequence[np.ndarray]]) -> Dict[str, np.ndarray]:
        """``{column: array of split.rows rows}`` from the outputs of ``split``'s runs, in order: the padding
        dropped, each row without the batch axis when the inputs' rows had none."""
        n, per = split.rows, split.per_run
        written: Dict[str, np.ndarray] = {}
        for k, shape, dtype, column in self.outputs:
            row_shape = shape[1:] if split.batched else shape
            array = np.empty((n,) + row_shape, dtype)
            for r, outs in enumerate(results):
                start = split.first_row(r)
                take = min(per, n - start)
                array[start:start + take] = outs[k].reshape((per,) + row_shape)[:take]
            written[column] = array
        return written
