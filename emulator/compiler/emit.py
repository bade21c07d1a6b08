"""The last step: graph outputs made distinct and node-produced, dead nodes dropped, nodes sorted,
dtypes and shapes checked, layouts chosen, and the .accm tables built."""

from __future__ import annotations

import numpy as np

from . import accm
from .errors import CompileError
from .ir import Graph, Node, Value
from .op_params import ACT_RULE, ARITY, FLOAT32_ONLY_OPS

F32 = np.dtype(np.float32)
SPATIAL_OPS = frozenset({"conv", "convtranspose", "maxpool", "avgpool", "globalavgpool", "resize", "qconv",
                         "qavgpool", "qglobalavgpool"})


def check_contract(n: Node) -> None:
    """Raises CompileError if node n has inputs, outputs or an activation its op's contract (op_schema.py)
    does not take."""
    if n.op not in ARITY:
        raise CompileError(f"node '{n.name}': op {n.op} is not a runtime op")
    lo, hi, required, lo_out, hi_out = ARITY[n.op]
    if not lo <= len(n.inputs) <= (len(n.inputs) if hi is None else hi) or None in n.inputs[:required]:
        raise CompileError(f"node '{n.name}' (op {n.op}) has inputs {n.inputs}: the op takes {lo}"
                           f"{'' if hi == lo else ' or more' if hi is None else f' to {hi}'}, the first {required} "
                           f"present")
    if not lo_out <= len(n.outputs) <= hi_out:
        raise CompileError(f"node '{n.name}' (op {n.op}) has {len(n.outputs)} outputs: the op gives "
                           f"{lo_out}{'' if hi_out == lo_out else f' to {hi_out}'}")
    rule = ACT_RULE[n.op]
    if (rule == "none" and n.act != 0) or (rule == "function" and n.act == 0):
        raise CompileError(f"node '{n.name}' (op {n.op}): activation {n.act} (the op's activation rule: {rule})")


def fix_outputs(g: Graph) -> None:
    """Each graph output gets its own tensor, written by exactly one node (copies where needed)."""
    produced = {o for n in g.nodes for o in n.outputs}
    final, seen = [], set()
    for name in g.outputs:
        v = g.value(name)
        if name not in seen and v.is_const and name not in produced:
            if any(int(d) < 1 for d in v.shape):
                raise CompileError(f"unsupported empty output '{name}' (shape {tuple(v.shape)}): accel's tensors "
                                   f"have every dim >= 1")
            const = g.add_const(v.const, f"{name}_const")
            g.replace_uses(name, const)
            g.values[name] = Value(name, v.dtype, v.shape)
            g.nodes.insert(0, Node("copy", [const], [name], f"{name}_output_copy"))
            produced.add(name)
        elif name in seen or name in g.inputs:
            new = g.add_value(f"{name}_output" if name in g.inputs else f"{name}_dup", v.dtype, v.shape)
            g.nodes.append(Node("copy", [name], [new], f"{new}_copy"))
            produced.add(new)
            name = new
        final.append(name)
        seen.add(name)
    g.outputs = final


def _accel_dtype(v: Value) -> int:
    code = accm.dtype_code(v.dtype) if v.dtype is not None else None
    if code is None:
        raise CompileError(f"tensor '{v.name}' has dtype {v.dtype}, which accel does not support")
    return code


def build(g: Graph, frames=None, layouts=None, io_shifts: bool = False):
    """-> (tensors, nodes, inputs, outputs) for accm.write. `frames` names the graph inputs that are camera frames
    and their accel_image_format names (frame_inputs.py): uint8 NHWC tensors whose record says so. `layouts` gives
    the layout the model declares of some inputs and outputs (io_declarations.denoted_layouts); a 4-D input is NCHW
    otherwise. `io_shifts`: inputs and outputs quantized per tensor at 2^-k (k in 0..255), zero point 0, are
    recorded as shift k (io_declarations.io_shifts)."""
    frames = frames or {}
    layouts = layouts or {}
    fix_outputs(g)
    g.remove_dead()
    g.toposort()

    order: list[str] = []
    index: dict[str, int] = {}

    def add(name):
        if name is not None and name not in index:
            index[name] = len(order)
            order.append(name)

    for name in g.inputs:
        add(name)
    for n in g.nodes:
        for t in n.inputs + n.outputs:
            add(t)
    for name in g.outputs:
        add(name)

    # Each node's input and output counts and activation field as its op's contract gives them (the kernels
    # check the same at load: a compiler bug is a CompileError naming the node, not a refused file).
    for n in g.nodes:
        check_contract(n)
    # Dtypes: the float32-only ops are checked here; the others state their own rules, which their
    # kernels check at load.
    for n in g.nodes:
        if n.op not in FLOAT32_ONLY_OPS:
            continue
        for t in n.inputs + n.outputs:
            if t is None:
                continue
            v = g.value(t)
            if v.dtype != F32:
                raise CompileError(f"tensor '{t}' has dtype {v.dtype}, but the runtime computes in "
                                   f"float32 only (node '{n.name}', op {n.op})")
    # add .. max: float32, or (format 1.3) one integer dtype without a fused activation.
    for n in g.nodes:
        if n.op not in accm.INT_ARITH_OPS:
            continue
        dts = {g.value(t).dtype for t in n.inputs + n.outputs if t is not None}
        dt = next(iter(dts))
        if len(dts) != 1 or not (dt == F32 or dt.kind in "iu"):
            raise CompileError(f"node '{n.name}' (op {n.op}) computes on dtypes {sorted(map(str, dts))}: the "
                               f"runtime computes it in float32 or one integer dtype only")
        if dt != F32 and n.act != 0:
            raise CompileError(f"node '{n.name}' (op {n.op}): a fused activation on {dt} is not supported")

    nchw = {name for name in g.inputs if len(g.value(name).shape) == 4}
    for n in g.nodes:
        if n.op in SPATIAL_OPS:
            for t in (n.inputs[0], n.outputs[0]):
                if len(g.value(t).shape) == 4:
                    nchw.add(t)

    outputs = set(g.outputs)
    inputs = set(g.inputs)
    tensors = []
    for name in order:
        v = g.value(name)
        if len(v.shape) > accm.MAX_DIMS:
            raise CompileError(f"tensor '{name}' has rank {len(v.shape)} > {accm.MAX_DIMS}")
        if any(int(d) < 1 for d in v.shape):
            raise CompileError(f"unsupported empty tensor '{name}' (shape {tuple(v.shape)}): accel's tensors have "
                               f"every dim >= 1")
        if not 1 <= len(name.encode("utf-8")) <= accm.MAX_NAME_LENGTH or "\0" in name:
            raise CompileError(f"tensor name {name[:64]!r}... is empty, longer than "
                               f"{accm.MAX_NAME_LENGTH} bytes or contains NUL")
        if name in inputs:
            kind = accm.KIND_INPUT
        elif name in outputs:
            kind = accm.KIND_OUTPUT
        elif v.is_const:
            kind = accm.KIND_CONSTANT
        else:
            kind = accm.KIND_ACTIVATION
        q = v.quant
        shift = _shift(q) if io_shifts and kind in (accm.KIND_INPUT, accm.KIND_OUTPUT) else None
        if shift is not None:
            q = None
        tensors.append(accm.Tensor(
            name=name, dtype=_accel_dtype(v), kind=kind, dims=tuple(int(d) for d in v.shape),
            layout=accm.LAYOUT_NHWC if name in frames else layouts[name] if name in layouts and len(v.shape) == 4
            else accm.LAYOUT_NCHW if name in nchw else accm.LAYOUT_NONE,
            image_format=accm.IMAGE_FORMATS[frames[name]] if name in frames else 0,
            data=np.asarray(v.const, order="C") if kind == accm.KIND_CONSTANT else None,
            scales=None if q is None else q.scale, zero_points=None if q is None else q.zero_point,
            quant_axis=None if q is None else q.axis, shifts=None if shift is None else np.asarray([shift])))

    nodes = []
    for n in g.nodes:
        while n.inputs and n.inputs[-1] is None:  # trailing absent optional inputs are left out
            n.inputs.pop()
        nodes.append(accm.Node(
            op=accm.OPS[n.op], inputs=[None if t is None else index[t] for t in n.inputs],
            outputs=[index[t] for t in n.outputs], name=n.name, activation=int(n.act),
            act_alpha=float(n.alpha), act_beta=float(n.beta), ints=n.params.ints() if n.params else [],
            floats=n.params.floats() if n.params else []))
    return tensors, nodes, [index[t] for t in g.inputs], [index[t] for t in g.outputs]


def _shift(q) -> int | None:
    """k where quantization `q` is one scale 2^-k (k in 0..255) with zero point 0, else None."""
    if q is None or q.axis is not None:
        return None
    scale, zero = np.asarray(q.scale).reshape(-1), np.asarray(q.zero_point).reshape(-1)
    if scale.size != 1 or zero.size != 1 or zero[0] != 0 or not scale[0] > 0:
        return None
    mantissa, exponent = np.frexp(np.float64(scale[0]))
    k = 1 - int(exponent)  # scale = 0.5 * 2^exponent = 2^-k
    return k if mantissa == 0.5 and 0 <= k <= 255 else None
