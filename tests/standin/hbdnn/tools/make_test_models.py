"""The libdnn stand-in's test models, written into the folder given:

    double.bin   x[1, 3, 4, 5] -> y = 2 * x, both int8 (x scale 0.05, y scale 0.1, so y_q == x_q
                 wherever it does not saturate), x aligned to [1, 4, 4, 8] and y to [1, 3, 4, 8]
    slow.bin     x[512, 512] float32 -> 4 chained 512x512 MatMuls (1 GFLOP: tens of ms on one core)
    frame.bin    images: an NV12_SEPARATE image of 6 x 4 (W x H), rows padded to 16 bytes; y = the frame's
                 bytes as float32 (1, 6, 6, 1): the Y plane's 4 rows, then the UV plane's 2
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import onnx
from accel import compiler
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_bin


def _save(graph, path: Path) -> None:
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, str(path))


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    _save(helper.make_graph(
        [helper.make_node("Mul", ["x", "two"], ["y"])], "double",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 4, 5])],
        [numpy_helper.from_array(np.array(2.0, np.float32), "two")]), out / "double.onnx")
    spec = {"inputs": {"x": {"type": "S8", "scale": [0.05], "aligned": [1, 4, 4, 8]}},
            "outputs": {"y": {"type": "S8", "scale": [0.1], "aligned": [1, 3, 4, 8]}}}
    (out / "double.bin").write_bytes(make_bin.pack([make_bin.model_record(out / "double.onnx", spec)]))

    w = (np.eye(512, dtype=np.float32) * 0.5)
    nodes, prev = [], "x"
    for i in range(4):
        nodes.append(helper.make_node("MatMul", [prev, "w"], [f"h{i}"]))
        prev = f"h{i}"
    nodes.append(helper.make_node("Identity", [prev], ["y"]))
    _save(helper.make_graph(nodes, "slow", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [512, 512])],
                            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [512, 512])],
                            [numpy_helper.from_array(w, "w")]), out / "slow.onnx")
    (out / "slow.bin").write_bytes(make_bin.pack([make_bin.model_record(out / "slow.onnx", {})]))
    # The emulator model takes the frame as uint8 bytes (as a model compiled with an image input does) and
    # gives them back as floats: what the stand-in gathered from the two planes, padding dropped.
    frame = helper.make_model(helper.make_graph(
        [helper.make_node("Cast", ["images"], ["y"], to=TensorProto.FLOAT)], "frame",
        [helper.make_tensor_value_info("images", TensorProto.UINT8, [1, 6, 6, 1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6, 6, 1])]),
        opset_imports=[helper.make_opsetid("", 17)])
    frame.ir_version = 8
    accm = compiler.compile_model(frame.SerializeToString())
    (out / "frame.bin").write_bytes(make_bin.pack([make_bin.accm_record(
        "frame", accm, {"inputs": {"images": {"type": "NV12_SEPARATE"}}})]))
    (out / "models.json").write_text(json.dumps({"double": "double.bin", "slow": "slow.bin", "frame": "frame.bin"}))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
