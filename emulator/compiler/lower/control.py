"""Control flow whose path is known at compile time: an If whose condition is a constant (exporters emit them
on shapes and on options fixed at export) is replaced by the nodes of the branch it takes. An If that decides
at run time, Loop and Scan are not supported (the runtime runs a fixed graph)."""

from __future__ import annotations

import onnx
from onnx import helper

from ..errors import CompileError, RunTimeConditionError
from ..importer import OnnxNode, sparse_to_dense, subgraphs
from .context import Ctx, unsupported

#: The ops replaced by the nodes they run (the lowering loop inlines them instead of calling a handler).
INLINED = frozenset({"If"})


def taken_branch(ctx: Ctx, node: OnnxNode) -> list:
    """The ONNX nodes that compute `node`'s outputs (an If of a constant condition): its taken branch, each
    tensor the branch makes renamed apart from the graph's, then an Identity per output. Their inputs are
    added to what the model uses."""
    cond = ctx.input(node, 0)
    if not cond.is_const:
        raise RunTimeConditionError(str(unsupported(node, "condition computed at run time (control flow)")),
                                    node.inputs[0])
    if cond.const.size != 1:
        raise CompileError(f"{node.label}: the condition has {cond.const.size} elements, not one")
    which = "then_branch" if bool(cond.const.reshape(-1)[0]) else "else_branch"
    branch = node.attr(which)
    if not isinstance(branch, onnx.GraphProto):
        raise CompileError(f"{node.label}: attribute '{which}' is not a graph")
    if len(branch.output) != len(node.outputs):
        raise CompileError(f"{node.label}: {which} has {len(branch.output)} outputs, the node {len(node.outputs)}")
    g = ctx.g
    rename: dict = {}
    for init in branch.initializer:
        rename[init.name] = g.add_const(onnx.numpy_helper.to_array(init), f"{node.name}/{init.name}")
    for sp in branch.sparse_initializer:
        rename[sp.values.name] = g.add_const(sparse_to_dense(sp), f"{node.name}/{sp.values.name}")
    nodes = []
    for k, p in enumerate(branch.node):
        q = onnx.NodeProto()
        q.CopyFrom(p)
        for j, i in enumerate(q.input):
            q.input[j] = rename.get(i, i)
        for sub in subgraphs(q):
            rename_reads(sub, rename)
        for j, o in enumerate(q.output):
            if o:
                rename[o] = q.output[j] = g.names.new(o)
        q.name = f"{node.name}/{p.name or f'{p.op_type}_{k}'}"
        nodes.append(OnnxNode(q, k))
    for i, (out, target) in enumerate(zip(branch.output, node.outputs)):
        if target:
            src = rename.get(out.name, out.name)
            nodes.append(OnnxNode(helper.make_node("Identity", [src], [target], name=f"{node.name}/output{i}"), i))
    for n in nodes:
        ctx.used.update(i for i in n.all_inputs if i)
    return nodes


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
