"""Constant folding: Constant nodes, Shape/Size of statically shaped tensors, and any node whose
inputs are all constants (evaluated with onnx's reference evaluator on a one-node model)."""

from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ._shared import import_or_undo
from .errors import CompileError

# Ops that must never be evaluated at compile time (their result is not a function of their inputs).
NONDETERMINISTIC_OPS = frozenset({
    "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
    "Bernoulli",
})

_evaluator_cls = None


def _evaluator():
    global _evaluator_cls
    if _evaluator_cls is None:
        with import_or_undo():
            from onnx.reference import ReferenceEvaluator
        _evaluator_cls = ReferenceEvaluator
    return _evaluator_cls


def constant_node(node) -> np.ndarray:
    """The value of a Constant node."""
    a = node.attrs
    if "value" in a:
        return numpy_helper.to_array(a["value"])
    if "value_float" in a:
        return np.array(a["value_float"], dtype=np.float32)
    if "value_floats" in a:
        return np.array(a["value_floats"], dtype=np.float32)
    if "value_int" in a:
        return np.array(a["value_int"], dtype=np.int64)
    if "value_ints" in a:
        return np.array(a["value_ints"], dtype=np.int64)
    if "value_string" in a:
        return np.array(a["value_string"], dtype=object)
    if "value_strings" in a:
        return np.array([s.decode("utf-8") if isinstance(s, bytes) else s
                         for s in a["value_strings"]], dtype=object)
    return None  # sparse_value and the like: the evaluator handles them


# Ops computed from their input's static shape, never from its values.
SHAPE_OPS = frozenset({"Shape", "Size"})


def shape_of(node, shape: tuple, opset: int) -> np.ndarray:
    """Shape(x) for a statically shaped x, with opset 15's start/end."""
    rank = len(shape)
    start, end = 0, rank
    if opset >= 15:
        start = int(node.attr("start", 0))
        end = int(node.attr("end", rank))
        start = min(max(start + rank if start < 0 else start, 0), rank)
        end = min(max(end + rank if end < 0 else end, 0), rank)
    return np.array(shape[start:end], dtype=np.int64)


def size_of(shape: tuple) -> np.ndarray:
    return np.array(int(np.prod(shape, dtype=np.int64)), dtype=np.int64)


def _value_info(name: str, arr: np.ndarray) -> onnx.ValueInfoProto:
    if arr.dtype == object or arr.dtype.kind in "US":
        elem = onnx.TensorProto.STRING
    else:
        elem = helper.np_dtype_to_tensor_dtype(arr.dtype)
    return helper.make_tensor_value_info(name, elem, list(arr.shape))


# The default budget of one folded node (compile_model's fold_limit): the bytes of its output, and of
# the largest intermediate the reference evaluator makes for it. Folding computes in NumPy on the host,
# so a model whose constants would pass this is refused within moments, naming the node and the size,
# rather than left to take the host's memory and minutes. 256 MiB is far past what real models fold
# (shape arithmetic, weight reshapes and transposes).
FOLD_LIMIT_BYTES = 256 << 20


def _dims(vi) -> list | None:
    t = vi.type.tensor_type
    if not t.HasField("shape") or not all(d.HasField("dim_value") for d in t.shape.dim):
        return None
    return [int(d.dim_value) for d in t.shape.dim]


def _padded(shape, rank: int) -> list:
    """`shape` with 1s in front up to `rank` dims, as NumPy broadcasts and tiles."""
    return [1] * (rank - len(shape)) + list(shape)


def _itemsize(elem_type: int) -> int:
    """Bytes per element of an ONNX tensor type; 8 for one inference left undefined (or a string)."""
    try:
        return max(int(helper.tensor_dtype_to_np_dtype(elem_type).itemsize), 1)
    except (KeyError, TypeError, ValueError):
        return 8


def _working_bytes(node, in_dims: list, out_dims: list, itemsize: int) -> int:
    """Bytes of the output, or of the largest array the reference evaluator makes on the way to it where
    that is larger: Resize interpolates one axis at a time, in float64 (the input with its first k axes
    at their output sizes); Tile (NumPy's) repeats one axis at a time."""
    out = math.prod(out_dims) * itemsize
    if node.op == "Resize" and in_dims and len(in_dims[0]) == len(out_dims):
        x = in_dims[0]
        return max(out, max(math.prod(out_dims[:k] + x[k:]) for k in range(len(x) + 1)) * 8)
    if node.op == "Tile" and in_dims and len(in_dims[0]) <= len(out_dims):
        # NumPy repeats one axis at a time: an axis repeated 0 times may come after a huge one
        x = _padded(in_dims[0], len(out_dims))
        return max(out, math.prod(max(o, i) for o, i in zip(out_dims, x)) * itemsize)
    return out


# The longest axis a folded Resize may produce.
RESIZE_AXIS_LIMIT = 1 << 16

# Inputs up to this many elements are given to shape inference as values (initializers), so that it
# can tell the output shape of ops whose shape is their inputs' data (Resize's scales, Expand's shape,
# ConstantOfShape, Range, Tile's repeats...).
_INFERENCE_VALUES = 1 << 12


def _with_values(model: onnx.ModelProto, names: list, arrays: list) -> onnx.ModelProto:
    small = {n: a for n, a in zip(names, arrays)
             if n and a is not None and a.dtype != object and a.size <= _INFERENCE_VALUES}
    if not small:
        return model
    m = onnx.ModelProto()
    m.CopyFrom(model)
    kept = [vi for vi in m.graph.input if vi.name not in small]
    del m.graph.input[:]
    m.graph.input.extend(kept)
    m.graph.initializer.extend(numpy_helper.from_array(a, n) for n, a in small.items())
    return m


def _data_shaped_dims(node, arrays: list) -> list | None:
    """The output shape of an op whose shape is its inputs' data, from the constants themselves, for
    when shape inference cannot tell it; None where it cannot be told here either."""
    try:
        x = arrays[0] if arrays else None
        values = [None if a is None else np.asarray(a).reshape(-1) for a in arrays]
        if node.op == "ConstantOfShape":
            return [int(v) for v in values[0]]
        if node.op == "Tile":  # as NumPy tiles (the evaluator's way), even with too many repeats
            reps = [int(r) for r in values[1]]
            n = max(len(reps), x.ndim)
            return [d * r for d, r in zip(_padded(x.shape, n), _padded(reps, n))]
        if node.op == "Expand":
            target = [int(v) for v in values[1]]
            n = max(len(target), x.ndim)
            return [max(p, q) for p, q in zip(_padded(x.shape, n), _padded(target, n))]
        if node.op == "Range":
            start, limit, delta = (float(v[0]) for v in values[:3])
            return [max(int(np.ceil((limit - start) / delta)), 0)]
        if node.op == "OneHot":
            rank = x.ndim + 1
            axis = int(node.attr("axis", -1))
            axis = axis + rank if axis < 0 else axis
            shape = list(x.shape)
            shape.insert(min(max(axis, 0), x.ndim), int(values[1][0]))
            return shape
        if node.op == "TopK" and len(values) > 1:  # the evaluator makes arange(k) before it checks k
            axis = int(node.attr("axis", -1))
            shape = list(x.shape)
            shape[axis + x.ndim if axis < 0 else axis] = max(int(values[1][0]), 0)
            return shape
        if node.op == "Pad" and len(values) > 1 and values[1] is not None and len(values[1]) == 2 * x.ndim:
            pads = [int(v) for v in values[1]]
            return [d + pads[i] + pads[i + x.ndim] for i, d in enumerate(x.shape)]
    except (IndexError, TypeError, ValueError, OverflowError, ZeroDivisionError, AttributeError):
        return None
    return None


def _check_fold_size(node, model: onnx.ModelProto, arrays: list, limit: int) -> None:
    """Refuses to fold a node whose output or working arrays would pass `limit` bytes, before computing
    it; where its output shape cannot be told, one that ONNX's own strict shape inference finds invalid
    (negative pads and the like)."""
    try:
        inferred = list(onnx.shape_inference.infer_shapes(_with_values(model, list(node.inputs), arrays)).graph.output)
    except Exception:  # noqa: BLE001 - inference is only a guard: the evaluator reports real errors
        inferred = []
    known = {vi.name: (_dims(vi), _itemsize(vi.type.tensor_type.elem_type)) for vi in inferred}
    in_dims = [list(a.shape) for a in arrays if a is not None]
    validated = False
    for i, name in enumerate(o for o in node.outputs if o):
        dims, itemsize = known.get(name, (None, 8))
        if dims is None and i == 0:
            dims = _data_shaped_dims(node, arrays)
        if dims is None:
            if not validated and inferred:
                validated = True
                try:
                    onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
                except Exception as e:  # noqa: BLE001
                    raise CompileError(f"{node.label} is not valid ONNX: {e}") from e
            continue
        dims = [max(d, 0) for d in dims]
        if node.op == "Resize" and dims and max(dims) > RESIZE_AXIS_LIMIT:
            # The reference evaluator walks an axis's output positions in Python, even when another axis
            # is empty: minutes for a model of a few bytes.
            raise CompileError(f"unsupported constant: folding {node.label} gives an axis of {max(dims)} elements "
                               f"(shape {dims}), more than the {RESIZE_AXIS_LIMIT} constant folding takes")
        need = _working_bytes(node, in_dims, dims, itemsize)
        if need > limit:
            raise CompileError(
                f"unsupported constant: folding {node.label} would take {need} bytes for '{name}' "
                f"(shape {dims}), past the constant-folding limit of {limit} bytes (raise it: Device.load's "
                f"fold_limit, compile_model's, accel compile --fold-limit)")


def _check_positions(node, arrays: list) -> None:
    """The position operands the reference evaluator does not bound (it wraps or clamps them where onnxruntime
    refuses the run): GatherElements' indices must lie in -n..n-1 along its axis of the data, ReverseSequence's
    lengths in 0..n along its time axis, MaxUnpool's indices must not be negative. Out-of-range ones are a
    CompileError naming the node, the value, where it is and the range, as the emulator words a run-time one
    (emulator/src/ops.h)."""
    if node.op == "MaxUnpool":  # positions in the output: the evaluator wraps a negative one, onnxruntime refuses it
        ind = np.asarray(arrays[1]) if len(arrays) > 1 and arrays[1] is not None else np.zeros(0)
        bad = np.flatnonzero(ind < 0)
        if bad.size:
            at = [int(i) for i in np.unravel_index(int(bad[0]), ind.shape)]
            raise CompileError(f"{node.label}: index {int(ind.reshape(-1)[bad[0]])} at {at} of input 1 "
                               f"('{node.inputs[1]}') is negative (positions in the output are 0..size-1)")
        return
    if node.op == "GatherElements":
        axis_attr, what, low = "axis", "index", True
    elif node.op == "ReverseSequence":
        axis_attr, what, low = "time_axis", "sequence length", False
    else:
        return
    if len(arrays) < 2 or arrays[0] is None or arrays[1] is None:
        return
    x, ind = np.asarray(arrays[0]), np.asarray(arrays[1])
    axis = int(node.attr(axis_attr, 0))
    if not -x.ndim <= axis < x.ndim or ind.dtype.kind not in "iu":
        return  # the evaluator reports these
    axis %= x.ndim
    n = x.shape[axis]
    lo, hi = (-n, n - 1) if low else (0, n)
    bad = np.flatnonzero((ind < lo) | (ind > hi))
    if bad.size:
        at = [int(i) for i in np.unravel_index(int(bad[0]), ind.shape)]
        raise CompileError(f"{node.label}: {what} {int(ind.reshape(-1)[bad[0]])} at {at} of input 1 "
                           f"('{node.inputs[1]}') is outside {lo}..{hi} (input 0 ('{node.inputs[0]}') has {n} along "
                           f"axis {axis})")


# The largest constant a splat (below) may stand for: what one ONNX file can hold as a weight (protobuf's 2 GiB),
# or the fold limit when that is larger. Past it, a model is refused as for the fold limit, before any memory.
SPLAT_LIMIT_BYTES = 2 << 30


def _splat(node, arrays: list, limit: int):
    """ConstantOfShape's output as one value broadcast to its shape (a read-only view: no memory however large),
    or None where the evaluator must say what is wrong (a shape of the wrong type, a negative dim). The fold limit
    bounds what folding computes; a splat computes nothing, and a weight made of one is stored like the model's
    own weights (the writer writes it out), so only SPLAT_LIMIT_BYTES bounds it."""
    shape = np.asarray(arrays[0]) if arrays and arrays[0] is not None else None
    if shape is None or shape.dtype != np.int64 or shape.ndim != 1 or (shape < 0).any():
        return None
    value = node.attr("value")
    one = numpy_helper.to_array(value).reshape(-1)[:1] if value is not None else np.zeros(1, np.float32)
    if one.size != 1:
        return None
    dims = [int(d) for d in shape]
    need = math.prod(dims) * one.dtype.itemsize
    if need > max(limit, SPLAT_LIMIT_BYTES):
        raise CompileError(
            f"unsupported constant: {node.label} makes {need} bytes for '{node.outputs[0]}' (shape {dims}), past "
            f"the largest constant accel stores ({max(limit, SPLAT_LIMIT_BYTES)} bytes: a weight of one ONNX "
            f"file, or the fold limit when larger: Device.load's fold_limit, compile_model's, accel compile "
            f"--fold-limit)")
    return np.broadcast_to(one.reshape(()), dims)


def evaluate(node, arrays: list, opset_imports: list, limit: int = FOLD_LIMIT_BYTES) -> list:
    """Runs one node on constant inputs (None for absent optional ones), refusing one that would take
    more than `limit` bytes. Returns one array per node output (None for an absent output); a read-only
    broadcast view for ConstantOfShape (_splat)."""
    if node.op == "Constant":
        v = constant_node(node)
        if v is not None:
            return [v]
    if node.op == "ConstantOfShape":
        splat = _splat(node, arrays, limit)
        if splat is not None:
            return [splat]
    if node.op == "Identity":
        return [arrays[0]]
    feeds = {}
    infos = []
    for name, arr in zip(node.inputs, arrays):
        if name and name not in feeds:
            feeds[name] = arr
            infos.append(_value_info(name, arr))
    outs = [helper.make_empty_tensor_value_info(o) for o in node.outputs if o]
    graph = helper.make_graph([node.proto], "fold", infos, outs)
    model = helper.make_model(graph, opset_imports=opset_imports)
    _check_fold_size(node, model, arrays, limit)
    _check_positions(node, arrays)
    try:
        results = _evaluator()(model).run(None, feeds)
    except MemoryError:
        raise
    except Exception as e:
        raise CompileError(f"constant folding failed at {node.label}: {type(e).__name__}: {e}") from e
    it = iter(results)
    out: list[np.ndarray | None] = []
    for o in node.outputs:
        if not o:
            out.append(None)
            continue
        r = next(it)
        if r is not None and not isinstance(r, (np.ndarray, np.generic)):  # a sequence (a list), a map
            raise CompileError(f"unsupported output '{o}' of {node.label}: a {type(r).__name__}, where accel has "
                               f"tensors only (not sequences, maps or optionals)")
        out.append(None if r is None else np.asarray(r))
    return out
