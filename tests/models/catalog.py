"""The real models the tests and the model benchmark run: where each comes from, its input, and how
to read its output.

    from models import catalog
    spec = catalog.MODELS["resnet18"]
    path = catalog.model_path("resnet18")          # built (or fetched) once, then cached
    x = spec.make_input(spec.test_shape)           # a fixed-seed, image-like input
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Callable, Dict, NamedTuple, Optional, Tuple

import numpy as np
import onnx

from accel.models import ppocr

from . import graph_builder, images, mobilenetv2, resnet18, yolo

Shape = Tuple[int, ...]
INPUT_SEED = 7
WEIGHT_SEED = 0


class ModelSpec(NamedTuple):
    name: str
    input_name: str
    test_shape: Shape  # what the tests run (kept small where the model allows it)
    bench_shape: Shape  # what the benchmark runs (the model's usual size)
    image: Callable[[int, int, int], np.ndarray]  # (h, w, seed) -> (3, h, w) in [0, 1]
    normalize: Callable[[np.ndarray], np.ndarray]
    # The axis along which the output's argmax is the prediction (classes; per time step for the
    # recognizer), or None for an output that is not a classification (the detector's text map).
    argmax_axis: Optional[int]
    build: Optional[Callable[[int], onnx.ModelProto]] = None  # None: a PP-OCR model to fetch

    def make_input(self, shape: Shape, seed: int = INPUT_SEED) -> np.ndarray:
        n, c, h, w = shape
        assert n == 1 and c == 3, shape
        return np.ascontiguousarray(self.normalize(self.image(h, w, seed)))


MODELS: Dict[str, ModelSpec] = {m.name: m for m in (
    ModelSpec("resnet18", "x", resnet18.INPUT_SHAPE, resnet18.INPUT_SHAPE, images.scene,
              images.imagenet_normalized, 1, resnet18.build),
    ModelSpec("mobilenetv2", "x", mobilenetv2.INPUT_SHAPE, mobilenetv2.INPUT_SHAPE, images.scene,
              images.imagenet_normalized, 1, mobilenetv2.build),
    ModelSpec("ppocr_det", "x", (1, 3, 320, 320), (1, 3, 640, 640), images.text_page,
              images.imagenet_normalized, None),
    ModelSpec("ppocr_cls", "x", (1, 3, 48, 192), (1, 3, 48, 192), images.text_page,
              images.half_normalized, 1),
    ModelSpec("ppocr_rec", "x", (1, 3, 48, 320), (1, 3, 48, 320), images.text_page,
              images.half_normalized, 2),
    ModelSpec("yolo", "images", yolo.INPUT_SHAPE, yolo.INPUT_SHAPE, images.scene, images.unit_range, None,
              yolo.build),
)}


def built_dir() -> Path:
    """Where built models are cached: beside the fetched ones."""
    return ppocr.cache_dir() / "built"


def _builder_digest() -> str:
    """A hash of the builders' source: a changed builder never reuses a file another one made."""
    h = hashlib.sha256()
    for mod in (graph_builder, resnet18, mobilenetv2, yolo):
        h.update(Path(mod.__file__).read_bytes())
    return h.hexdigest()[:12]


def model_path(name: str, folder: Optional[Path] = None, seed: int = WEIGHT_SEED) -> Path:
    """The ONNX file of model `name`: built with `seed` (ResNet-18, MobileNetV2, YOLO) or fetched (PP-OCR),
    once, into `folder` (default: the model cache)."""
    spec = MODELS[name]
    if spec.build is None:
        return ppocr.fetch(name, folder)
    folder = Path(folder) if folder is not None else built_dir()
    dst = folder / f"{name}-seed{seed}-{_builder_digest()}.onnx"
    if not dst.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        data = spec.build(seed).SerializeToString()
        fd, tmp = tempfile.mkstemp(prefix=f".{dst.name}.", dir=folder)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, dst)
    return dst
