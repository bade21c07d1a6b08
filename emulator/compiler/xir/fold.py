"""The quantizer's graph (vai_q's ``*_int.xmodel``: float ops, a ``fix`` op after every quantized tensor, weights
already on their 2^-fix_point grid) folded into the compiled form that to_qdq reads, as vai_c_xir folds it before it
optimizes anything: a data op and its fix become a data-fix, a const and its fix a const-fix (the int8 values in its
``data``), and each op with the activation after it and the fix that ends them one ``*-fix`` op with that
``nonlinear``. The folded op takes the float op's name and the fix's tensor, as vai_c_xir names them (checked on
public compiled files), so the two files' tensors pair up by name in ``accel compare``.

The DPU's arithmetic that the quantizer writes as float ops is folded only where it is the DPU's: an average pool
times the DPU's coefficient for its kernel (dpu_avg_coefficient), a hard sigmoid times 6 * 2731 / 2^14, a leaky
relu's slope 26/256. Ops no fix follows, and every op after them, are the CPU's (as vai_c_xir places them): they are
not run, and the folded graph's outputs are the quantized tensors they read, or that nothing reads.
"""
from __future__ import annotations

import math
from typing import Dict, List, Optional, Set, Tuple

import numpy as np

from .dpu_builder import FIX_POINT_LIMIT, LEAKY_ALPHA
from .reader import Graph, Op, Subgraph, Tensor, UnsupportedXmodelError, XmodelError, attr

__all__ = ["HARD_SIGMOID_SCALE", "dpu_avg_coefficient", "fold", "is_quantized"]

#: The factor the quantizer multiplies its hard sigmoid (relu6(x + 3) / 6) by: the DPU's 2731 / 2^14 in place of 1/6.
HARD_SIGMOID_SCALE = 6 * 2731 / 16384

_ACTIVATIONS = {"relu": "RELU", "relu6": "RELU6", "leaky-relu": "LEAKYRELU"}
#: The float ops folded, each with the compiled op it becomes (a fix after it, maybe an activation between).
_FOLDED = {"conv2d": "conv2d-fix", "depthwise-conv2d": "depthwise-conv2d-fix", "maxpool2d": "pool-fix",
           "avgpool2d": "pool-fix", "add": "eltwise-fix", "mul": "eltwise-fix", "concat": "concat-fix",
           "reshape": "reshape-fix", "flatten": "reshape-fix", "resize": "upsample-fix",
           "hard-sigmoid": "hard-sigmoid-fix"}
_FUSES_ACTIVATION = {"conv2d", "depthwise-conv2d", "add"}
_SCALED = {"avgpool2d", "hard-sigmoid"}
_MAX_KERNEL = 1 << 16  # written as the op times a constant, the DPU's arithmetic


def is_quantized(graph: Graph) -> bool:
    """Whether `graph` is the quantizer's: fix ops, no DPU subgraph."""
    return not graph.subgraphs("DPU") and any(op.type == "fix" for op in graph.ops.values())


def dpu_avg_coefficient(kh: int, kw: int) -> Tuple[int, int]:
    """(n, s): the DPU's average over a kh x kw window is the window's sum times n / 2^s. Python's twin of the
    emulator's dpu_avgpool_coef (emulator/src/math/fixpoint.cc), which the fold needs only to recognize the
    quantizer's scaling; test_xmodel_quantized holds it to the tests' reference (fixed_point.avg_coef), to which
    test_xmodel holds the emulator's pools."""
    table = {3: (7, 6), 5: (10, 8), 6: (7, 8), 7: (21, 10), 14: (21, 12)}
    if kh == kw and kh in table:
        return table[kh]
    rec = kh * kw
    best, err = (0, 0), 1.0
    for s in range(min(math.ceil(math.log2(rec * 128)), 40)):
        n = float(np.round(2.0 ** s / rec))
        e = abs(n / 2.0 ** s - 1 / rec)
        if e < err:
            best, err = (int(n), s), e
    return best


class _Folder:
    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.consumers = graph.consumers()
        self.folded: Dict[str, Op] = {}   # compiled op name -> op, in topological order
        self.user: List[str] = []         # the data-fix ops
        self.of_fix: Dict[str, str] = {}  # fix op -> the compiled op whose tensor it is
        self.used: Set[str] = set()       # float ops folded

    def where(self, op: Op) -> str:
        return f"op {op.name!r} ({op.type}) of graph {self.graph.name!r}"

    def source(self, op: Op) -> Op:
        names = op.inputs.get("input", [])
        if len(names) != 1:
            raise XmodelError(f"{self.where(op)} has {len(names)} inputs, not 1")
        return self.graph.ops[names[0]]

    def only_reader(self, op: Op, reader: Op) -> None:
        others = [c for c in self.consumers[op.name] if c != reader.name]
        if others:
            raise UnsupportedXmodelError(f"{self.where(op)} is read unquantized by {others[0]!r} as well as by "
                                         f"{reader.name!r}: the DPU keeps no float value between its ops")

    def fix(self, f: Op) -> None:
        """Folds the chain that fix op `f` ends, if its inputs are folded (the DPU's); leaves it to the CPU if not."""
        where = self.where(f)
        for key, want in (("bit_width", 8), ("if_signed", True), ("round_mode", "DPU_ROUND")):
            kind = bool if key == "if_signed" else int if key == "bit_width" else str
            got = attr(where, f.attrs, key, kind)
            if got != want:
                raise UnsupportedXmodelError(f"{where}: {key} {got!r}; the DPU's fix ops are {want!r} (signed int8, "
                                             f"DPU_ROUND)")
        fp = attr(where, f.attrs, "fix_point", int)
        if fp is None or not -FIX_POINT_LIMIT <= fp <= FIX_POINT_LIMIT:
            raise XmodelError(f"{where}: fix_point {fp!r}")
        tensor = Tensor(f.output.name, f.output.shape, "XINT", 8, {"fix_point": fp})
        src = self.source(f)
        if src.type == "data":
            self.emit(src, Op(src.name, "data-fix", {"shape": list(tensor.shape), "data_type": "XINT8"}, {}, tensor),
                      f, user=True)
        elif src.type == "const":
            self.emit(src, Op(src.name, "const-fix", {"shape": list(tensor.shape), "data_type": "XINT8",
                                                      "data": self.constant(src, fp).tobytes()}, {}, tensor), f)
        else:
            self.compute(src, f, tensor)

    def floats(self, op: Op) -> np.ndarray:
        """A const op's values in its shape, as float64: float32 data, one value per element, each finite."""
        where = self.where(op)
        data = attr(where, op.attrs, "data", bytes, b"")
        count = int(np.prod(op.output.shape))
        if op.output.data_type != "FLOAT" or op.output.bit_width != 32 or len(data) != 4 * count:
            raise XmodelError(f"{where}: {len(data)} bytes of data for a {op.output.type_name} tensor of "
                              f"{list(op.output.shape)}; the quantizer's constants are float32")
        w = np.frombuffer(data, "<f4").astype(np.float64).reshape(op.output.shape)
        if not np.all(np.isfinite(w)):
            raise XmodelError(f"{where}: its data holds a NaN or an infinity")
        return w

    def constant(self, op: Op, fp: int) -> np.ndarray:
        """A float const's values on the int8 grid of `fp`, as the fix after it gives them (DPU_ROUND, saturated)."""
        scaled = np.ldexp(self.floats(op), fp)
        q = np.floor(scaled + 0.5)  # DPU_ROUND: half up
        return np.clip(q, -128, 127).astype(np.int8)

    def compute(self, src: Op, f: Op, tensor: Tensor) -> None:
        """Folds float op `src` (an activation or the DPU's scaling after the op it ends, or the op itself) and
        fix `f` after it into one compiled op; the chain is the CPU's, and left, where an input is not the DPU's."""
        op, nonlinear, between, consts = self.chain(src)
        if op.type not in _FOLDED:
            return  # the CPU's
        for n in (n for arg, names in op.inputs.items() if arg in ("input", "weights", "bias") for n in names):
            if self.graph.ops[n].type == "const":
                raise UnsupportedXmodelError(f"{self.where(op)} reads {self.where(self.graph.ops[n])}, which no fix "
                                             f"op quantizes: the DPU's weights and biases are int8")
            if n not in self.of_fix:
                return  # it reads a float value: the CPU's output
        for name, reader in zip([op.name, *between], [*between, f.name]):
            self.only_reader(self.graph.ops[name], self.graph.ops[reader])
        attrs = {k: v for k, v in op.attrs.items() if k not in ("shape", "data_type")}
        attrs.update(self.attributes(op, tensor))
        if op.type in _FUSES_ACTIVATION:
            attrs["nonlinear"] = nonlinear
        inputs = {arg: [self.of_fix[n] for n in names] for arg, names in op.inputs.items()
                  if arg in ("input", "weights", "bias")}
        self.used.update([*between, *consts])
        self.emit(op, Op(op.name, _FOLDED[op.type], attrs, inputs, tensor), f)

    def chain(self, src: Op) -> Tuple[Op, str, List[str], List[str]]:
        """(the op a fix ends, its nonlinear, the ops between them, the constants those read) for the op `src`
        that the fix reads."""
        if src.type in _ACTIVATIONS:
            op = self.source(src)
            if op.type in _FOLDED and op.type not in _FUSES_ACTIVATION:
                raise UnsupportedXmodelError(f"{self.where(src)} follows {self.where(op)}; the DPU fuses an "
                                             f"activation into a convolution or an add")
            if src.type == "leaky-relu":
                alpha = attr(self.where(src), src.attrs, "alpha", float)
                if alpha is None or abs(alpha - LEAKY_ALPHA) > 1e-6:
                    raise UnsupportedXmodelError(f"{self.where(src)}: alpha {alpha!r}; the DPU's slope is 26/256 "
                                                 f"= {LEAKY_ALPHA}")
            return op, _ACTIVATIONS[src.type], [src.name], []
        scaled = self.scale_of(src) if src.type == "mul" else None
        if scaled is not None:
            op, factor, consts = scaled
            self.check_scale(op, factor)
            return op, "NONE", [src.name], consts
        return src, "NONE", [], []

    def scale_of(self, mul: Op) -> Optional[Tuple[Op, float, List[str]]]:
        """(the op, the factor, the constant's ops) of a mul of an average pool or a hard sigmoid by a constant;
        None for another mul."""
        names = mul.inputs.get("input", [])
        if len(names) != 2:
            return None
        ops = [self.graph.ops[n] for n in names]
        consts = [o for o in ops if o.type == "const" or (o.type == "fix" and self.source(o).type == "const")]
        scaled = [o for o in ops if o.type in _SCALED]
        if len(consts) != 1 or len(scaled) != 1:
            return None
        c = consts[0] if consts[0].type == "const" else self.source(consts[0])
        value = self.floats(c).reshape(-1)
        if value.size != 1:
            raise UnsupportedXmodelError(f"{self.where(mul)} multiplies {self.where(scaled[0])} by {value.size} "
                                         f"values, not one factor")
        return scaled[0], float(value[0]), list(dict.fromkeys([consts[0].name, c.name]))

    def check_scale(self, op: Op, factor: float) -> None:
        if op.type == "hard-sigmoid":
            want = HARD_SIGMOID_SCALE
        else:
            kw, kh = self.window(op)
            n, s = dpu_avg_coefficient(kh, kw)
            want = kh * kw * n / 2.0 ** s
        if abs(factor - want) > 1e-6 * want:
            raise UnsupportedXmodelError(f"{self.where(op)} is multiplied by {factor!r}, not by the DPU's {want!r}: "
                                         f"the emulator computes the DPU's arithmetic")

    def window(self, op: Op) -> Tuple[int, int]:
        """A pool's {w, h} kernel (the input's plane for a global one)."""
        if attr(self.where(op), op.attrs, "global", bool, False):
            shape = self.source(op).output.shape
            return int(shape[2]), int(shape[1])
        return self.pair(op, "kernel", None)

    def pair(self, op: Op, key: str, default: Optional[List[int]]) -> Tuple[int, int]:
        """A {w, h} attribute: two ints in 1.._MAX_KERNEL."""
        k = op.attrs.get(key, default)
        if not isinstance(k, list) or len(k) != 2 or not all(
                isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= _MAX_KERNEL for v in k):
            raise XmodelError(f"{self.where(op)}: {key} {k!r}, not two ints in 1..{_MAX_KERNEL}")
        return k[0], k[1]

    def attributes(self, op: Op, tensor: Tensor) -> Dict[str, object]:
        """What the compiled op says that the float op says another way."""
        where = self.where(op)
        if op.type in ("maxpool2d", "avgpool2d"):
            kw, kh = self.window(op)
            out: Dict[str, object] = {"type": "MAX" if op.type == "maxpool2d" else "AVG", "kernel": [kw, kh]}
            if attr(where, op.attrs, "global", bool, False):
                out.update(stride=[kw, kh], pad=[0, 0, 0, 0])
            pad = op.attrs.get("pad", [0, 0, 0, 0])
            if (op.type == "avgpool2d" and not attr(where, op.attrs, "count_include_pad", bool, True)
                    and isinstance(pad, list) and any(pad)):
                raise UnsupportedXmodelError(f"{where}: count_include_pad false with padding; the DPU divides by the "
                                             f"whole window")
            return out
        if op.type in ("add", "mul"):
            return {"type": op.type.upper()}
        if op.type in ("reshape", "flatten"):
            return {"shape": list(tensor.shape)}
        if op.type == "resize":
            return {"mode": attr(where, op.attrs, "mode", str, "NEAREST")}
        if op.type == "hard-sigmoid":
            fx = self.folded[self.of_fix[self.source(op).name]].output.fix_point
            return {"hsigmoid_in": fx, "shift_hsigmoid": 14 + int(fx or 0) - int(tensor.fix_point or 0)}
        if op.type in ("conv2d", "depthwise-conv2d"):
            return self.conv_pad(op, tensor)
        return {}

    def conv_pad(self, op: Op, tensor: Tensor) -> Dict[str, object]:
        """A convolution's pad as {left, right, top, bottom} (SAME's computed as TensorFlow places it)."""
        where = self.where(op)
        mode = attr(where, op.attrs, "pad_mode", str, "FLOOR")
        if mode in ("FLOOR", "CEIL"):
            return {}
        if mode == "VALID":
            return {"pad": [0, 0, 0, 0]}
        if mode != "SAME":
            raise XmodelError(f"{where}: pad_mode {mode!r} (FLOOR, CEIL, SAME or VALID)")
        shapes = self.source(op).output.shape, tensor.shape
        if any(len(s) != 4 for s in shapes):
            raise XmodelError(f"{where}: pad_mode SAME from {list(shapes[0])} to {list(shapes[1])}, not 4-D maps")
        (_, h, w, _), (_, oh, ow, _) = shapes
        (kw, kh), (sw, sh) = self.pair(op, "kernel", None), self.pair(op, "stride", [1, 1])
        dw, dh = self.pair(op, "dilation", [1, 1])
        th = max((oh - 1) * sh + (kh - 1) * dh + 1 - h, 0)
        tw = max((ow - 1) * sw + (kw - 1) * dw + 1 - w, 0)
        return {"pad": [tw // 2, tw - tw // 2, th // 2, th - th // 2]}

    def emit(self, src: Op, op: Op, f: Op, user: bool = False) -> None:
        if op.name in self.folded:
            raise XmodelError(f"{self.where(f)}: a second fix op after {self.where(src)}")
        self.folded[op.name] = op
        self.of_fix[f.name] = op.name
        self.used.update((src.name, f.name))
        if user:
            self.user.append(op.name)


def fold(graph: Graph) -> Tuple[Graph, Subgraph, List[str]]:
    """The compiled form of the quantizer's `graph`: (that graph, its DPU subgraph for to_qdq, the ops left to the
    CPU, which are not run)."""
    folder = _Folder(graph)
    for op in graph.ops.values():
        if op.type == "fix":
            folder.fix(op)
    if not folder.user:
        raise XmodelError(f"graph {graph.name!r}: no data op with a fix op after it, so nothing the DPU would read")
    dpu_ops = [n for n in folder.folded if n not in folder.user]
    if not dpu_ops:
        raise UnsupportedXmodelError(f"graph {graph.name!r}: no op after its inputs' fix ops folds into a DPU op "
                                     f"(it folds {', '.join(sorted(_FOLDED))}, each with a fix op after it)")
    ops = dict(folder.folded)
    # Each quantized tensor an unfolded op reads leaves the DPU as vai_c_xir's CPU subgraphs read it.
    cpu: List[str] = []
    inverse = {v: k for k, v in folder.of_fix.items()}
    for name in dpu_ops:
        readers = [c for c in folder.consumers[inverse[name]] if c not in folder.used]
        if readers:
            reader = f"{name}__read_by_cpu"
            ops[reader] = Op(reader, "download", {}, {"input": [name]}, ops[name].output)
            cpu.append(reader)
    children = [Subgraph(f"subgraph_{n}", {"device": "USER"}, [n]) for n in folder.user]
    dpu = Subgraph(f"subgraph_{graph.name}_dpu", {"device": "DPU"}, dpu_ops)
    children.append(dpu)
    children += [Subgraph(f"subgraph_{n}", {"device": "CPU"}, [n]) for n in cpu]
    left = [n for n, op in graph.ops.items() if n not in folder.used and op.type not in ("const", "fix")]
    return Graph(graph.name, ops, Subgraph("root", {}, [], children), dict(graph.attrs)), dpu, left
