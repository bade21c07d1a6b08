"""The VART stand-in's test models and their reference data, written into the folder given:

    conv.xmodel      x[1,3,8,8] -> Conv 3x3 (4 channels, pad 1) + Relu -> y[1,4,8,8]; declared NHWC:
                     x (1,8,8,3) fix_point 6, y (1,8,8,4) fix_point calibrated
    two_io.xmodel    a[1,16], ab[1,16] -> sum = a + ab, diff = a - ab (rank 2; "ab" contains "a", the
                     vendor's by-name buffer matching must not confuse them); all fix_point 5. The DPU
                     subgraph gives its tensors sorted by name, as XIR does: outputs diff, then sum
    two_dpu.xmodel   conv with its DPU subgraph twice; no_dpu.xmodel: conv with none
    conv_f32.xmodel  conv packed with --float: x[1,3,8,8] -> y[1,4,8,8], float32 NCHW as in the ONNX model
    <model>.in<i>.bin / <model>.out<i>.bin   int8 inputs (random, fixed seed) and the expected int8 outputs:
                     onnxruntime on the dequantized inputs, requantized (nearest, saturated), NHWC; i counts
                     in the DPU subgraph's order (tensor names sorted)
    <model>.fix      the fix points, inputs then outputs, one per line, in that order
    conv_f32.in0.bin / conv_f32.out0.bin   float32 input (random, fixed seed) and onnxruntime's output
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_xmodel


def _save(graph, path: Path) -> None:
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, str(path))


def _to_nhwc(a: np.ndarray) -> np.ndarray:
    return a.transpose(0, 2, 3, 1) if a.ndim == 4 else a


def _from_nhwc(a: np.ndarray) -> np.ndarray:
    return a.transpose(0, 3, 1, 2) if a.ndim == 4 else a


def write_reference(out: Path, name: str, onnx_path: Path, fix: dict, rng) -> None:
    """Random int8 inputs and the outputs a DPU with these fix points should give, in the DPU subgraph's order."""
    sess = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    feeds, fixes = {}, []
    for i, t in enumerate(sorted(sess.get_inputs(), key=lambda t: t.name)):
        shape = make_xmodel.nhwc(t.shape)
        q = rng.integers(-100, 101, size=shape, dtype=np.int8)
        (out / f"{name}.in{i}.bin").write_bytes(q.tobytes())
        feeds[t.name] = _from_nhwc(q.astype(np.float32) * 2.0 ** -fix[t.name]).copy()
        fixes.append(fix[t.name])
    names = sorted(o.name for o in sess.get_outputs())
    for i, (n, y) in enumerate(zip(names, sess.run(names, feeds))):
        q = np.clip(np.rint(_to_nhwc(y) * 2.0 ** fix[n]), -128, 127).astype(np.int8)
        (out / f"{name}.out{i}.bin").write_bytes(q.tobytes())
        fixes.append(fix[n])
    (out / f"{name}.fix").write_text("".join(f"{f}\n" for f in fixes))


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(6)
    w = (rng.standard_normal((4, 3, 3, 3)) * 0.3).astype(np.float32)
    b = (rng.standard_normal(4) * 0.1).astype(np.float32)
    _save(helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["y"])],
        "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]), out / "conv.onnx")
    _save(helper.make_graph(
        [helper.make_node("Add", ["a", "ab"], ["sum"]), helper.make_node("Sub", ["a", "ab"], ["diff"])], "two_io",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 16]) for n in ("a", "ab")],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 16]) for n in ("sum", "diff")]), out / "two_io.onnx")

    conv_fix = {"x": 6}
    conv = make_xmodel.build(str(out / "conv.onnx"), conv_fix)
    (out / "conv.xmodel").write_bytes(conv)
    two_fix = {"a": 5, "ab": 5, "sum": 5, "diff": 5}
    (out / "two_io.xmodel").write_bytes(make_xmodel.build(str(out / "two_io.onnx"), two_fix))
    (out / "two_dpu.xmodel").write_bytes(make_xmodel.build(str(out / "conv.onnx"), conv_fix, dpu_subgraphs=2))
    (out / "no_dpu.xmodel").write_bytes(make_xmodel.build(str(out / "conv.onnx"), conv_fix, dpu_subgraphs=0))

    # The output fix point make_xmodel chose, for the reference.
    ranges = make_xmodel.calibrate(str(out / "conv.onnx"), [{"name": "x", "dims": [1, 3, 8, 8]}], conv_fix)
    conv_fix["y"] = make_xmodel.fix_point_for(ranges["y"])
    write_reference(out, "conv", out / "conv.onnx", conv_fix, rng)
    write_reference(out, "two_io", out / "two_io.onnx", two_fix, rng)

    from accel import compiler

    accm = compiler.compile_model(str(out / "conv.onnx"))
    (out / "conv_f32.xmodel").write_bytes(make_xmodel.pack_accm("conv_f32", accm))
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    sess = ort.InferenceSession(str(out / "conv.onnx"), providers=["CPUExecutionProvider"])
    (out / "conv_f32.in0.bin").write_bytes(x.tobytes())
    (out / "conv_f32.out0.bin").write_bytes(sess.run(["y"], {"x": x})[0].astype(np.float32).tobytes())


if __name__ == "__main__":
    main(Path(sys.argv[1]))
