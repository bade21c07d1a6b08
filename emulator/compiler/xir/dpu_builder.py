"""What turning a DPU subgraph into ONNX is built on (dpu_graph.py makes each op with it): the ONNX graph being made
and each XIR op's int8 value in it (Builder), and the reads of an op that every maker shares, each refusing what
is wrong with an XmodelError naming the op and its subgraph: its fix point, its integer-list attributes ({w, h}
kernels and strides, {left, right, top, bottom} pads), its data and constant arguments, its fused activation."""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .reader import Graph, Op, Subgraph, UnsupportedXmodelError, XmodelError, attr

__all__ = ["ACTIVATIONS", "FAMILY", "OPSET", "TO_NCHW", "TO_NHWC", "Builder", "activation", "constant", "data_input",
           "data_source", "fix_point", "ints", "named", "window_attrs"]

#: The DPU family whose arithmetic the dpu rules are (the subgraph's dpu_name starts with it).
FAMILY = "DPUCZDX8G"
OPSET = 17
ACTIVATIONS = ("NONE", "RELU", "RELU6", "LEAKYRELU")
LEAKY_ALPHA = 26 / 256
FIX_POINT_LIMIT = 64
TO_NCHW = [0, 3, 1, 2]
TO_NHWC = [0, 2, 3, 1]


class Builder:
    """The ONNX graph being made: nodes, initializers, and each XIR op's int8 value (its ONNX name, whether it is a
    4-D map held as NCHW, its fix point)."""

    def __init__(self, graph: Graph, subgraph: Subgraph) -> None:
        import onnx.helper  # noqa: F401  (the compiler's dependency; imported here so that reading needs none)

        self.graph, self.subgraph = graph, subgraph
        self.nodes: List = []
        self.inits: List = []
        self.values: Dict[str, Tuple[str, bool, int]] = {}  # XIR op -> (ONNX int8 name, NCHW, fix point)
        self._n = 0
        self._scales: Dict[int, str] = {}  # fix point -> its scale's initializer, one each
        self._zero = ""
        self.registers = attr(f"subgraph {subgraph.name!r}", subgraph.attrs, "reg_id_to_parameter_value", dict, {})

    def fresh(self, base: str) -> str:
        self._n += 1
        return f"{base}__{self._n}"

    def node(self, op_type: str, inputs: Sequence[str], base: str, **attrs) -> str:
        from onnx import helper

        out = self.fresh(base)
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=out, **attrs))
        return out

    def const(self, array: np.ndarray, base: str) -> str:
        from onnx import numpy_helper

        name = self.fresh(base)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def scale(self, fix_point: int) -> str:
        """The initializer of the scale 2^-fix_point, made once per fix point."""
        if fix_point not in self._scales:
            self._scales[fix_point] = self.const(np.float32(np.ldexp(np.float32(1), -fix_point)), "scale")
        return self._scales[fix_point]

    def zero(self) -> str:
        """The int8 zero point every DequantizeLinear and QuantizeLinear reads, made once."""
        if not self._zero:
            self._zero = self.const(np.int8(0), "zero")
        return self._zero

    def value(self, op_name: str, reader: Op) -> Tuple[str, bool, int]:
        """The int8 value (ONNX name, NCHW, fix point) of `op_name`'s output as `reader` reads it as data."""
        found = self.values.get(op_name)
        if found is None:
            kind = self.graph.ops[op_name].type
            raise UnsupportedXmodelError(f"op {reader.name!r} ({reader.type}) of subgraph {self.subgraph.name!r} reads "
                                         f"op {op_name!r} ({kind}) as data: only the weights and bias of a "
                                         f"convolution may be constants")
        return found

    def dequantized(self, op_name: str, reader: Op) -> Tuple[str, bool, int]:
        """The float (DequantizeLinear'd) value of an op's output as `reader` reads it: (name, NCHW, fix point)."""
        name, nchw, fp = self.value(op_name, reader)
        return self.node("DequantizeLinear", [name, self.scale(fp), self.zero()], f"{op_name}_dq"), nchw, fp

    def quantized(self, value: str, op: Op, nchw: bool) -> None:
        """Records op's output: the float `value` quantized at its output's fix point."""
        fp = fix_point(op, self.subgraph)
        self.values[op.name] = (self.node("QuantizeLinear", [value, self.scale(fp), self.zero()], f"{op.name}_q"), nchw,
                                fp)

    def weights(self, op: Op) -> np.ndarray:
        """A const-fix op's int8 values from its register, in its tensor's shape."""
        t = op.output
        where = f"op {op.name!r} ({op.type}) of subgraph {self.subgraph.name!r}"
        if t.data_type != "XINT" or t.bit_width != 8:
            raise XmodelError(f"{where}: its tensor is {t.type_name}; the DPU's constants are xint8")
        data = attr(where, op.attrs, "data", bytes, b"")
        size = int(np.prod(t.shape))
        if isinstance(data, bytes) and len(data) == size:
            raw = data
        else:
            reg, addr = attr(where, t.attrs, "reg_id", int), attr(where, t.attrs, "ddr_addr", int)
            if reg is None or addr is None:
                raise XmodelError(f"{where}: no data, and no reg_id and ddr_addr to find it at")
            key = f"REG_{reg}"
            blob = self.registers.get(key)
            if not isinstance(blob, bytes):
                raise XmodelError(f"{where}: its data is in register {key}, which the subgraph's "
                                  f"reg_id_to_parameter_value does not hold")
            if addr < 0 or addr + size > len(blob):
                raise XmodelError(f"{where}: its {size} bytes at ddr_addr {addr} pass the end of {key} "
                                  f"({len(blob)} bytes)")
            raw = blob[addr:addr + size]
        return np.frombuffer(raw, np.int8).reshape(t.shape).copy()


def named(b: Builder, op: Op) -> str:
    return f"op {op.name!r} ({op.type}) of subgraph {b.subgraph.name!r}"


def fix_point(op: Op, subgraph: Subgraph) -> int:
    fp = op.output.fix_point
    if fp is None:
        raise XmodelError(f"op {op.name!r} ({op.type}) of subgraph {subgraph.name!r}: its tensor "
                          f"{op.output.name!r} has no fix_point")
    if not -FIX_POINT_LIMIT <= fp <= FIX_POINT_LIMIT:  # the dpu rules take [-30, 30] and say so; this is sanity
        raise XmodelError(f"op {op.name!r} ({op.type}) of subgraph {subgraph.name!r}: its tensor "
                          f"{op.output.name!r} has fix_point {fp}")
    return fp


def ints(op: Op, key: str, count: int, default: Optional[List[int]], subgraph: Subgraph) -> List[int]:
    v = op.attrs.get(key, default)
    if not isinstance(v, list) or len(v) != count or not all(isinstance(x, int) and not isinstance(x, bool)
                                                             for x in v):
        raise XmodelError(f"op {op.name!r} ({op.type}) of subgraph {subgraph.name!r}: attribute {key!r} is {v!r}, "
                          f"not {count} ints")
    return list(v)


def window_attrs(b: Builder, op: Op) -> Dict[str, List[int]]:
    """ONNX's kernel_shape, strides and pads of an op's {w, h} kernel and stride and {l, r, t, b} pad."""
    kw, kh = ints(op, "kernel", 2, None, b.subgraph)
    sw, sh = ints(op, "stride", 2, [1, 1], b.subgraph)
    left, right, top, bottom = ints(op, "pad", 4, [0, 0, 0, 0], b.subgraph)
    return {"kernel_shape": [kh, kw], "strides": [sh, sw], "pads": [top, left, bottom, right]}


def data_source(b: Builder, op: Op) -> str:
    """The one op that `op`'s "input" argument names."""
    names = op.inputs.get("input", [])
    if len(names) != 1:
        raise XmodelError(f"op {op.name!r} ({op.type}) of subgraph {b.subgraph.name!r} has {len(names)} inputs, not 1")
    return names[0]


def data_input(b: Builder, op: Op, arg: str = "input", index: int = 0) -> Tuple[str, bool, int]:
    names = op.inputs.get(arg, [])
    if len(names) <= index:
        raise XmodelError(f"op {op.name!r} ({op.type}) of subgraph {b.subgraph.name!r} has no {arg!r} argument")
    return b.dequantized(names[index], op)


def constant(b: Builder, op: Op, arg: str) -> Optional[Op]:
    """The const-fix op that argument `arg` of `op` names (one), None when the argument is absent or empty."""
    names = op.inputs.get(arg, [])
    if not names:
        return None
    src = b.graph.ops[names[0]]
    if len(names) != 1 or src.type != "const-fix":
        raise UnsupportedXmodelError(f"op {op.name!r} ({op.type}) of subgraph {b.subgraph.name!r}: its {arg!r} is "
                                     f"{', '.join(repr(n) for n in names)}, not one const-fix op")
    return src


def activation(b: Builder, op: Op, x: str) -> str:
    act = attr(named(b, op), op.attrs, "nonlinear", str, "NONE")
    if act not in ACTIVATIONS:
        raise UnsupportedXmodelError(f"op {op.name!r} ({op.type}) of subgraph {b.subgraph.name!r}: nonlinear {act!r} "
                                     f"is not supported ({', '.join(ACTIVATIONS)} are)")
    if act == "RELU":
        return b.node("Relu", [x], f"{op.name}_relu")
    if act == "RELU6":
        return b.node("Clip", [x, b.const(np.float32(0), "lo"), b.const(np.float32(6), "hi")], f"{op.name}_relu6")
    if act == "LEAKYRELU":  # the DPU's slope 26/256 (docs/quantization.md), which the op states when it says one
        alpha = attr(named(b, op), op.attrs, "LEAKYRELU_alpha", float, LEAKY_ALPHA)
        if alpha != LEAKY_ALPHA:
            raise UnsupportedXmodelError(f"op {op.name!r} ({op.type}) of subgraph {b.subgraph.name!r}: LEAKYRELU_alpha "
                                         f"{alpha!r} (the DPU's is 26/256 = {LEAKY_ALPHA})")
        return b.node("LeakyRelu", [x], f"{op.name}_leaky", alpha=LEAKY_ALPHA)
    return x
