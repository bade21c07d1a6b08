"""Runs and waits that release the GIL yet stay responsive to Ctrl-C, over the front-ends' run core
(``python/native/accel_runcore.h``).

Every call into ``accel._cffi.lib`` releases the GIL. On the main thread (the only one that runs
signal handlers) the run core never blocks for longer than a slice (20 ms): it answers SLICE_OVER,
the loops here call it again, and Python runs the handlers in between, so Ctrl-C raises
KeyboardInterrupt within ~20 ms. A synchronous run is kept between two slices on the C side, under a
token. Other threads block in C once.
"""
from __future__ import annotations

import itertools
import threading
from typing import Any, Callable

from ._lib import CLOSED, error, last_message, lib

__all__ = ["SLICE_OVER", "REFUSED", "FOREVER", "run_blocking", "submit", "wait_job"]

SLICE_OVER = lib.ACCEL_RUNCORE_SLICE_OVER
REFUSED = lib.ACCEL_RUNCORE_REFUSED
FOREVER = lib.ACCEL_RUNCORE_FOREVER

_tokens = itertools.count(1)  # next() is atomic under the GIL
_finish = lib.accel_runcore_finish
_abandon = lib.accel_runcore_abandon
_submit = lib.accel_runcore_submit
_wait = lib.accel_runcore_wait
lib.accel_runcore_set_main_thread(threading.main_thread().ident)


def refused() -> BaseException:
    """What a run or a submission the exit drain refused raises."""
    return error(CLOSED, "the interpreter is exiting: no new jobs")


def run_blocking(run: Callable[..., int], *args: Any) -> None:
    """One synchronous run, ``run(*args, token)`` with ``run`` accel_runcore_run or a variant of it;
    raises through ``from_status`` if the job failed. Between two slices of the main thread the signal
    handlers run here; a KeyboardInterrupt ends the run (a job not started is cancelled). The caller
    keeps the model and the buffers' owners alive."""
    token = next(_tokens)
    try:
        status = run(*args, token)
        while status == SLICE_OVER:  # the main thread: the run is pending under `token`
            status = _finish(token)
    except BaseException:
        _abandon(token)
        raise
    if status:
        if status == REFUSED:
            raise refused()
        raise error(status, last_message())


def submit(*args: Any) -> int:
    """``accel_runcore_submit(*args)`` (completion through the core's hook), called again while the
    main thread's slice ends before an in-flight slot comes free. Returns its status."""
    status = _submit(*args)
    while status == SLICE_OVER:
        status = _submit(*args)
    return int(status)


def wait_job(job: Any, deadline: int) -> int:
    """Waits for ``job`` until ``deadline`` (FOREVER or ``accel_runcore_deadline``); returns the job's
    result, or NOT_READY if the deadline passed first."""
    status = _wait(job, deadline)
    while status == SLICE_OVER:
        status = _wait(job, deadline)
    return int(status)
