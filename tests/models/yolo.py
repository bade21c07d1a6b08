"""A YOLOv8n-style detector (Ultralytics' layout at width 0.25, depth 0.33) as ONNX, as its exporter writes
it: input images[1, 3, 640, 640] float32 in [0, 1], output [1, 84, 8400] (4 box coordinates in pixels,
centre x, centre y, width, height, then 80 class scores, for each of the 80x80 + 40x40 + 20x20 anchors).

Every conv is Conv + BatchNormalization + SiLU, SiLU written x * Sigmoid(x) (the exporter's form at opset
13); C2f blocks split with Split and join with Concat; SPPF chains three 5x5 max pools; the neck upsamples
with Resize (nearest) and concatenates; the head decodes the distribution focal loss boxes (Softmax over
16 bins, then a 1x1 conv with weights 0..15) against the anchor grid. Random weights from a seed.
"""
from __future__ import annotations

from typing import List, Tuple

import numpy as np
import onnx

from .graph_builder import GraphBuilder

INPUT_SHAPE = (1, 3, 640, 640)
CLASSES = 80
REG_MAX = 16  # distribution focal loss bins per box side
STRIDES = (8, 16, 32)
# gamma of the BN closing a residual bottleneck: keeps the sums at a steady scale.
BRANCH_GAIN = 0.5


class _Yolo(GraphBuilder):
    def silu(self, x: str) -> str:
        return self.node("Mul", [x, self.node("Sigmoid", [x], "sigmoid")], "silu")

    def cbs(self, x: str, cin: int, cout: int, k: int = 1, stride: int = 1, gain: float = 1.0) -> str:
        """Ultralytics' Conv: conv, batch norm, SiLU."""
        return self.silu(self.batchnorm(self.conv(x, cin, cout, k, stride), cout, gain))

    def split(self, x: str, sizes: List[int]) -> List[str]:
        outs = [self._new("split") for _ in sizes]
        name = self._new("split_node")
        sizes_name = self.const(np.array(sizes, np.int64), "split_sizes")
        self.nodes.append(onnx.helper.make_node("Split", [x, sizes_name], outs, name=name, axis=1))
        return outs

    def concat(self, xs: List[str], axis: int = 1) -> str:
        return self.node("Concat", xs, "concat", axis=axis)

    def c2f(self, x: str, cin: int, cout: int, n: int, shortcut: bool) -> str:
        c = cout // 2
        ys = self.split(self.cbs(x, cin, 2 * c), [c, c])
        for _ in range(n):
            y = self.cbs(self.cbs(ys[-1], c, c, 3), c, c, 3, gain=BRANCH_GAIN if shortcut else 1.0)
            ys.append(self.node("Add", [ys[-1], y], "add") if shortcut else y)
        return self.cbs(self.concat(ys), (2 + n) * c, cout)

    def sppf(self, x: str, cin: int, cout: int) -> str:
        half = cin // 2
        ys = [self.cbs(x, cin, half)]
        for _ in range(3):
            ys.append(self.node("MaxPool", [ys[-1]], "maxpool", kernel_shape=[5, 5], strides=[1, 1],
                                pads=[2, 2, 2, 2]))
        return self.cbs(self.concat(ys), 4 * half, cout)

    def upsample(self, x: str) -> str:
        roi = self.const(np.zeros(0, np.float32), "roi")
        scales = self.const(np.array([1, 1, 2, 2], np.float32), "scales")
        return self.node("Resize", [x, roi, scales], "upsample", mode="nearest")

    def plain_conv(self, x: str, cin: int, cout: int) -> str:
        """The head's last 1x1 conv: a bias, no norm, no activation."""
        w = self.rng.standard_normal((cout, cin, 1, 1)) * np.sqrt(1.0 / cin)
        b = self.rng.normal(0.0, 0.5, cout)
        return self.node("Conv", [x, self.const(w.astype(np.float32), "w"), self.const(b.astype(np.float32), "b")],
                         "conv", kernel_shape=[1, 1])

    def reshape(self, x: str, shape: Tuple[int, ...]) -> str:
        return self.node("Reshape", [x, self.const(np.array(shape, np.int64), "shape")], "reshape")


def _anchors(size: int) -> Tuple[np.ndarray, np.ndarray]:
    """The anchor centres [2, A] (in grid units, + 0.5) and strides [1, A] of the three levels."""
    points, strides = [], []
    for s in STRIDES:
        n = size // s
        yy, xx = np.meshgrid(np.arange(n) + 0.5, np.arange(n) + 0.5, indexing="ij")
        points.append(np.stack([xx.ravel(), yy.ravel()]))
        strides.append(np.full(n * n, s))
    return np.concatenate(points, 1).astype(np.float32), np.concatenate(strides)[None].astype(np.float32)


def build(seed: int = 0) -> onnx.ModelProto:
    b = _Yolo("yolov8n_style", seed)
    size = INPUT_SHAPE[2]
    # backbone
    x = b.cbs("images", 3, 16, 3, 2)
    x = b.cbs(x, 16, 32, 3, 2)
    x = b.c2f(x, 32, 32, 1, True)
    x = b.cbs(x, 32, 64, 3, 2)
    p3 = b.c2f(x, 64, 64, 2, True)
    x = b.cbs(p3, 64, 128, 3, 2)
    p4 = b.c2f(x, 128, 128, 2, True)
    x = b.cbs(p4, 128, 256, 3, 2)
    x = b.c2f(x, 256, 256, 1, True)
    p5 = b.sppf(x, 256, 256)
    # neck (top-down, then bottom-up)
    h4 = b.c2f(b.concat([b.upsample(p5), p4]), 384, 128, 1, False)
    n3 = b.c2f(b.concat([b.upsample(h4), p3]), 192, 64, 1, False)
    n4 = b.c2f(b.concat([b.cbs(n3, 64, 64, 3, 2), h4]), 192, 128, 1, False)
    n5 = b.c2f(b.concat([b.cbs(n4, 128, 128, 3, 2), p5]), 384, 256, 1, False)
    # head: per level a box branch (4 x REG_MAX bins) and a class branch, flattened over the grid
    c_box, c_cls = max(16, 64 // 4, 4 * REG_MAX), max(64, CLASSES)
    levels = []
    for feat, ch, s in ((n3, 64, 8), (n4, 128, 16), (n5, 256, 32)):
        box = b.plain_conv(b.cbs(b.cbs(feat, ch, c_box, 3), c_box, c_box, 3), c_box, 4 * REG_MAX)
        cls = b.plain_conv(b.cbs(b.cbs(feat, ch, c_cls, 3), c_cls, c_cls, 3), c_cls, CLASSES)
        n = size // s
        levels.append(b.reshape(b.concat([box, cls]), (1, 4 * REG_MAX + CLASSES, n * n)))
    anchors = sum((size // s) ** 2 for s in STRIDES)
    box, cls = b.split(b.concat(levels, axis=2), [4 * REG_MAX, CLASSES])
    # distribution focal loss: the expected bin of a softmax over REG_MAX bins per side
    dist = b.node("Transpose", [b.reshape(box, (1, 4, REG_MAX, anchors))], "transpose", perm=[0, 2, 1, 3])
    dist = b.node("Softmax", [dist], "softmax", axis=1)
    bins = b.const(np.arange(REG_MAX, dtype=np.float32).reshape(1, REG_MAX, 1, 1), "dfl_w")
    dist = b.reshape(b.node("Conv", [dist, bins], "dfl", kernel_shape=[1, 1]), (1, 4, anchors))
    left_top, right_bottom = b.split(dist, [2, 2])
    points, strides = _anchors(size)
    centres = b.const(points[None], "anchors")
    x1y1 = b.node("Sub", [centres, left_top], "sub")
    x2y2 = b.node("Add", [centres, right_bottom], "add")
    half = b.const(np.array(2.0, np.float32), "two")
    cxcy = b.node("Div", [b.node("Add", [x1y1, x2y2], "add"), half], "div")
    wh = b.node("Sub", [x2y2, x1y1], "sub")
    boxes = b.node("Mul", [b.concat([cxcy, wh]), b.const(strides, "strides")], "mul")
    out = b.concat([boxes, b.node("Sigmoid", [cls], "sigmoid")])
    return b.model(("images", INPUT_SHAPE), ("output0", out, (1, 4 + CLASSES, anchors)))
