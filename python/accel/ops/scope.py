"""``Device.fusion_scope()``: ops called inside are recorded, then compiled into one model and run as one job.

Which results the fused model gives: the PendingTensors still referenced when the block ends. The scope
holds them by weak reference only, so a result nobody kept (``ops.relu(ops.conv2d(x, w, b))``'s conv) is
gone by then and the compiler may fuse it away; a kept one is an output of the model, and computed as
such (the compiler does not fuse away a tensor that is an output).
"""
from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any, Callable, List, Mapping, Optional

from ..errors import InvalidArgumentError
from . import execute
from .cache import ModelCache
from ..runtime.pending import PendingTensor
from .plan import Plan
from .recording import Graph, Operand, Recording

if TYPE_CHECKING:
    from ..runtime.device import RuntimeDevice
    from ..runtime.model import Model

__all__ = ["FusionScope", "ScopeSlot"]


class ScopeSlot:
    """Where one thread keeps the fusion scope open in it. The thread finds its slot through ``Ops._local``,
    and the scope keeps the slot it went into: a scope may end on another thread (a generator holding the
    scope closed or collected there), and must still empty the slot of the thread that opened it."""

    __slots__ = ("scope",)

    def __init__(self) -> None:
        self.scope: Optional[FusionScope] = None

    def release(self, scope: FusionScope) -> None:
        if self.scope is scope:
            self.scope = None


class FusionScope:
    """A context manager made by :meth:`accel.Device.fusion_scope`; usable once.

    Attributes (after the block): ``model``, the fused :class:`~accel.Model` that ran (None if nothing
    ran: an empty scope, no result kept, or a failure); :meth:`onnx` gives its ONNX model.
    """

    def __init__(self, device: RuntimeDevice, cache: ModelCache,
                 open_scope: Callable[[FusionScope], ScopeSlot]) -> None:
        # open_scope: makes this scope its thread's open one for the device's ops (Ops._open_scope).
        self._device = device
        self._cache = cache
        self._open_scope = open_scope
        self._slot: Optional[ScopeSlot] = None
        # The recording and results are handed over under this lock: the block may end on another thread
        # (a generator holding it closed there) while an op of the opening thread is being recorded.
        self._lock = threading.Lock()
        self._recording: Optional[Recording] = None
        self._pending: List[weakref.ref[PendingTensor]] = []
        self._used = False
        self._graph: Optional[Graph] = None
        self.model: Optional[Model] = None

    def __enter__(self) -> FusionScope:
        if self._used:
            raise InvalidArgumentError("a fusion scope runs once; open a new one with device.fusion_scope()")
        self._recording = Recording(snapshot=True)
        self._slot = self._open_scope(self)
        self._used = True
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        # Whichever thread this runs on, the slot emptied is the opening thread's.
        if self._slot is not None:
            self._slot.release(self)
        with self._lock:
            recording, self._recording = self._recording, None
            pending, self._pending = self._pending, []
        alive = [p for p in (r() for r in pending) if p is not None]
        if exc_type is not None:
            for p in alive:
                p._fail(f"its fusion scope ended with {exc_type.__name__} ({exc}), so nothing ran")
            return  # the exception goes on
        if not alive or recording is None:
            return
        graph = recording.graph([p._value for p in alive])
        try:
            tensors, loaded = execute.run(self._device, self._cache, graph)
        except BaseException as e:
            for p in alive:
                p._fail(f"the fused job of its fusion scope failed ({type(e).__name__}: {e})")
            raise
        for p, t in zip(alive, tensors):
            p._resolve(t)
        self._graph = graph
        self.model = loaded.model

    def onnx(self) -> Optional[bytes]:
        """The ONNX model the scope compiled and ran (None if nothing ran)."""
        return None if self._graph is None else self._graph.onnx()

    def _record(self, op: str, plan: Plan, operands: Mapping[str, Operand]) -> PendingTensor:
        with self._lock:
            if self._recording is None:
                raise InvalidArgumentError(f"{op}: the fusion scope it was called in ended (on another thread) "
                                           f"before it was recorded; nothing ran, call it again")
            value = self._recording.emit(plan, operands)
            p = PendingTensor(self._device, plan.shape, op, self, value)
            self._pending.append(weakref.ref(p))
        return p
