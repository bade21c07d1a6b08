"""Control flow, for a runtime that runs a fixed graph: an If whose condition is a constant (exporters emit them
on shapes and on options fixed at export) is replaced by the nodes of the branch it takes; one whose condition is
computed at run time runs both branches and selects each output (a `where`), where the branches give outputs of
one shape and dtype (a condition of a few integer or bool inputs alone is left to the caller, who can compile per
value of them: RunTimeConditionError); a Scan, whose length is its inputs' static scan axis, and a Loop of a
constant trip count whose condition stays true, are unrolled: their body's nodes once per iteration
(MAX_UNROLLED_NODES bounds the total). A Loop that may stop early is not supported."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from ..errors import CompileError, RunTimeConditionError
from ..importer import OnnxNode, sparse_to_dense, subgraphs
from .context import Ctx, normalize_axis, unsupported

#: The ops replaced by the nodes they run (the lowering loop inlines them instead of calling a handler).
INLINED = frozenset({"If", "Scan", "Loop"})
#: The most nodes an unrolled Scan or Loop may add: a bound on compile time and on the model's size.
MAX_UNROLLED_NODES = 50_000
#: The domain of the step that selects a run-time If's outputs once both branches are lowered (select()).
SELECT_DOMAIN = "accel.if_select"
#: The inputs a condition may come from alone and still be left to the caller (per-value compiles): flags, modes,
#: rates: integers and bools of at most _VALUE_ELEMENTS elements (each value compiles a model: data never does).
_VALUE_DTYPES = frozenset("iub")
_VALUE_ELEMENTS = 16


def inline(ctx: Ctx, node: OnnxNode) -> list:
    """The ONNX nodes that compute `node`'s outputs (an If, Scan or Loop)."""
    return {"If": taken_branch, "Scan": unrolled_scan, "Loop": unrolled_loop}[node.op](ctx, node)


def _graph_attr(node: OnnxNode, name: str) -> onnx.GraphProto:
    graph = node.attr(name)
    if not isinstance(graph, onnx.GraphProto):
        raise CompileError(f"{node.label}: attribute '{name}' is not a graph")
    return graph


def _body_nodes(ctx: Ctx, node: OnnxNode, graph: onnx.GraphProto, bound: dict, tag: str) -> tuple:
    """`graph`'s nodes as nodes of the main graph: its inputs read the names `bound` gives them, each tensor it
    makes (and its initializers) renamed apart from the graph's, node names under `tag`. -> (nodes, the names its
    outputs have)."""
    g = ctx.g
    rename = dict(bound)
    for init in graph.initializer:
        rename[init.name] = g.add_const(onnx.numpy_helper.to_array(init), f"{tag}/{init.name}")
    for sp in graph.sparse_initializer:
        rename[sp.values.name] = g.add_const(sparse_to_dense(sp), f"{tag}/{sp.values.name}")
    nodes = []
    for k, p in enumerate(graph.node):
        q = onnx.NodeProto()
        q.CopyFrom(p)
        for j, i in enumerate(q.input):
            q.input[j] = rename.get(i, i)
        for sub in subgraphs(q):
            rename_reads(sub, rename)
        for j, o in enumerate(q.output):
            if o:
                rename[o] = q.output[j] = g.names.new(o)
        q.name = f"{tag}/{p.name or f'{p.op_type}_{k}'}"
        nodes.append(OnnxNode(q, k))
    return nodes, [rename.get(o.name, o.name) for o in graph.output]


def _identity(src: str, dst: str, name: str) -> OnnxNode:
    return OnnxNode(helper.make_node("Identity", [src], [dst], name=name), 0)


def _graph_inputs_of(ctx: Ctx, name: str) -> set | None:
    """The graph inputs the tensor `name` of the main graph is computed from; None where the trace meets a tensor
    the model's nodes do not make (one made inside a branch, a loop body or a function body)."""
    producer = {o: n for n in ctx.imp.nodes for o in n.outputs if o}
    found, seen, todo = set(), set(), [name]
    while todo:
        t = todo.pop()
        if t in seen:
            continue
        seen.add(t)
        if t in ctx.g.inputs:
            found.add(t)
        elif t in producer:
            todo.extend(i for i in producer[t].all_inputs if i)
        elif t not in ctx.g.values or not ctx.g.values[t].is_const:
            return None
    return found


def _left_to_caller(ctx: Ctx, cond: str) -> list:
    """The inputs the condition comes from, where they are a few small integer or bool ones alone (a sample rate,
    a mode); else []."""
    inputs = sorted(_graph_inputs_of(ctx, cond) or ())
    small = all(ctx.g.values[i].dtype.kind in _VALUE_DTYPES and int(np.prod(ctx.g.values[i].shape)) <= _VALUE_ELEMENTS
                for i in inputs)
    return inputs if small else []


def both_branches(ctx: Ctx, node: OnnxNode) -> list:
    """An If deciding at run time: both branches' nodes, then a select step per output (select())."""
    flags = _left_to_caller(ctx, node.inputs[0])
    if flags:
        raise RunTimeConditionError(f"{node.label}: condition ('{node.inputs[0]}') must be a constant (after constant "
                                    f"folding): it comes from the inputs {', '.join(flags)} alone, flags or modes "
                                    f"that Device.load compiles the model per value of; both branches in one "
                                    f"compile are not supported for them", node.inputs[0], flags)
    nodes, outs = [], {}
    for which in ("then_branch", "else_branch"):
        branch = _graph_attr(node, which)
        if len(branch.output) != len(node.outputs):
            raise CompileError(f"{node.label}: {which} has {len(branch.output)} outputs, the node "
                               f"{len(node.outputs)}")
        body, outs[which] = _body_nodes(ctx, node, branch, {}, f"{node.name}/{which.split('_')[0]}")
        nodes += body
    for i, target in enumerate(node.outputs):
        if target:
            step = helper.make_node("Select", [node.inputs[0], outs["then_branch"][i], outs["else_branch"][i]],
                                    [target], name=f"{node.name}/select{i}", domain=SELECT_DOMAIN)
            nodes.append(OnnxNode(step, i))
    return ctx.queued(nodes)


def select(ctx: Ctx, node: OnnxNode) -> None:
    """A run-time If's output: `where` of the condition between the branches' outputs, which must have one shape
    and one dtype (an If may give either shape; a fixed graph cannot)."""
    cond, a, b = (ctx.input(node, i) for i in range(3))
    if cond.shape and int(np.prod(cond.shape)) != 1:
        raise CompileError(f"{node.label}: the condition has {int(np.prod(cond.shape))} elements, not one")
    if tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype:
        raise CompileError(str(unsupported(node, f"an If deciding at run time between outputs of other shapes or "
                                                 f"dtypes: then {a.dtype}{tuple(a.shape)}, else "
                                                 f"{b.dtype}{tuple(b.shape)}")))
    c = cond.name
    if cond.dtype != np.dtype(bool):
        c = ctx.g.add_value(f"{node.name}/bool", bool, cond.shape)
        ctx.emit("cast", [cond.name], [c], f"{node.name}/bool")
    if len(cond.shape) > len(a.shape):  # a [1] condition selecting scalars: where's operands are of Y's rank or less
        c = ctx.reshape_temp(c, (), f"{node.name}/scalar", f"{node.name}/scalar")
    ctx.define(node.outputs[0], a.dtype, a.shape)
    ctx.emit("where", [c, a.name, b.name], [node.outputs[0]], node.name)


def taken_branch(ctx: Ctx, node: OnnxNode) -> list:
    """An If of a constant condition: its taken branch, then an Identity per output (both branches and a select
    where the condition is computed at run time)."""
    cond = ctx.input(node, 0)
    if not cond.is_const:
        return both_branches(ctx, node)
    if cond.const.size != 1:
        raise CompileError(f"{node.label}: the condition has {cond.const.size} elements, not one")
    which = "then_branch" if bool(cond.const.reshape(-1)[0]) else "else_branch"
    branch = _graph_attr(node, which)
    if len(branch.output) != len(node.outputs):
        raise CompileError(f"{node.label}: {which} has {len(branch.output)} outputs, the node {len(node.outputs)}")
    nodes, outs = _body_nodes(ctx, node, branch, {}, node.name)
    nodes += [_identity(src, target, f"{node.name}/output{i}")
              for i, (src, target) in enumerate(zip(outs, node.outputs)) if target]
    return ctx.queued(nodes)


def _check_size(node: OnnxNode, iterations: int, body: onnx.GraphProto) -> None:
    if iterations * max(len(body.node), 1) > MAX_UNROLLED_NODES:
        raise CompileError(str(unsupported(node, f"{iterations} iterations of {len(body.node)} nodes (unrolled, past "
                                                 f"{MAX_UNROLLED_NODES} nodes)")))


class _Emitter:
    """Small ONNX nodes the unrolled loops need (the index of one step, stacking the steps' outputs), at the
    model's opset."""

    def __init__(self, ctx: Ctx, node: OnnxNode):
        self.ctx, self.node = ctx, node
        self.nodes: list = []

    def add(self, op, inputs, outputs=None, **attrs):
        outputs = outputs or [self.ctx.g.names.new(f"{self.node.name}/{op.lower()}")]
        name = f"{self.node.name}/{op}_{len(self.nodes)}"
        self.nodes.append(OnnxNode(helper.make_node(op, inputs, outputs, name=name, **attrs), 0))
        return outputs[0]

    def const(self, value, hint) -> str:
        return self.ctx.g.add_const(np.asarray(value, np.int64), f"{self.node.name}/{hint}")

    def step(self, x: str, axis: int, t: int) -> str:
        """x's slice t along axis, without that axis."""
        return self.add("Gather", [x, self.const(t, "t")], axis=axis)

    def stack(self, parts: list, axis: int, out: str) -> None:
        """The parts (of one shape) stacked along a new axis `axis` into `out`."""
        if self.ctx.opset >= 13:
            wide = [self.add("Unsqueeze", [p, self.const([axis], "axis")]) for p in parts]
        else:
            wide = [self.add("Unsqueeze", [p], axes=[axis]) for p in parts]
        if len(wide) == 1:
            self.add("Identity", wide, [out])
        else:
            self.add("Concat", wide, [out], axis=axis)


def unrolled_scan(ctx: Ctx, node: OnnxNode) -> list:
    """Scan (opset 9 on): its body once per step of the scan axis, the states carried from step to step, each
    scan output the steps' outputs stacked along its axis (reversed where its direction is 1)."""
    if ctx.opset < 9:
        raise CompileError(str(unsupported(node, "Scan before opset 9 (batched, with sequence_lens)")))
    body = _graph_attr(node, "body")
    m = node.attr("num_scan_inputs")
    if m is None or not 1 <= m <= len(node.inputs):
        raise CompileError(f"{node.label}: num_scan_inputs {m} is not within 1..{len(node.inputs)}")
    n = len(node.inputs) - m
    if len(body.input) != n + m or len(body.output) < n or len(node.outputs) != len(body.output):
        raise CompileError(f"{node.label}: the body's {len(body.input)} inputs and {len(body.output)} outputs do not "
                           f"fit the node's {len(node.inputs)} inputs and {len(node.outputs)} outputs")
    k = len(body.output) - n
    in_axes = list(node.attr("scan_input_axes") or [0] * m)
    in_dirs = list(node.attr("scan_input_directions") or [0] * m)
    out_axes = list(node.attr("scan_output_axes") or [0] * k)
    out_dirs = list(node.attr("scan_output_directions") or [0] * k)
    if len(in_axes) != m or len(in_dirs) != m or len(out_axes) != k or len(out_dirs) != k:
        raise CompileError(f"{node.label}: scan axes or directions do not have one entry per scan input and output")
    xs = [ctx.input(node, n + j) for j in range(m)]
    axes = [normalize_axis(node, a, len(x.shape)) for a, x in zip(in_axes, xs)]
    lengths = {int(x.shape[a]) for x, a in zip(xs, axes)}
    if len(lengths) != 1:
        raise CompileError(f"{node.label}: the scan inputs' lengths differ: {sorted(lengths)}")
    steps = lengths.pop()
    _check_size(node, steps, body)
    e = _Emitter(ctx, node)
    states = [node.inputs[i] for i in range(n)]
    outs: list = [[] for _ in range(k)]
    for t in range(steps):
        bound = {body.input[i].name: states[i] for i in range(n)}
        for j in range(m):
            bound[body.input[n + j].name] = e.step(xs[j].name, axes[j], steps - 1 - t if in_dirs[j] else t)
        nodes, results = _body_nodes(ctx, node, body, bound, f"{node.name}/{t}")
        e.nodes += nodes
        states = results[:n]
        for j in range(k):
            outs[j].append(results[n + j])
    for i, target in enumerate(node.outputs[:n]):
        if target:
            e.add("Identity", [states[i]], [target])
    for j, target in enumerate(node.outputs[n:]):
        if target:
            parts = outs[j][::-1] if out_dirs[j] else outs[j]
            e.stack(parts, out_axes[j], target)
    return ctx.queued(e.nodes)


def _always_true(body: onnx.GraphProto, cond_in: str) -> bool:
    """The body's condition output is its condition input passed on, or a constant true."""
    out = body.output[0].name
    if out == cond_in:
        return True
    for p in body.node:
        if out in p.output:
            if p.op_type == "Identity":
                return p.input[0] == cond_in
            value = next((a for a in p.attribute if a.name == "value"), None) if p.op_type == "Constant" else None
            return value is not None and bool(np.all(onnx.numpy_helper.to_array(value.t)))
    init = next((x for x in body.initializer if x.name == out), None)
    return init is not None and bool(np.all(onnx.numpy_helper.to_array(init)))


def unrolled_loop(ctx: Ctx, node: OnnxNode) -> list:
    """Loop of a constant trip count whose condition is true and stays true (the body passes it on, as exporters
    write a for loop): the body once per iteration, the loop-carried values carried, each scan output the
    iterations' outputs stacked along axis 0."""
    body = _graph_attr(node, "body")
    trip = ctx.input(node, 0) if len(node.inputs) > 0 and node.inputs[0] else None
    cond = ctx.input(node, 1) if len(node.inputs) > 1 and node.inputs[1] else None
    if trip is None:
        raise CompileError(str(unsupported(node, "no trip count (a loop that stops on its condition alone)")))
    if not trip.is_const:
        raise RunTimeConditionError(f"{node.label}: trip count ('{node.inputs[0]}') must be a constant (after constant "
                                    f"folding): a Loop is unrolled, and one whose trip count is computed at run time "
                                    f"is not supported", node.inputs[0], _left_to_caller(ctx, node.inputs[0]))
    if cond is not None and not cond.is_const:
        raise RunTimeConditionError(f"{node.label}: condition ('{node.inputs[1]}') must be a constant (after constant "
                                    f"folding): a Loop is unrolled, and one that may not start is not supported",
                                    node.inputs[1], _left_to_caller(ctx, node.inputs[1]))
    if cond is not None and not np.all(cond.const):
        raise CompileError(str(unsupported(node, "a condition that is false before the first iteration")))
    n = len(node.inputs) - 2
    if len(body.input) != n + 2 or len(body.output) < n + 1:
        raise CompileError(f"{node.label}: the body's {len(body.input)} inputs and {len(body.output)} outputs do not "
                           f"fit the node's {len(node.inputs)} inputs")
    if not _always_true(body, body.input[1].name):
        raise CompileError(str(unsupported(node, "a condition the body computes (the loop may stop early)")))
    iterations = int(np.asarray(trip.const).reshape(-1)[0])
    if iterations < 1:
        raise CompileError(str(unsupported(node, f"{iterations} iterations (its outputs would be empty)")))
    _check_size(node, iterations, body)
    k = len(body.output) - 1 - n
    e = _Emitter(ctx, node)
    carried = [node.inputs[2 + i] for i in range(n)]
    true = ctx.g.add_const(np.array(True), f"{node.name}/true")
    outs: list = [[] for _ in range(k)]
    for t in range(iterations):
        bound = {body.input[0].name: e.const(t, "iteration"), body.input[1].name: true}
        bound.update({body.input[2 + i].name: carried[i] for i in range(n)})
        nodes, results = _body_nodes(ctx, node, body, bound, f"{node.name}/{t}")
        e.nodes += nodes
        carried = results[1:1 + n]
        for j in range(k):
            outs[j].append(results[1 + n + j])
    for i, target in enumerate(node.outputs[:n]):
        if target:
            e.add("Identity", [carried[i]], [target])
    for j, target in enumerate(node.outputs[n:]):
        if target:
            e.stack(outs[j], 0, target)
    return ctx.queued(e.nodes)


def rename_reads(graph: onnx.GraphProto, rename: dict) -> None:
    """The outer-scope names a nested subgraph reads, renamed as its enclosing branch's tensors were."""
    local = {x.name for x in graph.input} | {x.name for x in graph.initializer}
    for n in graph.node:
        for j, i in enumerate(n.input):
            if i not in local and i in rename:
                n.input[j] = rename[i]
        for sub in subgraphs(n):
            rename_reads(sub, {k: v for k, v in rename.items() if k not in local})
        local.update(n.output)
    for o in graph.output:
        if o.name not in local and o.name in rename:
            o.name = rename[o.name]
