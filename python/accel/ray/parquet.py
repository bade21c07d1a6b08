"""Columns of rows to and from Parquet: a column whose rows are arrays is stored as Arrow's fixed-shape tensor
type (``arrow.fixed_shape_tensor``, which pyarrow, pandas and Ray Data read back), a column of scalars as itself.
Needs pyarrow (``pip install 'accel[ray]'`` brings it)."""
from __future__ import annotations

import os
import sys
from typing import Any, Dict, Mapping, Optional, Tuple, Union

import numpy as np

from .._lazy_import import import_optional

__all__ = ["ParquetRows", "pyarrow", "read_columns"]


def pyarrow() -> Tuple[Any, Any]:
    """``(pyarrow, pyarrow.parquet)``; ImportError saying what to install without them."""
    pq = import_optional("pyarrow.parquet", "the Parquet output needs pyarrow", "pip install 'accel[ray]'")
    return sys.modules["pyarrow"], pq


def _arrow(values: np.ndarray) -> Any:
    pa, _ = pyarrow()
    values = np.asarray(values)
    if values.ndim > 1:
        return pa.FixedShapeTensorArray.from_numpy_ndarray(np.ascontiguousarray(values))
    return pa.array(values)


class ParquetRows:
    """A Parquet file written a batch of rows at a time (a row group each): ``write({column: array})``, then
    ``close()`` (or use it as a context manager). Every batch has the same columns, dtypes and row shapes."""

    def __init__(self, path: Union[str, os.PathLike[str]], metadata: Optional[Mapping[str, str]] = None) -> None:
        self.path = os.fspath(path)
        self.metadata = dict(metadata or {})
        self.rows = 0
        self._writer: Any = None

    def write(self, columns: Mapping[str, np.ndarray]) -> None:
        pa, pq = pyarrow()
        table = pa.table({name: _arrow(values) for name, values in columns.items()})
        if self._writer is None:
            schema = table.schema.with_metadata({k.encode(): v.encode() for k, v in self.metadata.items()})
            self._writer = pq.ParquetWriter(self.path, schema)
        self._writer.write_table(table.replace_schema_metadata(self._writer.schema.metadata))
        self.rows += table.num_rows

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def __enter__(self) -> ParquetRows:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def read_columns(path: Union[str, os.PathLike[str]]) -> Dict[str, np.ndarray]:
    """A Parquet file ``ParquetRows`` wrote (or any with tensor and scalar columns) as ``{column: array}``, a
    tensor column as one array ``(rows, *shape)``."""
    pa, pq = pyarrow()
    table = pq.read_table(os.fspath(path))
    columns: Dict[str, np.ndarray] = {}
    for name in table.column_names:
        column = table.column(name).combine_chunks()
        if isinstance(column.type, pa.FixedShapeTensorType):
            columns[name] = column.to_numpy_ndarray()
        else:
            columns[name] = column.to_numpy(zero_copy_only=False)
    return columns
