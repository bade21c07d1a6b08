"""Runs and waits that release the GIL yet stay responsive to Ctrl-C.

Every call into ``accel._cffi.lib`` releases the GIL. On the main thread (the only one that runs
signal handlers) nothing blocks for long in C: a synchronous run waits for an in-flight slot and for
its job in slices of at most 20 ms, kept between two slices on the C side (``cffi_run.c``); a
submission with a callback that finds no free slot is retried here with short sleeps; a job's wait is
sliced too. Python runs the handlers between two slices, so Ctrl-C raises KeyboardInterrupt within
~20 ms. Other threads block in C once (a timed wait costs more in the kernel, and they could not run
the handlers anyway).
"""
from __future__ import annotations

import itertools
import threading
import time
from _thread import get_ident
from typing import Any, Callable, Optional

from ._lib import BUSY, CLOSED, NOT_READY, error, last_message, lib

__all__ = ["SLICE_US", "REFUSED", "run_blocking", "submit", "wait_job"]

#: Longest a wait on the main thread goes without running the signal handlers.
SLICE_US = lib.ACCEL_CFFI_SLICE_US

_MAIN = threading.main_thread().ident
_tokens = itertools.count(1)  # next() is atomic under the GIL
_finish = lib.accel_cffi_finish
_abandon = lib.accel_cffi_abandon
lib.accel_cffi_set_main_thread(_MAIN)
REFUSED = lib.ACCEL_CFFI_REFUSED


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


def run_blocking(run: Callable[..., int], *args: Any) -> None:
    """One synchronous run, ``run(*args, token)`` with ``run`` accel_cffi_run or a variant of it;
    raises through ``from_status`` if the job failed. On the main thread the C side waits for a slot
    and for the job in slices (cffi_run.c), and between two the signal handlers run here; a
    KeyboardInterrupt ends the run (a job not started is cancelled). The caller keeps the model and
    the buffers' owners alive."""
    token = next(_tokens)
    try:
        status = run(*args, token)
        while status == NOT_READY:  # the main thread: the run is pending under `token`
            status = _finish(token)
    except BaseException:
        _abandon(token)
        raise
    if status:
        if status == REFUSED:
            raise error(CLOSED, "the interpreter is exiting: no new jobs")
        raise error(status, last_message())


def submit(*args: Any) -> int:
    """``accel_cffi_submit(*args)`` (completion through the Python callback); on the main thread, which
    the C side never blocks, it retries while no in-flight slot is free, running the signal handlers
    between tries. Returns its status."""
    status = lib.accel_cffi_submit(*args)
    if status == BUSY and get_ident() == _MAIN:  # elsewhere BUSY is final (a completion callback's)
        status = _until_free(lambda: lib.accel_cffi_submit(*args))
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
