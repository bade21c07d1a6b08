"""The thread that runs ``Future`` done-callbacks, so that none runs on a driver's completion thread.

A completion thread ends every job of its device in turn: a done-callback that blocked there (waiting
for another future of the same device, say) would stop the device. So a job's completion only sets
its future's result, and the future's done-callbacks are handed to one thread of this module, which
runs them one at a time, in completion order.

At interpreter exit, after the core's drain has waited for the jobs in flight (``atexit`` runs hooks in
reverse order of registration, and this module is imported before any core), the callbacks already
handed over get a few seconds to run; then the thread takes no more and is left alone, as a daemon
thread, even if a callback of its never returns. A fork()ed child starts a thread of its own.
"""
from __future__ import annotations

import atexit
import logging
import os
import queue
import threading
import time
from typing import Any, Callable, List, Optional, Tuple

from .._forksafe import ForkSafeLock

__all__ = ["dispatch", "pending"]

_LOGGER = logging.getLogger("concurrent.futures")  # where concurrent.futures reports a callback's error
_EXIT_SECONDS = 5.0

Call = Tuple[List[Callable[[Any], Any]], Any]

_lock = ForkSafeLock()
_queue: queue.SimpleQueue[Optional[Call]] = queue.SimpleQueue()
_thread: Optional[threading.Thread] = None
_pending = 0  # calls handed over and not finished
_closed = False  # past the exit wait: calls are dropped


def pending() -> int:
    """Done-callback batches handed to the thread and not finished yet."""
    return _pending


def dispatch(callbacks: List[Callable[[Any], Any]], future: Any) -> None:
    """Runs ``fn(future)`` for each of ``callbacks``, in order, on the callback thread."""
    global _thread, _pending
    if not callbacks:
        return
    with _lock:
        if _closed:
            return
        _pending += 1
        if _thread is None:
            _thread = threading.Thread(target=_serve, name="accel-callbacks", daemon=True)
            _thread.start()
    _queue.put((callbacks, future))


def _serve() -> None:
    global _pending
    while True:
        call = _queue.get()
        if call is None or _closed:
            return
        callbacks, future = call
        for fn in callbacks:
            try:
                fn(future)
            except BaseException:  # SystemExit too: this thread serves every later callback
                _LOGGER.exception("exception calling callback for %r", future)
        del call, callbacks, future
        with _lock:
            _pending -= 1


def _on_exit() -> None:
    global _closed
    deadline = time.monotonic() + _EXIT_SECONDS
    while _pending > 0 and time.monotonic() < deadline:
        time.sleep(0.001)
    with _lock:
        _closed = True
    _queue.put(None)


def _after_fork_in_child() -> None:
    global _queue, _thread, _pending
    _queue = queue.SimpleQueue()
    _thread = None
    _pending = 0


atexit.register(_on_exit)
os.register_at_fork(after_in_child=_after_fork_in_child)
