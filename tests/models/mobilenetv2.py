"""MobileNetV2 (Sandler et al. 2018, width 1.0) as ONNX: input x[1, 3, 224, 224] float32, output
logits[1, 1000]; ReLU6 as Clip(0, 6), depthwise 3x3 convolutions (group = channels), inverted residual
blocks with linear bottlenecks; random weights from a seed, BatchNormalization nodes kept."""
from __future__ import annotations

import onnx

from .graph_builder import GraphBuilder

INPUT_SHAPE = (1, 3, 224, 224)
CLASSES = 1000
# (expansion t, output channels c, repeats n, first stride s), the paper's Table 2.
BLOCKS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
          (6, 320, 1, 1))
STEM = 32
HEAD = 1280
# gamma of the projection BN of a block with a residual add: keeps the sums at a steady scale.
BRANCH_GAIN = 0.5


def _inverted_residual(b: GraphBuilder, x: str, cin: int, cout: int, stride: int, t: int) -> str:
    hidden = cin * t
    y = x
    if t != 1:
        y = b.relu6(b.batchnorm(b.conv(y, cin, hidden, 1), hidden))
    y = b.relu6(b.batchnorm(b.conv(y, hidden, hidden, 3, stride, group=hidden), hidden))
    residual = stride == 1 and cin == cout
    y = b.batchnorm(b.conv(y, hidden, cout, 1), cout, gain=BRANCH_GAIN if residual else 1.0)
    return b.add(x, y) if residual else y


def build(seed: int = 0) -> onnx.ModelProto:
    b = GraphBuilder("mobilenetv2", seed)
    x = b.relu6(b.batchnorm(b.conv("x", 3, STEM, 3, 2), STEM))
    cin = STEM
    for t, c, n, s in BLOCKS:
        for i in range(n):
            x = _inverted_residual(b, x, cin, c, s if i == 0 else 1, t)
            cin = c
    x = b.relu6(b.batchnorm(b.conv(x, cin, HEAD, 1), HEAD))
    logits = b.classifier(x, HEAD, CLASSES)
    return b.model(("x", INPUT_SHAPE), ("logits", logits, (1, CLASSES)))
