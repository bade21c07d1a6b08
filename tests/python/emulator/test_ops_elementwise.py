"""Elementwise math, reductions and layer normalization, compiled from ONNX and run on the emulator,
against onnxruntime: the unary functions (activation codes 7-42, standalone and fused into the op that
produces their input), Pow / Min / Max with numpy broadcasting, every Reduce* op over every axes
combination of a rank-4 tensor, LayerNormalization, the SiLU and decomposed layer norm fusions, and
the CompileErrors for what is not supported. Inputs are random with fixed seeds."""

import math

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from accel import compiler
from accel.compiler import accm

F = TensorProto.FLOAT


# ---------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------

def make(nodes, inputs, outputs, inits=None, opset=18):
    """inputs: [(name, shape)] float32 or [(name, shape, elem_type)]; outputs: names; inits: {name: array}."""
    vis = [helper.make_tensor_value_info(i[0], i[2] if len(i) > 2 else F, list(i[1])) for i in inputs]
    g = helper.make_graph(nodes, "t", vis, [helper.make_tensor_value_info(o, F, None) for o in outputs],
                          [numpy_helper.from_array(np.asarray(v), k) for k, v in (inits or {}).items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def rnd(shape, seed=0, scale=1.0, shift=0.0):
    return np.asarray(np.random.default_rng(seed).standard_normal(shape) * scale + shift, np.float32)


def for_model(m, feeds):
    """The feeds the model's graph inputs take."""
    names = {i.name for i in m.graph.input}
    return {k: v for k, v in feeds.items() if k in names}


def ort_run(m, feeds):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    s = ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return s.run(None, for_model(m, feeds))


def emu_run(dev, m, feeds):
    """The device's outputs in the ONNX model's order: a device may give them in its own (VART's runner gives a
    DPU subgraph's tensors sorted by name, as XIR does), so they are matched by name."""
    model = dev.load(m.SerializeToString())
    got = dict(zip((o.name for o in model.outputs), (np.array(o) for o in model.run(for_model(m, feeds)))))
    return [got[o.name] for o in m.graph.output]


def check(dev, m, feeds, rtol=1e-5, atol=1e-6):
    """The emulator's outputs equal onnxruntime's (same shapes; NaN where it has NaN); returns them."""
    want = ort_run(m, feeds)
    got = emu_run(dev, m, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    return got


def compiled(m):
    """[(op name, activation name, node record)] of the compiled model."""
    t = accm.read(compiler.compile_model(m.SerializeToString()))
    return [(accm.OP_NAMES[n["op"]], accm.ACTIVATION_NAMES[n["activation"]], n) for n in t["nodes"]]


def ops(m):
    return [(op, act) for op, act, _ in compiled(m)]


def unary(op, shape, opset=18, **attrs):
    return make([helper.make_node(op, ["x"], ["y"], **attrs)], [("x", shape)], ["y"], opset=opset)


EDGE = np.array([-np.inf, -1e30, -88.5, -10.0, -1.0, -0.5, -1e-30, -0.0, 0.0, 1e-40, 1e-30, 0.5, 1.0, 2.5,
                 10.0, 88.5, 1e30, np.inf, np.nan], np.float32)
POSITIVE_EDGE = np.array([0.0, -0.0, 1e-40, 1e-30, 1e-6, 0.5, 1.0, 2.0, 1e30, np.inf, -1.0, -np.inf, np.nan],
                         np.float32)


# ---------------------------------------------------------------------------------------------------
# unary functions (activation codes 7-42)
# ---------------------------------------------------------------------------------------------------

UNARY = [  # (ONNX op, attributes, opset, activation code name)
    ("Tanh", {}, 18, "tanh"), ("Sqrt", {}, 18, "sqrt"), ("Exp", {}, 18, "exp"), ("Log", {}, 18, "log"),
    ("Neg", {}, 18, "neg"), ("Abs", {}, 18, "abs"), ("Reciprocal", {}, 18, "reciprocal"),
    ("Erf", {}, 18, "erf"), ("Floor", {}, 18, "floor"), ("Ceil", {}, 18, "ceil"), ("Round", {}, 18, "round"),
    ("Elu", {}, 18, "elu"), ("Elu", {"alpha": 0.3}, 18, "elu"), ("Selu", {}, 18, "selu"),
    ("Selu", {"alpha": 1.2, "gamma": 0.7}, 18, "selu"), ("Softplus", {}, 18, "softplus"),
    ("Softsign", {}, 18, "softsign"), ("Gelu", {}, 20, "gelu"), ("Gelu", {"approximate": "none"}, 20, "gelu"),
    ("Gelu", {"approximate": "tanh"}, 20, "gelu_tanh"),
    ("Sign", {}, 18, "sign"), ("Sin", {}, 18, "sin"), ("Cos", {}, 18, "cos"), ("Tan", {}, 18, "tan"),
    ("Asin", {}, 18, "asin"), ("Acos", {}, 18, "acos"), ("Atan", {}, 18, "atan"), ("Sinh", {}, 18, "sinh"),
    ("Cosh", {}, 18, "cosh"), ("Asinh", {}, 18, "asinh"), ("Acosh", {}, 18, "acosh"), ("Atanh", {}, 18, "atanh"),
    ("Mish", {}, 18, "mish"), ("Celu", {}, 18, "celu"), ("Celu", {"alpha": 0.4}, 18, "celu"),
    ("Shrink", {}, 18, "shrink"), ("Shrink", {"lambd": 1.2, "bias": 0.3}, 18, "shrink"),
    ("ThresholdedRelu", {}, 18, "thresholded_relu"), ("ThresholdedRelu", {"alpha": -0.4}, 18, "thresholded_relu"),
    ("Swish", {}, 24, "swish"), ("Swish", {"alpha": 0.7}, 24, "swish"),
]
_IDS = [f"{op}-{'-'.join(f'{k}={v}' for k, v in a.items()) or 'default'}" for op, a, _, _ in UNARY]
_POSITIVE_ONLY = {"Sqrt", "Log"}
# Functions defined on part of the line: the random inputs are mapped into it (NaN outside is the edge test's).
_DOMAIN = {"Asin": lambda x: np.tanh(x), "Acos": lambda x: np.tanh(x), "Atanh": lambda x: np.tanh(x),
           "Acosh": lambda x: np.abs(x) + 1.0}


@pytest.mark.parametrize("op,attrs,opset,act", UNARY, ids=_IDS)
def test_unary_matches_onnxruntime(dev, op, attrs, opset, act):
    m = unary(op, (3, 7, 37), opset, **attrs)  # 777 elements: vector loops and their tails
    assert ops(m) == [("activation", act)]
    x = rnd((3, 7, 37), seed=1, scale=3.0)
    if op in _POSITIVE_ONLY:
        x = np.abs(x) + 1e-3
    x = _DOMAIN.get(op, lambda v: v)(x).astype(np.float32)
    check(dev, m, {"x": x})


@pytest.mark.parametrize("op,attrs,opset,act", UNARY, ids=_IDS)
def test_unary_edge_values(dev, op, attrs, opset, act):
    """inf, -inf, NaN, signed zeros, subnormals, huge values, and negatives for sqrt / log (NaN)."""
    x = POSITIVE_EDGE if op in _POSITIVE_ONLY else EDGE
    m = unary(op, x.shape, opset, **attrs)
    got = check(dev, m, {"x": x})[0]
    if op in _POSITIVE_ONLY:
        assert np.isnan(got[x < 0]).all() and np.isnan(got[-1])


def test_unary_wide_range_exp_log(dev):
    """exp over/underflow to inf and 0 through the subnormals, log of subnormals, as onnxruntime."""
    x = np.concatenate([np.linspace(-110, 95, 4001), -np.logspace(-38, 1, 500)]).astype(np.float32)
    check(dev, unary("Exp", x.shape), {"x": x}, rtol=2e-6, atol=0)
    p = np.logspace(-44, 38, 4001).astype(np.float32)
    check(dev, unary("Log", p.shape), {"x": p}, rtol=2e-6, atol=0)


@pytest.mark.parametrize("op,ref", [
    ("Erf", np.vectorize(math.erf)), ("Tanh", np.tanh), ("Exp", np.exp), ("Log", np.log),
    ("Softplus", lambda x: np.logaddexp(0.0, x)), ("Sin", np.sin), ("Cos", np.cos), ("Atan", np.arctan),
    ("Sinh", np.sinh), ("Asinh", np.arcsinh), ("Mish", lambda x: x * np.tanh(np.logaddexp(0.0, x))),
    ("Celu", lambda x: np.where(x > 0, x, np.expm1(x))), ("Swish", lambda x: x / (1.0 + np.exp(-x))),
])
def test_unary_accuracy_against_float64(dev, op, ref):
    """Relative error below 1e-6 against float64 math over a dense sweep (onnxruntime's own float32
    functions are less accurate than this bound in places)."""
    if op == "Log":
        x = np.logspace(-37, 37, 20001).astype(np.float32)
    elif op == "Exp":
        x = np.linspace(-87, 88, 20001).astype(np.float32)
    else:
        x = np.concatenate([np.linspace(-12, 12, 20001), np.logspace(-30, 0, 2001)]).astype(np.float32)
    got = emu_run(dev, unary(op, x.shape, 24 if op == "Swish" else 18), {"x": x})[0].astype(np.float64)
    want = ref(x.astype(np.float64))
    rel = np.abs(got - want) / np.maximum(np.abs(want), 1e-30)
    assert rel.max() < 1e-6, (op, float(x[rel.argmax()]), float(rel.max()))


def test_sign_keeps_zeros_and_nan(dev):
    x = np.array([-2, -0.0, 0, 3.5, np.nan, -np.inf, np.inf, 1e-40, -1e-40], np.float32)
    got = check(dev, unary("Sign", x.shape), {"x": x})[0]
    np.testing.assert_array_equal(got, np.array([-1, -0.0, 0, 1, np.nan, -1, 1, 1, -1], np.float32))
    assert np.signbit(got[1]) and not np.signbit(got[2])


def test_shrink_and_thresholded_relu_at_their_bounds(dev):
    """The bounds themselves give 0 (strict comparisons, as ONNX defines them), and so does NaN."""
    x = np.array([-1.5, -1.2, -1.1999999, 0.0, 1.1999999, 1.2, 1.5, -np.inf, np.inf, np.nan], np.float32)
    got = check(dev, unary("Shrink", x.shape, lambd=1.2, bias=0.25), {"x": x})[0]
    want = np.where(x < -1.2, x + 0.25, np.where(x > 1.2, x - 0.25, 0)).astype(np.float32)
    np.testing.assert_array_equal(got, want)
    got = check(dev, unary("ThresholdedRelu", x.shape, alpha=1.2), {"x": x})[0]
    np.testing.assert_array_equal(got, np.where(x > np.float32(1.2), x, 0).astype(np.float32))


def test_activations_of_1_5_make_a_1_5_file_and_older_ones_do_not():
    """An old reader does not know codes 26 and up: a model using one says 1.5; one fused into a conv too."""
    minor = [accm.read(compiler.compile_model(unary(op, (4,))))["header"]["version_minor"]
             for op in ("Tanh", "Sin", "ThresholdedRelu")]
    assert minor == [1, 5, 5]
    conv = make([helper.make_node("Conv", ["x", "w"], ["h"]), helper.make_node("Mish", ["h"], ["y"])],
                [("x", (1, 2, 3, 3))], ["y"], {"w": rnd((2, 2, 1, 1))})
    assert compiled(conv)[0][:2] == ("conv", "mish")
    assert accm.read(compiler.compile_model(conv.SerializeToString()))["header"]["version_minor"] == 5


def test_celu_alpha_zero_refused():
    with pytest.raises(compiler.CompileError, match=r"'c1'.*alpha 0"):
        compiled(make([helper.make_node("Celu", ["x"], ["y"], name="c1", alpha=0.0)], [("x", (4,))], ["y"]))


def test_round_halves_to_even(dev):
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 2.4999998, -2.5000002, 1e20], np.float32)
    got = check(dev, unary("Round", x.shape), {"x": x})[0]
    np.testing.assert_array_equal(got, np.array([-2, -2, -0.0, 0, 2, 2, 4, 2, -3, 1e20], np.float32))
    assert np.signbit(got[2])


@pytest.mark.parametrize("producer", ["Conv", "MatMul", "Gemm", "Add", "ReduceSum", "Max"])
@pytest.mark.parametrize("op,attrs,opset", [("Tanh", {}, 18), ("Gelu", {}, 20), ("Exp", {}, 18),
                                            ("Elu", {"alpha": 0.5}, 18), ("Pow", {}, 18), ("Sin", {}, 18),
                                            ("Shrink", {"lambd": 0.3, "bias": 0.1}, 18)])
def test_function_fused_into_producer(dev, producer, op, attrs, opset):
    """A unary function on another op's output becomes that op's fused activation."""
    inits = {}
    if producer == "Conv":
        inits["w"] = rnd((4, 3, 3, 3), seed=2, scale=0.3)
        first = helper.make_node("Conv", ["x", "w"], ["h"], pads=[1, 1, 1, 1])
        shape = (1, 3, 6, 6)
    elif producer in ("MatMul", "Gemm"):
        inits["w"] = rnd((6, 5), seed=2, scale=0.3)
        first = helper.make_node(producer, ["x", "w"], ["h"])
        shape = (4, 6)
    elif producer == "ReduceSum":
        inits["axes"] = np.array([1], np.int64)
        first = helper.make_node("ReduceSum", ["x", "axes"], ["h"])
        shape = (4, 6, 5)
    else:
        inits["c"] = rnd((5,), seed=2)
        first = helper.make_node(producer, ["x", "c"], ["h"])
        shape = (4, 6, 5)
    if op == "Pow":
        inits["e"] = np.array(2.0, np.float32)
        second = helper.make_node("Pow", ["h", "e"], ["y"])
    else:
        second = helper.make_node(op, ["h"], ["y"], **attrs)
    m = make([first, second], [("x", shape)], ["y"], inits, opset=opset)
    nodes = compiled(m)
    assert len(nodes) == 1 and nodes[0][1] != "none", nodes
    check(dev, m, {"x": rnd(shape, seed=3)}, rtol=2e-5, atol=1e-5)


def test_gelu_unsupported_approximate():
    with pytest.raises(compiler.CompileError, match=r"approximate 'fast'.*'Gelu'.*'g1'"):
        compiled(make([helper.make_node("Gelu", ["x"], ["y"], name="g1", approximate="fast")],
                      [("x", (4,))], ["y"], opset=20))


# ---------------------------------------------------------------------------------------------------
# Pow, Min, Max
# ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("e", [2.0, 3.0, 0.5, -1.0, 1.0, 0.0, 1.7, -2.5, 4.0])
def test_pow_constant_scalar_exponent(dev, e):
    """A constant scalar exponent is an activation (a copy for 1); negative bases with a fractional
    exponent give NaN, and the edge values follow powf, as onnxruntime."""
    m = make([helper.make_node("Pow", ["x", "e"], ["y"])], [("x", (101,))], ["y"],
             {"e": np.array(e, np.float32)})
    assert ops(m) == ([("copy", "none")] if e == 1.0 else [("activation", "pow")])
    check(dev, m, {"x": rnd((101,), seed=4, scale=2.0)}, rtol=2e-6)
    check(dev, make([helper.make_node("Pow", ["x", "e"], ["y"])], [("x", EDGE.shape)], ["y"],
                    {"e": np.array(e, np.float32)}), {"x": EDGE}, rtol=2e-6)


@pytest.mark.parametrize("op", ["Sum", "Mean"])
@pytest.mark.parametrize("shapes", [[(4, 6, 5)], [(4, 6, 5), (6, 1)], [(4, 6, 5), (5,), (4, 1, 1), (6, 5)]])
def test_sum_and_mean_broadcast(dev, op, shapes):
    """One to four inputs broadcast against each other, against onnxruntime and float64 numpy; Mean is the sum
    divided by the count."""
    names = [f"x{i}" for i in range(len(shapes))]
    m = make([helper.make_node(op, names, ["y"])], list(zip(names, shapes)), ["y"])
    feeds = {n: rnd(s, seed=40 + i, scale=3.0) for i, (n, s) in enumerate(zip(names, shapes))}
    (got,) = check(dev, m, feeds)
    want = sum(np.broadcast_arrays(*[f.astype(np.float64) for f in feeds.values()]))
    np.testing.assert_allclose(got, want / (len(shapes) if op == "Mean" else 1), rtol=1e-5, atol=1e-6)
    expected = ["copy"] if len(shapes) == 1 else ["add"] * (len(shapes) - 1) + (["div"] if op == "Mean" else [])
    assert [o for o, _ in ops(m)] == expected


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float64])
def test_pow_exponent_of_other_dtypes(dev, dtype):
    m = make([helper.make_node("Pow", ["x", "e"], ["y"])], [("x", (3, 5))], ["y"], {"e": np.array([3], dtype)})
    assert ops(m) == [("activation", "pow")]
    check(dev, m, {"x": rnd((3, 5), seed=5)})
    m = make([helper.make_node("Pow", ["x", "e"], ["y"])], [("x", (3, 5))], ["y"],
             {"e": np.arange(5).astype(dtype)})
    assert ops(m) == [("pow", "none")]
    check(dev, m, {"x": rnd((3, 5), seed=5)})


BROADCAST = [((2, 3, 4, 5), (5,)), ((2, 1, 4, 1), (3, 1, 5)), ((4,), (2, 3, 4)), ((2, 3), ()),
             ((), (2, 3)), ((1, 1), (7, 1)), ((3, 1, 4, 5), (3, 2, 1, 5)), ((6, 33), (6, 33))]


@pytest.mark.parametrize("a,b", BROADCAST, ids=[f"{a}x{b}" for a, b in BROADCAST])
@pytest.mark.parametrize("op", ["Pow", "Min", "Max"])
def test_binary_broadcasting(dev, op, a, b):
    m = make([helper.make_node(op, ["a", "b"], ["y"])], [("a", a), ("b", b)], ["y"])
    assert ops(m) == [(op.lower(), "none")]
    xa = rnd(a, seed=6)
    if op == "Pow":
        xa = np.asarray(np.abs(xa) + 0.1, np.float32)
    check(dev, m, {"a": xa, "b": rnd(b, seed=7)}, rtol=2e-6)


def test_pow_negative_base_and_edges(dev):
    """Negative bases: real results for integer exponents, NaN otherwise; 0^negative is inf."""
    base = np.array([-2.0, -2.0, -2.0, 0.0, -0.0, 0.0, np.inf, -np.inf, np.nan, 1.0, -1.0], np.float32)
    expo = np.array([2.0, 3.0, 0.5, -1.0, -1.0, 0.0, -2.0, 3.0, 0.0, np.nan, np.inf], np.float32)
    m = make([helper.make_node("Pow", ["a", "b"], ["y"])], [("a", base.shape), ("b", expo.shape)], ["y"])
    check(dev, m, {"a": base, "b": expo})


@pytest.mark.parametrize("op", ["Min", "Max"])
def test_min_max_nan_and_variadic(dev, op):
    a = np.array([1.0, np.nan, 3.0, -np.inf, 0.0], np.float32)
    b = np.array([np.nan, 2.0, 2.0, 5.0, -0.0], np.float32)
    m = make([helper.make_node(op, ["a", "b"], ["y"])], [("a", (5,)), ("b", (5,))], ["y"])
    got = check(dev, m, {"a": a, "b": b})[0]
    assert np.isnan(got[:2]).all()
    m3 = make([helper.make_node(op, ["a", "b", "c"], ["y"])], [("a", (2, 1, 4)), ("b", (3, 1)), ("c", (4,))],
              ["y"])
    assert ops(m3) == [(op.lower(), "none")] * 2
    check(dev, m3, {"a": rnd((2, 1, 4), seed=8), "b": rnd((3, 1), seed=9), "c": rnd((4,), seed=10)})
    m1 = make([helper.make_node(op, ["a"], ["y"])], [("a", (2, 3))], ["y"])
    assert [o for o, _ in ops(m1)] == ["copy"]
    check(dev, m1, {"a": rnd((2, 3), seed=11)})
    mc = make([helper.make_node(op, ["a", "c"], ["y"])], [("a", (2, 3))], ["y"], {"c": rnd((3,), seed=12)})
    check(dev, mc, {"a": rnd((2, 3), seed=13)})


# ---------------------------------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------------------------------

REDUCE_OPS = ["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare", "ReduceL1",
              "ReduceL2", "ReduceLogSumExp"]


def reduce_model(axes, keepdims, shape, opset=18, ops_=REDUCE_OPS, noop=None):
    """Every op in ops_ on its own output y_<op>; ReduceProd reads p (values near 1), the others x."""
    nodes, inits = [], {}
    for op in ops_:
        src = "p" if op == "ReduceProd" else "x"
        kw = {"keepdims": keepdims}
        if noop is not None:
            kw["noop_with_empty_axes"] = noop
        ins = [src]
        if axes is not None:
            if opset >= 18 or (op == "ReduceSum" and opset >= 13):
                inits["axes"] = np.array(axes, np.int64)
                ins.append("axes")
            else:
                kw["axes"] = list(axes)
        nodes.append(helper.make_node(op, ins, [f"y_{op}"], **kw))
    inputs = [("x", shape)] + ([("p", shape)] if "ReduceProd" in ops_ else [])
    return make(nodes, inputs, [f"y_{op}" for op in ops_], inits, opset=opset)


def reduce_feeds(shape, seed=14):
    return {"x": rnd(shape, seed=seed), "p": rnd(shape, seed=seed + 1, scale=0.1, shift=1.0)}


@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("mask", range(1, 16))
def test_reduce_every_axes_combination(dev, mask, keepdims):
    shape = (2, 3, 4, 5)
    axes = [i for i in range(4) if mask >> i & 1]
    m = reduce_model(axes, keepdims, shape)
    kinds = {op for op, _ in ops(m)}
    assert kinds <= {"reduce", "globalavgpool", "copy"}
    check(dev, m, reduce_feeds(shape), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("shape", [(2, 3, 6, 7), (1, 40, 120), (3, 5, 257)])
def test_reduce_mean_and_sum_over_trailing_axes_are_onnxruntimes_bits(dev, shape):
    # A sum over contiguous elements adds in onnxruntime's order (quantized models round such means, as
    # the layer norms of a QDQ transformer do), so the results are equal, not close.
    for axes, keepdims in (([-1], 1), ([-1, -2], 1), ([-1, -2], 0)):
        m = reduce_model(axes, keepdims, shape, ops_=["ReduceMean", "ReduceSum"])
        assert {o for o, _ in ops(m)} <= {"reduce", "copy"}
        check(dev, m, reduce_feeds(shape), rtol=0, atol=0)


def test_reduce_negative_axes(dev):
    shape = (2, 3, 6, 7)
    m = reduce_model([2, 3], 1, shape, ops_=["ReduceSum", "ReduceMax"])
    assert [o for o, _ in ops(m)] == ["reduce", "reduce"]
    check(dev, m, reduce_feeds(shape))


@pytest.mark.parametrize("shape,axes", [((8, 1000), [1]), ((1000, 7), [0]), ((4, 300, 5), [1]),
                                        ((2, 3, 40, 50), [2, 3]), ((2, 40, 50, 3), [1, 2]),
                                        ((5, 1, 1, 3), [1, 2]), ((1, 1), [0, 1]), ((3, 4, 5, 6), [0, 2]),
                                        ((5, 1100), [0]), ((3, 7, 600), [1]), ((6, 4, 3), [0, 1]),
                                        ((2, 3, 1, 4), [2])])
def test_reduce_large_and_degenerate(dev, shape, axes):
    """Long rows, long columns (several row blocks and chunks), and reductions over size-1 axes only."""
    check(dev, reduce_model(axes, 1, shape), reduce_feeds(shape, seed=16), rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("axes", [[1], [0], [0, 1]])
def test_reduce_max_min_propagate_nan(dev, axes):
    """A NaN among the reduced elements makes max and min NaN (as numpy; onnxruntime's result depends
    on where the NaN is)."""
    x = rnd((6, 40), seed=32)
    x[2, 5] = np.nan
    x[4, :] = np.nan
    m = reduce_model(axes, 0, x.shape, ops_=["ReduceMax", "ReduceMin"])
    got = emu_run(dev, m, {"x": x})
    np.testing.assert_array_equal(got[0], np.max(x, axis=tuple(axes)))
    np.testing.assert_array_equal(got[1], np.min(x, axis=tuple(axes)))


@pytest.mark.parametrize("opset", [11, 13, 17, 18])
def test_reduce_axes_attribute_or_input(dev, opset):
    """Axes are an attribute before opset 18 (ReduceSum: 13) and an input from then on."""
    shape = (3, 4, 5)
    check(dev, reduce_model([0, 2], 0, shape, opset=opset), reduce_feeds(shape), rtol=2e-6)
    check(dev, reduce_model(None, 1, shape, opset=opset), reduce_feeds(shape), rtol=2e-6)
    check(dev, reduce_model(None, 0, shape, opset=opset), reduce_feeds(shape), rtol=2e-6)


@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce_noop_with_empty_axes(dev, keepdims):
    """No axes: with noop_with_empty_axes=1 the input (squared or |x| for SumSquare, L1, L2, as
    onnxruntime), else a reduction over every axis; an empty axes tensor counts as no axes."""
    shape = (3, 4)
    for noop in (0, 1):
        check(dev, reduce_model(None, keepdims, shape, noop=noop), reduce_feeds(shape), rtol=2e-6)
        check(dev, reduce_model([], keepdims, shape, noop=noop), reduce_feeds(shape), rtol=2e-6)


@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce_scalar_and_vector(dev, keepdims):
    check(dev, reduce_model(None, keepdims, ()), reduce_feeds(()), rtol=2e-6)
    check(dev, reduce_model([0], keepdims, (9,)), reduce_feeds((9,)), rtol=2e-6)


def test_reduce_log_sum_exp_is_stable_and_keeps_inf(dev):
    x = np.array([[1000.0, 1000.0, -np.inf], [-np.inf, -np.inf, -np.inf], [-1000.0, -1001.0, -1002.0],
                  [np.inf, 1.0, 2.0]], np.float32)
    m = reduce_model([1], 0, x.shape, ops_=["ReduceLogSumExp", "ReduceMax", "ReduceMin", "ReduceL2"])
    got = check(dev, m, {"x": x})
    assert np.isfinite(got[0][0]) and got[0][1] == -np.inf and got[0][3] == np.inf


def test_reduce_errors():
    rep = reduce_model([1, -2], 1, (2, 3, 4), ops_=["ReduceSum"])
    with pytest.raises(compiler.CompileError, match="repeated axes"):
        compiled(rep)
    out_of_range = reduce_model([3], 1, (2, 3, 4), ops_=["ReduceMax"])
    with pytest.raises(compiler.CompileError, match="axes 3 is out of range"):
        compiled(out_of_range)
    m = make([helper.make_node("ReduceSum", ["x", "a"], ["y"], name="r1")],
             [("x", (2, 3)), ("a", (1,), TensorProto.INT64)], ["y"])
    with pytest.raises(compiler.CompileError, match=r"axes.*must be a constant"):
        compiled(m)


# ---------------------------------------------------------------------------------------------------
# LayerNormalization
# ---------------------------------------------------------------------------------------------------

LN_CASES = [  # (shape, axis, scale shape, bias shape or None, epsilon)
    ((2, 5, 16), -1, (16,), (16,), 1e-5), ((2, 3, 4, 5), -2, (4, 5), (4, 5), 1e-3),
    ((2, 3, 4, 5), 1, (3, 4, 5), None, 1e-5), ((6, 7), 0, (6, 7), (7,), 1e-6),
    ((2, 3, 4, 5), -2, (5,), (4, 1), 1e-5), ((3, 200), 1, (1, 200), (200,), 1e-5),
    ((3, 17), -1, (1, 1), (1, 17), 1e-5),  # leading 1s beyond the normalized rank (a fuzzer finding)
]


@pytest.mark.parametrize("shape,axis,sshape,bshape,eps", LN_CASES)
@pytest.mark.parametrize("const_params", [True, False])
def test_layernorm(dev, shape, axis, sshape, bshape, eps, const_params):
    ins = ["x", "s"] + (["b"] if bshape else [])
    m_nodes = [helper.make_node("LayerNormalization", ins, ["y"], axis=axis, epsilon=eps, stash_type=1)]
    params = {"s": rnd(sshape, seed=17, shift=1.0)}
    if bshape:
        params["b"] = rnd(bshape, seed=18)
    if const_params:
        m = make(m_nodes, [("x", shape)], ["y"], params, opset=17)
        feeds = {"x": rnd(shape, seed=19, scale=3.0, shift=2.0)}
    else:
        m = make(m_nodes, [("x", shape)] + [(k, v.shape) for k, v in params.items()], ["y"], opset=17)
        feeds = {"x": rnd(shape, seed=19, scale=3.0, shift=2.0), **params}
    assert "layernorm" in [op for op, _ in ops(m)]
    check(dev, m, feeds, rtol=1e-5, atol=1e-5)


def test_layernorm_refusals():
    x = [("x", (2, 8))]
    s = {"s": np.ones(8, np.float32)}
    used_mean = make([helper.make_node("LayerNormalization", ["x", "s"], ["y", "mean"], name="ln1")], x,
                     ["y", "mean"], s, opset=17)
    with pytest.raises(compiler.CompileError, match=r"output 'mean'.*'LayerNormalization' \(node 'ln1'\)"):
        compiled(used_mean)
    bad_scale = make([helper.make_node("LayerNormalization", ["x", "s"], ["y"], name="ln2")], x, ["y"],
                     {"s": np.ones((2, 8), np.float32)}, opset=17)
    with pytest.raises(compiler.CompileError, match=r"scale shape \(2, 8\).*'ln2'"):
        compiled(bad_scale)
    zero_eps = make([helper.make_node("LayerNormalization", ["x", "s"], ["y"], name="ln3", epsilon=0.0)], x,
                    ["y"], s, opset=17)
    with pytest.raises(compiler.CompileError, match=r"epsilon=0.0.*'ln3'"):
        compiled(zero_eps)


# ---------------------------------------------------------------------------------------------------
# unsupported dtypes
# ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op,extra_inputs,dtype,name", [
    ("Abs", [], TensorProto.INT32, "int32"), ("Neg", [], TensorProto.INT64, "int64"),
    ("Sqrt", [], TensorProto.DOUBLE, "float64"), ("Max", ["b"], TensorProto.DOUBLE, "float64"),
    ("ReduceSum", [], TensorProto.INT64, "int64"), ("ReduceMax", [], TensorProto.DOUBLE, "float64"),
    ("Pow", ["b"], TensorProto.DOUBLE, "float64"), ("LayerNormalization", ["b"], TensorProto.DOUBLE, "float64"),
])
def test_unsupported_dtype_is_named(op, extra_inputs, dtype, name):
    ins = [("a", (2, 3), dtype)] + [(b, (3,), dtype) for b in extra_inputs]
    m = make([helper.make_node(op, ["a"] + extra_inputs, ["y"], name="n1")], ins, ["y"], opset=18)
    with pytest.raises(compiler.CompileError, match=rf"dtype {name}.*'{op}' \(node 'n1'\)"):
        compiled(m)


def test_pow_runtime_exponent_of_other_dtype():
    """int32 and int64 exponents are powcast's (test_ops_powcast.py); unsigned ones are refused."""
    m = make([helper.make_node("Pow", ["a", "e"], ["y"], name="p1")], [("a", (3,)), ("e", (3,), TensorProto.UINT64)],
             ["y"])
    with pytest.raises(compiler.CompileError, match=r"dtype uint64.*'Pow' \(node 'p1'\)"):
        compiled(m)


# ---------------------------------------------------------------------------------------------------
# fusions
# ---------------------------------------------------------------------------------------------------

def conv_silu_model(sigmoid_first, producer="Conv", extra_output=None):
    if producer == "Conv":
        first = helper.make_node("Conv", ["x", "w", "b"], ["h"], pads=[1, 1, 1, 1])
        inits = {"w": rnd((4, 3, 3, 3), seed=20, scale=0.4), "b": rnd((4,), seed=21)}
        shape = (1, 3, 8, 8)
    else:
        first = helper.make_node(producer, ["x", "w"], ["h"])
        inits = {"w": rnd((6, 5), seed=20, scale=0.4)}
        shape = (4, 6)
    nodes = [first, helper.make_node("Sigmoid", ["h"], ["s"]),
             helper.make_node("Mul", ["s", "h"] if sigmoid_first else ["h", "s"], ["y"])]
    return make(nodes, [("x", shape)], ["y"] + ([extra_output] if extra_output else []), inits), shape


@pytest.mark.parametrize("sigmoid_first", [False, True])
@pytest.mark.parametrize("producer", ["Conv", "MatMul", "Gemm"])
def test_silu_fused_into_producer(dev, producer, sigmoid_first):
    m, shape = conv_silu_model(sigmoid_first, producer)
    nodes = ops(m)
    assert len(nodes) == 1 and nodes[0][1] == "silu", nodes
    assert nodes[0][0] == ("conv" if producer == "Conv" else "gemm" if producer == "Gemm" else "matmul")
    check(dev, m, {"x": rnd(shape, seed=22, scale=2.0)}, rtol=1e-5, atol=1e-6)


def test_silu_standalone_and_paddle_swish(dev):
    """Sigmoid(x) * x on a graph input is one silu activation; so is Paddle's Sigmoid(x * 1) * x."""
    m = make([helper.make_node("Sigmoid", ["x"], ["s"]), helper.make_node("Mul", ["x", "s"], ["y"])],
             [("x", (5, 33))], ["y"])
    assert ops(m) == [("activation", "silu")]
    check(dev, m, {"x": rnd((5, 33), seed=23, scale=4.0)})
    x = np.array([-np.inf, -100, -1, 0, 1, 100, np.inf, np.nan], np.float32)
    check(dev, make([helper.make_node("Sigmoid", ["x"], ["s"]), helper.make_node("Mul", ["s", "x"], ["y"])],
                    [("x", x.shape)], ["y"]), {"x": x})
    swish = make([helper.make_node("Conv", ["x", "w"], ["h"]), helper.make_node("Mul", ["h", "one"], ["hb"]),
                  helper.make_node("Sigmoid", ["hb"], ["s"]), helper.make_node("Mul", ["h", "s"], ["y"])],
                 [("x", (1, 3, 5, 5))], ["y"],
                 {"w": rnd((4, 3, 1, 1), seed=24), "one": np.array([1.0], np.float32)}, opset=12)
    assert ops(swish) == [("conv", "silu")]
    check(dev, swish, {"x": rnd((1, 3, 5, 5), seed=25)})


def test_silu_not_fused_when_sigmoid_is_used_elsewhere(dev):
    m, shape = conv_silu_model(False, extra_output="s")
    nodes = ops(m)
    assert ("activation", "sigmoid") in nodes and not any(a == "silu" for _, a in nodes)
    check(dev, m, {"x": rnd(shape, seed=26)})
    other = make([helper.make_node("Sigmoid", ["x"], ["s"]), helper.make_node("Mul", ["z", "s"], ["y"])],
                 [("x", (4,)), ("z", (4,))], ["y"])
    assert not any(a == "silu" for _, a in ops(other))
    check(dev, other, {"x": rnd((4,), seed=27), "z": rnd((4,), seed=28)})


def paddle_layernorm(n=120, t=40, opset=12, square="pow", scale=True, bias=True, extra_output=None,
                     axes=(-1,), shape=None):
    """The layer norm of PP-OCRv4's recognizer as paddle2onnx writes it (checked against
    ch_PP-OCRv4_rec_infer.onnx: ReduceMean axes=[-1], Sub, Pow by a float scalar 2, ReduceMean, Add a
    float scalar 1e-5, Sqrt, Div, Mul by w[120], Add b[120], opset 12)."""
    shape = shape or (1, t, n)
    reduced = sorted(a % len(shape) for a in axes)
    norm = tuple(shape[i] if i in reduced else 1 for i in range(reduced[0], len(shape)))
    inits = {"two": np.array(2.0, np.float32), "eps": np.array(1e-5, np.float32)}
    mean_kw = {"axes": list(axes)} if opset < 18 else {}
    mean_in = [] if opset < 18 else ["axes"]
    if opset >= 18:
        inits["axes"] = np.array(axes, np.int64)
    nodes = [helper.make_node("ReduceMean", ["x"] + mean_in, ["mean"], **mean_kw),
             helper.make_node("Sub", ["x", "mean"], ["d"]),
             helper.make_node("Pow", ["d", "two"], ["d2"]) if square == "pow"
             else helper.make_node("Mul", ["d", "d"], ["d2"]),
             helper.make_node("ReduceMean", ["d2"] + mean_in, ["var"], **mean_kw),
             helper.make_node("Add", ["var", "eps"], ["ve"]),
             helper.make_node("Sqrt", ["ve"], ["sd"]),
             helper.make_node("Div", ["d", "sd"], ["nrm"])]
    last = "nrm"
    if scale:
        inits["w"] = rnd(norm, seed=29, scale=0.2, shift=0.5)
        nodes.append(helper.make_node("Mul", [last, "w"], ["scaled"]))
        last = "scaled"
    if bias:
        inits["b"] = rnd(norm, seed=30, scale=0.2)
        nodes.append(helper.make_node("Add", [last, "b"], ["y"]))
        last = "y"
    outs = [last] + ([extra_output] if extra_output else [])
    return make(nodes, [("x", shape)], outs, inits, opset=opset)


def ln_feeds(shape=(1, 40, 120)):
    return {"x": rnd(shape, seed=31, scale=2.0, shift=1.0)}


@pytest.mark.parametrize("opset", [12, 18])
@pytest.mark.parametrize("square", ["pow", "mul"])
def test_layernorm_fusion_paddle_pattern(dev, opset, square):
    m = paddle_layernorm(opset=opset, square=square)
    nodes = compiled(m)
    assert [(op, act) for op, act, _ in nodes] == [("layernorm", "none")]
    rec = nodes[0][2]
    assert rec["ints"][0] == 2 and abs(rec["floats"][0] - 1e-5) < 1e-12
    fused = check(dev, m, ln_feeds(), rtol=1e-5, atol=1e-5)[0]
    # The same graph kept unfused (an intermediate is also an output) agrees within 1e-5 relative.
    unfused_model = paddle_layernorm(opset=opset, square=square, extra_output="sd")
    assert "layernorm" not in [op for op, _ in ops(unfused_model)]
    unfused = check(dev, unfused_model, ln_feeds(), rtol=1e-5, atol=1e-5)[0]
    np.testing.assert_allclose(fused, unfused, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("scale,bias", [(False, False), (True, False), (False, True)])
def test_layernorm_fusion_optional_affine(dev, scale, bias):
    m = paddle_layernorm(scale=scale, bias=bias)
    assert ops(m) == [("layernorm", "none")]
    check(dev, m, ln_feeds(), rtol=1e-5, atol=1e-5)


def test_layernorm_fusion_over_two_axes(dev):
    m = paddle_layernorm(opset=18, axes=(-2, -1), shape=(2, 3, 4, 10))
    nodes = compiled(m)
    assert [op for op, _, _ in nodes] == ["layernorm"] and nodes[0][2]["ints"][0] == 2
    check(dev, m, ln_feeds((2, 3, 4, 10)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("extra", ["mean", "d", "d2", "var", "ve", "sd", "nrm", "scaled"])
def test_layernorm_fusion_not_when_intermediate_is_an_output(dev, extra):
    """An output inside the normalization stops the fusion; the normalized (unscaled) or scaled
    tensor as an output ends the fused node there, the rest staying separate nodes."""
    m = paddle_layernorm(extra_output=extra)
    kinds = [op for op, _ in ops(m)]
    if extra == "nrm":
        assert kinds == ["layernorm", "mul", "add"]
    elif extra == "scaled":
        assert kinds == ["layernorm", "add"]
    else:
        assert "layernorm" not in kinds
    check(dev, m, ln_feeds(), rtol=1e-5, atol=1e-5)


def test_layernorm_fusion_not_when_intermediate_is_read_elsewhere(dev):
    m = paddle_layernorm()
    m.graph.node.append(helper.make_node("Neg", ["d"], ["negd"]))
    m.graph.output.append(helper.make_tensor_value_info("negd", F, None))
    assert "layernorm" not in [op for op, _ in ops(m)]
    check(dev, m, ln_feeds(), rtol=1e-5, atol=1e-5)


def test_layernorm_fusion_not_over_a_leading_axis(dev):
    m = paddle_layernorm(opset=18, axes=(1,), shape=(2, 6, 5))
    assert "layernorm" not in [op for op, _ in ops(m)]
    check(dev, m, ln_feeds((2, 6, 5)), rtol=1e-5, atol=1e-5)
