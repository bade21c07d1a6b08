"""Device operators (``Device.ops``) and fusion scopes (``Device.fusion_scope()``).

Layout: ``table.py`` lists the ops (one record each: tensor arguments and a rule); ``rules_*.py`` check a call
and plan its ONNX node(s) and output shape (``plan.py``'s data, ``args.py``'s checks); ``recording.py`` turns
plans into a graph, its ONNX model and its signature; ``cache.py`` keeps loaded models by signature;
``execute.py`` runs a graph as one job; ``eager.py`` is the front (``Ops``); ``scope.py`` records a fusion
scope; ``pending.py`` is its results' class, ``accel.PendingTensor``.
"""
from __future__ import annotations

from .eager import Ops
from ..runtime.pending import PendingTensor
from .scope import FusionScope

__all__ = ["FusionScope", "Ops", "PendingTensor"]
