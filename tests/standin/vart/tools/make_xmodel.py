"""Writes an ONNX model as the VART stand-in's `.xmodel` (FORMAT.md beside this folder).

    python make_xmodel.py model.onnx out.xmodel [--fix-point NAME=FP ...] [--dpu-subgraphs N]
    python make_xmodel.py model.onnx out.xmodel --float [--dpu-subgraphs N]

The model is compiled with accel.compiler into an emulator model of float32 tensors, which becomes the
code of the DPU subgraph. The DPU's tensors are xint8 with a fix_point each (real = q * 2^-fix_point);
4-D tensors are declared NHWC (the emulator model keeps the ONNX NCHW; the stand-in runner transposes).
The DPU subgraph computes as the DPU does: the model is compiled with the emulator's `dpu` int8 rules
(INT8_RULES), which the stand-in runner opens the emulator with. Fix points: --fix-point NAME=FP for any
input or output; otherwise a power-of-two QDQ model's own (the QuantizeLinear reading an input, the
DequantizeLinear writing an output: the integers then flow end to end), else inputs get 6 (values in
[-2, 2)) and outputs the largest fix point that holds the output's range on random inputs spanning the
inputs' ranges (onnxruntime), so that outputs rarely saturate.
--float: the DPU subgraph's tensors are the emulator model's own, float32 with their shapes, in a
subgraph declared NCHW (a stand-in liberty, for running float NCHW test suites on `vart:0`; a real DPU
has xint8 NHWC tensors). `pack_accm(name, accm)` does the same for an emulator model's bytes.
--dpu-subgraphs N writes the DPU subgraph N times (N = 0 or 2 make models the vart driver refuses).
"""
from __future__ import annotations

import argparse
import math
import struct
import sys
from pathlib import Path
from typing import Dict, List, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common" / "tools"))
import standin_container

XINT, FLOAT = 2, 4
DEFAULT_INPUT_FIX_POINT = 6
# The emulator's int8 rules the stand-in's DPU subgraphs compute with (its runner opens emu:int8=dpu).
INT8_RULES = "dpu"


def _str(s: str) -> bytes:
    b = s.encode("utf-8")
    return struct.pack("<I", len(b)) + b


def _tensor(name: str, type_code: int, bits: int, dims: Sequence[int], attrs: Dict[str, int]) -> bytes:
    out = _str(name) + struct.pack("<iiI", type_code, bits, len(dims)) + struct.pack(f"<{len(dims)}i", *dims)
    out += struct.pack("<I", len(attrs))
    for key, value in attrs.items():
        out += _str(key) + struct.pack("<i", value)
    return out


def _subgraph(name: str, attrs: Dict[str, str], inputs: List[bytes], outputs: List[bytes],
              blobs: Dict[str, bytes]) -> bytes:
    out = _str(name) + struct.pack("<I", len(attrs)) + b"".join(_str(k) + _str(v) for k, v in attrs.items())
    out += struct.pack("<I", len(blobs))
    for key, blob in blobs.items():
        out += _str(key) + struct.pack("<Q", len(blob)) + blob
    out += struct.pack("<II", len(inputs), len(outputs))
    return out + b"".join(inputs) + b"".join(outputs)


def nhwc(dims: Sequence[int]) -> List[int]:
    """The NHWC dims of an NCHW 4-D tensor; other ranks unchanged."""
    dims = list(dims)
    return [dims[0], dims[2], dims[3], dims[1]] if len(dims) == 4 else dims


def fix_point_for(max_abs: float) -> int:
    """The largest fix point whose int8 range [-128, 127] * 2^-fp holds max_abs (clamped to [-8, 14])."""
    if not max_abs > 0 or math.isinf(max_abs):
        return 7
    return max(-8, min(14, math.floor(math.log2(127.0 / max_abs))))


def calibrate(onnx_path: str, inputs: List[dict], fix: Dict[str, int]) -> Dict[str, float]:
    """Max |value| of every output on random inputs spanning each input's representable range."""
    import numpy as np
    import onnxruntime as ort

    sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feeds = {}
    for t in inputs:
        limit = 128.0 * 2.0 ** -fix[t["name"]]
        feeds[t["name"]] = rng.uniform(-limit, limit, size=t["dims"]).astype(np.float32)
    names = [o.name for o in sess.get_outputs()]
    return {n: float(np.max(np.abs(v))) for n, v in zip(names, sess.run(names, feeds))}


def _interface(code: bytes, what: str):
    """The emulator model's input and output tensors (all float32, or ValueError)."""
    from accel.compiler import accm as accm_format

    image = accm_format.read(code)
    ins = [image["tensors"][i] for i in image["inputs"]]
    outs = [image["tensors"][i] for i in image["outputs"]]
    for t in ins + outs:
        if t["dtype_name"] != "float32":
            raise ValueError(f"{what}: tensor {t['name']!r} is {t['dtype_name']}; the stand-in's DPU "
                             f"subgraphs take float32 models")
    return ins, outs


def _container(graph_name: str, code: bytes, ins: List[dict], outs: List[dict], fix: Dict[str, int] | None,
               dpu_subgraphs: int) -> bytes:
    """The .xmodel: a USER subgraph of the float inputs, the DPU subgraph(s) running `code`, and (xint8
    DPU tensors: `fix` gives their fix points) a CPU subgraph turning the outputs back into floats.
    Without `fix` the DPU tensors are the model's own float32 ones and the subgraph is declared NCHW."""
    quantized = fix is not None
    dims = nhwc if quantized else list

    def dpu_tensor(t: dict) -> bytes:
        if not quantized:
            return _tensor(t["name"], FLOAT, 32, t["dims"], {})
        attrs = {"fix_point": fix[t["name"]]}
        if len(t["dims"]) == 4:
            attrs["standin_nchw"] = 1
        return _tensor(t["name"], XINT, 8, nhwc(t["dims"]), attrs)

    def float_tensor(t: dict) -> bytes:
        return _tensor(t["name"], FLOAT, 32, dims(t["dims"]), {})

    dpu_attrs = {"device": "DPU"} if quantized else {"device": "DPU", "standin_tensor_format": "NCHW"}
    children = [_subgraph("subgraph_input", {"device": "USER"}, [], [float_tensor(t) for t in ins], {})]
    for k in range(dpu_subgraphs):
        suffix = "" if dpu_subgraphs == 1 else f"_{k}"
        children.append(_subgraph(f"subgraph_{graph_name}{suffix}", dpu_attrs, [dpu_tensor(t) for t in ins],
                                  [dpu_tensor(t) for t in outs], {"accm": code}))
    if quantized:
        children.append(_subgraph("subgraph_post", {"device": "CPU"}, [dpu_tensor(t) for t in outs],
                                  [float_tensor(t) for t in outs], {}))
    return b"ACCELXM1" + _str(graph_name) + struct.pack("<I", len(children)) + b"".join(children)


def _graph_name(onnx_path: str) -> str:
    return onnx_path.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def build(onnx_path: str, fix_points: Dict[str, int] | None = None, dpu_subgraphs: int = 1) -> bytes:
    """The stand-in .xmodel bytes of an ONNX model, xint8 NHWC (see the module's help)."""
    from accel import compiler
    from accel.compiler import qdq_device

    code = compiler.compile_model(onnx_path, int8=INT8_RULES)
    ins, outs = _interface(code, onnx_path)
    fix = dict(fix_points or {})
    for tensors in standin_container.qdq_boundary(Path(onnx_path)).values():
        for name, (scale, _, _) in tensors.items():
            fp = qdq_device.fix_points(scale)
            if fp is not None:
                fix.setdefault(name, int(fp[0]))
    known = {t["name"] for t in ins + outs}
    unknown = sorted(set(fix) - known)
    if unknown:
        raise ValueError(f"--fix-point for {unknown}: the model's tensors are {sorted(known)}")
    for t in ins:
        fix.setdefault(t["name"], DEFAULT_INPUT_FIX_POINT)
    if any(t["name"] not in fix for t in outs):
        ranges = calibrate(onnx_path, ins, fix)
        for t in outs:
            fix.setdefault(t["name"], fix_point_for(ranges[t["name"]]))
    return _container(_graph_name(onnx_path), code, ins, outs, fix, dpu_subgraphs)


def pack_accm(name: str, accm: bytes, dpu_subgraphs: int = 1) -> bytes:
    """The stand-in .xmodel bytes whose DPU subgraph runs the emulator model `accm` with its own float32
    tensors, shapes unchanged, declared NCHW (see the module's help); `name` names the graph."""
    ins, outs = _interface(accm, name)
    return _container(name, accm, ins, outs, None, dpu_subgraphs)


def main(argv: List[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("onnx")
    p.add_argument("out")
    p.add_argument("--fix-point", action="append", default=[], metavar="NAME=FP")
    p.add_argument("--dpu-subgraphs", type=int, default=1)
    p.add_argument("--float", action="store_true", help="float32 NCHW DPU tensors, as the model has them")
    a = p.parse_args(argv)
    if a.float and a.fix_point:
        p.error("--fix-point: a --float model has no fix points")
    fix = {}
    for item in a.fix_point:
        name, _, value = item.rpartition("=")
        if not name or not value.lstrip("-").isdigit():
            p.error(f"--fix-point {item!r}: expected NAME=INTEGER")
        fix[name] = int(value)
    try:
        if a.float:
            from accel import compiler

            data = pack_accm(_graph_name(a.onnx), compiler.compile_model(a.onnx, int8=INT8_RULES), a.dpu_subgraphs)
        else:
            data = build(a.onnx, fix, a.dpu_subgraphs)
    except ValueError as e:  # CompileError is one too
        p.error(str(e))
    with open(a.out, "wb") as f:
        f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
