"""Batch inference on a Ray cluster (``pip install 'accel[ray]'``; docs/ray.md).

    import ray, accel.ray
    ds = ray.data.read_parquet("frames/")                        # a column "image": float32 rows (3, 224, 224)
    ds = accel.ray.map_model(ds, "model.onnx", device="emu")     # adds the model's outputs as columns
    ds.write_parquet("out/")

:class:`Predictor` is the callable class ``Dataset.map_batches`` runs in each actor; :func:`map_model` maps it with
defaults that fit the device (an actor per CPU on the emulator, per board elsewhere). Importing this package does
not import Ray: a Predictor also runs on a ``{column: array}`` dict in any process.
"""
from __future__ import annotations

from .pipeline import map_model
from .predictor import Predictor
from .rows import RowPlan, Split

__all__ = ["Predictor", "map_model", "RowPlan", "Split"]
