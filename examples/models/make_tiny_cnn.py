"""Writes the small CNN bundled with accel (python/accel/models/tiny_cnn.onnx), used by `accel-demo`.

A classifier shaped like the mobile CNNs deployed on edge boards (conv + BatchNorm + activations, a
depthwise-separable block, a residual add, pooling, a dense head), with random weights from a fixed
seed. Run it again only to change the model: the .onnx file is committed.
"""
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(seed: int = 7) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)
    inits, nodes = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array, dtype=np.float32), name))
        return name

    def conv(x, name, cin, cout, k, stride=1, group=1, pad=None):
        pad = k // 2 if pad is None else pad
        w = const(f"{name}.weight", rng.normal(0, (2.0 / (cin // group * k * k)) ** 0.5, (cout, cin // group, k, k)))
        nodes.append(helper.make_node("Conv", [x, w], [name], name=name, kernel_shape=[k, k],
                                      strides=[stride, stride], pads=[pad] * 4, group=group))
        return name

    def bn(x, name, c):
        g = const(f"{name}.gamma", rng.uniform(0.5, 1.5, c))
        b = const(f"{name}.beta", rng.normal(0, 0.1, c))
        m = const(f"{name}.mean", rng.normal(0, 0.1, c))
        v = const(f"{name}.var", rng.uniform(0.5, 1.5, c))
        nodes.append(helper.make_node("BatchNormalization", [x, g, b, m, v], [name], name=name, epsilon=1e-5))
        return name

    def act(x, op, name, **attrs):
        nodes.append(helper.make_node(op, [x], [name], name=name, **attrs))
        return name

    x = "image"
    y = act(bn(conv(x, "stem", 3, 16, 3, stride=2), "stem_bn", 16), "Relu", "stem_relu")
    # Depthwise-separable block with ReLU6 (Clip) and HardSwish, as in MobileNet V2/V3.
    d = bn(conv(y, "dw", 16, 16, 3, group=16), "dw_bn", 16)
    lo, hi = const("relu6.min", 0.0), const("relu6.max", 6.0)
    nodes.append(helper.make_node("Clip", [d, lo, hi], ["dw_relu6"], name="dw_relu6"))
    p = bn(conv("dw_relu6", "pw", 16, 16, 1), "pw_bn", 16)
    p = act(p, "HardSwish", "pw_hswish")
    nodes.append(helper.make_node("Add", [p, y], ["residual"], name="residual"))
    m = "pool"
    nodes.append(helper.make_node("MaxPool", ["residual"], [m], name=m, kernel_shape=[2, 2], strides=[2, 2]))
    c = act(conv(m, "conv2", 16, 32, 3, stride=2), "Relu", "conv2_relu")
    nodes.append(helper.make_node("GlobalAveragePool", [c], ["gap"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flat", axis=1))
    w = const("fc.weight", rng.normal(0, 0.2, (10, 32)))
    b = const("fc.bias", rng.normal(0, 0.1, 10))
    nodes.append(helper.make_node("Gemm", ["flat", w, b], ["logits"], name="fc", transB=1))
    nodes.append(helper.make_node("Softmax", ["logits"], ["probabilities"], name="softmax", axis=1))

    graph = helper.make_graph(
        nodes, "tiny_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 64, 64])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [1, 10])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], producer_name="accel")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


if __name__ == "__main__":
    default = Path(__file__).resolve().parents[2] / "python/accel/models/tiny_cnn.onnx"
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    onnx.save(build(), out)
    print(f"wrote {out} ({out.stat().st_size} bytes)")
