"""ResNet-18 (He et al. 2015, the torchvision layout) as ONNX: input x[1, 3, 224, 224] float32,
output logits[1, 1000]; random weights from a seed, BatchNormalization nodes kept."""
from __future__ import annotations

import onnx

from .graph_builder import GraphBuilder

INPUT_SHAPE = (1, 3, 224, 224)
CLASSES = 1000
# (channels, first block's stride) of the four stages of two BasicBlocks each.
STAGES = ((64, 1), (128, 2), (256, 2), (512, 2))
# gamma of the last BN of each residual branch: keeps identity + branch sums at a steady scale.
BRANCH_GAIN = 0.5


def _basic_block(b: GraphBuilder, x: str, cin: int, cout: int, stride: int) -> str:
    y = b.relu(b.batchnorm(b.conv(x, cin, cout, 3, stride), cout))
    y = b.batchnorm(b.conv(y, cout, cout, 3), cout, gain=BRANCH_GAIN)
    if stride != 1 or cin != cout:
        x = b.batchnorm(b.conv(x, cin, cout, 1, stride), cout)
    return b.relu(b.add(y, x))


def build(seed: int = 0) -> onnx.ModelProto:
    b = GraphBuilder("resnet18", seed)
    x = b.relu(b.batchnorm(b.conv("x", 3, 64, 7, 2), 64))
    x = b.node("MaxPool", [x], "maxpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for cout, stride in STAGES:
        x = _basic_block(b, x, cin, cout, stride)
        x = _basic_block(b, x, cout, cout, 1)
        cin = cout
    logits = b.classifier(x, cin, CLASSES)
    return b.model(("x", INPUT_SHAPE), ("logits", logits, (1, CLASSES)))
