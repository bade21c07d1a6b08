"""``accel.PendingTensor``: an op's result inside a fusion scope, computed when the scope ends."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

import numpy as np

from ..errors import InvalidArgumentError

if TYPE_CHECKING:
    from .device_tensor import DeviceTensor
    from .device import RuntimeDevice

__all__ = ["PendingTensor"]


class PendingTensor:
    """The result of an op called inside ``Device.fusion_scope()``, computed when the scope ends.

    It has the result's :attr:`shape`, :attr:`dtype` and :attr:`device` at once, and later ops of the same
    scope take it as an input. Reading its values inside the scope (``numpy.asarray``, :meth:`numpy`,
    :attr:`tensor`, DLPack, ``Model.run``) raises :class:`~accel.InvalidArgumentError`: nothing has run
    yet. Once the scope has ended it stands for a :class:`~accel.DeviceTensor` (:attr:`tensor`) holding
    the result: ``numpy.asarray(p)`` is a zero-copy view, and ops and ``Model.run`` take it as input. If
    the scope failed (an exception inside it, or the fused job failed), reading it raises, saying so.
    PendingTensors are made by the ops; do not make them yourself.
    """

    __slots__ = ("_shape", "_dtype", "_device", "_op", "_scope", "_value", "_tensor", "_error", "__weakref__")

    def __init__(self, device: RuntimeDevice, shape: Tuple[int, ...], op: str, scope: Any, value: str) -> None:
        """Made by an op inside a fusion scope (``scope``), standing for its value ``value``."""
        self._shape = tuple(shape)
        self._dtype = np.dtype(np.float32)
        self._device = device
        self._op = op
        self._scope: Any = scope
        self._value = value
        self._tensor: Optional[DeviceTensor] = None
        self._error: Optional[str] = None

    # -- what it is, known at once ---------------------------------------------------------------------

    @property
    def shape(self) -> Tuple[int, ...]:
        """The result's shape."""
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        """The result's dtype (float32)."""
        return self._dtype

    @property
    def ndim(self) -> int:
        """The number of dims of the result."""
        return len(self._shape)

    @property
    def device(self) -> RuntimeDevice:
        """The device whose fusion scope made it."""
        return self._device

    @property
    def op(self) -> str:
        """The name of the op that made it, e.g. ``"conv2d"``."""
        return self._op

    @property
    def done(self) -> bool:
        """True once its scope has ended and it holds its result."""
        return self._tensor is not None

    # -- its value, after the scope --------------------------------------------------------------------

    @property
    def tensor(self) -> DeviceTensor:
        """The :class:`~accel.DeviceTensor` holding the result; raises InvalidArgumentError inside the
        scope, or if the scope failed."""
        t = self._tensor
        if t is None:
            raise InvalidArgumentError(self._why())
        return t

    def numpy(self) -> np.ndarray:
        """A zero-copy NumPy view of the result (as ``DeviceTensor.numpy``)."""
        return self.tensor.numpy()

    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> np.ndarray:
        a = self.tensor.numpy()
        if dtype is not None and np.dtype(dtype) != a.dtype:
            return a.astype(dtype)
        return a.copy() if copy else a

    @property
    def __array_interface__(self) -> Dict[str, Any]:
        # The tensor's own view says where its memory is; NumPy keeps this object (and so the tensor and its
        # memory) alive as the array's base.
        interface: Dict[str, Any] = self.tensor.numpy().__array_interface__
        return interface

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.tensor.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Tuple[int, int]:
        return self.tensor.__dlpack_device__()

    def __repr__(self) -> str:
        state = "done" if self._tensor is not None else ("failed" if self._error is not None else "pending")
        return f"PendingTensor({self._op}, shape={self._shape}, dtype=float32, {state})"

    # -- made by the scope -----------------------------------------------------------------------------

    def _why(self) -> str:
        what = f"the {self._op} result of shape {self._shape}"
        if self._error is not None:
            return f"{what} has no value: {self._error}"
        return (f"{what} is a fusion-scope result, not computed until the scope ends; read it after the "
                f"'with device.fusion_scope()' block")

    def _resolve(self, tensor: DeviceTensor) -> None:
        self._tensor = tensor
        self._scope = None  # the scope holds the recording and its inputs: let them go

    def _fail(self, message: str) -> None:
        self._error = message
        self._scope = None
