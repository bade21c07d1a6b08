"""What the devices' int8 rules (emu:int8=dpu, emu:int8=bpu) refuse, and that they refuse it in every form a
model comes in: a QDQ model's QuantizeLinear and DequantizeLinear, and onnxruntime's operator form
(QLinearConv, com.microsoft QLinearAdd, QGemm, ..., MatMulInteger, ConvInteger, the dynamic ops), with one
message naming the node, the tensor and the reason. The operator form once ran as uint8 where the QDQ form of
the same model was refused.
"""
from __future__ import annotations

import re
import struct
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

import accel
from accel import compiler

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from models.operator_form import ALWAYS_UINT8, KINDS, feed, one_op

pytestmark = pytest.mark.emulator

DEVICES = ["dpu", "bpu"]


def _qdq_uint8() -> bytes:
    """x -> QuantizeLinear (uint8, zero point 0, scale 2^-4) -> DequantizeLinear -> y."""
    inits = [helper.make_tensor("s", TensorProto.FLOAT, [], [2.0 ** -4]),
             helper.make_tensor("z", TensorProto.UINT8, [], [0])]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["x_q"]),
             helper.make_node("DequantizeLinear", ["x_q", "s", "z"], ["y"])]
    graph = helper.make_graph(nodes, "u", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()


def _refusal(model: bytes, rules: str) -> str:
    with pytest.raises(compiler.CompileError) as e:
        compiler.compile_model(model, int8=rules)
    return str(e.value)


def _reason(message: str) -> str:
    """A refusal without the node and the tensor it names: what the device cannot take."""
    return re.sub(r"^.*?tensor '[^']*'", "", message)


@pytest.mark.parametrize("rules", DEVICES)
@pytest.mark.parametrize("kind", sorted(KINDS) + sorted(ALWAYS_UINT8))
def test_a_uint8_operator_form_is_refused_as_the_qdq_form_is(kind, rules):
    qdq = _refusal(_qdq_uint8(), rules)
    assert f"tensor 'x_q' is uint8: the {rules} int8 rules compute in int8" in qdq
    got = _refusal(one_op(kind, "uint8").SerializeToString(), rules)
    tensor = KINDS.get(kind) or ALWAYS_UINT8[kind]
    assert f"'the_{kind}'" in got and (tensor is None or f"tensor '{tensor}' is uint8" in got), got
    assert _reason(got) == _reason(qdq), (got, qdq)


@pytest.mark.parametrize("rules", DEVICES)
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_an_int8_operator_form_loads_and_runs(kind, rules):
    model = one_op(kind, "int8")
    data = compiler.compile_model(model.SerializeToString(), int8=rules)
    with accel.open(f"emu:int8={rules}") as dev:
        (y,) = dev.load(data).run(feed(model))
    assert y.shape == tuple(d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim)


@pytest.mark.parametrize("rules", DEVICES)
def test_the_ort_rules_take_the_uint8_operator_form(rules):
    for kind in sorted(KINDS) + sorted(ALWAYS_UINT8):
        compiler.compile_model(one_op(kind, "uint8").SerializeToString(), int8="ort")


@pytest.mark.parametrize("rules", DEVICES)
def test_an_operator_form_softmax_runs_in_float_as_its_qdq_form(rules):
    # The devices run softmax in float: QLinearSoftmax under their rules is DQ -> Softmax -> Q, as a QDQ
    # model's is (the emulator refused it at load).
    op = one_op("QLinearSoftmax", "int8")
    inits = [helper.make_tensor("s", TensorProto.FLOAT, [], [2.0 ** -4]),
             helper.make_tensor("z", TensorProto.INT8, [], [0])]
    nodes = [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["xf"]),
             helper.make_node("Softmax", ["xf"], ["p"]), helper.make_node("QuantizeLinear", ["p", "s", "z"], ["y"])]
    graph = helper.make_graph(nodes, "s", list(op.graph.input), list(op.graph.output), inits)
    qdq = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    x = feed(op)
    with accel.open(f"emu:int8={rules}") as dev:
        (a,) = dev.load(compiler.compile_model(op.SerializeToString(), int8=rules)).run(x)
        (b,) = dev.load(compiler.compile_model(qdq.SerializeToString(), int8=rules)).run(x)
    assert np.array_equal(a, b), f"{int(np.count_nonzero(a != b))} of {a.size} differ"


@pytest.mark.parametrize("rules", DEVICES)
def test_a_gemm_alpha_other_than_1_is_a_compile_error(rules):
    # Once compiled without a word and refused at load: `accel compile --int8` wrote files no device took.
    model = one_op("QGemm", "int8")
    model.graph.node[0].attribute.append(helper.make_attribute("alpha", 2.0))
    with pytest.raises(compiler.CompileError, match=f"'the_QGemm'.*alpha 2 is not 1, which the {rules} int8 rules"):
        compiler.compile_model(model.SerializeToString(), int8=rules)
    compiler.compile_model(model.SerializeToString(), int8="ort")


@pytest.mark.parametrize("rules", DEVICES)
def test_a_quantize_output_dtype_is_the_tensors_type(rules):
    # QuantizeLinear (opset 21) to int8 by its output_dtype, without zero points: int8, not the default uint8.
    inits = [helper.make_tensor("s", TensorProto.FLOAT, [], [0.25])]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s"], ["q"], output_dtype=TensorProto.INT8),
             helper.make_node("DequantizeLinear", ["q", "s"], ["y"])]
    graph = helper.make_graph(nodes, "q", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    data = compiler.compile_model(model.SerializeToString(), int8=rules)
    with accel.open(f"emu:int8={rules}") as dev:
        (y,) = dev.load(data).run(np.array([1, -1, 0.25, 100], np.float32))
    assert y.tolist() == [1, -1, 0.25, 31.75]


@pytest.mark.parametrize("rules", DEVICES)
def test_the_reader_refuses_uint8_of_a_model_compiled_elsewhere(rules):
    # A model whose header says the device's rules without the compiler's check (another tool wrote it):
    # the emulator's reader refuses its uint8 tensors too, in the compiler's words.
    data = bytearray(compiler.compile_model(one_op("QLinearConv", "uint8").SerializeToString(), int8="ort"))
    data[44:48] = struct.pack("<I", compiler.accm.INT8_RULES[rules])  # the header's int8_rules
    with accel.open(f"emu:int8={rules}") as dev, pytest.raises(accel.ModelFormatError) as e:
        dev.load(bytes(data))
    assert re.search(rf"'x'\): is uint8: the {rules} int8 rules compute in int8", str(e.value)), str(e.value)


def _qadd(act: str, rules: str) -> bytes:
    """One qadd node 'n1' with activation `act` over int8 tensors of scale 2^-4 and zero point 0 (what every
    rule set takes), written for `rules` without the compiler's checks."""
    accm = compiler.accm
    q = dict(scales=np.array([2.0 ** -4], np.float32), zero_points=np.array([0], np.int32))
    i8 = accm.dtype_code(np.dtype("int8"))
    tensors = [accm.Tensor(name, i8, kind, (4,), **q)
               for name, kind in (("a", accm.KIND_INPUT), ("b", accm.KIND_INPUT), ("y", accm.KIND_OUTPUT))]
    node = accm.Node(accm.OPS["qadd"], [0, 1], [2], name="n1", activation=accm.ACTIVATIONS[act])
    return accm.write(tensors, [node], [0, 1], [2], int8_rules=rules)


@pytest.mark.parametrize("rules,act,match", [
    ("ort", "relu", "qadd: fused activation 1 not supported"),
    ("dpu", "sigmoid", "qadd: activation 3 is not relu, the one the devices fuse"),
    ("bpu", "sigmoid", "qadd: activation 3 is not relu, the one the devices fuse"),
])
def test_a_quantized_ops_activation_is_one_its_rules_fuse(rules, act, match):
    # The kernel's load-time check: onnxruntime's kernels fuse no activation, the devices' a relu into qadd.
    with accel.open(f"emu:int8={rules}") as dev, pytest.raises(accel.AccelError, match=f"'n1'.*{match}"):
        dev.load(_qadd(act, rules))


@pytest.mark.parametrize("rules", DEVICES)
def test_a_device_runs_qadd_with_its_relu_fused(rules):
    a = np.array([-100, -3, 20, 100], np.int8)
    b = np.array([50, 1, 7, 100], np.int8)
    with accel.open(f"emu:int8={rules}") as dev:
        (y,) = dev.load(_qadd("relu", rules)).run([a, b])
    assert np.asarray(y).tolist() == [0, 0, 27, 127]
