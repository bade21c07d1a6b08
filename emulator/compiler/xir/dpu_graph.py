"""A compiled DPUCZDX8G subgraph as the power-of-two QDQ ONNX model that the compiler's ``dpu`` int8 rules compute as
the DPU does (docs/quantization.md): each XIR ``*-fix`` op becomes DequantizeLinear'd inputs, the float op and a
QuantizeLinear at its output's fix point, and the subgraph's inputs and outputs stay what the board's runner gives
(int8, NHWC as stored, real = q * 2^-fix_point). Inside, 4-D feature maps are NCHW (ONNX's): a Transpose on the
integers at each end, and around a reshape, which reads the NHWC order.

The op types taken and the attributes each reads are OPS (the conventions: kernel, stride and dilation {w, h}; pad
{left, right, top, bottom}; weights OHWI, depthwise [1, h, w, C]; the int8 weights at the tensor's ddr_addr inside
the subgraph's REG_<reg_id> parameter register). An op type outside it, or an attribute value it does not know,
raises XmodelError naming the op and its subgraph.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .reader import Graph, Op, Subgraph, UnsupportedXmodelError, XmodelError, attr

__all__ = ["OPS", "FAMILY", "to_qdq"]

#: The DPU family whose arithmetic the dpu rules are (the subgraph's dpu_name starts with it).
FAMILY = "DPUCZDX8G"
_OPSET = 17
_ACTIVATIONS = ("NONE", "RELU", "RELU6", "LEAKYRELU")
_LEAKY_ALPHA = 26 / 256
_FIX_POINT_LIMIT = 64
_TO_NCHW = [0, 3, 1, 2]
_TO_NHWC = [0, 2, 3, 1]


class _Builder:
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
        fp = _fix_point(op, self.subgraph)
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


def _where(b: _Builder, op: Op) -> str:
    return f"op {op.name!r} ({op.type}) of subgraph {b.subgraph.name!r}"


def _fix_point(op: Op, subgraph: Subgraph) -> int:
    fp = op.output.fix_point
    if fp is None:
        raise XmodelError(f"op {op.name!r} ({op.type}) of subgraph {subgraph.name!r}: its tensor "
                          f"{op.output.name!r} has no fix_point")
    if not -_FIX_POINT_LIMIT <= fp <= _FIX_POINT_LIMIT:  # the dpu rules take [-30, 30] and say so; this is sanity
        raise XmodelError(f"op {op.name!r} ({op.type}) of subgraph {subgraph.name!r}: its tensor "
                          f"{op.output.name!r} has fix_point {fp}")
    return fp


def _ints(op: Op, key: str, count: int, default: Optional[List[int]], subgraph: Subgraph) -> List[int]:
    v = op.attrs.get(key, default)
    if not isinstance(v, list) or len(v) != count or not all(isinstance(x, int) and not isinstance(x, bool)
                                                             for x in v):
        raise XmodelError(f"op {op.name!r} ({op.type}) of subgraph {subgraph.name!r}: attribute {key!r} is {v!r}, "
                          f"not {count} ints")
    return list(v)


def _window(b: _Builder, op: Op) -> Dict[str, List[int]]:
    """ONNX's kernel_shape, strides and pads of an op's {w, h} kernel and stride and {l, r, t, b} pad."""
    kw, kh = _ints(op, "kernel", 2, None, b.subgraph)
    sw, sh = _ints(op, "stride", 2, [1, 1], b.subgraph)
    left, right, top, bottom = _ints(op, "pad", 4, [0, 0, 0, 0], b.subgraph)
    return {"kernel_shape": [kh, kw], "strides": [sh, sw], "pads": [top, left, bottom, right]}


def _data_source(b: _Builder, op: Op) -> str:
    """The one op that `op`'s "input" argument names."""
    names = op.inputs.get("input", [])
    if len(names) != 1:
        raise XmodelError(f"op {op.name!r} ({op.type}) of subgraph {b.subgraph.name!r} has {len(names)} inputs, not 1")
    return names[0]


def _input(b: _Builder, op: Op, arg: str = "input", index: int = 0) -> Tuple[str, bool, int]:
    names = op.inputs.get(arg, [])
    if len(names) <= index:
        raise XmodelError(f"op {op.name!r} ({op.type}) of subgraph {b.subgraph.name!r} has no {arg!r} argument")
    return b.dequantized(names[index], op)


def _constant(b: _Builder, op: Op, arg: str) -> Optional[Op]:
    """The const-fix op that argument `arg` of `op` names (one), None when the argument is absent or empty."""
    names = op.inputs.get(arg, [])
    if not names:
        return None
    src = b.graph.ops[names[0]]
    if len(names) != 1 or src.type != "const-fix":
        raise UnsupportedXmodelError(f"op {op.name!r} ({op.type}) of subgraph {b.subgraph.name!r}: its {arg!r} is "
                                     f"{', '.join(repr(n) for n in names)}, not one const-fix op")
    return src


def _activation(b: _Builder, op: Op, x: str) -> str:
    act = attr(_where(b, op), op.attrs, "nonlinear", str, "NONE")
    if act not in _ACTIVATIONS:
        raise UnsupportedXmodelError(f"op {op.name!r} ({op.type}) of subgraph {b.subgraph.name!r}: nonlinear {act!r} "
                                     f"is not supported ({', '.join(_ACTIVATIONS)} are)")
    if act == "RELU":
        return b.node("Relu", [x], f"{op.name}_relu")
    if act == "RELU6":
        return b.node("Clip", [x, b.const(np.float32(0), "lo"), b.const(np.float32(6), "hi")], f"{op.name}_relu6")
    if act == "LEAKYRELU":  # the DPU's slope 26/256 (docs/quantization.md), which the op states when it says one
        alpha = attr(_where(b, op), op.attrs, "LEAKYRELU_alpha", float, _LEAKY_ALPHA)
        if alpha != _LEAKY_ALPHA:
            raise UnsupportedXmodelError(f"op {op.name!r} ({op.type}) of subgraph {b.subgraph.name!r}: LEAKYRELU_alpha "
                                         f"{alpha!r} (the DPU's is 26/256 = {_LEAKY_ALPHA})")
        return b.node("LeakyRelu", [x], f"{op.name}_leaky", alpha=_LEAKY_ALPHA)
    return x


def _conv(b: _Builder, op: Op, depthwise: bool) -> None:
    x, nchw, _ = _input(b, op)
    if not nchw:
        raise XmodelError(f"op {op.name!r} ({op.type}) of subgraph {b.subgraph.name!r} reads a tensor that is not "
                          f"a 4-D feature map")
    w_op = _constant(b, op, "weights")
    if w_op is None:
        raise XmodelError(f"op {op.name!r} ({op.type}) of subgraph {b.subgraph.name!r} has no weights")
    w = b.weights(w_op)
    kw, kh = _ints(op, "kernel", 2, None, b.subgraph)
    channels_in = b.graph.ops[_data_source(b, op)].output.shape[-1]
    if depthwise:  # [1, h, w, C] -> ONNX's [C, 1, h, w]
        want = (1, kh, kw, channels_in)
    else:  # OHWI -> OIHW
        group = attr(_where(b, op), op.attrs, "group", int, 1)
        if group < 1 or channels_in % group:
            raise XmodelError(f"{_where(b, op)}: group {group} for {channels_in} input channels")
        want = (op.output.shape[-1], kh, kw, channels_in // group)
    if w.shape != want:
        raise XmodelError(f"{_where(b, op)}: weights {w_op.name!r} are {list(w.shape)}, not {list(want)} (its kernel "
                          f"{{w, h}} [{kw}, {kh}], {channels_in} input and {op.output.shape[-1]} output channels)")
    if depthwise:
        w = w[0].transpose(2, 0, 1)[:, None]
        group = w.shape[0]
    else:
        w = w.transpose(0, 3, 1, 2)
    wq = b.const(w, f"{w_op.name}_w")
    wd = b.node("DequantizeLinear", [wq, b.scale(_fix_point(w_op, b.subgraph)), b.zero()],
                f"{w_op.name}_dq")
    inputs = [x, wd]
    b_op = _constant(b, op, "bias")
    if b_op is not None:
        bias = b.weights(b_op)
        if bias.shape != (w.shape[0],):
            raise XmodelError(f"{_where(b, op)}: bias {b_op.name!r} is {list(bias.shape)}, not [{w.shape[0]}]")
        bq = b.const(bias, f"{b_op.name}_b")
        inputs.append(b.node("DequantizeLinear", [bq, b.scale(_fix_point(b_op, b.subgraph)),
                                                  b.zero()], f"{b_op.name}_dq"))
    dw, dh = _ints(op, "dilation", 2, [1, 1], b.subgraph)
    y = b.node("Conv", inputs, op.name, group=int(group), dilations=[dh, dw], **_window(b, op))
    b.quantized(_activation(b, op, y), op, True)


def _pool(b: _Builder, op: Op) -> None:
    x, _, _ = _input(b, op)
    kind = attr(_where(b, op), op.attrs, "type", str, "MAX")
    window = _window(b, op)
    ceil = 1 if attr(_where(b, op), op.attrs, "pad_mode", str, "FLOOR") == "CEIL" else 0
    if kind == "MAX":
        y = b.node("MaxPool", [x], op.name, ceil_mode=ceil, **window)
    elif kind == "AVG":
        y = b.node("AveragePool", [x], op.name, ceil_mode=ceil, count_include_pad=1, **window)
    else:
        raise UnsupportedXmodelError(f"op {op.name!r} (pool-fix) of subgraph {b.subgraph.name!r}: type {kind!r} "
                                     f"(MAX and AVG are supported)")
    b.quantized(y, op, True)


def _eltwise(b: _Builder, op: Op) -> None:
    names = op.inputs.get("input", [])
    if len(names) < 2:
        raise XmodelError(f"op {op.name!r} (eltwise-fix) of subgraph {b.subgraph.name!r} has {len(names)} inputs")
    kind = attr(_where(b, op), op.attrs, "type", str, "ADD")
    onnx_op = {"ADD": "Add", "MUL": "Mul"}.get(kind)
    if onnx_op is None:
        raise UnsupportedXmodelError(f"op {op.name!r} (eltwise-fix) of subgraph {b.subgraph.name!r}: type {kind!r} "
                                     f"(ADD and MUL are supported)")
    values = [b.dequantized(n, op) for n in names]
    y = values[0][0]
    for v in values[1:]:
        y = b.node(onnx_op, [y, v[0]], op.name)
    b.quantized(_activation(b, op, y), op, values[0][1])


def _concat(b: _Builder, op: Op) -> None:
    values = [b.dequantized(n, op) for n in op.inputs.get("input", [])]
    if not values:
        raise XmodelError(f"op {op.name!r} (concat-fix) of subgraph {b.subgraph.name!r} has no input")
    rank = len(op.output.shape)
    axis = attr(_where(b, op), op.attrs, "axis", int, -1)
    if not isinstance(axis, int) or not -rank <= axis < rank:
        raise XmodelError(f"op {op.name!r} (concat-fix) of subgraph {b.subgraph.name!r}: axis {axis!r}")
    nchw = rank == 4
    axis %= rank
    if nchw:
        axis = _TO_NHWC[axis]  # NHWC's axis a is NCHW's _TO_NHWC[a]: 3 (C) -> 1
    b.quantized(b.node("Concat", [v[0] for v in values], op.name, axis=axis), op, nchw)


def _reshape(b: _Builder, op: Op) -> None:
    name, nchw, fp = b.value(_data_source(b, op), op)
    if nchw:
        name = b.node("Transpose", [name], f"{op.name}_nhwc", perm=_TO_NHWC)
    shape = b.const(np.asarray(op.output.shape, np.int64), f"{op.name}_shape")
    y = b.node("Reshape", [name, shape], op.name)
    out_fp = _fix_point(op, b.subgraph)
    if out_fp != fp:
        raise XmodelError(f"op {op.name!r} (reshape-fix) of subgraph {b.subgraph.name!r} changes the fix point "
                          f"({fp} -> {out_fp})")
    if len(op.output.shape) == 4:
        y = b.node("Transpose", [y], f"{op.name}_nchw", perm=_TO_NCHW)
    b.values[op.name] = (y, len(op.output.shape) == 4, fp)


def _hard_sigmoid(b: _Builder, op: Op) -> None:
    """hard-sigmoid-fix: (x * 2731 + 3 * 2731 * 2^hsigmoid_in) / 2^shift_hsigmoid, rounded once, which is the dpu rules'
    hard-sigmoid-fix (relu6(x + 3) * 2731 / 2^14) when hsigmoid_in is the input's fix point and shift_hsigmoid is
    14 plus the input's fix point less the output's, as vai_c_xir writes them."""
    x, nchw, fx = _input(b, op)
    fy = _fix_point(op, b.subgraph)
    where = _where(b, op)
    hin = attr(where, op.attrs, "hsigmoid_in", int, fx)
    shift = attr(where, op.attrs, "shift_hsigmoid", int, 14 + fx - fy)
    if (hin, shift) != (fx, 14 + fx - fy):
        raise UnsupportedXmodelError(
            f"op {op.name!r} (hard-sigmoid-fix) of subgraph {b.subgraph.name!r}: hsigmoid_in {hin} and shift_hsigmoid "
            f"{shift} for fix points {fx} in and {fy} out (the DPU's are {fx} and {14 + fx - fy})")
    b.quantized(b.node("HardSigmoid", [x], op.name, alpha=1 / 6, beta=0.5), op, nchw)


def _upsample(b: _Builder, op: Op) -> None:
    """upsample-fix NEAREST (align_corners and half_pixel_centers false: each output pixel copies input pixel
    floor(out * in / out_size)), to the output tensor's size: the values copied, then quantized at the output's fix
    point (the same integers when it is the input's)."""
    x, nchw, _ = _input(b, op)
    where = _where(b, op)
    mode = attr(where, op.attrs, "mode", str, "NEAREST")
    corners = attr(where, op.attrs, "align_corners", bool, False)
    half = attr(where, op.attrs, "half_pixel_centers", bool, False)
    if len(op.output.shape) != 4:
        raise XmodelError(f"{where}: its output {list(op.output.shape)} is not a 4-D feature map")
    if mode != "NEAREST" or corners or half or not nchw:
        raise UnsupportedXmodelError(f"{where}: mode {mode!r}, align_corners {corners}, half_pixel_centers {half} "
                                     f"on a {'4-D' if nchw else 'non-4-D'} tensor (NEAREST with neither on a 4-D "
                                     f"feature map is supported)")
    n, h, w, c = op.output.shape
    sizes = b.const(np.asarray([n, c, h, w], np.int64), f"{op.name}_sizes")
    y = b.node("Resize", [x, "", "", sizes], op.name, mode="nearest", coordinate_transformation_mode="asymmetric",
               nearest_mode="floor")
    b.quantized(y, op, True)


def _same(b: _Builder, op: Op) -> None:
    """upload and download: the data moves between memories, its integers unchanged."""
    b.values[op.name] = b.value(_data_source(b, op), op)


def _const(b: _Builder, op: Op) -> None:
    """const-fix: read by the op that uses it (weights and biases in that op's layout)."""


#: The DPU op types taken, each with what makes it.
OPS: Dict[str, Callable[[_Builder, Op], None]] = {
    "upload": _same, "download": _same, "const-fix": _const,
    "conv2d-fix": lambda b, op: _conv(b, op, False),
    "depthwise-conv2d-fix": lambda b, op: _conv(b, op, True),
    "pool-fix": _pool, "eltwise-fix": _eltwise, "concat-fix": _concat, "reshape-fix": _reshape,
    "upsample-fix": _upsample, "hard-sigmoid-fix": _hard_sigmoid,
}


def _boundary(graph: Graph, subgraph: Subgraph) -> Tuple[List[Op], List[Op]]:
    """The subgraph's inputs (ops outside it that its ops read) and outputs (its ops read outside it or by none), each
    in their tensors' name order: XIR's Subgraph::get_sorted_input_tensors and get_sorted_output_tensors with their
    default order (TensorLexicographicalOrder), which VART's DPU runner gives its tensors in."""
    inside = set(subgraph.ops())
    consumers = graph.consumers()
    inputs: Dict[str, Op] = {}
    outputs: List[Op] = []
    for name, op in graph.ops.items():
        if name not in inside:
            continue
        for src in op.input_ops():
            if src not in inside:
                inputs.setdefault(src, graph.ops[src])
        users = consumers[name]
        if op.type != "const-fix" and (not users or any(u not in inside for u in users)):
            outputs.append(op)
    return sorted(inputs.values(), key=lambda o: o.output.name), sorted(outputs, key=lambda o: o.output.name)


def _value_info(name: str, shape: Sequence[int]):
    """An int8 graph input or output; a 4-D one denoted NHWC (ONNX's dimension denotations), which the compiled
    model's tensor record says (importer.denoted_layouts)."""
    from onnx import TensorProto, helper

    vi = helper.make_tensor_value_info(name, TensorProto.INT8, list(shape))
    if len(shape) == 4:
        for d, mark in zip(vi.type.tensor_type.shape.dim, ("DATA_BATCH", "DATA_FEATURE", "DATA_FEATURE",
                                                            "DATA_CHANNEL")):
            d.denotation = mark
    return vi


def to_qdq(graph: Graph, subgraph: Subgraph):
    """The onnx.ModelProto of DPU subgraph `subgraph` of `graph`: int8 inputs and outputs named by their XIR tensors,
    as stored (NHWC), the QDQ float ops between them."""
    from onnx import helper

    b = _Builder(graph, subgraph)
    ins, outs = _boundary(graph, subgraph)
    if not ins or not outs:
        raise XmodelError(f"subgraph {subgraph.name!r} has {len(ins)} inputs and {len(outs)} outputs")
    graph_inputs = []
    for op in ins:
        t = op.output
        if t.data_type != "XINT" or t.bit_width != 8:
            raise XmodelError(f"subgraph {subgraph.name!r}: input tensor {t.name!r} is {t.type_name}; a DPU subgraph's "
                              f"inputs are xint8")
        graph_inputs.append(_value_info(t.name, t.shape))
        fp = _fix_point(op, subgraph)
        b.values[op.name] = (t.name, False, fp)
        if len(t.shape) == 4:  # DQ -> Transpose -> Q: a move of the integers, which fixes the input's scale
            x, _, _ = b.dequantized(op.name, op)
            moved = b.node("Transpose", [x], f"{t.name}_nchw", perm=_TO_NCHW)
            b.values[op.name] = (b.node("QuantizeLinear", [moved, b.scale(fp), b.zero()],
                                        f"{t.name}_nchw_q"), True, fp)
    unsupported = sorted({op.type for name, op in graph.ops.items() if name in set(subgraph.ops())
                          and op.type not in OPS})
    if unsupported:
        raise UnsupportedXmodelError(f"subgraph {subgraph.name!r} has op types the emulator cannot run as the DPU "
                                     f"does: {', '.join(unsupported)} (it runs {', '.join(sorted(OPS))})")
    inside = set(subgraph.ops())
    for name, op in graph.ops.items():
        if name in inside:
            OPS[op.type](b, op)
    graph_outputs = []
    for op in outs:
        t = op.output
        x, nchw, fp = b.dequantized(op.name, op)
        if nchw:
            x = b.node("Transpose", [x], f"{t.name}_nhwc", perm=_TO_NHWC)
        b.nodes.append(helper.make_node("QuantizeLinear", [x, b.scale(fp), b.zero()], [t.name],
                                        name=f"{t.name}_out"))
        graph_outputs.append(_value_info(t.name, t.shape))
    g = helper.make_graph(b.nodes, subgraph.name, graph_inputs, graph_outputs, b.inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", _OPSET)], producer_name="accel.compiler.xir")
