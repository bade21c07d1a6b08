"""The recurrent ops end to end (ONNX -> accel.compiler -> the emulator's rnn op), against onnxruntime: LSTM,
GRU and RNN over every direction, initial states, sequence lengths (constant and computed, 0 included;
computed ones outside 0..seq_length refused as onnxruntime refuses them),
layout 1, the activations that can be mapped, clip, input_forget, linear_before_reset, peepholes, any
subset of the outputs, batch > 1; a small CRNN-like text recognizer; and the CompileErrors of what is not
supported."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from conftest import runtime_ops as ops
from onnx import TensorProto, helper, numpy_helper

import accel
from accel import compiler
from accel.compiler import accm

# The emulator's own ops: their semantics, not a device's (deselected on vendor devices).
pytestmark = pytest.mark.emulator

RTOL, ATOL = 1e-5, 1e-6
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
OUTS = {"RNN": ("Y", "Y_h"), "GRU": ("Y", "Y_h"), "LSTM": ("Y", "Y_h", "Y_c")}


def rnn_model(op, *, s=5, n=3, i=4, h=6, direction="forward", layout=0, bias=True, init_h=False, init_c=False,
              lens=None, lens_const=False, peep=False, outputs=None, seed=0, **attrs):
    """A one-node model of `op` with random constant weights, its inputs and the feeds for them.
    lens: a list of lengths (an int32 input, or a constant with lens_const)."""
    r = np.random.default_rng(seed)
    d = 2 if direction == "bidirectional" else 1
    g = GATES[op]
    inits = {"W": r.uniform(-0.6, 0.6, (d, g * h, i)).astype(np.float32),
             "R": r.uniform(-0.6, 0.6, (d, g * h, h)).astype(np.float32)}
    xs = (n, s, i) if layout else (s, n, i)
    st = (n, d, h) if layout else (d, n, h)
    feeds = {"X": r.uniform(-2, 2, xs).astype(np.float32)}
    inputs = [("X", TensorProto.FLOAT, xs)]
    names = ["X", "W", "R", ""]
    if bias:
        inits["B"] = r.uniform(-0.5, 0.5, (d, 2 * g * h)).astype(np.float32)
        names[3] = "B"
    names.append("")
    if lens is not None:
        names[4] = "L"
        if lens_const:
            inits["L"] = np.asarray(lens, np.int32)
        else:
            feeds["L"] = np.asarray(lens, np.int32)
            inputs.append(("L", TensorProto.INT32, (n,)))
    for flag, name in ((init_h, "H0"), (init_c, "C0")):
        names.append(name if flag else "")
        if flag:
            feeds[name] = r.uniform(-1, 1, st).astype(np.float32)
            inputs.append((name, TensorProto.FLOAT, st))
    names.append("")
    if peep:
        inits["P"] = r.uniform(-0.5, 0.5, (d, 3 * h)).astype(np.float32)
        names[7] = "P"
    while names[-1] == "":
        names.pop()
    outs = list(outputs or OUTS[op])
    node_outs = [o if o in outs else "" for o in OUTS[op]]
    while node_outs[-1] == "":
        node_outs.pop()
    if layout:
        attrs["layout"] = layout
    node = helper.make_node(op, names, node_outs, "rnn0", direction=direction, hidden_size=h, **attrs)
    gr = helper.make_graph([node], "t", [helper.make_tensor_value_info(a, t, list(sh)) for a, t, sh in inputs],
                           [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs],
                           [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(gr, opset_imports=[helper.make_opsetid("", 14 if layout else 13)])
    m.ir_version = 8
    return m, feeds


def run_ort(m, feeds):
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


def check(dev, m, feeds, want=None):
    got = [np.array(a) for a in dev.load(m.SerializeToString()).run(feeds)]
    want = run_ort(m, feeds) if want is None else want
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL)
    return got


# ---------------------------------------------------------------------------------------------------
# against onnxruntime
# ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("init", [False, True])
def test_directions_and_initial_states(dev, op, direction, init):
    m, feeds = rnn_model(op, direction=direction, init_h=init, init_c=init and op == "LSTM")
    assert ops(m) == ["rnn"]
    check(dev, m, feeds)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("lens_const", [False, True])
def test_sequence_lens(dev, op, direction, lens_const):
    """Rows of their own lengths (0 and the full length among them): zeros in Y past a row's end, its
    last state in Y_h (and Y_c), 0 for a length of 0."""
    m, feeds = rnn_model(op, s=6, n=4, direction=direction, lens=[3, 6, 0, 1], lens_const=lens_const,
                         init_h=True, init_c=op == "LSTM", seed=1)
    check(dev, m, feeds)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("layout", [0, 1])
@pytest.mark.parametrize("bad", [7, -1])
def test_computed_sequence_lens_outside_are_refused(dev, op, layout, bad):
    """A computed length outside 0..seq_length fails the run naming the node, the length, its row and the
    range (the steps' axis of X: 0, or 1 with layout 1), as onnxruntime refuses it (it was clamped before);
    the same model then runs lengths inside, as onnxruntime does (it has no layout 1: there as before)."""
    m, feeds = rnn_model(op, s=6, n=4, layout=layout, lens=[3, 6, 0, 1])
    model = dev.load(m.SerializeToString())
    before = [np.array(a) for a in model.run(feeds)]
    good = dict(feeds)
    feeds["L"] = np.array([3, 6, bad, 1], np.int32)
    words = (rf"node 'rnn0' \(rnn\): sequence length {bad} at \[2\] of input 4 \('L'\) is outside 0..6 "
             rf"\(input 0 \('X'\) has 6 along axis {layout}\)")
    with pytest.raises(accel.InvalidArgumentError, match=words):
        model.run(feeds)
    after = [np.array(a) for a in model.run(good)]
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)
    if layout == 0:
        for got, want in zip(after, run_ort(m, good)):
            np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
        with pytest.raises(Exception, match="Invalid value/s in sequence_lens"):
            run_ort(m, feeds)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_sequence_lens_all_full_is_dropped(dev, op):
    m, feeds = rnn_model(op, lens=[5, 5, 5], lens_const=True)
    check(dev, m, feeds)


def _to_layout0(m, feeds):
    """The layout-1 model `m` as a layout-0 model with transposed feeds (onnxruntime runs layout 0 only)."""
    m0 = type(m)()
    m0.CopyFrom(m)
    node = m0.graph.node[0]
    for a in list(node.attribute):
        if a.name == "layout":
            node.attribute.remove(a)
    for vi in m0.graph.input:
        dims = vi.type.tensor_type.shape.dim
        if len(dims) == 3:
            d0, d1 = dims[0].dim_value, dims[1].dim_value
            dims[0].dim_value, dims[1].dim_value = d1, d0
    f0 = {k: (v.transpose(1, 0, 2).copy() if v.ndim == 3 else v) for k, v in feeds.items()}
    return m0, f0


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_layout_1(dev, op, direction):
    m, feeds = rnn_model(op, layout=1, direction=direction, init_h=True, init_c=op == "LSTM",
                         lens=[2, 5, 4], seed=2)
    m0, f0 = _to_layout0(m, feeds)
    want = run_ort(m0, f0)
    want = [want[0].transpose(2, 0, 1, 3)] + [w.transpose(1, 0, 2) for w in want[1:]]
    check(dev, m, feeds, want=[np.ascontiguousarray(w) for w in want])


ACTS = [
    ("LSTM", ["HardSigmoid", "LeakyRelu", "Softsign"], [0.3, 0.05], [0.4]),
    ("LSTM", ["Sigmoid", "Elu", "Softplus", "HardSigmoid", "Relu", "Tanh"], [0.7], []),
    ("LSTM", ["Sigmoid", "Tanh", "Relu"], [], []),
    ("GRU", ["HardSigmoid", "Softsign"], [], []),
    ("GRU", ["Sigmoid", "Relu", "Sigmoid", "Elu"], [0.5], []),
    ("RNN", ["Relu"], [], []),
    ("RNN", ["LeakyRelu", "Softplus"], [0.2], []),
    ("RNN", ["Softsign"], [], []),
]


@pytest.mark.parametrize("op, acts, alpha, beta", ACTS)
def test_activations(dev, op, acts, alpha, beta):
    k = {"RNN": 1, "GRU": 2, "LSTM": 3}[op]
    direction = "bidirectional" if len(acts) == 2 * k else "forward"
    attrs = {"activations": acts}
    if alpha:
        attrs["activation_alpha"] = alpha
    if beta:
        attrs["activation_beta"] = beta
    m, feeds = rnn_model(op, direction=direction, init_h=True, **attrs)
    check(dev, m, feeds)


def test_rnn_two_default_activations_unidirectional(dev):
    """The old spec's default for RNN listed Tanh twice: one direction takes the first."""
    m, feeds = rnn_model("RNN", activations=["Relu", "Tanh"])
    check(dev, m, feeds)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_clip(dev, op, direction):
    m, feeds = rnn_model(op, direction=direction, clip=0.7, init_h=True, lens=[5, 2, 4])
    check(dev, m, feeds)


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("clip", [None, 0.5])
def test_gru_linear_before_reset(dev, direction, clip):
    attrs = {"clip": clip} if clip else {}
    m, feeds = rnn_model("GRU", direction=direction, linear_before_reset=1, init_h=True, lens=[5, 1, 3], **attrs)
    check(dev, m, feeds)


@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_lstm_input_forget_and_peepholes(dev, direction):
    for input_forget in (0, 1):
        m, feeds = rnn_model("LSTM", direction=direction, peep=True, input_forget=input_forget, init_h=True,
                             init_c=True, lens=[4, 5, 2])
        check(dev, m, feeds)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_no_bias_batch_1_long(dev, op):
    m, feeds = rnn_model(op, s=40, n=1, i=7, h=16, bias=False, direction="bidirectional")
    check(dev, m, feeds)


@pytest.mark.parametrize("outputs", [["Y"], ["Y_h"], ["Y_c"], ["Y_h", "Y_c"], ["Y", "Y_c"]])
def test_output_subsets(dev, outputs):
    m, feeds = rnn_model("LSTM", direction="bidirectional", outputs=outputs, lens=[3, 5, 1], init_c=True)
    check(dev, m, feeds)


def test_gru_y_h_only(dev):
    m, feeds = rnn_model("GRU", direction="reverse", outputs=["Y_h"], lens=[3, 5, 1])
    check(dev, m, feeds)


def test_nan_propagates(dev):
    m, feeds = rnn_model("LSTM", clip=1.0)
    feeds["X"][2, 1, 0] = np.nan
    y, yh, yc = (np.array(a) for a in dev.load(m.SerializeToString()).run(feeds))
    assert np.isnan(y[2:, 0, 1]).all() and np.isnan(yh[0, 1]).all() and np.isnan(yc[0, 1]).all()
    assert not np.isnan(y[:2]).any() and not np.isnan(y[:, :, [0, 2]]).any()


# ---------------------------------------------------------------------------------------------------
# a CRNN-like text recognizer: Conv -> reshape -> bidirectional LSTM -> MatMul -> Softmax
# ---------------------------------------------------------------------------------------------------

def crnn_model(batch=2, width=16, classes=11, hidden=8, seed=3):
    r = np.random.default_rng(seed)
    c, hh = 6, 4  # conv channels, feature-map height
    inits = {
        "cw": r.uniform(-0.5, 0.5, (c, 1, 3, 3)).astype(np.float32),
        "cb": r.uniform(-0.1, 0.1, (c,)).astype(np.float32),
        "W": r.uniform(-0.4, 0.4, (2, 4 * hidden, c * hh)).astype(np.float32),
        "R": r.uniform(-0.4, 0.4, (2, 4 * hidden, hidden)).astype(np.float32),
        "B": r.uniform(-0.2, 0.2, (2, 8 * hidden)).astype(np.float32),
        "fc": r.uniform(-0.5, 0.5, (2 * hidden, classes)).astype(np.float32),
        "perm_shape": np.array([width, batch, c * hh], np.int64),
        "y_shape": np.array([width, batch, 2 * hidden], np.int64),
    }
    nodes = [
        helper.make_node("Conv", ["img", "cw", "cb"], ["f"], "conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["f"], ["fr"], "relu"),
        helper.make_node("MaxPool", ["fr"], ["fp"], "pool", kernel_shape=[2, 1], strides=[2, 1]),  # [N,C,4,W]
        helper.make_node("Transpose", ["fp"], ["ft"], "tr", perm=[3, 0, 1, 2]),  # [W,N,C,4]
        helper.make_node("Reshape", ["ft", "perm_shape"], ["seq"], "rs"),  # [W,N,C*4]
        helper.make_node("LSTM", ["seq", "W", "R", "B"], ["y"], "lstm", direction="bidirectional",
                         hidden_size=hidden),  # [W,2,N,H]
        helper.make_node("Transpose", ["y"], ["yt"], "tr2", perm=[0, 2, 1, 3]),  # [W,N,2,H]
        helper.make_node("Reshape", ["yt", "y_shape"], ["ys"], "rs2"),
        helper.make_node("MatMul", ["ys", "fc"], ["logits"], "fc"),
        helper.make_node("Softmax", ["logits"], ["probs"], "softmax", axis=-1),
    ]
    g = helper.make_graph(nodes, "crnn", [helper.make_tensor_value_info("img", TensorProto.FLOAT,
                                                                        [batch, 1, 8, width])],
                          [helper.make_tensor_value_info("probs", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m, {"img": r.uniform(0, 1, (batch, 1, 8, width)).astype(np.float32)}


def test_crnn(dev):
    m, feeds = crnn_model()
    assert "rnn" in ops(m)
    check(dev, m, feeds)


# ---------------------------------------------------------------------------------------------------
# what is refused
# ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("act", ["Affine", "ThresholdedRelu", "ScaledTanh"])
def test_unmappable_activation_refused(act):
    m, _ = rnn_model("RNN", activations=[act])
    with pytest.raises(compiler.CompileError, match=f"activation {act}"):
        compiler.compile_model(m)


def test_wrong_activation_count_refused():
    m, _ = rnn_model("LSTM", direction="bidirectional", activations=["Sigmoid", "Tanh", "Tanh"])
    with pytest.raises(compiler.CompileError, match="3 activations given, 6 expected"):
        compiler.compile_model(m)


def test_computed_weights_refused():
    m, _ = rnn_model("GRU")
    w = next(i for i in m.graph.initializer if i.name == "R")
    m.graph.initializer.remove(w)
    m.graph.input.append(helper.make_tensor_value_info("R", TensorProto.FLOAT, list(w.dims)))
    with pytest.raises(compiler.CompileError, match=r"R .* must be a constant"):
        compiler.compile_model(m)


def test_bad_constant_sequence_lens_refused():
    m, _ = rnn_model("LSTM", lens=[3, 9, 1], lens_const=True)
    with pytest.raises(compiler.CompileError, match="sequence_lens"):
        compiler.compile_model(m)


# ---------------------------------------------------------------------------------------------------
# the kernel's load-time checks (hand-made .accm files)
# ---------------------------------------------------------------------------------------------------

F32C = accm.dtype_code(np.float32)


def accm_rnn(*, cell=2, ints=None, w_kind=accm.KIND_CONSTANT, w_shape=(1, 8, 3), y_shape=(4, 1, 1, 2),
             lens_dtype=None, floats=(0.0,)):
    """An LSTM (cell 2) with H = 2: X[4,1,3] -> Y, hand-made."""
    g = {0: 1, 1: 3, 2: 4}[cell]
    w_shape = (1, g * 2, 3) if w_shape == (1, 8, 3) else w_shape
    w = np.zeros(w_shape, np.float32)
    r = np.zeros((1, g * 2, 2), np.float32)
    tensors = [accm.Tensor("x", F32C, accm.KIND_INPUT, (4, 1, 3)), accm.Tensor("y", F32C, accm.KIND_OUTPUT, y_shape),
               accm.Tensor("w", F32C, w_kind, w.shape, data=w if w_kind == accm.KIND_CONSTANT else None),
               accm.Tensor("r", F32C, accm.KIND_CONSTANT, r.shape, data=r)]
    inputs = [0, 2, 3]
    graph_inputs = [0] + ([2] if w_kind == accm.KIND_INPUT else [])
    if lens_dtype is not None:
        tensors.append(accm.Tensor("l", accm.dtype_code(lens_dtype), accm.KIND_INPUT, (1,)))
        inputs += [None, 4]
        graph_inputs.append(4)
    ints = ints if ints is not None else [cell, 0, 0, 0, 0, 1, 3, 7 if cell else 0, 7 if cell == 2 else 0]
    node = accm.Node(accm.OPS["rnn"], inputs, [1], name="n1", ints=list(ints), floats=list(floats))
    return accm.write(tensors, [node], graph_inputs, [1])


def test_hand_made_lstm_loads_and_runs(dev):
    y = np.array(dev.load(accm_rnn()).run({"x": np.ones((4, 1, 3), np.float32)})[0])
    np.testing.assert_array_equal(y, np.zeros((4, 1, 1, 2), np.float32))  # zero weights: h stays 0


@pytest.mark.parametrize("kw, match", [
    (dict(ints=[2, 0, 0, 0, 0, 3, 3, 7, 7]), "expects 2 outputs"),
    (dict(ints=[2, 0, 0, 0, 0, 1, 3, 7, 0]), "activation 2 code 0 is not a known activation"),
    (dict(ints=[2, 0, 0, 0, 0, 1, 3, 7, 7, 5]), "activation 3 is unused and must be 0"),
    (dict(ints=[2, 3, 0, 0, 0, 1, 3, 7, 7]), "direction 3"),
    (dict(ints=[1, 0, 0, 1, 0, 1, 3, 7]), "input_forget 1 is not 0"),
    (dict(ints=[2, 0, 0, 0, 0, 4, 3, 7, 7]), "expects 1 outputs|Y_c"),
    (dict(w_kind=accm.KIND_INPUT), "W must be a constant"),
    (dict(w_shape=(1, 8, 2)), r"W shape \[1,8,2\] should be \[1,8,3\]"),
    (dict(y_shape=(4, 1, 2, 2)), r"Y shape \[4,1,2,2\] should be \[4,1,1,2\]"),
    (dict(lens_dtype=np.int64), "sequence_lens dtype"),
    (dict(floats=(-1.0,)), "clip -1 is not >= 0"),
])
def test_kernel_refuses_bad_nodes_at_load(dev, kw, match):
    with pytest.raises(accel.AccelError, match=f"'n1'.*rnn: .*({match})"):
        dev.load(accm_rnn(**kw))


# ---------------------------------------------------------------------------------------------------
# com.microsoft DynamicQuantizeLSTM, as onnxruntime.quantization.quantize_dynamic makes it
# ---------------------------------------------------------------------------------------------------

def run_ort_1thread(m, feeds):
    """onnxruntime on one thread: it splits the batch by thread for DynamicQuantizeLSTM's products."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


def quantized(m, tmp_path, **kw):
    from onnxruntime.quantization import quantize_dynamic

    import onnx

    src, dst = tmp_path / "f.onnx", tmp_path / "q.onnx"
    onnx.save(m, src)
    quantize_dynamic(str(src), str(dst), **kw)
    q = onnx.load(dst)
    assert [n.op_type for n in q.graph.node] == ["DynamicQuantizeLSTM"]
    return q


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("lens", [None, [3, 6, 0, 1]])
def test_dynamic_quantize_lstm(dev, tmp_path, direction, lens):
    m, feeds = rnn_model("LSTM", s=6, n=4, direction=direction, init_h=True, init_c=True, lens=lens, seed=4)
    q = quantized(m, tmp_path)
    assert ops(q) == ["rnn"]
    check(dev, q, feeds, want=run_ort_1thread(q, feeds))


@pytest.mark.parametrize("outputs", [["Y_h"], ["Y", "Y_c"]])
def test_dynamic_quantize_lstm_outputs_and_lengths(dev, tmp_path, outputs):
    """With Y an output, onnxruntime reads H_{t-1} from Y, whose rows past their length are 0: they leave
    the range of the quantized H; without it they keep their last state in it."""
    m, feeds = rnn_model("LSTM", s=5, n=3, direction="bidirectional", lens=[5, 2, 4], outputs=outputs, seed=5)
    q = quantized(m, tmp_path)
    check(dev, q, feeds, want=run_ort_1thread(q, feeds))


def test_dynamic_quantize_lstm_uint8_per_channel(dev, tmp_path):
    from onnxruntime.quantization import QuantType

    m, feeds = rnn_model("LSTM", direction="bidirectional", peep=True, seed=6)
    q = quantized(m, tmp_path, weight_type=QuantType.QUInt8, per_channel=True)
    check(dev, q, feeds, want=run_ort_1thread(q, feeds))


RELU_GATES = ["Relu"] * 3


@pytest.mark.parametrize("case", [
    (dict(s=6, n=4, direction="bidirectional", init_h=True, init_c=True, lens=[3, 6, 0, 1], seed=4,
          activations=RELU_GATES * 2), {}),
    (dict(s=5, n=3, direction="reverse", lens=[5, 2, 4], outputs=["Y", "Y_c"], seed=5, activations=RELU_GATES), {}),
    (dict(direction="bidirectional", peep=True, seed=6, activations=RELU_GATES * 2),
     dict(weight_type="QUInt8", per_channel=True)),
    # sizes off every tile of the int8 GEMM's paths (33 inputs, 4 * 40 gate columns, 5 rows)
    (dict(s=6, n=5, i=33, h=40, direction="bidirectional", lens=[6, 2, 0, 5, 3], peep=True, seed=11,
          activations=RELU_GATES * 2), {}),
    (dict(s=6, n=5, i=45, h=21, seed=12, activations=RELU_GATES), dict(weight_type="QUInt8")),
], ids=["int8", "reverse-Y_c", "uint8-per-channel", "odd-sizes", "uint8-odd-sizes"])
def test_dynamic_quantize_lstm_int8_numerics_are_onnxruntimes(monkeypatch, tmp_path, case):
    """With relu gates (plain float32 arithmetic, none of the approximations of onnxruntime's sigmoid and
    tanh) every element equals onnxruntime's bit for bit: the dynamic quantization of X and of H_{t-1}, the
    int8 products, exact modulo 2^32, and their float32 scaling, on each int8 GEMM path this CPU has."""
    from onnxruntime.quantization import QuantType

    kw, qkw = case
    m, feeds = rnn_model("LSTM", **kw)
    # small inputs keep the relu cells' values finite over the steps
    feeds = {k: v * np.float32(0.25) if v.dtype == np.float32 else v for k, v in feeds.items()}
    q = quantized(m, tmp_path, **{k: getattr(QuantType, v) if k == "weight_type" else v for k, v in qkw.items()})
    want = run_ort_1thread(q, feeds)
    assert all(np.isfinite(w).all() for w in want)
    paths = []
    for isa in ("portable", "avx2", "avx512vnni", "amx"):
        monkeypatch.setenv("ACCEL_EMU_ISA", isa)
        with accel.open("emu") as d:
            if not d.info.name.endswith(f", {isa})"):
                continue  # a path this CPU does not have
            paths.append(isa)
            got = [np.array(a) for a in d.load(q.SerializeToString()).run(feeds)]
        for i, (g, w) in enumerate(zip(got, want)):
            assert g.dtype == w.dtype and g.shape == w.shape
            differ = int(np.count_nonzero(g.view(np.uint32) != w.view(np.uint32)))
            assert differ == 0, f"output {i} on the {isa} path differs from onnxruntime in {differ} elements"
    assert paths[0] == "portable"


def test_crnn_dynamic_quantized(dev, tmp_path):
    from onnxruntime.quantization import quantize_dynamic

    import onnx

    m, feeds = crnn_model()
    src, dst = tmp_path / "f.onnx", tmp_path / "q.onnx"
    onnx.save(m, src)
    quantize_dynamic(str(src), str(dst), op_types_to_quantize=["LSTM"])
    q = onnx.load(dst)
    assert "DynamicQuantizeLSTM" in [n.op_type for n in q.graph.node]
    check(dev, q, feeds, want=run_ort_1thread(q, feeds))
