"""CoreJob (wait, done, timing, release), the completion callback from the driver's thread, and the
interpreter-exit protocol for callbacks still in flight."""
from __future__ import annotations

import atexit
import math
import weakref
from typing import Any, Callable, List, Optional, Tuple

from ._lib import NOT_READY, check, error, ffi, last_message, lib, text
from .waiting import FOREVER, wait_job

__all__ = ["CoreJob", "Completion", "register", "discard", "timing_tuple", "new_timing", "inflight_callbacks"]

_TIMING = ffi.typeof("accel_job_timing *")

Timing = Tuple[int, int, int, int]

# Every CoreJob not yet collected, for the exit hook (it releases them if their jobs take too long).
_live: weakref.WeakSet[CoreJob] = weakref.WeakSet()


def new_timing() -> Any:
    t = ffi.new(_TIMING)
    t.struct_size = ffi.sizeof("accel_job_timing")
    return t


def timing_tuple(t: Any) -> Timing:
    return (int(t.queued_ns), int(t.started_ns), int(t.finished_ns), int(t.core))


class CoreJob:
    """A submitted job (one accel_job reference)."""

    __slots__ = ("_job", "__weakref__")
    _job: Any  # its owner (_lib.new_owner: the handle is [0]), None once released

    def __init__(self) -> None:
        raise TypeError("accel._cffi_core.CoreJob cannot be instantiated from Python: CoreModel.submit "
                        "makes them")

    def _get(self) -> Any:
        job = self._job
        if job is None:
            raise error(lib.ACCEL_ERR_CLOSED, "the job is released")
        return job

    def wait(self, timeout: Optional[float] = None) -> None:
        """Waits (GIL released, Ctrl-C aware); raises if the job failed or `timeout` seconds passed."""
        deadline = FOREVER
        if timeout is not None:
            seconds = float(timeout)
            if math.isnan(seconds):
                raise ValueError("timeout is NaN")
            deadline = lib.accel_runcore_deadline(seconds)
        job = self._get()  # held here: release() from another thread cannot free it under the wait
        status = wait_job(job[0], deadline)
        if status == NOT_READY:
            raise error(status, f"the job did not finish within {timeout:g} s")
        if status:
            raise error(status, last_message())

    def done(self) -> bool:
        """True once the job has finished (accel_job_poll)."""
        done = ffi.new("int32_t *")
        job = self._get()
        check(lib.accel_job_poll(job[0], done))
        return bool(done[0])

    def timing(self) -> Timing:
        """(queued_ns, started_ns, finished_ns, core)"""
        t = new_timing()
        job = self._get()
        check(lib.accel_job_get_timing(job[0], t))
        return timing_tuple(t)

    def node_times(self) -> List[Tuple[int, int]]:
        """[(started_ns, finished_ns)] per node (ACCEL_SUBMIT_PROFILE_NODES)"""
        job = self._get()
        count = ffi.new("size_t *")
        check(lib.accel_job_get_node_times(job[0], ffi.NULL, 0, count))
        n = int(count[0])
        if not n:
            return []
        times = ffi.new("accel_node_time[]", n)
        check(lib.accel_job_get_node_times(job[0], times, n, count))
        return [(int(t.started_ns), int(t.finished_ns)) for t in times]

    def release(self) -> None:
        """Drops the job reference (idempotent); a job not started is cancelled."""
        self._job = None  # the handle's owner releases it once no wait holds it any more


def inflight_callbacks() -> int:
    """Jobs submitted with CoreModel.submit whose callback has not returned yet."""
    return int(lib.accel_runcore_callbacks_pending())


def wrap_job(owner: Any) -> CoreJob:
    """A CoreJob over ``owner`` (from _lib.new_owner), which holds the job reference."""
    job = object.__new__(CoreJob)
    job._job = owner
    _live.add(job)
    return job


class Completion:
    """What a job's completion calls: the Python callback, and what the job must keep alive until it is over
    (the CoreBuffers of memory imported from Python objects, which hold those objects).

    Its cffi handle is the job's user_data, and ``_pending`` owns that handle from just before the
    submission until the driver has called back (or the submission failed): nothing else refers to the
    handle, and the completion never to its handle, so that once the callback has returned the completion,
    the callback and whatever the callback holds (a Future with its outputs) go by reference counting,
    with no cycle left for the garbage collector to find."""

    __slots__ = ("callback", "held")

    def __init__(self, callback: Callable[[int, str, Timing], Any], held: Any = None) -> None:
        self.callback = callback
        self.held = held


# The handles of the completions to come, compared and hashed by address (so the job's user_data, a
# plain void *, finds its own). Changed with the GIL held.
_pending: set[Any] = set()


def register(handle: Any) -> None:
    """Makes _pending the owner of a completion's handle (``ffi.new_handle(completion)``) until the callback
    came (or discard): just before the submission."""
    _pending.add(handle)


def discard(handle: Any) -> None:
    """Drops a registered completion whose job was never submitted (idempotent)."""
    _pending.discard(handle)


@ffi.def_extern()  # type: ignore[untyped-decorator]  # cffi's compiled module has no types
def accel_cffi_job_done(user_data: Any, status: int, timing: Any, message: Any) -> None:
    # The run core's completion hook: on the driver's completion thread, with the GIL (cffi takes
    # it), only while the core's door is open. An exception of the callback propagates to cffi, which
    # reports it through sys.unraisablehook. The completion leaves _pending first: this frame holds it
    # for the call, and it goes (with all it holds) when the call returns.
    completion: Completion = ffi.from_handle(user_data)
    _pending.discard(user_data)
    completion.callback(status, text(message) if status else "", timing_tuple(timing))


lib.accel_runcore_set_completion_hook(lib.accel_cffi_job_done)

@ffi.def_extern()  # type: ignore[untyped-decorator]
def accel_cffi_release_jobs() -> None:
    # The exit drain's step when the jobs in flight take too long: their handles go (a job not
    # started is cancelled). cffi takes the GIL for it.
    for job in list(_live):
        job.release()


_EXIT_STEPS = ffi.new("accel_runcore_exit_steps *", {"release_jobs": lib.accel_cffi_release_jobs})


def _on_exit() -> None:
    # The run core's exit drain (atexit, before finalization, while the driver's threads may still
    # take the GIL; the call releases it).
    lib.accel_runcore_exit_drain(_EXIT_STEPS)


def install_exit_hook() -> None:
    atexit.register(_on_exit)
