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

from typing import Callable, Dict, List, Sequence, Tuple, Union

import numpy as np

from .dpu_builder import (FAMILY, OPSET, TO_NCHW, TO_NHWC, Builder, activation, constant, data_input,
                          data_source, fix_point, ints, named, window_attrs)
from ..errors import ExtraOutputError
from .reader import Graph, Op, Subgraph, UnsupportedXmodelError, XmodelError, attr

__all__ = ["OPS", "FAMILY", "ExtraTensors", "boundary", "extra_tensors", "to_qdq"]

#: Tensors to give after a subgraph's outputs: None, "all", or their XIR names.
ExtraTensors = Union[None, str, Sequence[str]]


def _conv(b: Builder, op: Op, depthwise: bool) -> None:
    x, nchw, _ = data_input(b, op)
    if not nchw:
        raise XmodelError(f"op {op.name!r} ({op.type}) of subgraph {b.subgraph.name!r} reads a tensor that is not "
                          f"a 4-D feature map")
    w_op = constant(b, op, "weights")
    if w_op is None:
        raise XmodelError(f"op {op.name!r} ({op.type}) of subgraph {b.subgraph.name!r} has no weights")
    w = b.weights(w_op)
    kw, kh = ints(op, "kernel", 2, None, b.subgraph)
    channels_in = b.graph.ops[data_source(b, op)].output.shape[-1]
    if depthwise:  # [1, h, w, C] -> ONNX's [C, 1, h, w]
        want = (1, kh, kw, channels_in)
    else:  # OHWI -> OIHW
        group = attr(named(b, op), op.attrs, "group", int, 1)
        if group < 1 or channels_in % group:
            raise XmodelError(f"{named(b, op)}: group {group} for {channels_in} input channels")
        want = (op.output.shape[-1], kh, kw, channels_in // group)
    if w.shape != want:
        raise XmodelError(f"{named(b, op)}: weights {w_op.name!r} are {list(w.shape)}, not {list(want)} (its kernel "
                          f"{{w, h}} [{kw}, {kh}], {channels_in} input and {op.output.shape[-1]} output channels)")
    if depthwise:
        w = w[0].transpose(2, 0, 1)[:, None]
        group = w.shape[0]
    else:
        w = w.transpose(0, 3, 1, 2)
    wq = b.const(w, f"{w_op.name}_w")
    wd = b.node("DequantizeLinear", [wq, b.scale(fix_point(w_op, b.subgraph)), b.zero()],
                f"{w_op.name}_dq")
    inputs = [x, wd]
    b_op = constant(b, op, "bias")
    if b_op is not None:
        bias = b.weights(b_op)
        if bias.shape != (w.shape[0],):
            raise XmodelError(f"{named(b, op)}: bias {b_op.name!r} is {list(bias.shape)}, not [{w.shape[0]}]")
        bq = b.const(bias, f"{b_op.name}_b")
        inputs.append(b.node("DequantizeLinear", [bq, b.scale(fix_point(b_op, b.subgraph)),
                                                  b.zero()], f"{b_op.name}_dq"))
    dw, dh = ints(op, "dilation", 2, [1, 1], b.subgraph)
    y = b.node("Conv", inputs, op.name, group=int(group), dilations=[dh, dw], **window_attrs(b, op))
    b.quantized(activation(b, op, y), op, True)


def _transposed_conv(b: Builder, op: Op) -> None:
    """transposed-conv2d-fix: as VART computes it, the input dilated by the stride (zeros between its pixels), padded
    by kernel - 1 - pad on each side and convolved with the weights as stored (OHWI), which is ONNX's ConvTranspose
    with the kernel flipped. The emulator runs ConvTranspose in float32 between its DequantizeLinear and QuantizeLinear,
    which is exact (and the one rounding is the QuantizeLinear's, DPU_ROUND under the dpu rules) while every sum fits
    float32's 24-bit significand: refused where it might not, and for a leaky relu (26/256 of the sum is not exact)."""
    where = named(b, op)
    x, nchw, fx = data_input(b, op)
    act = attr(where, op.attrs, "nonlinear", str, "NONE")
    if not nchw or act not in ("NONE", "RELU"):
        raise UnsupportedXmodelError(f"{where}: nonlinear {act!r} on a {'4-D' if nchw else 'non-4-D'} input (NONE and "
                                     f"RELU on a 4-D feature map are supported)")
    if len(op.output.shape) != 4:
        raise XmodelError(f"{where}: its output {list(op.output.shape)} is not a 4-D feature map")
    w_op = constant(b, op, "weights")
    if w_op is None:
        raise XmodelError(f"{where} has no weights")
    w = b.weights(w_op)
    kw, kh = ints(op, "kernel", 2, None, b.subgraph)
    sw, sh = ints(op, "stride", 2, [1, 1], b.subgraph)
    left, right, top, bottom = ints(op, "pad", 4, [0, 0, 0, 0], b.subgraph)
    channels_in = b.graph.ops[data_source(b, op)].output.shape[-1]
    want = (op.output.shape[-1], kh, kw, channels_in)
    if w.shape != want or min(sw, sh) < 1 or min(left, right, top, bottom) < 0:
        raise XmodelError(f"{where}: weights {list(w.shape)} (want {list(want)}), stride [{sw}, {sh}], pad "
                          f"[{left}, {right}, {top}, {bottom}]")
    fw = fix_point(w_op, b.subgraph)
    terms = channels_in * -(-kh // sh) * -(-kw // sw)  # the products one output sums, at most
    bias_op = constant(b, op, "bias")
    finer = 0 if bias_op is None else max(fix_point(bias_op, b.subgraph) - fx - fw, 0)
    if (terms << (14 + finer)) + 128 >= 1 << 24:  # |sum| in units of the finest fix point involved
        raise UnsupportedXmodelError(f"{where}: {terms} products a sum (with the bias {finer} bits finer) may pass "
                                     f"float32's exact range; the emulator has no integer transposed convolution")
    (_, h_in, w_in, _), (_, h, w_out, _) = b.graph.ops[data_source(b, op)].output.shape, op.output.shape
    if (h, w_out) != (sh * (h_in - 1) + kh - top - bottom, sw * (w_in - 1) + kw - left - right):
        raise XmodelError(f"{where}: output {list(op.output.shape)} is not what its input, kernel, stride and pad give")
    wt = w.transpose(3, 0, 1, 2)[:, :, ::-1, ::-1]  # OHWI -> ONNX's (in, out, h, w), flipped
    wd = b.node("DequantizeLinear", [b.const(np.ascontiguousarray(wt), f"{w_op.name}_w"), b.scale(fw),
                                     b.zero()], f"{w_op.name}_dq")
    inputs = [x, wd]
    if bias_op is not None:
        bias = b.weights(bias_op)
        if bias.shape != (want[0],):
            raise XmodelError(f"{where}: bias {bias_op.name!r} is {list(bias.shape)}, not [{want[0]}]")
        inputs.append(b.node("DequantizeLinear", [b.const(bias, f"{bias_op.name}_b"),
                                                  b.scale(fix_point(bias_op, b.subgraph)),
                                                  b.zero()], f"{bias_op.name}_dq"))
    y = b.node("ConvTranspose", inputs, op.name, kernel_shape=[kh, kw], strides=[sh, sw],
               pads=[top, left, bottom, right])
    b.quantized(activation(b, op, y), op, True)


def _pool(b: Builder, op: Op) -> None:
    x, _, _ = data_input(b, op)
    kind = attr(named(b, op), op.attrs, "type", str, "MAX")
    window = window_attrs(b, op)
    ceil = 1 if attr(named(b, op), op.attrs, "pad_mode", str, "FLOOR") == "CEIL" else 0
    if kind == "MAX":
        y = b.node("MaxPool", [x], op.name, ceil_mode=ceil, **window)
    elif kind == "AVG":
        y = b.node("AveragePool", [x], op.name, ceil_mode=ceil, count_include_pad=1, **window)
    else:
        raise UnsupportedXmodelError(f"op {op.name!r} (pool-fix) of subgraph {b.subgraph.name!r}: type {kind!r} "
                                     f"(MAX and AVG are supported)")
    b.quantized(y, op, True)


def _eltwise(b: Builder, op: Op) -> None:
    names = op.inputs.get("input", [])
    if len(names) < 2:
        raise XmodelError(f"op {op.name!r} (eltwise-fix) of subgraph {b.subgraph.name!r} has {len(names)} inputs")
    kind = attr(named(b, op), op.attrs, "type", str, "ADD")
    onnx_op = {"ADD": "Add", "MUL": "Mul"}.get(kind)
    if onnx_op is None:
        raise UnsupportedXmodelError(f"op {op.name!r} (eltwise-fix) of subgraph {b.subgraph.name!r}: type {kind!r} "
                                     f"(ADD and MUL are supported)")
    values = [b.dequantized(n, op) for n in names]
    y = values[0][0]
    for v in values[1:]:
        y = b.node(onnx_op, [y, v[0]], op.name)
    b.quantized(activation(b, op, y), op, values[0][1])


def _concat(b: Builder, op: Op) -> None:
    values = [b.dequantized(n, op) for n in op.inputs.get("input", [])]
    if not values:
        raise XmodelError(f"op {op.name!r} (concat-fix) of subgraph {b.subgraph.name!r} has no input")
    rank = len(op.output.shape)
    axis = attr(named(b, op), op.attrs, "axis", int, -1)
    if not isinstance(axis, int) or not -rank <= axis < rank:
        raise XmodelError(f"op {op.name!r} (concat-fix) of subgraph {b.subgraph.name!r}: axis {axis!r}")
    nchw = rank == 4
    axis %= rank
    if nchw:
        axis = TO_NHWC[axis]  # NHWC's axis a is NCHW's TO_NHWC[a]: 3 (C) -> 1
    b.quantized(b.node("Concat", [v[0] for v in values], op.name, axis=axis), op, nchw)


def _reshape(b: Builder, op: Op) -> None:
    name, nchw, fp = b.value(data_source(b, op), op)
    if nchw:
        name = b.node("Transpose", [name], f"{op.name}_nhwc", perm=TO_NHWC)
    shape = b.const(np.asarray(op.output.shape, np.int64), f"{op.name}_shape")
    y = b.node("Reshape", [name, shape], op.name)
    out_fp = fix_point(op, b.subgraph)
    if out_fp != fp:
        raise XmodelError(f"op {op.name!r} (reshape-fix) of subgraph {b.subgraph.name!r} changes the fix point "
                          f"({fp} -> {out_fp})")
    if len(op.output.shape) == 4:
        y = b.node("Transpose", [y], f"{op.name}_nchw", perm=TO_NCHW)
    b.values[op.name] = (y, len(op.output.shape) == 4, fp)


def _hard_sigmoid(b: Builder, op: Op) -> None:
    """hard-sigmoid-fix: (x * 2731 + 3 * 2731 * 2^hsigmoid_in) / 2^shift_hsigmoid, rounded once, which is the dpu rules'
    hard-sigmoid-fix (relu6(x + 3) * 2731 / 2^14) when hsigmoid_in is the input's fix point and shift_hsigmoid is
    14 plus the input's fix point less the output's, as vai_c_xir writes them."""
    x, nchw, fx = data_input(b, op)
    fy = fix_point(op, b.subgraph)
    where = named(b, op)
    hin = attr(where, op.attrs, "hsigmoid_in", int, fx)
    shift = attr(where, op.attrs, "shift_hsigmoid", int, 14 + fx - fy)
    if (hin, shift) != (fx, 14 + fx - fy):
        raise UnsupportedXmodelError(
            f"op {op.name!r} (hard-sigmoid-fix) of subgraph {b.subgraph.name!r}: hsigmoid_in {hin} and shift_hsigmoid "
            f"{shift} for fix points {fx} in and {fy} out (the DPU's are {fx} and {14 + fx - fy})")
    b.quantized(b.node("HardSigmoid", [x], op.name, alpha=1 / 6, beta=0.5), op, nchw)


def _upsample(b: Builder, op: Op) -> None:
    """upsample-fix NEAREST (align_corners and half_pixel_centers false: each output pixel copies input pixel
    floor(out * in / out_size)), to the output tensor's size: the values copied, then quantized at the output's fix
    point (the same integers when it is the input's)."""
    x, nchw, _ = data_input(b, op)
    where = named(b, op)
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


def _same(b: Builder, op: Op) -> None:
    """upload and download: the data moves between memories, its integers unchanged."""
    b.values[op.name] = b.value(data_source(b, op), op)


def _const(b: Builder, op: Op) -> None:
    """const-fix: read by the op that uses it (weights and biases in that op's layout)."""


#: The DPU op types taken, each with what makes it.
OPS: Dict[str, Callable[[Builder, Op], None]] = {
    "upload": _same, "download": _same, "const-fix": _const,
    "conv2d-fix": lambda b, op: _conv(b, op, False),
    "depthwise-conv2d-fix": lambda b, op: _conv(b, op, True),
    "pool-fix": _pool, "eltwise-fix": _eltwise, "concat-fix": _concat, "reshape-fix": _reshape,
    "upsample-fix": _upsample, "hard-sigmoid-fix": _hard_sigmoid, "transposed-conv2d-fix": _transposed_conv,
}


def boundary(graph: Graph, subgraph: Subgraph) -> Tuple[List[Op], List[Op]]:
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
    model's tensor record says (io_declarations.denoted_layouts)."""
    from onnx import TensorProto, helper

    vi = helper.make_tensor_value_info(name, TensorProto.INT8, list(shape))
    if len(shape) == 4:
        for d, mark in zip(vi.type.tensor_type.shape.dim, ("DATA_BATCH", "DATA_FEATURE", "DATA_FEATURE",
                                                            "DATA_CHANNEL")):
            d.denotation = mark
    return vi


def extra_tensors(graph: Graph, subgraph: Subgraph, extra: ExtraTensors) -> List[str]:
    """The ops whose tensors `extra` names ("all": every tensor the subgraph's ops compute, in graph order), each
    checked; ExtraOutputError naming an unknown one."""
    if extra is None:
        return []
    inside = set(subgraph.ops())
    computed = {op.output.name: name for name, op in graph.ops.items()
                if name in inside and op.type not in ("const-fix", "upload", "download")}
    if extra == "all":
        return list(computed.values())
    unknown = [t for t in extra if t not in computed]
    if unknown:
        few = ", ".join(repr(t) for t in list(computed)[:8])
        raise ExtraOutputError(f"subgraph {subgraph.name!r} computes no tensor {unknown[0]!r} (extra_outputs names the "
                          f"XIR tensors its ops write: {few}{' ...' if len(computed) > 8 else ''})")
    return [computed[t] for t in dict.fromkeys(extra)]


def _output(b: Builder, op: Op):
    """Makes `op`'s int8 value a graph output named by its XIR tensor, NHWC as stored."""
    from onnx import helper

    t = op.output
    x, nchw, fp = b.dequantized(op.name, op)
    if nchw:
        x = b.node("Transpose", [x], f"{t.name}_nhwc", perm=TO_NHWC)
    b.nodes.append(helper.make_node("QuantizeLinear", [x, b.scale(fp), b.zero()], [t.name], name=f"{t.name}_out"))
    return _value_info(t.name, t.shape)


def to_qdq(graph: Graph, subgraph: Subgraph, extra: ExtraTensors = None):
    """The onnx.ModelProto of DPU subgraph `subgraph` of `graph`: int8 inputs and outputs named by their XIR tensors,
    as stored (NHWC), recorded with their fix points as shifts, the QDQ float ops between them; after the outputs,
    the tensors `extra` names (extra_tensors)."""
    from onnx import helper

    b = Builder(graph, subgraph)
    ins, outs = boundary(graph, subgraph)
    if not ins or not outs:
        raise XmodelError(f"subgraph {subgraph.name!r} has {len(ins)} inputs and {len(outs)} outputs")
    graph_inputs = []
    for op in ins:
        t = op.output
        if t.data_type != "XINT" or t.bit_width != 8:
            raise XmodelError(f"subgraph {subgraph.name!r}: input tensor {t.name!r} is {t.type_name}; a DPU subgraph's "
                              f"inputs are xint8")
        graph_inputs.append(_value_info(t.name, t.shape))
        fp = fix_point(op, subgraph)
        b.values[op.name] = (t.name, False, fp)
        if len(t.shape) == 4:  # DQ -> Transpose -> Q: a move of the integers, which fixes the input's scale
            x, _, _ = b.dequantized(op.name, op)
            moved = b.node("Transpose", [x], f"{t.name}_nchw", perm=TO_NCHW)
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
    graph_outputs = [_output(b, op) for op in outs]
    chosen = extra_tensors(graph, subgraph, extra)
    graph_outputs += [_output(b, graph.ops[name]) for name in chosen if name not in {op.name for op in outs}]
    from ..io_declarations import IO_QUANTIZATION_KEY

    g = helper.make_graph(b.nodes, subgraph.name, graph_inputs, graph_outputs, b.inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="accel.compiler.xir")
    helper.set_model_props(model, {IO_QUANTIZATION_KEY: "shift"})  # fix points, as VART's runner gives them
    return model
