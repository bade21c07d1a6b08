"""NaN and infinities through every runtime op that computes on floats: each case feeds a tensor holding NaN, +inf
and -inf among ordinary values and compares every element with onnxruntime (NaN where it has NaN, the same
infinities, the finite values close). Where onnxruntime drops a NaN (its MaxPool, GlobalMaxPool, ReduceMax and
ReduceMin, Max and Min keep the other operand), the reference is NumPy's, as torch also computes: a NaN in any
input of an element's computation is a NaN out. A last test checks that the cases reach every runtime op that
takes a float input, so an op added later needs a case here."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from accel import compiler
from accel.compiler import accm

# The emulator's own ops: their semantics, not a device's (deselected on vendor devices).
pytestmark = pytest.mark.emulator

F = TensorProto.FLOAT
SHAPE = (1, 2, 6, 6)


def special(shape=SHAPE, seed=0):
    """Random normal values with NaN, +inf and -inf in different windows, rows and channels."""
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    n = flat.size
    flat[[1, n // 3, n - 2]] = np.nan
    flat[[4, n // 2]] = np.inf
    flat[[9, (2 * n) // 3]] = -np.inf
    return x


def make(nodes, inputs, inits=None, opset=18):
    vis = [helper.make_tensor_value_info(name, F, list(a.shape)) for name, a in inputs.items()]
    g = helper.make_graph(nodes, "nan", vis, [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)],
                          [numpy_helper.from_array(np.asarray(v), k) for k, v in (inits or {}).items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    inferred = onnx.shape_inference.infer_shapes(m)  # the output's dtype: float, bool, int64 ...
    types = {v.name: v.type for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
    inferred_type = types["y"].tensor_type.elem_type if "y" in types else 0
    m.graph.output[0].type.tensor_type.elem_type = inferred_type or F
    return m


def node(op, inputs=("x",), **attrs):
    return helper.make_node(op, list(inputs), ["y"], **attrs)


def w(*shape, seed=1):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


X = special()
X2 = special(seed=3)
ROW = special((3, 8), seed=4)

# NumPy references where onnxruntime drops NaN.
def _np_maxpool(x, k=2, s=2):
    n, c, h, ww = x.shape
    return x.reshape(n, c, h // k, k, ww // k, k).max(axis=(3, 5))


def _np_dynamic_quantize(x):
    """QuantizeLinear (onnxruntime's) with the scale and zero point of the range of x's numbers: a NaN takes no
    part in the range (onnxruntime's vectorized search keeps or drops one by its position in a vector)."""
    lo, hi = min(np.nanmin(x), 0), max(np.nanmax(x), 0)
    s = np.float32((hi - lo) / np.float32(255))
    z = np.uint8(np.rint(np.clip(-lo / s, 0, 255)))
    m = make([node("QuantizeLinear", ("x", "s", "z"))], {"x": x}, {"s": s, "z": z})
    m.graph.output[0].type.tensor_type.elem_type = TensorProto.UINT8
    return ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0] \
        .astype(np.float32)


# onnx's reference evaluator (numpy) as the reference: onnxruntime's recurrent kernels clamp a NaN away inside
# their activations, where NumPy's and torch's keep it.
ONNX_REFERENCE = "onnx.reference"

# id -> (nodes, inputs, initializers, reference (None: onnxruntime))
CASES = {
    "Conv": ([node("Conv", ("x", "W", "B"), pads=[1, 1, 1, 1])], {"x": X}, {"W": w(3, 2, 3, 3), "B": w(3)}, None),
    "Conv+Relu": ([helper.make_node("Conv", ["x", "W"], ["c"]), node("Relu", ("c",))], {"x": X}, {"W": w(3, 2, 1, 1)},
                  None),
    "ConvTranspose": ([node("ConvTranspose", ("x", "W"), strides=[2, 2])], {"x": X}, {"W": w(2, 3, 2, 2)}, None),
    "Gemm": ([node("Gemm", ("x", "W", "B"), transB=1)], {"x": ROW}, {"W": w(5, 8), "B": w(5)}, None),
    "MatMul": ([node("MatMul", ("x", "x2"))], {"x": ROW, "x2": special((8, 4), seed=5)}, None, None),
    "Add": ([node("Add", ("x", "x2"))], {"x": X, "x2": X2}, None, None),
    "Sub": ([node("Sub", ("x", "x2"))], {"x": X, "x2": X2}, None, None),
    "Mul": ([node("Mul", ("x", "x2"))], {"x": X, "x2": X2}, None, None),
    "Div": ([node("Div", ("x", "x2"))], {"x": X, "x2": X2}, None, None),
    "Pow": ([node("Pow", ("x", "x2"))], {"x": X, "x2": X2}, None, None),
    "Mod(fmod=1)": ([node("Mod", ("x", "x2"), fmod=1)], {"x": X, "x2": X2}, None, None),
    # onnxruntime takes a float Mod with fmod=0 from opset 28 only; numpy's mod has ONNX's special cases.
    "Mod(fmod=0)": ([node("Mod", ("x", "x2"))], {"x": X, "x2": X2}, None, lambda x, x2: np.mod(x, x2)),
    "Max": ([node("Max", ("x", "x2"))], {"x": X, "x2": X2}, None, lambda x, x2: np.maximum(x, x2)),
    "Min": ([node("Min", ("x", "x2"))], {"x": X, "x2": X2}, None, lambda x, x2: np.minimum(x, x2)),
    "MaxPool": ([node("MaxPool", kernel_shape=[2, 2], strides=[2, 2])], {"x": X}, None, _np_maxpool),
    "AveragePool": ([node("AveragePool", kernel_shape=[3, 3], pads=[1, 1, 1, 1])], {"x": X}, None, None),
    "GlobalAveragePool": ([node("GlobalAveragePool")], {"x": X}, None, None),
    "GlobalMaxPool": ([node("GlobalMaxPool")], {"x": X}, None, lambda x: x.max(axis=(2, 3), keepdims=True)),
    "Reshape": ([node("Reshape", ("x", "s"))], {"x": X}, {"s": np.array([2, -1], np.int64)}, None),
    "Transpose": ([node("Transpose", perm=[0, 2, 3, 1])], {"x": X}, None, None),
    "Concat": ([node("Concat", ("x", "x2"), axis=1)], {"x": X, "x2": X2}, None, None),
    "Softmax": ([node("Softmax", axis=1)], {"x": ROW}, None, None),
    "LogSoftmax": ([node("LogSoftmax", axis=1)], {"x": ROW}, None, None),
    "LogSoftmax(axis 0)": ([node("LogSoftmax", axis=0)], {"x": ROW}, None, None),
    # The 1 at the first NaN of a line, as numpy's argmax.
    "Hardmax": ([node("Hardmax", axis=1)], {"x": ROW}, None,
                lambda x: np.eye(x.shape[1], dtype=np.float32)[np.argmax(x, axis=1)]),
    "Resize": ([node("Resize", ("x", "", "sc"), mode="linear")], {"x": X},
               {"sc": np.array([1, 1, 2, 2], np.float32)}, None),
    "Slice": ([node("Slice", ("x", "st", "en", "ax"))], {"x": X},
              {"st": np.array([1, 1], np.int64), "en": np.array([5, 6], np.int64), "ax": np.array([2, 3], np.int64)},
              None),
    "Gather": ([node("Gather", ("x", "i"), axis=2)], {"x": X}, {"i": np.array([5, 0, 2], np.int64)}, None),
    "GatherElements": ([node("GatherElements", ("x", "i"), axis=1)], {"x": ROW},
                       {"i": np.array([[1, 0, 7], [4, 4, 2], [0, 5, 6]], np.int64)}, None),
    "Expand": ([node("Expand", ("x", "s"))], {"x": ROW[:1]}, {"s": np.array([3, 8], np.int64)}, None),
    "LayerNormalization": ([node("LayerNormalization", ("x", "g", "b"))], {"x": ROW}, {"g": w(8), "b": w(8)}, None),
    "Cast16": ([helper.make_node("Cast", ["x"], ["h"], to=TensorProto.FLOAT16),
                node("Cast", ("h",), to=TensorProto.FLOAT)], {"x": X}, None, None),
    "Quantize": ([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
                  node("DequantizeLinear", ("q", "s", "z"))], {"x": X},
                 {"s": np.float32(0.05), "z": np.uint8(128)}, None),
    # Infinities left out: they make the scale infinite, which ONNX leaves undefined.
    "DynamicQuantizeLinear": ([helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "s", "z"]),
                               node("Cast", ("q",), to=F)], {"x": np.where(np.isinf(ROW), 3.0, ROW)}, None,
                              lambda x: _np_dynamic_quantize(x)),
}
# Comparison, logic and selection: NaN compares false (IEEE); the outputs are bool (or the selected values).
CASES["Greater"] = ([node("Greater", ("x", "x2"))], {"x": X, "x2": X2}, None, None)
CASES["Equal"] = ([node("Equal", ("x", "x"))], {"x": X}, None, None)
CASES["IsNaN"] = ([node("IsNaN")], {"x": X}, None, np.isnan)
CASES["IsInf"] = ([node("IsInf")], {"x": X}, None, np.isinf)
CASES["IsInf(negative)"] = ([node("IsInf", detect_positive=0)], {"x": X}, None, np.isneginf)
CASES["Where(Not(Less))"] = ([helper.make_node("Less", ["x", "x2"], ["c"]), helper.make_node("Not", ["c"], ["n"]),
                              node("Where", ("n", "x", "x2"))], {"x": X, "x2": X2}, None, None)
# Index ops: numpy's argmax picks the first NaN (onnxruntime skips a NaN unless it comes first).
CASES["ArgMax"] = ([node("ArgMax", axis=1, keepdims=0)], {"x": ROW}, None, lambda x: np.argmax(x, axis=1))
CASES["ArgMin"] = ([node("ArgMin", axis=1, keepdims=0)], {"x": ROW}, None, lambda x: np.argmin(x, axis=1))
CASES["TopK"] = ([helper.make_node("TopK", ["x", "k"], ["y", "i"], axis=1)], {"x": ROW},
                 {"k": np.array([3], np.int64)}, None)
CASES["CumSum"] = ([node("CumSum", ("x", "a"))], {"x": ROW}, {"a": np.array(1, np.int64)}, None)
CASES["CumProd"] = ([node("CumProd", ("x", "a"))], {"x": ROW}, {"a": np.array(1, np.int64)}, None, 26)
# NaN, infinities and -0 as their bits, and back: each unchanged.
CASES["BitCast(there and back)"] = ([helper.make_node("BitCast", ["x"], ["b"], to=TensorProto.INT32),
                                     node("BitCast", ("b",), to=TensorProto.FLOAT)], {"x": X}, None, lambda x: x, 26)
# A NaN or infinite index is outside every line: a line of the off value (onnxruntime leaves it undefined).
def _np_onehot(x):
    positions = np.trunc(np.nan_to_num(x, nan=-9, posinf=9, neginf=-9))[..., None]
    return np.where(np.arange(4) == positions, np.float32(2.0), np.float32(0.5))


CASES["OneHot"] = ([node("OneHot", ("x", "d", "v"), axis=-1)], {"x": np.where(np.isfinite(ROW), np.abs(ROW) * 2, ROW)},
                   {"d": np.array(4, np.int64), "v": np.array([0.5, 2.0], np.float32)}, _np_onehot)
CASES["Pad(constant)"] = ([node("Pad", ("x", "p", "v"))], {"x": X},
                          {"p": np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64), "v": np.float32(np.nan)}, None)
CASES["Pad(reflect)"] = ([node("Pad", ("x", "p"), mode="reflect")], {"x": X},
                         {"p": np.array([0, 0, 2, 2, 0, 0, 2, 2], np.int64)}, None)
CASES["InstanceNormalization"] = ([node("InstanceNormalization", ("x", "g", "b"))], {"x": X}, {"g": w(2), "b": w(2)},
                                  None)
CASES["GroupNormalization"] = ([node("GroupNormalization", ("x", "g", "b"), num_groups=2)], {"x": X},
                               {"g": w(2), "b": w(2)}, None, 21)
CASES["LSTM"] = ([helper.make_node("LSTM", ["x", "W", "R", "B"], ["y"], hidden_size=3, direction="bidirectional")],
                 {"x": special((4, 2, 5), seed=6)},
                 {"W": w(2, 12, 5) * 0.3, "R": w(2, 12, 3) * 0.3, "B": w(2, 24) * 0.1}, ONNX_REFERENCE)
CASES["GRU"] = ([helper.make_node("GRU", ["x", "W", "R"], ["y"], hidden_size=3, linear_before_reset=1)],
                {"x": special((4, 2, 5), seed=7)}, {"W": w(1, 9, 5) * 0.3, "R": w(1, 9, 3) * 0.3}, ONNX_REFERENCE)
for _fn in ("ReduceMean", "ReduceSum", "ReduceProd", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSumExp"):
    CASES[_fn] = ([node(_fn, ("x", "a"))], {"x": X}, {"a": np.array([2, 3], np.int64)}, None)
CASES["ReduceMax"] = ([node("ReduceMax", ("x", "a"))], {"x": X}, {"a": np.array([2, 3], np.int64)},
                      lambda x: x.max(axis=(2, 3), keepdims=True))
CASES["ReduceMin"] = ([node("ReduceMin", ("x", "a"))], {"x": X}, {"a": np.array([2, 3], np.int64)},
                      lambda x: x.min(axis=(2, 3), keepdims=True))
# The activations, on their own (the activation op) and fused into the conv that computes their input.
_ACTIVATIONS = {
    "Relu": {}, "Sigmoid": {}, "Tanh": {}, "HardSigmoid": {}, "HardSwish": {}, "LeakyRelu": {"alpha": 0.1},
    "Elu": {}, "Selu": {}, "Softplus": {}, "Softsign": {}, "Sqrt": {}, "Exp": {}, "Log": {}, "Neg": {}, "Abs": {},
    "Reciprocal": {}, "Erf": {}, "Floor": {}, "Ceil": {}, "Round": {}, "Gelu": {}, "Gelu_tanh": {},
    "Sign": {}, "Sin": {}, "Cos": {}, "Tan": {}, "Asin": {}, "Acos": {}, "Atan": {}, "Sinh": {}, "Cosh": {},
    "Asinh": {}, "Acosh": {}, "Atanh": {}, "Mish": {}, "Celu": {"alpha": 0.5}, "Shrink": {"lambd": 0.3, "bias": 0.2},
    "ThresholdedRelu": {"alpha": 0.2}, "Swish": {"alpha": 0.8},
}
_OPSET = {"Gelu": 20, "Swish": 24}
for _op, _attrs in _ACTIVATIONS.items():
    onnx_op, attrs = ("Gelu", {"approximate": "tanh"}) if _op == "Gelu_tanh" else (_op, _attrs)
    opset = _OPSET.get(onnx_op, 18)
    CASES[_op] = ([node(onnx_op, **attrs)], {"x": X}, None, None, opset)
    CASES[f"Conv+{_op}"] = ([helper.make_node("Conv", ["x", "W"], ["c"]), node(onnx_op, ("c",), **attrs)],
                            {"x": X}, {"W": w(3, 2, 1, 1)}, None, opset)
# Resize's cubic form (resample), GridSample, 3-D pools (pool3d), MaxPool's indices (maxpoolidx) and RoiAlign.
X5 = special((1, 2, 4, 6, 6), seed=8)
CASES["Resize(cubic)"] = ([node("Resize", ("x", "", "sc"), mode="cubic")], {"x": X},
                          {"sc": np.array([1, 1, 1.5, 0.7], np.float32)}, None)
CASES["GridSample"] = ([node("GridSample", ("x", "g"), padding_mode="border")], {"x": X},
                       {"g": np.random.default_rng(9).uniform(-1.1, 1.1, (1, 4, 5, 2)).astype(np.float32)}, None, 20)
CASES["AveragePool(3-D)"] = ([node("AveragePool", kernel_shape=[2, 3, 3], pads=[0, 1, 1, 0, 1, 1])], {"x": X5},
                             None, None)
CASES["MaxPool(3-D)"] = ([node("MaxPool", kernel_shape=[2, 2, 2], strides=[2, 2, 2])], {"x": X5}, None,
                         lambda x: x.reshape(1, 2, 2, 2, 3, 2, 3, 2).max(axis=(3, 5, 7)))
# The indices as floats: onnxruntime's loop (a window's first element kept unless a later one is greater).
CASES["MaxPool(indices)"] = ([helper.make_node("MaxPool", ["x"], ["m", "i"], kernel_shape=[2, 2], strides=[2, 2]),
                              node("Cast", ("i",), to=F)], {"x": X}, None, None, 12)
CASES["RoiAlign"] = ([node("RoiAlign", ("x", "r", "b"), output_height=3, output_width=2)], {"x": X},
                     {"r": np.array([[0, 0, 5, 5], [1, 2, 4, 5.5], [-1, 0, 3, 2]], np.float32),
                      "b": np.zeros(3, np.int64)}, None, 16)
CASES["Clip"] = ([node("Clip", ("x", "lo", "hi"))], {"x": X}, {"lo": np.float32(-0.5), "hi": np.float32(0.5)}, None)
CASES["Silu"] = ([helper.make_node("Sigmoid", ["x"], ["s"]), node("Mul", ("x", "s"))], {"x": X}, None, None)
for _e in (2.0, 3.0, 0.5, -1.0, 0.0, 1.7):
    CASES[f"Pow^{_e}"] = ([node("Pow", ("x", "e"))], {"x": X}, {"e": np.float32(_e)}, None)
# Gathering and scattering by index (the NaN moves, or meets a reduction as onnxruntime's std::max / std::min),
# Col2Im's sums, and Pow of an integer base to NaN and infinite powers (the most negative integer, as onnxruntime).
_IND = np.array([[1, 0, 7, 0], [4, 4, 2, 3], [0, 5, 6, 6]], np.int64)  # duplicates in each row
CASES["GatherND"] = ([node("GatherND", ("x", "i"))], {"x": ROW}, {"i": np.array([[0, 1], [2, 7], [1, 4], [0, 4]])},
                     None)
for _red in ("none", "add", "mul", "max", "min"):
    CASES[f"ScatterND({_red})"] = ([node("ScatterND", ("x", "i", "u"), reduction=_red)], {"x": ROW},
                                   {"i": np.array([[1], [0], [1]]), "u": special((3, 8), seed=8)}, None)
    CASES[f"ScatterElements({_red})"] = ([node("ScatterElements", ("x", "i", "u"), axis=1, reduction=_red)],
                                         {"x": ROW}, {"i": _IND, "u": special((3, 4), seed=9)}, None)
CASES["TensorScatter"] = ([node("TensorScatter", ("x", "u", "w"), axis=1, mode="circular")], {"x": ROW},
                          {"u": special((3, 4), seed=10), "w": np.array([0, 6, 3])}, None, 24)
CASES["ReverseSequence"] = ([node("ReverseSequence", ("x", "l"), batch_axis=0, time_axis=1)], {"x": ROW},
                            {"l": np.array([8, 3, 0])}, None, 10)
CASES["Col2Im"] = ([node("Col2Im", ("x", "im", "bl"))], {"x": special((1, 4, 4), seed=11)},
                   {"im": np.array([3, 3]), "bl": np.array([2, 2])}, None)
# quantize_dynamic's linear layer, which fuses into matmulintegerf: NaN and infinities in its per-column
# multiplier (an input) and bias.
CASES["MatMulInteger->Cast->Mul->Add"] = (
    [helper.make_node("DynamicQuantizeLinear", ["x2"], ["q", "s", "z"]),
     helper.make_node("MatMulInteger", ["q", "B", "z"], ["acc"]),
     helper.make_node("Cast", ["acc"], ["accf"], to=F), helper.make_node("Mul", ["accf", "x"], ["m"]),
     node("Add", ("m", "C"))],
    {"x": special((16,), seed=6), "x2": np.linspace(-2, 3, 15, dtype=np.float32).reshape(3, 5)},
    {"B": np.random.default_rng(2).integers(-128, 128, (5, 16)).astype(np.int8),
     "C": np.array([0, np.nan, np.inf, -np.inf] * 4, np.float32)}, None)
CASES["Pow(int32 base)"] = ([node("Pow", ("b", "x"))], {"x": ROW},
                            {"b": np.arange(-12, 12, dtype=np.int32).reshape(3, 8)}, None, 15)


def _case(name):
    nodes, inputs, inits, ref, *rest = CASES[name]
    return make(nodes, inputs, inits, opset=rest[0] if rest else 18), inputs, ref


def _reference(m, inputs, ref):
    if ref is ONNX_REFERENCE:
        from onnx.reference import ReferenceEvaluator

        with np.errstate(all="ignore"):
            return ReferenceEvaluator(m).run(None, inputs)[0]
    if ref is not None:
        with np.errstate(all="ignore"):
            return ref(*inputs.values())
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    return ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"]).run(None, inputs)[0]


def assert_same_specials(got, want, what):
    """The same NaN and infinities in every element, the finite values close; the counts in the message.
    Integer and bool outputs (comparisons, indices) are compared exactly."""
    assert got.shape == want.shape, (what, got.shape, want.shape)
    if want.dtype.kind != "f":
        differ = got != want
        assert got.dtype == want.dtype and not differ.any(), (
            f"{what}: {int(differ.sum())} of {got.size} elements differ; got {got[differ][:5]}, "
            f"want {want[differ][:5]}")
        return
    nan_diff = np.isnan(got) != np.isnan(want)
    inf_diff = ~np.isnan(want) & np.isinf(want) & (got != want)
    finite = np.isfinite(want)
    close = np.isclose(got[finite], want[finite], rtol=1e-4, atol=1e-5)
    assert not nan_diff.any() and not inf_diff.any() and close.all(), (
        f"{what}: {int(nan_diff.sum())} elements differ in being NaN, {int(inf_diff.sum())} in an infinity, "
        f"{int((~close).sum())} finite ones by more than 1e-4 (of {got.size}); first NaN difference at "
        f"{np.argwhere(nan_diff)[:1].tolist()}: got {got[nan_diff][:3]}, want {want[nan_diff][:3]}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_nan_and_infinities(dev, name):
    m, inputs, ref = _case(name)
    want = np.asarray(_reference(m, inputs, ref))
    got = np.asarray(dev.load(m.SerializeToString()).run(inputs)[0])
    assert_same_specials(got, want, name)
    if want.dtype.kind == "f" and name not in _NAN_ABSORBING:
        assert np.isnan(got).any(), f"{name}: a NaN in the input left no NaN in the output"


# Ops whose result is defined for NaN or that may legitimately not see one (a slice or gather that skips it, a
# quantization that maps it to an integer, Pow^0 which is 1 for every x, a Clip... no: clip keeps NaN; Shrink and
# ThresholdedRelu give 0 for NaN, as their ONNX definitions' strict comparisons do in onnxruntime and numpy;
# Hardmax's outputs are 0 and 1).
_NAN_ABSORBING = {"Pow^0.0", "Quantize", "DynamicQuantizeLinear", "Slice", "Gather", "GatherElements", "OneHot",
                  "TopK", "Shrink", "Conv+Shrink", "ThresholdedRelu", "Conv+ThresholdedRelu", "Hardmax",
                  "MaxPool(indices)"}

# Runtime ops that never see a float: their inputs are integers (quantized or not) or bool.
INTEGER_ONLY = {"logic", "bitand", "bitor", "bitxor", "shl", "shr", "dequantize", "qconv", "qmatmul", "qgemm",
                "qadd", "qmul", "qactivation", "qavgpool", "qglobalavgpool", "qsoftmax", "matmulinteger",
                "convinteger"}


def test_the_cases_reach_every_runtime_op_that_computes_on_floats():
    reached, acts = set(), set()
    for name in CASES:
        m, _, _ = _case(name)
        t = accm.read(compiler.compile_model(m))
        for n in t["nodes"]:
            reached.add(accm.OP_NAMES[n["op"]])
            acts.add(n["activation"])
    ops = set(accm.OP_NAMES.values())
    missing = ops - reached - INTEGER_ONLY
    assert not missing, f"no NaN case reaches the runtime ops {sorted(missing)}: add them to CASES"
    missing_acts = set(range(1, max(accm.ACTIVATIONS.values()) + 1)) - acts
    assert not missing_acts, f"no NaN case reaches the activations {sorted(missing_acts)}"
