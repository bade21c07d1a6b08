"""Which of a model's ops the compiler lowers, found before anything is lowered: a model that uses several ops
the compiler lacks is refused once, naming all of them, rather than at the first one; and `accel compile --check`
prints the whole report.

An op counts as supported when a lowering handler takes it (in its domain), or when every node of it is folded
at compile time (its inputs are all constants, or it is Shape or Size): those run in onnx's reference evaluator;
If, Scan and Loop are lowered by lower/control.py (an If's branches inlined, the loops unrolled), which refuses
what it cannot take where it meets it (branches of other shapes, a Loop's trip count computed at run time). Whether a
supported op's attributes, dtypes and shapes are supported is only known when it is lowered.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import declined, folding
from .errors import CompileError
from .importer import DEFAULT_DOMAINS

DOCS = "docs/ops.md lists the supported ops"


@dataclass(frozen=True)
class OpUse:
    """One op type of a model: how many live nodes use it, the first of them, and whether it compiles."""

    op: str
    domain: str
    nodes: int
    first: str          # the name of the first node (in graph order)
    folded: int         # nodes computed at compile time (all inputs constant)
    supported: bool

    @property
    def label(self) -> str:
        dom = f" (domain '{self.domain}')" if self.domain not in DEFAULT_DOMAINS else ""
        return f"'{self.op}'{dom}"

    @property
    def name(self) -> str:
        """The op as a model names it (Conv; Gelu (domain com.microsoft)): report()'s column."""
        return self.op if self.domain in DEFAULT_DOMAINS else f"{self.op} (domain {self.domain})"

    @property
    def where(self) -> str:
        return f"node '{self.first}'" if self.nodes == 1 else f"{self.nodes} nodes; the first '{self.first}'"

    @property
    def refusal(self) -> str:
        """The op and where it is, and why it is refused where that is a decision (declined.py)."""
        reason = declined.why(self.op)
        return f"{self.label} ({self.where}{f': {reason}' if reason else ''})"


class UnsupportedOpsError(CompileError):
    """A model that uses ops the compiler does not lower; `ops` are their OpUse rows, in graph order."""

    def __init__(self, ops: list):
        self.ops = list(ops)
        if len(ops) == 1:
            text = f"unsupported op {ops[0].refusal}"
        else:
            listed = ", ".join(u.refusal for u in ops)
            text = f"unsupported ops ({len(ops)}): {listed}"
        super().__init__(f"{text}; {DOCS}")


def lowerable(op: str, domain: str) -> bool:
    """A handler lowers `op` of `domain` (given runtime inputs)."""
    from .lower import DOMAIN_OPS, EXPANDED_OPS, HANDLERS, rewrites

    if op in folding.NONDETERMINISTIC_OPS:
        return False
    if op in EXPANDED_OPS or op in rewrites.REWRITES:
        return domain in DEFAULT_DOMAINS
    return op in HANDLERS and (domain in DEFAULT_DOMAINS or (domain, op) in DOMAIN_OPS)


def scan(nodes, constants) -> list:
    """OpUse rows, one per (op, domain) in order of first use, of `nodes` (objects with op, domain, name,
    inputs and outputs, in topological order); `constants` names the tensors known at compile time."""
    from .lower.control import INLINED

    known = set(constants) | {""}
    rows: dict = {}
    for n in nodes:
        default = n.domain in DEFAULT_DOMAINS
        folds = (default and n.op not in folding.NONDETERMINISTIC_OPS
                 and (all(i in known for i in n.all_inputs) or n.op in folding.SHAPE_OPS))
        inlined = default and n.op in INLINED
        if folds:
            known.update(o for o in n.outputs if o)
        r = rows.setdefault((n.op, n.domain), [n.name, 0, 0, 0])
        r[1] += 1
        r[2] += int(folds)
        r[3] += int(folds or inlined)
    return [OpUse(op, dom, count, first, folded, ok == count or lowerable(op, dom))
            for (op, dom), (first, count, folded, ok) in rows.items()]


def check(nodes, constants) -> None:
    """Raises UnsupportedOpsError naming every op of `nodes` the compiler does not support."""
    missing = [u for u in scan(nodes, constants) if not u.supported]
    if missing:
        raise UnsupportedOpsError(missing)


def of_model(model) -> list:
    """scan() of an ONNX model (a path, bytes or ModelProto) without fixing its input shapes: the live nodes
    (those a graph output depends on), constants from initializers and Constant nodes."""
    from .horizon_ops import rewrite
    from .importer import live_nodes, load, onnx_nodes

    proto = rewrite(load(model), strict=False)  # Horizon's calibrated ops as they compile; its others listed
    nodes, initializers = onnx_nodes(proto)
    return scan(live_nodes(nodes, proto.graph.output), initializers)


def of_subgraphs(model) -> list:
    """scan() of the nodes inside the subgraphs of a model's live nodes (If branches, Loop and Scan bodies), at any
    depth, counted together; the constants they may read are every graph's initializers. An If decided at compile
    time keeps one branch: these rows say what each branch holds, not whether the model compiles."""
    from .horizon_ops import rewrite
    from .importer import OnnxNode, live_nodes, load, onnx_nodes, subgraphs

    proto = rewrite(load(model), strict=False)
    top, _ = onnx_nodes(proto)
    graphs = [g for n in live_nodes(top, proto.graph.output) for g in subgraphs(n.proto)]
    nodes: list = []
    constants = {t.name for t in proto.graph.initializer}
    for g in graphs:  # grows as nested subgraphs are found
        constants.update(t.name for t in g.initializer)
        for k, p in enumerate(g.node):
            nodes.append(OnnxNode(p, k))
            graphs.extend(subgraphs(p))
    return scan(nodes, constants)


def report(rows) -> str:
    """A text table of scan() rows: op, nodes, folded, and whether it compiles; the unsupported ops last."""
    rows = sorted(rows, key=lambda u: not u.supported)
    width = max([len("op")] + [len(u.name) for u in rows])
    lines = [f"{'op':<{width}}  nodes  folded  supported"]
    for u in rows:
        state = "yes" if u.supported else f"NO (first: node '{u.first}')"
        lines.append(f"{u.name:<{width}}  {u.nodes:>5}  {u.folded:>6}  {state}")
    missing = [u for u in rows if not u.supported]
    total = sum(u.nodes for u in rows)
    if missing:
        lines.append(f"{len(missing)} of {len(rows)} op types ({sum(u.nodes for u in missing)} of {total} nodes) "
                     f"are not supported; {DOCS}")
    else:
        lines.append(f"every op is supported ({len(rows)} op type{'s' * (len(rows) != 1)}, {total} "
                     f"node{'s' * (total != 1)})")
    return "\n".join(lines)
