"""Synthetic, image-like model inputs (fixed seeds): a scene of smooth gradients and shapes for the
classifiers, dark strokes in text lines on a light page for the OCR models, normalized as each model
expects. Real-looking inputs drive the models through the value ranges they were made for, which random
noise does not (a sigmoid map of noise is flat, a softmax of noise has no clear winner)."""
from __future__ import annotations

from typing import Tuple

import numpy as np

IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], np.float32)


def _grid(h: int, w: int) -> Tuple[np.ndarray, np.ndarray]:
    return np.meshgrid(np.linspace(0.0, 1.0, h), np.linspace(0.0, 1.0, w), indexing="ij")


def scene(h: int, w: int, seed: int) -> np.ndarray:
    """An RGB image in [0, 1], shape (3, h, w): a color gradient with a few ellipses and some noise."""
    r = np.random.default_rng(seed)
    yy, xx = _grid(h, w)
    img = np.stack([c0 + c1 * yy + c2 * xx for c0, c1, c2 in r.uniform(-0.5, 1.0, (3, 3))])
    for _ in range(6):
        cy, cx, ry, rx = r.uniform(0.0, 1.0, 2).tolist() + r.uniform(0.05, 0.3, 2).tolist()
        inside = ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1.0
        img[:, inside] = r.uniform(0.0, 1.0, (3, 1))
    img += r.normal(0.0, 0.03, img.shape)
    return np.clip(img, 0.0, 1.0).astype(np.float32)


def text_page(h: int, w: int, seed: int) -> np.ndarray:
    """An RGB image in [0, 1], shape (3, h, w): dark glyph-like strokes along text lines on paper."""
    r = np.random.default_rng(seed)
    gray = np.full((h, w), 0.92) + r.normal(0.0, 0.02, (h, w))
    line_h = max(8, min(h, 48) * 3 // 4)
    for top in range(h % line_h // 2, h - line_h + 1, line_h + line_h // 3 + 1):
        x = int(r.integers(2, max(3, w // 10)))
        end = int(r.integers(w // 2, w + 1))
        while x < end - 4:
            gw = int(r.integers(line_h // 3, line_h))
            for _ in range(int(r.integers(2, 5))):  # a glyph: a few strokes in its box
                if r.random() < 0.5:
                    y0 = top + int(r.integers(1, line_h - 2))
                    gray[y0:y0 + 2, x:x + gw] = 0.1
                else:
                    x0 = x + int(r.integers(0, max(1, gw - 1)))
                    gray[top + 2:top + line_h - 2, x0:x0 + 2] = 0.1
            x += gw + int(r.integers(1, max(2, line_h // 4)))
    tint = r.uniform(0.9, 1.0, (3, 1, 1))
    return np.clip(gray[None] * tint, 0.0, 1.0).astype(np.float32)


def imagenet_normalized(img: np.ndarray) -> np.ndarray:
    """(img - mean) / std with ImageNet's per-channel mean and std, batch of one."""
    return ((img - IMAGENET_MEAN[:, None, None]) / IMAGENET_STD[:, None, None])[None].astype(np.float32)


def half_normalized(img: np.ndarray) -> np.ndarray:
    """(img - 0.5) / 0.5, batch of one (the PP-OCR classifier and recognizer)."""
    return ((img - 0.5) / 0.5)[None].astype(np.float32)


def unit_range(img: np.ndarray) -> np.ndarray:
    """The image as it is, in [0, 1], batch of one (YOLO detectors divide by 255 and no more)."""
    return img[None].astype(np.float32)
