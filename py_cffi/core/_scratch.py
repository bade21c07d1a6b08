"""Per-thread cdata records reused from call to call: ``ffi.new`` costs about 0.5 us, more than some of
the C calls it serves. A user takes a record out of ``records()`` (so a signal handler's nested call on
the same thread makes its own) and puts it back when done::

    scratch = records()
    rec = scratch.pop("name", None) or ffi.new(TYPE)
    ...
    scratch["name"] = rec
"""
from __future__ import annotations

import threading
from typing import Any, Dict

__all__ = ["records"]

_tls = threading.local()


def records() -> Dict[str, Any]:
    """The calling thread's records, by name."""
    return _tls.__dict__
