"""The hbUCP stand-in's test models, written into the folder given:

    two.hbm      two models in one file:
                 "affine": x[2, 3, 4] -> y = 2 * x + 1, dense float32
                 "double": x[1, 3, 4, 5] -> y = 2 * x, both int8: x scale 0.05 zero point 3 with padded
                   strides [256, 64, 16, 1] (rows padded to 16 bytes, channels to 4 rows, 256 bytes);
                   y per channel (axis 1) scale 0.1, zero points [-2, 0, 5], aligned to [1, 3, 4, 8];
                   so y_q == x_q - 3 + zp[c] wherever it does not saturate
    dynamic.hbm  "copy": x[1, 4, 6] uint8 with dynamic strides [-1, -1, 1] -> y = x, dense float32
    planes.hbm   "planes": an NV12 frame of 6 x 4 as hb_compile gives it, images_y[1, 4, 6, 1] and
                 images_uv[1, 2, 3, 2], U8 with dynamic outer strides; the emulator model takes their bytes
                 (uint8 inputs) and gives them back as float32 outputs images_y_out, images_uv_out
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from accel import compiler
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_hbm


def _save(nodes, name: str, shape, inits, path: Path) -> None:
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, str(path))


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    two = np.array(2.0, np.float32)
    _save([helper.make_node("Mul", ["x", "two"], ["t"]), helper.make_node("Add", ["t", "one"], ["y"])], "affine",
          [2, 3, 4], [numpy_helper.from_array(two, "two"), numpy_helper.from_array(np.array(1.0, np.float32), "one")],
          out / "affine.onnx")
    _save([helper.make_node("Mul", ["x", "two"], ["y"])], "double", [1, 3, 4, 5],
          [numpy_helper.from_array(two, "two")], out / "double.onnx")
    double = {"inputs": {"x": {"type": "S8", "scale": [0.05], "zero_point": [3], "stride": [256, 64, 16, 1]}},
              "outputs": {"y": {"type": "S8", "scale": [0.1, 0.1, 0.1], "zero_point": [-2, 0, 5], "axis": 1,
                                "aligned": [1, 3, 4, 8]}}}
    (out / "two.hbm").write_bytes(make_hbm.pack([make_hbm.model_record(out / "affine.onnx", {}),
                                                 make_hbm.model_record(out / "double.onnx", double)]))
    _save([helper.make_node("Identity", ["x"], ["y"])], "copy", [1, 4, 6], [], out / "copy.onnx")
    dynamic = {"inputs": {"x": {"type": "U8", "stride": [-1, -1, 1]}}}
    (out / "dynamic.hbm").write_bytes(make_hbm.pack([make_hbm.model_record(out / "copy.onnx", dynamic)]))

    planes = {"images_y": [1, 4, 6, 1], "images_uv": [1, 2, 3, 2]}
    m = helper.make_model(helper.make_graph(
        [helper.make_node("Cast", [n], [n + "_out"], to=TensorProto.FLOAT) for n in planes], "planes",
        [helper.make_tensor_value_info(n, TensorProto.UINT8, s) for n, s in planes.items()],
        [helper.make_tensor_value_info(n + "_out", TensorProto.FLOAT, s) for n, s in planes.items()]),
        opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    accm = compiler.compile_model(m.SerializeToString())
    spec = {"inputs": {"images" + suffix: plane for suffix, plane in make_hbm.PLANES.items()}}
    (out / "planes.hbm").write_bytes(make_hbm.pack([make_hbm.accm_record("planes", accm, spec)]))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
