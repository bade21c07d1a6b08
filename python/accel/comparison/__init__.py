"""Comparing two models tensor by tensor (``accel.compare``, ``accel compare``): which layer goes wrong.

Modules: ``compare_models`` (the function), ``sides`` (running each side), ``inputs`` (the input sets; its
random ones are also accel bench's and accel selftest's), ``index_inputs`` (which inputs are indices, and into what),
``matching`` (which tensor stands for which), ``metrics`` and ``quant_values`` (the figures), ``report`` (the
rows and what prints, saves and plots them) and ``plot``.
"""
from __future__ import annotations

from .compare_models import compare
from .report import Comparison, Row

__all__ = ["Comparison", "Row", "compare"]
