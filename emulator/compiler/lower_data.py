"""Data movement: Slice, Split, Gather, Expand, Cast at run time (FORMAT.md 1.1 ops).

Each handler takes (ctx, node) as in lowering.py and emits runtime nodes."""
from __future__ import annotations

HANDLERS: dict = {}
