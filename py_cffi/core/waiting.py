"""Runs and waits that release the GIL yet stay responsive to Ctrl-C.

Every call into ``accel._cffi.lib`` releases the GIL. On the main thread (the only one that runs
signal handlers) a wait is made in slices of at most 20 ms, and Python runs the handlers between two
slices, so Ctrl-C raises KeyboardInterrupt within ~20 ms; a submission that has to wait for an
in-flight slot polls with ``ACCEL_SUBMIT_NO_WAIT`` and short sleeps. Other threads make one untimed
wait (a timed wait costs more in the kernel, and they could not run the handlers anyway).
"""
from __future__ import annotations

import threading
import time
from _thread import get_ident
from typing import Any, Callable, Optional, Tuple

from ._lib import BUSY, CLOSED, NOT_READY, error, ffi, last_message, lib

__all__ = ["SLICE_US", "REFUSED", "run_blocking", "submit", "wait_job", "on_main_thread"]

#: Longest a wait on the main thread goes without running the signal handlers.
SLICE_US = 20000

_MAIN = threading.main_thread().ident
_CALL = ffi.typeof("accel_cffi_call *")
_tls = threading.local()  # one accel_cffi_call per thread, reused (ffi.new costs ~0.5 us)
REFUSED = lib.ACCEL_CFFI_REFUSED


def on_main_thread() -> bool:
    return get_ident() == _MAIN


def _until_free(retry: Any) -> int:
    """Retries a NO_WAIT submission while it is refused for want of a slot (sleeps of 20 us growing to
    1 ms; time.sleep runs the signal handlers). Returns the first other status."""
    pause = 20e-6
    while True:
        time.sleep(pause)
        status = retry()
        if status != BUSY:
            return int(status)
        pause = min(pause * 2, 1e-3)


def run_blocking(model: Any, inputs: Any, n_in: int, outputs: Any, n_out: int, priority: int,
                 core_mask: int, timeout_us: int, timing: bool) -> Optional[Tuple[int, int, int, int]]:
    """Submit, wait and release one job; raises through ``from_status`` if it failed. Returns the
    job's timing if ``timing``, else None. A KeyboardInterrupt releases the job (one not started is
    cancelled). The caller keeps the buffers' owners alive."""
    scratch = _tls.__dict__
    call = scratch.pop("call", None)  # taken: a signal handler's nested run makes its own
    if call is None:
        call = ffi.new(_CALL)
    if get_ident() != _MAIN:
        status = lib.accel_cffi_run(model, inputs, n_in, outputs, n_out, priority, core_mask, timeout_us, 0, -1,
                                    call)
    else:
        status = lib.accel_cffi_run(model, inputs, n_in, outputs, n_out, priority, core_mask, timeout_us, 1,
                                    SLICE_US, call)
        if status == BUSY or status == NOT_READY:
            status = _finish_on_main(call, lambda: lib.accel_cffi_run(
                model, inputs, n_in, outputs, n_out, priority, core_mask, timeout_us, 1, SLICE_US, call))
    if status:
        scratch["call"] = call
        raise _run_error(status)
    t = call.timing
    result = (t.queued_ns, t.started_ns, t.finished_ns, t.core) if timing else None
    scratch["call"] = call
    return result


def _finish_on_main(call: Any, resubmit: Callable[[], int]) -> int:
    # The slow part of a run on the main thread: waiting for an in-flight slot, then for the job,
    # with the signal handlers run in between; an exception (Ctrl-C) abandons the job.
    try:
        status = lib.accel_cffi_finish(call, SLICE_US) if call.job != ffi.NULL else BUSY
        if status == BUSY:
            status = _until_free(resubmit)
        while status == NOT_READY:
            status = lib.accel_cffi_finish(call, SLICE_US)
        return int(status)
    finally:
        if call.job != ffi.NULL:
            lib.accel_cffi_abandon(call)


def _run_error(status: int) -> BaseException:
    if status == REFUSED:
        return error(CLOSED, "the interpreter is exiting: no new jobs")
    return error(status, last_message())


def submit(model: Any, inputs: Any, n_in: int, outputs: Any, n_out: int, priority: int, core_mask: int,
           timeout_us: int, user_data: Any, job: Any) -> int:
    """accel_cffi_submit (completion through the Python callback), Ctrl-C aware on the main thread
    while it waits for an in-flight slot. Returns its status; the job goes to ``job[0]``."""
    if get_ident() != _MAIN:
        return int(lib.accel_cffi_submit(model, inputs, n_in, outputs, n_out, priority, core_mask, timeout_us,
                                         0, user_data, job))
    status = lib.accel_cffi_submit(model, inputs, n_in, outputs, n_out, priority, core_mask, timeout_us, 1,
                                   user_data, job)
    if status == BUSY:
        status = _until_free(lambda: lib.accel_cffi_submit(
            model, inputs, n_in, outputs, n_out, priority, core_mask, timeout_us, 1, user_data, job))
    return int(status)


def wait_job(job: Any, timeout_us: Optional[int]) -> int:
    """Waits for ``job`` (None: until it ends); returns the job's result, or NOT_READY if the timeout
    passed first. Signal handlers run between slices on the main thread."""
    if timeout_us is None and get_ident() != _MAIN:
        return int(lib.accel_job_wait(job, -1))
    deadline = None if timeout_us is None else time.monotonic() + timeout_us * 1e-6
    while True:
        slice_us = SLICE_US
        if deadline is not None:
            slice_us = max(0, min(SLICE_US, int((deadline - time.monotonic()) * 1e6)))
        status = lib.accel_job_wait(job, slice_us)
        if status != NOT_READY:
            return int(status)
        if deadline is not None and time.monotonic() >= deadline:
            return int(status)
