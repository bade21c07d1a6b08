"""The bpu driver tests' models, written into the folder given (a ctest fixture), for both runtime
generations: <model>.bin for the X3/X5 libdnn stand-in, <model>.hbm for the S100 hbUCP stand-in (the same
networks, tensors and reference bytes; an .hbm tensor has no layout):

    dense.bin   x[1,3,8,8] float32 NCHW -> y = 2x + 1, dense
    int8.bin    x[1,3,8,8] S8 scale 0.05 aligned [1,4,8,8]  -> y = 2x, S8 per-axis (axis 1) scales
                [0.1, 0.2, 0.05] and zero points [0, 3, -2], aligned [1,3,8,16]
    nhwc.bin    x[1,8,8,3] float32 NHWC aligned [1,8,8,4] -> y = relu(x) U8 scale 0.02 NHWC
    two.bin     a[1,16] float32, b[1,16] S16 scale 0.01 -> sum = a + b, prod = a * b (float32)
    multi.bin   the models of dense.bin and nhwc.bin packed in one file
    slow.bin    x[384,384] -> 6 chained MatMuls (a job that runs for a while), float32
    bad.bin     not a model; short.bin: dense.bin cut in half
    dyn.hbm     (S100 only) x[1,4,6] U8 scale 0.1 zero point 130 (beyond int8), strides [dynamic, 8, 1]
                -> y = 3x - 5, S16 scale 0.01 zero point 1000; the driver makes the dynamic stride dense
                (32 bytes: the span of the padded rows)

and for every model but slow, <model>.in<i> and <model>.out<i>: the tensors' bytes as the device buffers
hold them (aligned, padded with zeros, quantized), inputs random with a fixed seed, outputs from
onnxruntime on the dequantized inputs, quantized as the BPU's output stage does (round half to even,
saturate). A test compares the valid elements only, within one quantum.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "standin" / "hbdnn" / "tools"))
import make_bin

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "standin" / "hbucp" / "tools"))
import make_hbm

NP = {"F32": np.float32, "S8": np.int8, "U8": np.uint8, "S16": np.int16, "U16": np.uint16, "S32": np.int32}


def save(nodes, name, inputs, outputs, inits, path: Path) -> None:
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs],
                              [numpy_helper.from_array(np.asarray(v, np.float32), k) for k, v in inits.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, str(path))


def quant_params(spec, shape):
    """Scale and zero point broadcast over `shape` (per tensor or along spec['axis'])."""
    scale = np.asarray(spec.get("scale", [1.0]), np.float32)
    zp = np.asarray(spec.get("zero_point", [0] * len(scale)), np.float32)
    if len(scale) > 1:
        view = [1] * len(shape)
        view[spec["axis"]] = len(scale)
        scale, zp = scale.reshape(view), zp.reshape(view)
    return scale, zp


def to_device(values: np.ndarray, spec) -> bytes:
    """Float values -> the tensor's bytes in its aligned buffer (quantized if it has scales)."""
    t = NP[spec.get("type", "F32")]
    if "scale" in spec:
        scale, zp = quant_params(spec, values.shape)
        q = np.rint(values.astype(np.float32) / scale + zp)
        info = np.iinfo(t)
        values = np.clip(q, info.min, info.max)
    elif np.issubdtype(t, np.integer):
        values = np.clip(np.rint(values), np.iinfo(t).min, np.iinfo(t).max)
    aligned = np.zeros(spec.get("aligned", values.shape), t)
    aligned[tuple(slice(0, n) for n in values.shape)] = values.astype(t)
    return aligned.tobytes()


def random_input(rng, shape, spec) -> np.ndarray:
    """Random float values that the input's type represents exactly (so the reference sees what the BPU sees)."""
    if "scale" in spec:
        t = NP[spec["type"]]
        info = np.iinfo(t)
        q = rng.integers(max(info.min, -100), min(info.max, 100), size=shape)
        scale, zp = quant_params(spec, shape)
        return ((q - zp) * scale).astype(np.float32)
    return rng.uniform(-2, 2, size=shape).astype(np.float32)


def records(onnx_path: Path, spec) -> dict:
    """The model as each generation's file holds it: {".bin": record, ".hbm": record}. S100 tensors have
    no layout (and "stride", S100's dynamic strides, exists only there)."""
    strip = {k: {n: {f: v for f, v in t.items() if f != "layout"} for n, t in spec.get(k, {}).items()}
             for k in ("inputs", "outputs")}
    return {".bin": make_bin.model_record(onnx_path, spec), ".hbm": make_hbm.model_record(onnx_path, strip)}


def s100_only(onnx_path: Path, spec) -> dict:
    return {".hbm": make_hbm.model_record(onnx_path, spec)}


def write_case(out: Path, name: str, onnx_path: Path, spec, inputs, outputs, seed: int, files=records) -> dict:
    rng = np.random.default_rng(seed)
    feeds = {}
    for i, (n, shape) in enumerate(inputs):
        s = spec["inputs"].get(n, {})
        feeds[n] = random_input(rng, shape, s)
        (out / f"{name}.in{i}").write_bytes(to_device(feeds[n], s))
    results = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"]).run(None, feeds)
    for i, ((n, _), value) in enumerate(zip(outputs, results)):
        (out / f"{name}.out{i}").write_bytes(to_device(value, spec["outputs"].get(n, {})))
    return files(onnx_path, spec)


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    models = {}

    x4 = [("x", [1, 3, 8, 8])]
    save([helper.make_node("Mul", ["x", "two"], ["t"]), helper.make_node("Add", ["t", "one"], ["y"])], "dense",
         x4, [("y", [1, 3, 8, 8])], {"two": 2.0, "one": 1.0}, out / "dense.onnx")
    models["dense"] = write_case(out, "dense", out / "dense.onnx", {"inputs": {}, "outputs": {}}, x4,
                                  [("y", [1, 3, 8, 8])], 1)

    save([helper.make_node("Mul", ["x", "two"], ["y"])], "int8", x4, [("y", [1, 3, 8, 8])], {"two": 2.0},
         out / "int8.onnx")
    spec = {"inputs": {"x": {"type": "S8", "scale": [0.05], "aligned": [1, 4, 8, 8], "layout": "NCHW"}},
            "outputs": {"y": {"type": "S8", "scale": [0.1, 0.2, 0.05], "zero_point": [0, 3, -2], "axis": 1,
                              "aligned": [1, 3, 8, 16], "layout": "NCHW"}}}
    models["int8"] = write_case(out, "int8", out / "int8.onnx", spec, x4, [("y", [1, 3, 8, 8])], 2)

    xh = [("x", [1, 8, 8, 3])]
    save([helper.make_node("Relu", ["x"], ["y"])], "nhwc", xh, [("y", [1, 8, 8, 3])], {}, out / "nhwc.onnx")
    spec = {"inputs": {"x": {"aligned": [1, 8, 8, 4], "layout": "NHWC"}},
            "outputs": {"y": {"type": "U8", "scale": [0.02], "layout": "NHWC"}}}
    models["nhwc"] = write_case(out, "nhwc", out / "nhwc.onnx", spec, xh, [("y", [1, 8, 8, 3])], 3)

    ab = [("a", [1, 16]), ("b", [1, 16])]
    save([helper.make_node("Add", ["a", "b"], ["sum"]), helper.make_node("Mul", ["a", "b"], ["prod"])], "two", ab,
         [("sum", [1, 16]), ("prod", [1, 16])], {}, out / "two.onnx")
    spec = {"inputs": {"b": {"type": "S16", "scale": [0.01]}}, "outputs": {}}
    models["two"] = write_case(out, "two", out / "two.onnx", spec, ab, [("sum", [1, 16]), ("prod", [1, 16])], 4)

    n = 384
    nodes, prev = [], "x"
    for i in range(6):
        nodes.append(helper.make_node("MatMul", [prev, "w"], [f"h{i}"]))
        prev = f"h{i}"
    nodes.append(helper.make_node("Identity", [prev], ["y"]))
    save(nodes, "slow", [("x", [n, n])], [("y", [n, n])], {"w": np.eye(n, dtype=np.float32)}, out / "slow.onnx")
    models["slow"] = records(out / "slow.onnx", {})

    x3 = [("x", [1, 4, 6])]
    save([helper.make_node("Mul", ["x", "three"], ["t"]), helper.make_node("Sub", ["t", "five"], ["y"])], "dyn",
         x3, [("y", [1, 4, 6])], {"three": 3.0, "five": 5.0}, out / "dyn.onnx")
    spec = {"inputs": {"x": {"type": "U8", "scale": [0.1], "zero_point": [130], "stride": [-1, 8, 1],
                             "aligned": [1, 4, 8]}},
            "outputs": {"y": {"type": "S16", "scale": [0.01], "zero_point": [1000]}}}
    models["dyn"] = write_case(out, "dyn", out / "dyn.onnx", spec, x3, [("y", [1, 4, 6])], 5, s100_only)

    for suffix, tool in ((".bin", make_bin), (".hbm", make_hbm)):
        for name, record in models.items():
            if suffix in record:
                (out / f"{name}{suffix}").write_bytes(tool.pack([record[suffix]]))
        (out / f"multi{suffix}").write_bytes(tool.pack([models["dense"][suffix], models["nhwc"][suffix]]))
        (out / f"bad{suffix}").write_bytes(b"this is not a model file at all")
        dense = (out / f"dense{suffix}").read_bytes()
        (out / f"short{suffix}").write_bytes(dense[: len(dense) // 2])


if __name__ == "__main__":
    main(Path(sys.argv[1]))
