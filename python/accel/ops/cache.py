"""The loaded models of a device's ops, by graph signature, least recently used dropped first.

``accel.compile_cache`` already keeps compiled bytes by content; this keeps the loaded
:class:`~accel.Model`, so a call whose signature was seen before neither builds ONNX nor compiles nor loads:
it only runs.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable, Dict, Hashable, Tuple, TypeVar

T = TypeVar("T")

DEFAULT_SIZE = 64


class ModelCache:
    """A bounded, thread-safe LRU map from a signature to what ``load`` made for it."""

    def __init__(self, maxsize: int = DEFAULT_SIZE) -> None:
        self._maxsize = maxsize
        self._entries: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._hits = 0
        self._loads = 0

    def get(self, key: Hashable, load: Callable[[], T]) -> Tuple[T, bool]:
        """The entry of ``key``, else a new one made by ``load()``; and True if it was there. Two threads
        missing at once may both load (a load can take long; it runs without the lock); one entry is kept."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                self._hits += 1
                return entry, True
        made = load()
        with self._lock:
            self._loads += 1
            self._entries[key] = made
            self._entries.move_to_end(key)
            while len(self._entries) > self._maxsize:
                self._entries.popitem(last=False)
        return made, False

    def info(self) -> Dict[str, int]:
        with self._lock:
            return {"hits": self._hits, "loads": self._loads, "size": len(self._entries), "maxsize": self._maxsize}

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
