"""Module-level locks that a fork()ed child gets fresh.

A lock held by another thread of the parent at the instant of fork() stays held forever in the child,
where that thread does not exist; a child that then loads a model would hang. ``ForkSafeLock`` is a
``threading.Lock`` renewed in every child. Only for locks that live as long as the process
(``os.register_at_fork`` keeps them).
"""
from __future__ import annotations

import os
import threading
from typing import Any

__all__ = ["ForkSafeLock"]


class ForkSafeLock:
    """A ``threading.Lock`` (``with``, ``acquire``, ``release``) renewed in a fork()ed child."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        os.register_at_fork(after_in_child=self._renew)

    def _renew(self) -> None:
        self._lock = threading.Lock()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        return self._lock.acquire(blocking, timeout)

    def release(self) -> None:
        self._lock.release()

    def __enter__(self) -> bool:
        return self._lock.acquire()

    def __exit__(self, *exc: Any) -> None:
        self._lock.release()
