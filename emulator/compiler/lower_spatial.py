"""Spatial ops beyond conv and pooling: ConvTranspose and Resize (Upsample) (FORMAT.md 1.1 ops).

Each handler takes (ctx, node) as in lowering.py and emits runtime nodes."""
from __future__ import annotations

HANDLERS: dict = {}
