"""``vart.TensorBuffer``: the buffers ``RunnerExt.get_inputs()`` and ``get_outputs()`` give, each an int8 device
tensor of the runner's tensor (``get_tensor()``), zeroed. As in VART's binding, NumPy views it in place
(``np.asarray(tb)``, ``np.array(tb, copy=False)``; ``memoryview(tb)`` from Python 3.12), and each call of get_inputs()
makes new buffers. Given back to execute_async, the device tensor is run in place: no copy (the binding's copies it
into the runner's own buffer)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from .xir import Tensor

__all__ = ["TensorBuffer"]


class TensorBuffer:
    """A runner's buffer for one tensor (VART's CpuFlatTensorBuffer, location HOST_VIRT)."""

    _t: Tensor
    _tensor: Any  # accel.DeviceTensor

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("vart.TensorBuffer has no constructor: runner.get_inputs() and get_outputs() make them")

    @classmethod
    def _make(cls, t: Tensor, device: Any) -> TensorBuffer:
        self = object.__new__(cls)
        self._t = t
        self._tensor = device.empty(tuple(t.dims), np.int8)
        self._view()[...] = 0
        return self

    def _view(self) -> np.ndarray:
        return np.asarray(self._tensor)

    def _shape_is(self, dims: Sequence[int]) -> bool:
        return tuple(self._tensor.shape) == tuple(dims)

    def get_tensor(self) -> Tensor:
        return self._t

    def __array__(self, dtype: Optional[Any] = None, copy: Optional[bool] = None) -> np.ndarray:
        v = self._view()
        if dtype is not None and np.dtype(dtype) != v.dtype:
            if copy is False:
                raise ValueError(f"a TensorBuffer is {v.dtype}: viewing it as {np.dtype(dtype)} needs a copy")
            return v.astype(dtype)
        return v.copy() if copy else v

    def __buffer__(self, flags: int) -> memoryview:
        return self._view().data

    def __str__(self) -> str:
        v = self._view()
        return (f"TensorBuffer@{id(self):#x}{{data=[(Virt={v.ctypes.data:#x}, {v.nbytes})], location=HOST_VIRT, "
                f"tensor={self._t}}}")

    __repr__ = __str__
