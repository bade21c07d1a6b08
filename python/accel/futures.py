"""``accel.Future``: the result of ``Model.run_async``, and the registry of jobs in flight.

A Future is a ``concurrent.futures.Future`` completed from the driver's completion callback, so
``result()``, ``exception()``, ``add_done_callback()``, ``concurrent.futures.wait()`` and
``as_completed()`` all work, and ``await`` works in asyncio. Done-callbacks run on accel's callback
thread (``accel.runtime._callbacks``), one at a time in completion order, never on a thread the device needs
to end its other jobs: a callback may wait for any other future.

At interpreter exit the core's ``atexit`` hook (its exit drain) waits, a few seconds at most, for the jobs
still in flight, so that no completion callback runs while the interpreter is being torn down.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import os
import time
import weakref
from typing import Any, ClassVar, Generator, List, Optional, Tuple

import numpy as np

from .runtime import _callbacks
from .runtime._frontend import core as _core
from .errors import ClosedError, from_status
from .profiling import PROFILER as _profiler
from .profiling import job_nodes

__all__ = ["Future", "inflight", "wait_inflight"]

# How long cancel() waits for the driver to confirm a cancellation.
_CANCEL_CONFIRM_SECONDS = 1.0
# Longest a blocked wait goes without running the main thread's signal handlers.
_WAIT_SLICE = 0.02

_CANCELLED = 12  # ACCEL_ERR_CANCELLED

# The core counts the jobs it submitted with a completion callback until the callback has returned.
_callbacks_pending = _core.inflight_callbacks
# How often wait_inflight looks at that count.
_POLL_SECONDS = 0.001


def inflight() -> int:
    """Number of ``run_async`` jobs not over yet: submitted and not completed, or completed with
    done-callbacks that have not all returned (they run on accel's callback thread)."""
    return int(_callbacks_pending()) + _callbacks.pending()


def wait_inflight(timeout: Optional[float] = None) -> bool:
    """Waits until no ``run_async`` job is in flight (see :func:`inflight`), at most ``timeout`` seconds
    (None: forever). Returns True if none is left."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while inflight() > 0:
        if deadline is not None and time.monotonic() >= deadline:
            return False
        time.sleep(_POLL_SECONDS)
    return True


class Future(concurrent.futures.Future[List[np.ndarray]]):
    """The pending result of :meth:`accel.Model.run_async`: a list of NumPy arrays viewing the
    device's output buffers.

    A ``concurrent.futures.Future`` completed by the driver's completion callback: ``result(timeout)``
    returns the outputs or raises the job's :class:`~accel.AccelError` (``TimeoutError`` when the job's
    own ``timeout`` passed); ``await future`` works in asyncio; ``cancel()`` cancels a job that has not
    started. Dropping a Future without waiting for it is fine: the job runs to completion and
    everything it holds is freed.
    """

    def __init__(self) -> None:
        """A pending future; ``Model.run_async`` makes them (there is no use in making one yourself)."""
        super().__init__()
        self._job: Any = None  # the core's CoreJob until the job completes
        self._completed = False  # the job is over for this future (_claim: its completion, or a fork)
        self._outputs: Optional[List[np.ndarray]] = None
        self._model_name = ""
        self._device_uri = ""
        self._profile_flags = 0  # submitted with node profiling: _nodes is its model's ModelNodes
        self._nodes: Any = None
        self._pending_record: Any = None  # (timing, status): recorded by _attach, with the job's nodes
        self._pid = os.getpid()  # its job is this process's: a fork()ed child cannot see it end

    # -- called by Model.run_async -----------------------------------------------------------------

    def _attach(self, job: Any) -> None:
        """Takes the CoreJob once submit returned (the callback may already have run)."""
        with self._condition:
            if not self._completed:
                self._job = job
                return
            pending, self._pending_record = self._pending_record, None
        if pending is not None:  # it completed before submit returned: its nodes are read here
            self._record(job, *pending)
        job.release()

    def _record(self, job: Any, timing: Tuple[int, int, int, int], status: int) -> None:
        nodes = job_nodes(self._nodes, job) if self._profile_flags and job is not None else ()
        _profiler.record(self._model_name, self._device_uri, timing, status, nodes)

    def _complete(self, status: int, message: str, timing: Tuple[int, int, int, int]) -> None:
        """The core's completion callback: called exactly once, on the driver's completion thread (so it
        never blocks: done-callbacks go to the callback thread, see _invoke_callbacks)."""
        claimed = self._claim((timing, status) if self._profile_flags else None)
        if claimed is None:
            return
        job, outputs = claimed
        if _profiler.profiles and not (self._profile_flags and job is None):  # else _attach records it
            self._record(job, timing, status)
        if status == 0:
            self.set_result(outputs if outputs is not None else [])
        elif status == _CANCELLED:
            concurrent.futures.Future.cancel(self)
            # ... and tell concurrent.futures.wait()/as_completed() waiters, as an executor would.
            self.set_running_or_notify_cancel()
        else:
            self.set_exception(from_status(status, message))
        if job is not None:
            job.release()

    def _invoke_callbacks(self) -> None:
        # concurrent.futures calls this once the future is done, on the thread that completed it.
        callbacks: List[Any] = self._done_callbacks
        self._done_callbacks: List[Any] = []
        _callbacks.dispatch(callbacks, self)

    # -- public ----------------------------------------------------------------------------------------

    def cancel(self) -> bool:
        """Cancels the job if it has not started yet. Returns True if the future is (now) cancelled,
        False if the job is running or has finished (it then completes normally)."""
        if self._request_cancel():
            with self._condition:
                self._condition.wait_for(self.done, _CANCEL_CONFIRM_SECONDS)
        return self.cancelled()

    def _request_cancel(self) -> bool:
        """Releases the job if it has not started, without waiting for the driver to confirm; True if it
        did. (Model.run_batch releases every job of its window first, then waits: a wait between two
        releases would let the device start the next job meanwhile.)"""
        with self._condition:
            if self._completed or self.done():
                return False
            job = self._job
        if job is None:
            return False
        try:
            started = job.timing()[1] != 0
        except Exception:
            started = True
        if started:
            return False
        job.release()  # the driver cancels a job it has not started when its last handle goes
        return True

    def running(self) -> bool:
        """True while the job runs on a core (started, not finished)."""
        job = self._job
        if job is None or self.done():
            return False
        try:
            return bool(job.timing()[1] != 0)
        except Exception:
            return False

    def _wait(self, timeout: Optional[float]) -> None:
        # Waits in short slices so that the main thread runs its signal handlers (Ctrl-C, and
        # _thread.interrupt_main, which wakes no blocked lock) within _WAIT_SLICE seconds.
        if self.done():
            return
        deadline = None if timeout is None else time.monotonic() + timeout
        job = self._job
        if job is not None:
            # The core's wait polls before it sleeps and hears the job end sooner than a woken
            # condition would (the callback, which completes this future, runs before the job ends).
            try:
                job.wait(timeout)
            except ClosedError as e:
                if os.getpid() != self._pid:  # a job of the parent, in a fork()ed child: it never ends here
                    self._fail_in_child(e)
            except Exception:  # the job's own failure is this future's exception; or the job was released
                pass
        with self._condition:
            while not self.done():
                if deadline is None:
                    self._condition.wait(_WAIT_SLICE)
                else:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return
                    self._condition.wait(min(remaining, _WAIT_SLICE))

    def _claim(self, pending_record: Any = None) -> Optional[Tuple[Any, Optional[List[np.ndarray]]]]:
        """Marks the job over, once: (its CoreJob, the outputs) for whoever completes this future, or
        None if that happened already. A ``pending_record`` is kept for _attach when the CoreJob has
        not come yet (the node times are read from it)."""
        with self._condition:
            if self._completed:
                return None
            self._completed = True
            job, self._job = self._job, None
            if job is None:
                self._pending_record = pending_record
            outputs, self._outputs = self._outputs, None
        return job, outputs

    def _fail_in_child(self, error: ClosedError) -> None:
        if self._claim() is not None:
            self.set_exception(error)

    def result(self, timeout: Optional[float] = None) -> List[np.ndarray]:
        """The outputs (a list of NumPy arrays viewing device memory), waiting at most ``timeout``
        seconds (None: until done). Raises the job's AccelError if it failed,
        ``concurrent.futures.CancelledError`` if it was cancelled, ``TimeoutError`` if the wait timed
        out (the job goes on), and KeyboardInterrupt on Ctrl-C (the job goes on)."""
        try:
            self._wait(timeout)
            return super().result(0)
        finally:
            # The job's exception, raised here, holds this frame in its traceback: without its `self`, so that
            # the future holding the exception is no cycle (as concurrent.futures.Future.result does).
            del self

    def exception(self, timeout: Optional[float] = None) -> Optional[BaseException]:
        """The job's exception, or None if it succeeded; waits as :meth:`result` does."""
        self._wait(timeout)
        return super().exception(0)

    def __await__(self) -> Generator[Any, None, List[np.ndarray]]:
        """``await future`` in a coroutine: the outputs, or the job's exception.

        While it waits, the event loop wakes every few milliseconds so that Ctrl-C is handled promptly
        even when nothing else would wake it."""
        loop = asyncio.get_running_loop()
        waiter = asyncio.wrap_future(self, loop=loop)
        ticker = _Ticker.of(loop)
        ticker.add()
        try:
            return (yield from waiter.__await__())
        finally:
            ticker.remove()

    def __repr__(self) -> str:
        base = super().__repr__()
        return base.replace("<Future", f"<accel.Future {self._model_name!r}", 1)


class _Ticker:
    """Wakes an event loop every _WAIT_SLICE seconds while some coroutine awaits an accel Future, so
    the loop's thread runs its signal handlers. Used on the loop's thread only."""

    _by_loop: ClassVar[weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Ticker]] = weakref.WeakKeyDictionary()

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._waiters = 0
        self._handle: Optional[asyncio.TimerHandle] = None

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop) -> _Ticker:
        ticker = cls._by_loop.get(loop)
        if ticker is None:
            ticker = cls._by_loop[loop] = cls(loop)
        return ticker

    def add(self) -> None:
        self._waiters += 1
        if self._handle is None:
            self._handle = self._loop.call_later(_WAIT_SLICE, self._tick)

    def remove(self) -> None:
        self._waiters -= 1
        if self._waiters <= 0 and self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _tick(self) -> None:
        self._handle = self._loop.call_later(_WAIT_SLICE, self._tick) if self._waiters > 0 else None
