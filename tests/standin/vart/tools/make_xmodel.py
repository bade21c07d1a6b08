"""Writes an ONNX model as a compiled Vitis AI `.xmodel` (XIR's serialized graph, through accel.compiler.xir)
for the VART stand-in: FORMAT.md beside this folder says what it holds and the stand-in's own attributes.

    python make_xmodel.py model.onnx out.xmodel [--fix-point NAME=FP ...] [--dpu-subgraphs N]
    python make_xmodel.py model.onnx out.xmodel --float [--dpu-subgraphs N]
    python make_xmodel.py model_qdq.onnx out.xmodel --dpu-ops

The model is compiled with accel.compiler into an emulator model of float32 tensors, which becomes the
code of the DPU subgraph (its bytes attribute `standin_accm`, in place of the DPU's instructions). The
DPU's tensors are xint8 with a fix_point each (real = q * 2^-fix_point);
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
--dpu-ops (`build_dpu_ops(path)`): a power-of-two QDQ model as vai_c_xir compiles it, the DPU subgraph's real ops
(qdq_to_xir.py) with the emulator model compiled from them.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Dict, List, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common" / "tools"))
import standin_container

from accel.compiler import xir

DEFAULT_INPUT_FIX_POINT = 6
# The emulator's int8 rules the stand-in's DPU subgraphs compute with (its runner opens emu:int8=dpu).
INT8_RULES = "dpu"


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


def _fix_tensor(name: str, dims: Sequence[int], fix_point: int, nchw: bool) -> xir.Tensor:
    """An xint8 DPU tensor, as vai_c_xir writes one, and (standin_nchw) whether the emulator model's is NCHW."""
    attrs = {"fix_point": fix_point, "bit_width": 8, "if_signed": True, "round_mode": "DPU_ROUND"}
    if nchw:
        attrs["standin_nchw"] = 1
    return xir.Tensor(name, tuple(dims), "XINT", 8, attrs)


def _graph(graph_name: str, code: bytes, ins: List[dict], outs: List[dict], fix: Dict[str, int] | None,
           dpu_subgraphs: int, codes: Sequence[bytes] = ()) -> xir.Graph:
    """The compiled graph: a USER subgraph per input (its data-fix), the DPU subgraph(s) (an upload per input, a
    standin-accm op per output reading every upload, a download of each: `code` runs them, or subgraph k's own
    `codes[k]`, whose outputs carry its suffix "_k") and (xint8 DPU tensors:
    `fix` gives their fix points) a CPU subgraph per output turning it back into floats (fix2float). Without `fix`
    the DPU tensors are the model's own float32 ones and the subgraph is declared NCHW."""
    quantized = fix is not None

    def tensor(name: str, t: dict) -> xir.Tensor:
        if not quantized:
            return xir.Tensor(name, tuple(t["dims"]), "FLOAT", 32, {})
        return _fix_tensor(name, nhwc(t["dims"]), fix[t["name"]], len(t["dims"]) == 4)

    ops: Dict[str, xir.Op] = {}
    children: List[xir.Subgraph] = []
    for t in ins:
        data_type = "XINT8" if quantized else "FLOAT32"
        ops[t["name"]] = xir.Op(t["name"], "data-fix", {"shape": list(tensor(t["name"], t).shape),
                                                       "data_type": data_type, "device": "USER"}, {},
                                tensor(t["name"], t))
        children.append(xir.Subgraph(f"subgraph_{t['name']}", {"device": "USER"}, [t["name"]]))
    cpu: List[xir.Subgraph] = []
    for k in range(dpu_subgraphs):
        dpu_attrs: Dict[str, object] = {"device": "DPU", "standin_accm": codes[k] if codes else code}
        if not quantized:
            dpu_attrs["standin_tensor_format"] = "NCHW"
        # Tensors are named once in a graph: a second DPU subgraph's carry its number.
        suffix = "" if dpu_subgraphs == 1 else f"_{k}"
        leaves: List[str] = []
        for t in ins:
            leaves.append(f"{t['name']}_upload{suffix}")
            ops[leaves[-1]] = xir.Op(leaves[-1], "upload", {"device": "DPU"}, {"input": [t["name"]]},
                                     tensor(leaves[-1], t))
        uploads = list(leaves)
        for t in outs:
            work, down = f"{t['name']}_standin{suffix}", f"{t['name']}_download{suffix}"
            ops[work] = xir.Op(work, "standin-accm", {"device": "DPU"}, {"input": uploads}, tensor(work, t))
            ops[down] = xir.Op(down, "download", {"device": "DPU"}, {"input": [work]},
                               tensor(f"{t['name']}{suffix}", t))
            leaves += [work, down]
            if quantized:
                name = f"{t['name']}{suffix}_fix2float"
                ops[name] = xir.Op(name, "fix2float", {"device": "CPU", "fix_point": fix[t["name"]]},
                                   {"input": [down]}, xir.Tensor(name, tuple(nhwc(t["dims"])), "FLOAT", 32, {}))
                cpu.append(xir.Subgraph(f"subgraph_{name}", {"device": "CPU"}, [name]))
        children.append(xir.Subgraph(f"subgraph_{graph_name}{suffix}", dpu_attrs, [],
                                     [xir.Subgraph(f"subgraph_{n}", {}, [n]) for n in leaves]))
    return xir.Graph(graph_name, ops, xir.Subgraph("root", {}, [], children + cpu), {"origin": "accel stand-in"})


def _xmodel(graph_name: str, code: bytes, ins: List[dict], outs: List[dict], fix: Dict[str, int] | None,
               dpu_subgraphs: int) -> bytes:
    """The .xmodel bytes of _graph."""
    return xir.write(_graph(graph_name, code, ins, outs, fix, dpu_subgraphs))


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
    # Tensors are named once in a graph: with several DPU subgraphs each runs a model whose outputs carry its number.
    codes = [compiler.compile_model(_suffixed(onnx_path, f"_{k}"), int8=INT8_RULES)
             for k in range(dpu_subgraphs)] if dpu_subgraphs > 1 else []
    return xir.write(_graph(_graph_name(onnx_path), code, ins, outs, fix, dpu_subgraphs, codes))


def _suffixed(onnx_path: str, suffix: str) -> bytes:
    """The ONNX model at `onnx_path` with `suffix` on each graph output's name."""
    import onnx

    model = onnx.load(onnx_path)
    names = {o.name: o.name + suffix for o in model.graph.output}
    for o in model.graph.output:
        o.name = names[o.name]
    for n in model.graph.node:
        n.output[:] = [names.get(x, x) for x in n.output]
        n.input[:] = [names.get(x, x) for x in n.input]
    return model.SerializeToString()


def build_dpu_ops(onnx_path: str) -> bytes:
    """The .xmodel of a power-of-two QDQ model as vai_c_xir compiles it: real DPU ops (qdq_to_xir.py), const-fix
    weights in REG_0, every tensor xint8 with its fix point; its standin_accm the emulator model compiled from that
    DPU subgraph itself (accel.compiler.xir, the emulator's .xmodel front end, with the dpu rules), int8 NHWC end to
    end."""
    import onnx

    from accel import compiler

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import qdq_to_xir

    graph = qdq_to_xir.convert(onnx.load(onnx_path), _graph_name(onnx_path))
    code = compiler.compile_model(xir.dpu_model(xir.write(graph)).SerializeToString(), int8=INT8_RULES)
    (dpu,) = graph.subgraphs("DPU")
    dpu.attrs["standin_accm"] = code
    return xir.write(graph)


def pack_accm(name: str, accm: bytes, dpu_subgraphs: int = 1) -> bytes:
    """The stand-in .xmodel bytes whose DPU subgraph runs the emulator model `accm` with its own float32
    tensors, shapes unchanged, declared NCHW (see the module's help); `name` names the graph."""
    ins, outs = _interface(accm, name)
    if dpu_subgraphs > 1:
        raise ValueError("several DPU subgraphs are made from the ONNX model (build), each naming its outputs")
    return _xmodel(name, accm, ins, outs, None, dpu_subgraphs)


def main(argv: List[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("onnx")
    p.add_argument("out")
    p.add_argument("--fix-point", action="append", default=[], metavar="NAME=FP")
    p.add_argument("--dpu-subgraphs", type=int, default=1)
    p.add_argument("--float", action="store_true", help="float32 NCHW DPU tensors, as the model has them")
    p.add_argument("--dpu-ops", action="store_true",
                   help="a power-of-two QDQ model as real DPU ops (conv2d-fix, ..., weights in REG_0)")
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
        if a.dpu_ops:
            data = build_dpu_ops(a.onnx)
        elif a.float:
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
