"""``Device.ops``: device operators with torch.nn.functional's names and arguments.

Each call is checked (by its rule in table.py), then either run at once as one job (a one-op model, loaded
once per signature and kept in the device's model cache) or, inside ``Device.fusion_scope()``, recorded.
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

from ..errors import ClosedError, InvalidArgumentError, UnsupportedError
from ..front_ends.onnx import ONNX
from . import execute
from ..runtime.messages import type_name
from .args import FLOAT32, as_float, dtype_error, sized
from .cache import ModelCache
from ..runtime.device_tensor import DeviceTensor
from ..runtime.pending import PendingTensor
from .plan import Call
from .recording import Operand, Recording
from .scope import FusionScope, ScopeSlot
from .table import OPS, OpSpec

if TYPE_CHECKING:
    from ..runtime.device import RuntimeDevice

__all__ = ["Ops", "Tensor"]

#: What ops return: a DeviceTensor (run at once) or, inside a fusion scope, a PendingTensor.
Tensor = Union["DeviceTensor", PendingTensor]


def describe_device(device: Any) -> str:
    number = getattr(device, "_number", None)
    return f"device #{number} {device.uri!r}" if number is not None else repr(device)


class Ops:
    """The ops of one device (``device.ops``). Tensor arguments (``input``, ``other``, ``tensors``) are
    DeviceTensors of this device, NumPy arrays (copied once into device memory) or PendingTensors; weights
    and biases are NumPy arrays (constants of the op's model). float32 only."""

    def __init__(self, device: RuntimeDevice) -> None:
        """The ops of ``device`` (use ``device.ops``, which makes them once)."""
        self._device = device
        self._cache = ModelCache()
        self._local = threading.local()  # .slot: this thread's ScopeSlot

    @property
    def device(self) -> RuntimeDevice:
        """The device the ops run on."""
        return self._device

    def cache_info(self) -> Dict[str, int]:
        """The model cache's counters: ``hits`` (calls that only ran), ``loads`` (models built, compiled
        and loaded), ``size`` and ``maxsize`` (models kept, least recently used dropped first)."""
        return self._cache.info()

    def cache_clear(self) -> None:
        """Drops the loaded models of the cache (the counters stay)."""
        self._cache.clear()

    # -- layers ----------------------------------------------------------------------------------------
    # Each method hands its arguments (locals()) to _call, which checks and runs them by table.OPS.

    def conv2d(self, input: Any, weight: np.ndarray, bias: Optional[np.ndarray] = None, stride: Any = 1,
               padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
        """2-D convolution of ``input`` (N, C, H, W) with ``weight`` (out, C / groups, kH, kW); ``padding``
        an int, a pair, ``"valid"`` or ``"same"``."""
        return self._call("conv2d", locals())

    def linear(self, input: Any, weight: np.ndarray, bias: Optional[np.ndarray] = None) -> Tensor:
        """``input @ weight.T + bias``; ``weight`` (out_features, in_features)."""
        return self._call("linear", locals())

    def max_pool2d(self, input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                   ceil_mode: bool = False) -> Tensor:
        """2-D max pooling of (N, C, H, W); ``stride`` defaults to ``kernel_size``."""
        return self._call("max_pool2d", locals())

    def avg_pool2d(self, input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                   count_include_pad: bool = True) -> Tensor:
        """2-D average pooling of (N, C, H, W); ``stride`` defaults to ``kernel_size``."""
        return self._call("avg_pool2d", locals())

    def adaptive_avg_pool2d(self, input: Any, output_size: Any) -> Tensor:
        """Global average pooling: ``output_size`` 1 only (others raise UnsupportedError)."""
        return self._call("adaptive_avg_pool2d", locals())

    def layer_norm(self, input: Any, normalized_shape: Any, weight: Optional[np.ndarray] = None,
                   bias: Optional[np.ndarray] = None, eps: float = 1e-5) -> Tensor:
        """Layer normalization over the last dims (``normalized_shape``)."""
        return self._call("layer_norm", locals())

    # -- elementwise -----------------------------------------------------------------------------------

    def matmul(self, input: Any, other: Any) -> Tensor:
        """Matrix product with NumPy's rules (1-D operands, broadcast batch dims)."""
        return self._call("matmul", locals())

    def add(self, input: Any, other: Any) -> Tensor:
        """``input + other`` (broadcasting; ``other`` may be a number)."""
        return self._call("add", locals())

    def sub(self, input: Any, other: Any) -> Tensor:
        """``input - other`` (broadcasting; ``other`` may be a number)."""
        return self._call("sub", locals())

    def mul(self, input: Any, other: Any) -> Tensor:
        """``input * other`` (broadcasting; ``other`` may be a number)."""
        return self._call("mul", locals())

    def div(self, input: Any, other: Any) -> Tensor:
        """``input / other`` (broadcasting; ``other`` may be a number)."""
        return self._call("div", locals())

    def relu(self, input: Any) -> Tensor:
        """``max(x, 0)``."""
        return self._call("relu", locals())

    def relu6(self, input: Any) -> Tensor:
        """``min(max(x, 0), 6)``."""
        return self._call("relu6", locals())

    def sigmoid(self, input: Any) -> Tensor:
        """``1 / (1 + exp(-x))``."""
        return self._call("sigmoid", locals())

    def tanh(self, input: Any) -> Tensor:
        """``tanh(x)``."""
        return self._call("tanh", locals())

    def silu(self, input: Any) -> Tensor:
        """``x * sigmoid(x)``."""
        return self._call("silu", locals())

    def gelu(self, input: Any, approximate: str = "none") -> Tensor:
        """GELU, exact (``"none"``) or its tanh approximation (``"tanh"``)."""
        return self._call("gelu", locals())

    def leaky_relu(self, input: Any, negative_slope: float = 0.01) -> Tensor:
        """``x`` where positive, else ``negative_slope * x``."""
        return self._call("leaky_relu", locals())

    def hardswish(self, input: Any) -> Tensor:
        """``x * relu6(x + 3) / 6``."""
        return self._call("hardswish", locals())

    def hardsigmoid(self, input: Any) -> Tensor:
        """``relu6(x + 3) / 6``."""
        return self._call("hardsigmoid", locals())

    def softmax(self, input: Any, dim: int) -> Tensor:
        """Softmax along ``dim``."""
        return self._call("softmax", locals())

    # -- data movement ---------------------------------------------------------------------------------

    def concat(self, tensors: Sequence[Any], dim: int = 0) -> Tensor:
        """The tensors joined along ``dim`` (equal in every other dim)."""
        return self._call("concat", locals())

    def cat(self, tensors: Sequence[Any], dim: int = 0) -> Tensor:
        """torch's name of :meth:`concat`."""
        return self._call("concat", locals())

    def reshape(self, input: Any, shape: Sequence[int]) -> Tensor:
        """The same elements in ``shape`` (one dim may be -1)."""
        return self._call("reshape", locals())

    def permute(self, input: Any, dims: Sequence[int]) -> Tensor:
        """The dims reordered: result dim i is input dim ``dims[i]``."""
        return self._call("permute", locals())

    def flatten(self, input: Any, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        """Dims ``start_dim`` to ``end_dim`` merged into one."""
        return self._call("flatten", locals())

    def interpolate(self, input: Any, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                    align_corners: Optional[bool] = None) -> Tensor:
        """Resizes the last one (3-D input) or two (4-D) dims to ``size`` or by ``scale_factor``;
        ``mode`` ``"nearest"`` or ``"bilinear"`` (4-D)."""
        return self._call("interpolate", locals())

    # -- the steps of a call ---------------------------------------------------------------------------

    def _call(self, op: str, arguments: Dict[str, Any]) -> Tensor:
        args = {k: v for k, v in arguments.items() if k != "self"}
        self._check_device(op)
        spec = OPS[op]
        slot: Optional[ScopeSlot] = getattr(self._local, "slot", None)
        scope = None if slot is None else slot.scope
        operands = self._operands(op, spec, args, scope)
        plan = spec.rule(Call(op, {k: o.shape for k, o in operands.items()}, args))
        sized(op, plan.shape, "the call")  # the rules whose arguments set the size name them first
        if scope is not None:
            return scope._record(op, plan, operands)
        recording = Recording()
        out = recording.emit(plan, operands)
        (tensor,), _ = execute.run(self._device, self._cache, recording.graph([out]))
        return tensor  # type: ignore[no-any-return]

    def _check_device(self, what: str) -> None:
        d = self._device
        if d.closed:
            raise ClosedError(f"{what}: device {d.uri!r} is closed")
        if d.capabilities.model_format != ONNX.produces:
            raise UnsupportedError(
                f"{what}: device ops and fusion scopes compile models on the fly, which backend "
                f"{d.info.backend!r} cannot; run them on the emulator ('emu'), or build the graph as ONNX and "
                f"compile it with the vendor's toolchain")

    def _operands(self, op: str, spec: OpSpec, args: Mapping[str, Any],
                  scope: Optional[FusionScope]) -> Dict[str, Operand]:
        operands: Dict[str, Operand] = {}
        for name in spec.tensors:
            value = args[name]
            if name != spec.sequence:
                operands[name] = self._operand(op, name, value, scope, name == spec.scalar)
                continue
            if not isinstance(value, (list, tuple)) or not value:
                raise TypeError(f"{op}: {name} must be a non-empty list or tuple of tensors, not "
                                f"{type_name(value) if value != [] and value != () else 'an empty one'}")
            items: List[Any] = list(value)
            for i, v in enumerate(items):
                operands[f"{name}[{i}]"] = self._operand(op, f"{name}[{i}]", v, scope, False)
        return operands

    def _operand(self, op: str, name: str, x: Any, scope: Optional[FusionScope], scalar: bool) -> Operand:
        if isinstance(x, PendingTensor):
            self._same_device(op, name, x.device)
            if x._tensor is not None:
                return Operand(x.shape, "input", x._tensor)
            if scope is not None and x._scope is scope:
                return Operand(x.shape, "value", x._value)
            raise InvalidArgumentError(f"{op}: {name}: {x._why()}")
        if isinstance(x, DeviceTensor):
            self._same_device(op, name, x.device)
            if x.dtype != FLOAT32:
                raise dtype_error(op, name, x.dtype)
            return Operand(x.shape, "input", x)
        if isinstance(x, np.ndarray):
            if x.dtype != FLOAT32:
                raise dtype_error(op, name, x.dtype)
            # Inside a scope the array is read now (copied once), as the call would read it.
            return Operand(x.shape, "input", x if scope is None else self._device.tensor(x))
        if scalar and not isinstance(x, (bool, np.bool_)) and isinstance(x, (int, float, np.integer, np.floating)):
            return Operand((), "const", np.asarray(as_float(op, name, x), dtype=np.float32))
        number = " or a number" if scalar else ""
        raise TypeError(f"{op}: {name} must be an accel.DeviceTensor, accel.PendingTensor or numpy.ndarray of "
                        f"float32{number}, not {type_name(x)}")

    def _same_device(self, op: str, name: str, device: Any) -> None:
        if device is not self._device:
            raise InvalidArgumentError(f"{op}: {name} is a tensor of {describe_device(device)}, but these ops run on "
                                       f"{describe_device(self._device)}")

    # -- fusion scopes (scope.py) ----------------------------------------------------------------------

    def _fusion_scope(self) -> FusionScope:
        # What Device.fusion_scope returns (not an op, so not a public name here): a scope of these ops.
        return FusionScope(self._device, self._cache, self._open_scope)

    def _open_scope(self, scope: FusionScope) -> ScopeSlot:
        """Makes ``scope`` this thread's open scope; returns the slot it is in (``ScopeSlot.release``
        empties it from any thread)."""
        self._check_device("fusion_scope")
        slot: Optional[ScopeSlot] = getattr(self._local, "slot", None)
        if slot is None:
            slot = self._local.slot = ScopeSlot()
        if slot.scope is not None:
            raise InvalidArgumentError(f"fusion scopes do not nest: one is already open on "
                                       f"{describe_device(self._device)} in this thread (a scope opened in a "
                                       f"generator stays open until the generator ends)")
        slot.scope = scope
        return slot
