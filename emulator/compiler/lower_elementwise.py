"""Elementwise math, reductions and normalization: unary functions (as activation codes), Pow, Min, Max,
the Reduce* ops and LayerNormalization (FORMAT.md 1.1 ops).

Each handler takes (ctx, node) as in lowering.py and emits runtime nodes."""
from __future__ import annotations

HANDLERS: dict = {}
