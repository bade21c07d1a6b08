"""Graph clean-up and fusion: copy chains collapse, same-shape copies (Identity, Dropout, no-op
Reshape) disappear, patterns of several nodes become one (a decomposed layer norm, Sigmoid(x) * x),
and an activation fuses into the conv / gemm / matmul / elementwise / reduce / layernorm node that
produces its input when that output has no other consumer and is not a graph output."""

from __future__ import annotations

import numpy as np

from .op_params import ACTIVATIONS, FUSED_ACTIVATION_OPS, LayerNorm, LayerNormArithmetic, ReduceFn
from .ir import Graph, Node
from .lower.normalization import expand_norm_const

# The ops whose activation rule is "fused" (op_schema.py): groupnorm for GroupNormalization /
# InstanceNormalization + SiLU (diffusion UNets), say. (qactivation's is too, but it never produces the
# float32 input of an activation node.)
FUSABLE = FUSED_ACTIVATION_OPS


def _drop(g: Graph, removed: set) -> None:
    g.nodes = [n for n in g.nodes if id(n) not in removed]


def simplify_copies(g: Graph) -> None:
    outputs = set(g.outputs)
    producers, consumers = g.producers(), g.consumers()
    removed = set()

    # copy(copy(a)) -> copy(a) when the middle tensor has no other use.
    for c in g.nodes:
        if c.op != "copy":
            continue
        x = c.inputs[0]
        p = producers.get(x)
        if p is not None and p.op == "copy" and x not in outputs and len(consumers[x]) == 1:
            a = p.inputs[0]
            c.inputs = [a]
            removed.add(id(p))
            del producers[x]
            consumers[a] = [c if n is p else n for n in consumers[a]]

    # Same-shape copies vanish: their consumers read the source (or the source's producer writes
    # the graph output directly).
    for c in g.nodes:
        if c.op != "copy" or id(c) in removed:
            continue
        x, y = c.inputs[0], c.outputs[0]
        vx, vy = g.value(x), g.value(y)
        if tuple(vx.shape) != tuple(vy.shape) or vx.dtype != vy.dtype:
            continue
        users_x = [n for n in consumers.get(x, []) if n is not c]
        if y not in outputs:
            for n in consumers.get(y, []):
                n.inputs = [x if i == y else i for i in n.inputs]
            consumers[x] = users_x + consumers.pop(y, [])
            producers.pop(y, None)
            removed.add(id(c))
            continue
        p = producers.get(x)
        if p is not None and x not in outputs and x not in g.inputs:
            p.outputs = [y if o == x else o for o in p.outputs]
            for n in users_x:
                n.inputs = [y if i == x else i for i in n.inputs]
            consumers[y] = consumers.get(y, []) + users_x
            consumers.pop(x, None)
            producers.pop(x, None)
            producers[y] = p
            removed.add(id(c))
    _drop(g, removed)


SIGMOID, SILU, SQRT, POW = (ACTIVATIONS[k] for k in ("sigmoid", "silu", "sqrt", "pow"))


class _Uses:
    """Who produces and who reads each tensor, for pattern matching."""

    def __init__(self, g: Graph):
        self.g = g
        self.outputs = set(g.outputs)
        self.producers = g.producers()
        self.consumers = g.consumers()

    def only_user(self, t):
        """The node that reads t when t is an intermediate read once, by one node; else None."""
        users = self.consumers.get(t, [])
        return users[0] if len(users) == 1 and t not in self.outputs else None

    def const_operand(self, node, x):
        """The constant array that binary `node` combines with x (x first for sub and div), or None."""
        a, b = node.inputs
        if node.op in ("add", "mul") and b == x:
            a, b = b, a
        if a != x or b == x or not self.g.is_const(b):
            return None
        return self.g.value(b).const


def _replace(g: Graph, matched: list, new: Node) -> set:
    """new takes the place of the last matched node (its inputs are all earlier); the rest go."""
    g.nodes[next(i for i, n in enumerate(g.nodes) if n is matched[-1])] = new
    return {id(n) for n in matched[:-1]}


def _is_times_one(u: _Uses, node, x) -> bool:
    if node.op != "mul" or node.act:
        return False
    c = u.const_operand(node, x)
    return c is not None and bool(np.all(c == 1)) and u.g.value(node.outputs[0]).shape == u.g.value(x).shape


def fuse_silu(g: Graph) -> None:
    """mul(x, sigmoid(x)), either operand order, becomes activation silu(x) when the sigmoid's output
    is read by that mul alone; also with the sigmoid of x * 1 (swish with beta 1, as Paddle exports)."""
    u = _Uses(g)
    removed: set[int] = set()  # id() of the nodes taken out
    for m in g.nodes:
        if m.op != "mul" or m.act or id(m) in removed:
            continue
        for k in (1, 0):
            sig, x = m.inputs[k], m.inputs[1 - k]
            s = u.producers.get(sig)
            if s is None or s.op != "activation" or s.act != SIGMOID or u.only_user(sig) is not m:
                continue
            gone = [s]
            if s.inputs[0] != x:
                p = u.producers.get(s.inputs[0])
                if p is None or u.only_user(s.inputs[0]) is not s or not _is_times_one(u, p, x):
                    continue
                gone.append(p)
            if g.value(m.outputs[0]).shape != g.value(x).shape:
                continue
            m.op, m.inputs, m.act, m.alpha, m.beta = "activation", [x], SILU, 0.0, 0.0
            removed.update(id(n) for n in gone)
            break
    _drop(g, removed)


def _suffix_axis(mask: int, rank: int):
    """The first axis when the reduce mask covers exactly the axes from it to the last, else None."""
    for axis in range(rank):
        if mask == (1 << rank) - (1 << axis):
            return axis
    return None


def _is_square_of(node, d) -> bool:
    if node.op == "activation":
        return node.act == POW and node.alpha == 2.0 and node.inputs == [d]
    return node.op == "mul" and not node.act and node.inputs == [d, d]


def _mean_mask(g: Graph, node):
    """The axes bit mask a mean node (reduce, or globalavgpool: every axis after the second) averages
    over, or None if node is not a mean without fused activation."""
    if node is None or node.act:
        return None
    if node.op == "reduce" and node.params.function == ReduceFn.MEAN:
        return int(node.params.axes_mask)
    if node.op == "globalavgpool":
        rank = len(g.value(node.inputs[0]).shape)
        return (1 << rank) - (1 << 2)
    return None


def _match_layernorm(u: _Uses, r1):
    """The nodes of (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) [* S] [+ B] over the last axes
    starting at reduce r1, each intermediate read only inside the pattern, and the layernorm node
    that replaces them; None if r1 does not start one."""
    g = u.g
    x = r1.inputs[0]
    shape = g.value(x).shape
    mask = _mean_mask(g, r1)
    axis = None if mask is None else _suffix_axis(mask, len(shape))
    if axis is None:
        return None
    sub = u.only_user(r1.outputs[0])
    if sub is None or sub.op != "sub" or sub.act or sub.inputs != [x, r1.outputs[0]]:
        return None
    d = sub.outputs[0]
    users = u.consumers.get(d, [])
    distinct = list({id(n): n for n in users}.values())
    if d in u.outputs or len(distinct) != 2:
        return None
    sq = next((n for n in distinct if _is_square_of(n, d)), None)
    div = next((n for n in distinct if n.op == "div" and not n.act and n.inputs[0] == d), None)
    if sq is None or div is None or len(users) != (3 if sq.op == "mul" else 2):
        return None
    r2 = u.only_user(sq.outputs[0])
    if r2 is None or _mean_mask(g, r2) != mask or r2.inputs != [sq.outputs[0]]:
        return None
    add = u.only_user(r2.outputs[0])
    if add is None or add.op != "add" or add.act not in (0, SQRT):
        return None
    eps = u.const_operand(add, r2.outputs[0])
    if eps is None or eps.size != 1 or g.value(add.outputs[0]).shape != g.value(r2.outputs[0]).shape:
        return None
    eps = float(np.asarray(eps, np.float64).reshape(()))
    matched = [r1, sub, sq, r2, add]
    root = add.outputs[0]
    if add.act != SQRT:
        sqrt = u.only_user(root)
        if sqrt is None or sqrt.op != "activation" or sqrt.act != SQRT:
            return None
        matched.append(sqrt)
        root = sqrt.outputs[0]
    if not (eps > 0 and np.isfinite(eps)) or u.only_user(root) is not div or div.inputs != [d, root]:
        return None
    if g.value(div.outputs[0]).shape != shape:
        return None
    matched.append(div)
    norm_shape = tuple(shape[axis:])
    params: dict[str, np.ndarray | None] = {"mul": None, "add": None}
    for op in ("mul", "add"):  # the scale, then the bias, each optional
        y = matched[-1].outputs[0]
        nxt = u.only_user(y)
        if nxt is None or nxt.op != op or nxt.act or g.value(nxt.outputs[0]).shape != shape:
            continue
        c = u.const_operand(nxt, y)
        full = None if c is None else expand_norm_const(c, norm_shape)
        if full is not None:
            params[op] = full
            matched.append(nxt)
    scale = params["mul"] if params["mul"] is not None else np.ones(norm_shape, np.float32)
    inputs = [x, g.add_const(scale, f"{r1.name or x}_ln_scale")]
    if params["add"] is not None:
        inputs.append(g.add_const(params["add"], f"{r1.name or x}_ln_bias"))
    # onnxruntime's own graph optimizer fuses the ReduceMean, Sub, Pow, ..., Div, Mul, Add form (scale and bias both
    # there) into its LayerNormalization kernel at its default level: that kernel's rounding then, bit for bit; the
    # centered arithmetic for the forms it leaves as separate ops.
    ort_form = (sq.op != "mul" and r1.op == "reduce" and r2.op == "reduce" and params["mul"] is not None
                and params["add"] is not None)
    arith = LayerNormArithmetic.ONNXRUNTIME if ort_form else LayerNormArithmetic.CENTERED
    new = Node("layernorm", inputs, [matched[-1].outputs[0]], r1.name,
               params=LayerNorm(axis=axis, epsilon=eps, arithmetic=arith, outputs=0))
    return matched, new


def fuse_layernorm(g: Graph) -> None:
    """A layer norm written out as ReduceMean, Sub, Pow 2 (or Mul by itself), ReduceMean, Add eps,
    Sqrt, Div, then optionally Mul by a constant scale and Add a constant bias (PyTorch before opset
    17, Paddle) becomes one layernorm node, when the means are over the same last axes and no
    intermediate is read elsewhere or is a graph output."""
    u = _Uses(g)
    removed = set()
    for r1 in list(g.nodes):
        if r1.op not in ("reduce", "globalavgpool") or id(r1) in removed:
            continue
        match = _match_layernorm(u, r1)
        if match is not None:
            removed |= _replace(g, *match)
    _drop(g, removed)


def fuse_activations(g: Graph) -> None:
    """Activations into their producers. Run after fuse_layernorm and fuse_silu (whose parts must still
    be separate nodes), so that a SiLU they found goes into the conv that produces x."""
    outputs = set(g.outputs)
    producers, consumers = g.producers(), g.consumers()
    removed = set()
    for a in g.nodes:
        if a.op != "activation":
            continue
        chain = []
        cur = a.inputs[0]
        target = None
        while cur not in outputs and len(consumers.get(cur, [])) == 1:
            p = producers.get(cur)
            if p is None:
                break
            if p.op == "copy":  # elementwise functions commute with reshapes
                chain.append(p)
                cur = p.inputs[0]
                continue
            if p.op in FUSABLE and p.act == 0:
                target = p
            break
        if target is None:
            continue
        target.act, target.alpha, target.beta = a.act, a.alpha, a.beta
        last = chain[0] if chain else target
        last.outputs = [a.outputs[0]]
        producers[a.outputs[0]] = last
        producers.pop(a.inputs[0], None)
        consumers.pop(a.inputs[0], None)
        removed.add(id(a))
    _drop(g, removed)
