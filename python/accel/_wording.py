"""Wording that the command line's messages share."""
from __future__ import annotations

from typing import Optional


def counted(n: int, noun: str, plural: Optional[str] = None) -> str:
    """``n`` and the noun, plural (``plural``, by default the noun and an s) unless ``n`` is 1: "1 core", "2 cores",
    "3 entries"."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
