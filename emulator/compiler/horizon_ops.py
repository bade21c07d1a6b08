"""Horizon's calibrated ONNX in (hb_mapper's / hb_compile's *_calibrated_model.onnx): its four publicly described ops,
in Horizon's domain "horizon", rewritten before import into what the compiler already reads (docs/quantization.md,
"Horizon's calibrated ONNX"); every other op of that domain is refused by name.

- HzCalibration (fake quantization): QuantizeLinear -> DequantizeLinear with its `scales`, per tensor or along
  `axis`, of `qtype` ("int8", "uint8"; "float32" passes the tensor on) or, in older files, `bits`, and `zero_point`
  (qtype uint8 is [0, 255] * scale: hbdk4 stores it as int8 with zero point -128, the same values). On a constant
  (a weight) the integers are computed here: the DequantizeLinear of an int8 constant, as quantize_static writes
  weights. `switch` "OFF" (the node not in effect) is the identity.
- HzPreprocess (the input normalization hb_mapper prepends): a convolution of stride 1 and no padding of its
  inputs x, w (1x1) and optional b, with `channel_group` groups, on NCHW.
- HzQuantize / HzDequantize: QuantizeLinear / DequantizeLinear with a constant scale and zero point (inputs 1 and 2),
  `bits` 8 and `axis`.
- A convolution whose input and weights both come from HzCalibration keeps a float bias in Horizon's file; the int8
  rules add an int32 one: the bias becomes int32 at scale s_x * s_w, rounded half to even (onnxruntime's quantizer's
  rule; Horizon does not publish the BPU's).

Where it was read: hbdk4's ONNX front end (HzCalibrationConvertor, HzPreprocessConvertor, HzQuantizeConvertor,
HzDequantizeConvertor) and hmct's ir/onnx_calibration_node.py (the attributes, their defaults, the domain).
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from . import quant
from .errors import CompileError

DOMAIN = "horizon"
READ = ("HzCalibration", "HzPreprocess", "HzQuantize", "HzDequantize")
# The ops of hb_mapper's *_quantized_model.onnx (and its .bin's BPU subgraphs): their integer semantics are not public.
QUANTIZED_PREFIXES = ("HzSQuantized", "HzQuantized", "HzSElementwise", "HzLut")
QTYPES = {"int8": np.dtype(np.int8), "uint8": np.dtype(np.uint8)}
WIDER = ("int16", "uint16", "int32", "float16")  # qtypes hbdk4 knows that the emulator's int8 ops do not hold
_DEFAULT_DOMAINS = ("", "ai.onnx")

__all__ = ["DOMAIN", "READ", "is_horizon", "rewrite"]


def is_horizon(node: onnx.NodeProto) -> bool:
    """Is the node one of Horizon's ops (its domain, or an Hz* op type in ONNX's, where older files put them)?"""
    return node.domain == DOMAIN or (node.domain in _DEFAULT_DOMAINS and node.op_type.startswith("Hz"))


def _qnode(op: str, inputs: list, output: str, name: str, axis) -> onnx.NodeProto:
    """A QuantizeLinear or DequantizeLinear node, per tensor (axis None) or along axis."""
    node = helper.make_node(op, inputs, [output], name=name)
    if axis is not None:
        node.attribute.append(helper.make_attribute("axis", int(axis)))
    return node


def _label(node: onnx.NodeProto) -> str:
    return f"{node.op_type} (node '{node.name or node.output[0]}')"


def _refusal(node: onnx.NodeProto) -> str:
    if node.op_type.startswith(QUANTIZED_PREFIXES):
        return (f"{_label(node)}: Horizon's quantized ONNX ops are not publicly described; compile the model's "
                f"*_calibrated_model.onnx instead")
    return (f"{_label(node)}: not one of the Horizon ops the compiler reads ({', '.join(READ)}: those of the "
            f"*_calibrated_model.onnx)")


def refused(model: onnx.ModelProto) -> list:
    """The messages of the model's Horizon ops that are not read, one per op type (the first node of it)."""
    seen: dict = {}
    for n in model.graph.node:
        if is_horizon(n) and n.op_type not in READ:
            seen.setdefault(n.op_type, _refusal(n))
    return list(seen.values())


def rewrite(model: onnx.ModelProto, strict: bool = True) -> onnx.ModelProto:
    """The model with its HzCalibration, HzPreprocess, HzQuantize and HzDequantize nodes rewritten (a copy; the model
    itself when it has none). strict: any other Horizon op is a CompileError naming each (else it is left in place,
    for coverage reports to list). Malformed attributes are a CompileError naming the node."""
    nodes = model.graph.node
    if not any(is_horizon(n) for n in nodes):
        return model
    if strict and refused(model):
        raise CompileError("Horizon ops the compiler does not read: " + "; ".join(refused(model)))
    out = onnx.ModelProto()
    out.CopyFrom(model)
    _Rewriter(out.graph).run()
    return out


class _Rewriter:
    def __init__(self, graph: onnx.GraphProto):
        self.graph = graph
        self.consts = {t.name: t for t in graph.initializer}
        self.names = set(self.consts) | {v.name for v in graph.input} | {o for n in graph.node for o in n.output}
        self.types = {v.name: v.type.tensor_type for v in list(graph.input) + list(graph.value_info)
                      + list(graph.output) if v.type.HasField("tensor_type")}
        self.bits: dict = {}    # HzQuantize output -> its integer dtype
        self.made: dict = {}    # DequantizeLinear output made here -> (scale, constant integers?)

    def run(self) -> None:
        new: list = []
        for n in self.graph.node:
            handler = getattr(self, f"_{n.op_type}", None) if is_horizon(n) and n.op_type in READ else None
            new.extend(handler(n) if handler else [n])
        new = [self._bias(n) for n in new]
        del self.graph.node[:]
        self.graph.node.extend(n for group in new for n in (group if isinstance(group, list) else [group]))

    # helpers

    def fresh(self, base: str) -> str:
        name, i = base, 0
        while name in self.names:
            i += 1
            name = f"{base}_{i}"
        self.names.add(name)
        return name

    def const(self, name: str):
        return numpy_helper.to_array(self.consts[name]) if name in self.consts else None

    def add_const(self, array: np.ndarray, base: str) -> str:
        name = self.fresh(base)
        t = numpy_helper.from_array(np.asarray(array), name)
        self.graph.initializer.append(t)
        self.consts[name] = t
        return name

    def shape(self, name: str):
        if name in self.consts:
            return tuple(self.consts[name].dims)
        t = self.types.get(name)
        if t is None or not t.HasField("shape"):
            return None
        dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
        return tuple(dims)

    @staticmethod
    def attrs(node: onnx.NodeProto) -> dict:
        out = {}
        for a in node.attribute:
            v = helper.get_attribute_value(a)
            out[a.name] = v.decode("utf-8", errors="replace") if isinstance(v, bytes) else v
        return out

    def axis_of(self, node, x: str, scales: np.ndarray, axis):
        """The ONNX axis of `scales` for tensor x (None: per tensor), checked against x's shape where it is known."""
        if scales.size == 1:
            return None
        if axis is None:
            raise CompileError(f"{_label(node)}: {scales.size} scales but no axis attribute: per-axis "
                               f"quantization needs the axis its scales run along")
        if not isinstance(axis, int):
            raise CompileError(f"{_label(node)}: axis {axis!r} is not an integer")
        shape = self.shape(x)
        if shape is not None:
            a = axis + len(shape) if axis < 0 else axis
            if not 0 <= a < len(shape):
                raise CompileError(f"{_label(node)}: axis {axis} is out of range for '{x}' of rank {len(shape)}")
            if shape[a] is not None and shape[a] != scales.size:
                raise CompileError(f"{_label(node)}: {scales.size} scales along axis {axis}, but '{x}' has "
                                   f"{shape[a]} there (shape {shape})")
        return axis

    @staticmethod
    def scales_of(node, values) -> np.ndarray:
        s = np.asarray(values if isinstance(values, (list, tuple)) else [values], dtype=np.float64).reshape(-1)
        if s.size == 0 or not np.all(np.isfinite(s)) or not np.all(s > 0):
            raise CompileError(f"{_label(node)}: every scale must be finite and > 0, got {s[:8].tolist()}")
        return s.astype(np.float32)

    def qdq(self, node, x: str, y: str, s: np.ndarray, z: np.ndarray, axis) -> list:
        """Q -> DQ of x into y (just the DQ of the integers when x is a constant)."""
        sname = self.add_const(s if axis is not None else s.reshape(()), f"{y}_scale")
        zname = self.add_const(z if axis is not None else z.reshape(()), f"{y}_zero_point")
        name = node.name or y
        w = self.const(x)
        if w is not None:
            q = quant.quantize(w.astype(np.float32), quant.make(s, z, axis, z.dtype, w.shape, _label(node)), z.dtype)
            qname = self.add_const(q, f"{x}_quantized")
            self.made[y] = (s, axis, True)
            return [_qnode("DequantizeLinear", [qname, sname, zname], y, name, axis)]
        t = self.fresh(f"{y}_quantized")
        self.made[y] = (s, axis, False)
        return [_qnode("QuantizeLinear", [x, sname, zname], t, f"{name}_quantize", axis),
                _qnode("DequantizeLinear", [t, sname, zname], y, name, axis)]

    # the four ops

    def _qtype(self, node, a: dict):
        """HzCalibration's integer dtype, or None for a float32 one (no quantization)."""
        if "qtype" in a:
            q = a["qtype"]
            if q == "float32":
                return None
            if q in QTYPES:
                return QTYPES[q]
            if q in WIDER:
                raise CompileError(f"{_label(node)}: qtype '{q}' is not supported: the emulator's quantized ops are "
                                   f"8-bit (int8, uint8)")
            raise CompileError(f"{_label(node)}: unknown qtype {q!r} (Horizon's are int8, uint8, int16, uint16, "
                               f"int32, float16, float32)")
        if "bits" in a:
            b = a["bits"]
            if not isinstance(b, int) or b not in (8, 16, 32):
                raise CompileError(f"{_label(node)}: bits {b!r} is not a width HzCalibration quantizes to "
                                   f"(8, 16 or 32)")
            if b != 8:
                raise CompileError(f"{_label(node)}: bits {b} is not supported: the emulator's quantized ops are "
                                   f"8-bit")
        return QTYPES["int8"]  # hmct's default

    def _HzCalibration(self, node) -> list:
        a = self.attrs(node)
        x, y = node.input[0], node.output[0]
        if a.get("switch", "ON") not in ("ON", "OFF"):
            raise CompileError(f"{_label(node)}: switch {a['switch']!r} is neither ON nor OFF")
        dtype = self._qtype(node, a)
        if a.get("switch", "ON") == "OFF" or dtype is None:
            return [helper.make_node("Identity", [x], [y], name=node.name)]
        if a.get("scales") is None:
            raise CompileError(f"{_label(node)}: no scales attribute (the calibration was not run, or the file "
                               f"keeps only thresholds)")
        s = self.scales_of(node, a["scales"])
        axis = self.axis_of(node, x, s, a.get("axis"))
        zp = a.get("zero_point", 0)
        zp = np.asarray(zp if isinstance(zp, (list, tuple)) else [zp], dtype=np.int64).reshape(-1)
        if dtype == QTYPES["uint8"] or zp.size == 0:
            zp = np.zeros(1, np.int64)  # as hbdk4: uint8 is [0, 255] * scale whatever zero_point says
        if np.any(zp != zp[0]):
            raise CompileError(f"{_label(node)}: zero points {zp[:8].tolist()} differ; Horizon's compiler takes one "
                               f"zero point per tensor")
        info = np.iinfo(dtype)
        if not info.min <= zp[0] <= info.max:
            raise CompileError(f"{_label(node)}: zero point {int(zp[0])} is outside {dtype}'s range")
        return self.qdq(node, x, y, s, np.full(s.size, zp[0], dtype), axis)

    def _HzPreprocess(self, node) -> list:
        a = self.attrs(node)
        if len(node.input) < 2 or not node.input[1]:
            raise CompileError(f"{_label(node)}: needs inputs x and w (and an optional bias)")
        group = a.get("channel_group")
        if not isinstance(group, int) or group < 1:
            raise CompileError(f"{_label(node)}: channel_group {group!r} must be an integer >= 1")
        layout = a.get("data_format", "NCHW")
        if layout != "NCHW":
            raise CompileError(f"{_label(node)}: data_format {layout!r} is not supported: the public description "
                               f"(hbdk4's front end) computes HzPreprocess on NCHW")
        wshape = self.shape(node.input[1])
        if wshape is not None and (len(wshape) != 4 or tuple(wshape[2:]) != (1, 1)):
            raise CompileError(f"{_label(node)}: weights of shape {wshape}: HzPreprocess is a 1x1 "
                               f"convolution")
        return [helper.make_node("Conv", list(node.input[:3]), [node.output[0]], name=node.name, group=group,
                                 strides=[1, 1], pads=[0, 0, 0, 0], dilations=[1, 1])]

    def _params(self, node, axis):
        """A constant scale and zero point (inputs 1 and 2) of HzQuantize / HzDequantize."""
        if len(node.input) < 2 or self.const(node.input[1]) is None:
            raise CompileError(f"{_label(node)}: the scale (input 1) must be a constant")
        s = self.scales_of(node, list(self.const(node.input[1]).reshape(-1)))
        z = np.zeros(s.size, np.int64)
        if len(node.input) > 2 and node.input[2]:
            zc = self.const(node.input[2])
            if zc is None:
                raise CompileError(f"{_label(node)}: the zero point (input 2) must be a constant")
            z = np.asarray(zc, np.int64).reshape(-1)
            if z.size != s.size:
                raise CompileError(f"{_label(node)}: {z.size} zero points for {s.size} scales")
        return s, z, self.axis_of(node, node.input[0], s, axis)

    def _HzQuantize(self, node) -> list:
        a = self.attrs(node)
        bits = a.get("bits", 8)
        if bits != 8:
            raise CompileError(f"{_label(node)}: bits {bits!r} is not supported: the emulator's quantized ops are "
                               f"8-bit")
        s, z, axis = self._params(node, a.get("axis"))
        if np.any(z < -128) or np.any(z > 127):
            raise CompileError(f"{_label(node)}: zero point {z[:8].tolist()} is outside int8's range")
        y = node.output[0]
        self.bits[y] = np.dtype(np.int8)
        shape = s.shape if axis is not None else ()
        sname = self.add_const(s.reshape(shape), f"{y}_scale")
        zname = self.add_const(z.astype(np.int8).reshape(shape), f"{y}_zero_point")
        return [_qnode("QuantizeLinear", [node.input[0], sname, zname], y, node.name, axis)]

    def _HzDequantize(self, node) -> list:
        a = self.attrs(node)
        s, z, axis = self._params(node, a.get("axis"))
        x, y = node.input[0], node.output[0]
        shape = s.shape if axis is not None else ()
        ins = [x, self.add_const(s.reshape(shape), f"{y}_scale")]
        if np.any(z != 0):
            dtype = self.bits.get(x)
            if dtype is None and x in self.types and self.types[x].elem_type:
                dtype = np.dtype(helper.tensor_dtype_to_np_dtype(self.types[x].elem_type))
            if dtype is None and self.const(x) is not None:
                dtype = self.const(x).dtype
            if dtype is None:
                raise CompileError(f"{_label(node)}: a zero point other than 0 on '{x}', whose integer type the "
                                   f"model does not say")
            ins.append(self.add_const(z.astype(dtype).reshape(shape), f"{y}_zero_point"))
        return [_qnode("DequantizeLinear", ins, y, node.name, axis)]

    # the bias

    def _bias(self, node):
        """A Conv fed by an HzCalibration'd input (one scale) and weights (constant) with a float constant bias:
        the bias as int32 at s_x * s_w, DequantizeLinear'd."""
        if node.op_type != "Conv" or node.domain not in _DEFAULT_DOMAINS or len(node.input) < 3 or not node.input[2]:
            return node
        x, w = (self.made.get(i) for i in node.input[:2])
        b = self.const(node.input[2])
        if x is None or w is None or b is None or x[0].size != 1 or not w[2] or b.dtype != np.float32 \
                or w[0].size not in (1, b.size):
            return node
        bs = (x[0].reshape(()) * w[0]).astype(np.float32)  # float32, as onnxruntime's quantizer multiplies them
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            r = np.rint(b.reshape(-1) / bs)
        if not np.all(np.isfinite(r)) or np.any(np.abs(r) > np.iinfo(np.int32).max):
            raise CompileError(f"{_label(node)}: bias '{node.input[2]}' does not fit int32 at the scale of its sum")
        axis = 0 if bs.size > 1 else None
        q = self.add_const(r.astype(np.int32).reshape(b.shape), f"{node.input[2]}_int32")
        sname = self.add_const(bs if axis is not None else bs.reshape(()), f"{node.input[2]}_scale")
        zname = self.add_const(np.zeros(bs.shape if axis is not None else (), np.int32), f"{node.input[2]}_zero")
        deq = self.fresh(f"{node.input[2]}_dequantized")
        dq = _qnode("DequantizeLinear", [q, sname, zname], deq, f"{node.name}_bias", axis)
        conv = onnx.NodeProto()
        conv.CopyFrom(node)
        conv.input[2] = deq
        return [dq, conv]
