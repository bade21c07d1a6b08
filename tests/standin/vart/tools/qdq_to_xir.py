"""A power-of-two QDQ ONNX model as the graph vai_c_xir compiles for a DPUCZDX8G: the VART stand-in packer's real DPU
ops (make_xmodel.py --dpu-ops). Every QuantizeLinear's scale is 2^-fix_point; each float op between a
DequantizeLinear and a QuantizeLinear becomes the DPU op that computes it on the integers:

    Conv (group 1) [+ Relu | LeakyRelu 26/256]   conv2d-fix: kernel, stride, dilation {w, h}, pad {l, r, t, b},
                                                 nonlinear; weights OHWI and bias as const-fix in REG_0
    Conv (group = channels) [+ Relu | ...]       depthwise-conv2d-fix, weights [1, h, w, C]
    Add [+ Relu]                                 eltwise-fix ADD
    MaxPool, AveragePool (count_include_pad), GlobalAveragePool   pool-fix MAX / AVG
    Concat                                       concat-fix along the NHWC axis
    Reshape, Flatten (where NCHW and NHWC order agree: no 4-D input with a plane larger than 1x1)   reshape-fix
    Resize nearest (asymmetric, floor)           upsample-fix NEAREST
    HardSigmoid (alpha 1/6, beta 1/2)            hard-sigmoid-fix (hsigmoid_in, shift_hsigmoid as vai_c_xir writes)

with a USER data-fix and a DPU upload per input, a download and a CPU fix2float per output; every tensor xint8 with
its fix_point, NHWC. Anything else is refused naming the op (ValueError).

    graph = convert(onnx.load("net_qdq.onnx"), "net")      # an accel.compiler.xir.Graph
"""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

import numpy as np
import onnx
from onnx import numpy_helper, shape_inference

from accel.compiler import xir
from accel.compiler.qdq_device import fix_points

DPU_NAME = "DPUCZDX8G_ISA1_B4096"
FINGERPRINT = 0x101000056010407  # a KV260's DPUCZDX8G_ISA1_B4096
_LEAKY = 26 / 256


def _nhwc(dims) -> Tuple[int, ...]:
    dims = tuple(int(d) for d in dims)
    return (dims[0], dims[2], dims[3], dims[1]) if len(dims) == 4 else dims


def _tensor(name: str, shape, fix_point: int, **extra: Any) -> xir.Tensor:
    attrs = {"fix_point": int(fix_point), "bit_width": 8, "if_signed": True, "round_mode": "DPU_ROUND", **extra}
    return xir.Tensor(name, tuple(shape), "XINT", 8, attrs)


class _Converter:
    def __init__(self, model: onnx.ModelProto) -> None:
        model = shape_inference.infer_shapes(model)
        g = model.graph
        self.inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
        self.shapes: Dict[str, Tuple[int, ...]] = {}
        for vi in list(g.input) + list(g.value_info) + list(g.output):
            dims = vi.type.tensor_type.shape.dim
            if all(d.HasField("dim_value") for d in dims):
                self.shapes[vi.name] = tuple(d.dim_value for d in dims)
        self.graph = g
        self.ops: Dict[str, xir.Op] = {}
        self.user: List[str] = []
        self.dpu: List[str] = []
        self.register = bytearray()
        self.values: Dict[str, str] = {}  # an ONNX integer value (Q output) or its DequantizeLinear -> the op
        self.consts: Dict[str, Tuple[np.ndarray, int]] = {}  # a DequantizeLinear'd initializer: values, fix point
        self.pending: Dict[str, Dict[str, Any]] = {}  # a float op's output, waiting for its QuantizeLinear

    def fix_point(self, node: onnx.NodeProto) -> int:
        scale = self.inits.get(node.input[1])
        fps = None if scale is None else fix_points(scale)
        if fps is None or fps.size != 1:
            raise ValueError(f"{node.op_type} {node.name or node.output[0]!r}: its scale is not one power of two")
        if len(node.input) > 2 and np.any(self.inits.get(node.input[2], np.zeros(1)) != 0):
            raise ValueError(f"{node.op_type} {node.name or node.output[0]!r}: a zero point other than 0")
        return int(fps[0])

    def add(self, op: xir.Op, where: List[str]) -> str:
        if op.name in self.ops:
            raise ValueError(f"two ops would be named {op.name!r}")
        self.ops[op.name] = op
        where.append(op.name)
        return op.name

    def const(self, name: str, values: np.ndarray, fp: int) -> str:
        values = np.ascontiguousarray(values, np.int8)
        addr = len(self.register)
        self.register += values.tobytes()
        self.register += bytes(-len(self.register) % 64)
        return self.add(xir.Op(name, "const-fix", {"shape": list(values.shape), "data_type": "XINT8", "device": "DPU",
                                                   "data": b""}, {},
                               _tensor(name, values.shape, fp, reg_id=0, ddr_addr=addr)), self.dpu)

    def data(self, name: str, node: onnx.NodeProto) -> str:
        if name not in self.values:
            raise ValueError(f"{node.op_type} {node.name or node.output[0]!r} reads {name!r}, which is not a "
                             f"quantized value (DequantizeLinear of a QuantizeLinear)")
        return self.values[name]

    def window(self, node: onnx.NodeProto, kernel: List[int]) -> Dict[str, List[int]]:
        a = {x.name: onnx.helper.get_attribute_value(x) for x in node.attribute}
        if a.get("ceil_mode", 0) or a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
            raise ValueError(f"{node.op_type} {node.name or node.output[0]!r}: ceil_mode or auto_pad")
        sh, sw = a.get("strides", [1, 1])
        top, left, bottom, right = a.get("pads", [0, 0, 0, 0])
        return {"kernel": [kernel[1], kernel[0]], "stride": [sw, sh], "pad": [left, right, top, bottom],
                "pad_mode": "FLOOR"}

    def compute(self, node: onnx.NodeProto) -> None:
        a = {x.name: onnx.helper.get_attribute_value(x) for x in node.attribute}
        name, out = node.name or node.output[0], node.output[0]
        if node.op_type == "Conv":
            if len(node.input) < 2 or node.input[1] not in self.consts:
                raise ValueError(f"Conv {name!r}: its weights are not a DequantizeLinear'd initializer")
            w, fw = self.consts[node.input[1]]
            group = a.get("group", 1)
            depthwise = group > 1 and w.shape[1] == 1 and group == w.shape[0]
            if group != 1 and not depthwise:
                raise ValueError(f"Conv {name!r}: group {group} (the packer writes group 1 and depthwise)")
            attrs = {**self.window(node, list(w.shape[2:])), "dilation": list(a.get("dilations", [1, 1]))[::-1],
                     "nonlinear": "NONE", "bias_term": len(node.input) > 2}
            if not depthwise:
                attrs["group"] = 1
            stored = w.transpose(1, 2, 3, 0) if depthwise else w.transpose(0, 2, 3, 1)  # [1, h, w, C] or OHWI
            args = {"input": [self.data(node.input[0], node)],
                    "weights": [self.const(f"{name}_weights", stored, fw)]}
            if len(node.input) > 2 and node.input[2]:
                if node.input[2] not in self.consts:
                    raise ValueError(f"Conv {name!r}: its bias is not a DequantizeLinear'd initializer")
                bias, fb = self.consts[node.input[2]]
                if bias.min(initial=0) < -128 or bias.max(initial=0) > 127:
                    raise ValueError(f"Conv {name!r}: a bias past int8 (the DPU's constants are xint8)")
                args["bias"] = [self.const(f"{name}_bias", bias, fb)]
            self.pending[out] = {"name": name, "type": "depthwise-conv2d-fix" if depthwise else "conv2d-fix",
                                 "attrs": attrs, "args": args}
        elif node.op_type == "Add":
            self.pending[out] = {"name": name, "type": "eltwise-fix", "attrs": {"type": "ADD", "nonlinear": "NONE"},
                                 "args": {"input": [self.data(i, node) for i in node.input]}}
        elif node.op_type in ("MaxPool", "AveragePool", "GlobalAveragePool"):
            src = self.data(node.input[0], node)
            if node.op_type == "GlobalAveragePool":
                _, h, w, _ = self.ops[src].output.shape
                attrs = {"kernel": [w, h], "stride": [w, h], "pad": [0, 0, 0, 0], "pad_mode": "FLOOR"}
            else:
                if node.op_type == "AveragePool" and not a.get("count_include_pad", 0) and any(a.get("pads", [])):
                    raise ValueError(f"AveragePool {name!r}: padding not counted (the DPU counts it)")
                attrs = self.window(node, list(a["kernel_shape"]))
            attrs["type"] = "MAX" if node.op_type == "MaxPool" else "AVG"
            self.pending[out] = {"name": name, "type": "pool-fix", "attrs": attrs, "args": {"input": [src]}}
        elif node.op_type == "Concat":
            rank = len(self.shapes[out])
            axis = int(a["axis"]) % rank
            self.pending[out] = {"name": name, "type": "concat-fix",
                                 "attrs": {"axis": [0, 3, 1, 2][axis] if rank == 4 else axis},
                                 "args": {"input": [self.data(i, node) for i in node.input]}}
        elif node.op_type in ("Reshape", "Flatten"):
            src = self.data(node.input[0], node)
            shape = self.ops[src].output.shape
            if len(shape) == 4 and shape[1] * shape[2] > 1:
                raise ValueError(f"{node.op_type} {name!r}: a {list(shape)} NHWC map, whose order is not ONNX's "
                                 f"NCHW one (the DPU's reshape-fix reads NHWC)")
            self.pending[out] = {"name": name, "type": "reshape-fix", "attrs": {"shape": list(_nhwc(self.shapes[out]))},
                                 "args": {"input": [src]}}
        elif node.op_type == "Resize":
            mode, where = a.get("mode", b"nearest"), a.get("coordinate_transformation_mode", b"half_pixel")
            if (mode, where, a.get("nearest_mode", b"round_prefer_floor")) != (b"nearest", b"asymmetric", b"floor"):
                raise ValueError(f"Resize {name!r}: the packer writes nearest, asymmetric, floor only")
            self.pending[out] = {"name": name, "type": "upsample-fix",
                                 "attrs": {"mode": "NEAREST", "align_corners": False, "half_pixel_centers": False},
                                 "args": {"input": [self.data(node.input[0], node)]}}
        elif node.op_type == "HardSigmoid":
            if abs(a.get("alpha", 0.2) - 1 / 6) > 1e-6 or a.get("beta", 0.5) != 0.5:
                raise ValueError(f"HardSigmoid {name!r}: the DPU's is relu6(x + 3) / 6 (alpha 1/6, beta 1/2)")
            self.pending[out] = {"name": name, "type": "hard-sigmoid-fix", "attrs": {},
                                 "args": {"input": [self.data(node.input[0], node)]}}
        elif node.op_type in ("Relu", "LeakyRelu"):
            spec = self.pending.pop(node.input[0], None)
            fusable = spec is not None and spec["attrs"].get("nonlinear") == "NONE"
            leaky_ok = fusable and spec["type"].endswith("conv2d-fix") and abs(a.get("alpha", 0.01) - _LEAKY) < 1e-9
            ok = fusable and (node.op_type == "Relu" or leaky_ok)
            if not ok:
                raise ValueError(f"{node.op_type} {name!r}: the DPU fuses a Relu after a conv or add (a LeakyRelu of "
                                 f"26/256 after a conv) only")
            spec["attrs"]["nonlinear"] = "RELU" if node.op_type == "Relu" else "LEAKYRELU"
            self.pending[out] = spec
        else:
            raise ValueError(f"{node.op_type} {name!r}: the packer writes no DPU op for it (it writes Conv, Add, "
                             f"Relu, LeakyRelu, MaxPool, AveragePool, GlobalAveragePool, Concat, Reshape, Flatten, "
                             f"Resize, HardSigmoid)")

    def run(self, name: str) -> xir.Graph:
        inputs = {i.name for i in self.graph.input} - set(self.inits)
        for node in self.graph.node:
            if node.op_type == "QuantizeLinear":
                fp, src = self.fix_point(node), node.input[0]
                if src in inputs:
                    shape = _nhwc(self.shapes[src])
                    self.add(xir.Op(src, "data-fix", {"shape": list(shape), "data_type": "XINT8", "device": "USER"},
                                    {}, _tensor(src, shape, fp)), self.user)
                    up = self.add(xir.Op(f"{src}_upload", "upload", {"device": "DPU"}, {"input": [src]},
                                         _tensor(f"{src}_upload", shape, fp)), self.dpu)
                    self.values[node.output[0]] = up
                elif src in self.pending:
                    spec = self.pending.pop(src)
                    if spec["type"] == "hard-sigmoid-fix":  # as vai_c_xir writes them, from both fix points
                        fx = self.ops[spec["args"]["input"][0]].output.fix_point
                        spec["attrs"] = {"hsigmoid_in": fx, "shift_hsigmoid": 14 + fx - fp}
                    op = xir.Op(spec["name"], spec["type"], {"device": "DPU", **spec["attrs"]}, spec["args"],
                                _tensor(f"{spec['name']}_fix", _nhwc(self.shapes[src]), fp))
                    self.values[node.output[0]] = self.add(op, self.dpu)
                else:
                    raise ValueError(f"QuantizeLinear {node.name or node.output[0]!r} reads {src!r}, which no "
                                     f"packed op writes")
            elif node.op_type == "DequantizeLinear":
                src = node.input[0]
                if src in self.inits:
                    self.consts[node.output[0]] = (self.inits[src], self.fix_point(node))
                elif src in self.values:
                    self.values[node.output[0]] = self.values[src]
                else:
                    raise ValueError(f"DequantizeLinear {node.name or node.output[0]!r} reads {src!r}, which is "
                                     f"neither an initializer nor a QuantizeLinear's output")
            else:
                self.compute(node)
        if self.pending:
            raise ValueError(f"{sorted(self.pending)}: computed but not quantized (every DPU op's output is)")
        return self.graph_of(name)

    def graph_of(self, name: str) -> xir.Graph:
        cpu: List[xir.Subgraph] = []
        for o in self.graph.output:
            src = self.values.get(o.name)
            if src is None:
                raise ValueError(f"output {o.name!r} is not a DequantizeLinear of a packed op")
            t = self.ops[src].output
            down = self.add(xir.Op(f"{o.name}_download", "download", {"device": "DPU"}, {"input": [src]},
                                   _tensor(o.name, t.shape, t.fix_point)), self.dpu)
            f2f = f"{o.name}_fix2float"
            self.ops[f2f] = xir.Op(f2f, "fix2float", {"device": "CPU", "fix_point": t.fix_point}, {"input": [down]},
                                   xir.Tensor(f2f, t.shape, "FLOAT", 32, {}))
            cpu.append(xir.Subgraph(f"subgraph_{f2f}", {"device": "CPU"}, [f2f]))
        dpu = xir.Subgraph(f"subgraph_{name}", {
            "device": "DPU", "dpu_name": DPU_NAME, "dpu_fingerprint": FINGERPRINT,
            "reg_id_to_parameter_value": {"REG_0": bytes(self.register)},
            "reg_id_to_size": {"REG_0": len(self.register)},
            "reg_id_to_context_type": {"REG_0": "CONST", "REG_1": "DATA", "REG_2": "DATA"}},
            [], [xir.Subgraph(f"subgraph_{n}", {}, [n]) for n in self.dpu])
        user = [xir.Subgraph(f"subgraph_{n}", {"device": "USER"}, [n]) for n in self.user]
        return xir.Graph(name, dict(self.ops), xir.Subgraph("root", {}, [], user + [dpu] + cpu),
                         {"origin": "accel stand-in"})


def convert(model: onnx.ModelProto, name: str) -> xir.Graph:
    """The compiled graph of power-of-two QDQ `model` (see the module's help), named `name`."""
    return _Converter(model).run(name)
