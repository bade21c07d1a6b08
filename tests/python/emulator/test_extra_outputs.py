"""Intermediate tensors as extra outputs (Device.load(..., extra_outputs=...), accel run --extra-outputs / --save):
a float model's tensors against onnxruntime's own intermediate values, a quantized model's int8 tensors bit for bit
with their quantization, the model's own outputs unchanged by asking, the order asked for, and the errors."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from conftest import onnx_model, run_ort
from onnx import helper

import accel
from accel import cli, compiler, run_record

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from models import ort_reference, quantized

pytestmark = pytest.mark.emulator


def with_outputs(model: onnx.ModelProto, names) -> onnx.ModelProto:
    """A copy of `model` whose graph also outputs `names` (onnxruntime's way to see an intermediate tensor)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output}
    m.graph.output.extend(helper.make_empty_tensor_value_info(n) for n in names if n not in have)
    return m


def ort_values(model: onnx.ModelProto, feeds, names) -> dict:
    """onnxruntime's values of `names` in `model` (the session options the int8 comparisons share)."""
    m = with_outputs(model, names)
    sess = ort.InferenceSession(m.SerializeToString(), ort_reference.session_options(m),
                                providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


def node_outputs(model: onnx.ModelProto) -> list:
    return [o for n in model.graph.node for o in n.output if o]


@pytest.fixture(scope="module")
def device():
    with accel.open("emu") as d:
        yield d


@pytest.mark.parametrize("name", ["tiny_cnn", "mobilenetv2"])
def test_float_model_all_tensors_match_onnxruntime(device, name):
    model = quantized.float_model(name)
    feeds = quantized.make_feeds(name)
    m = device.load(model.SerializeToString(), extra_outputs="all")
    own = [o.name for o in model.graph.output]
    names = [o.name for o in m.outputs]
    extra = [o.name for o in m.extra_outputs]
    assert names[:len(own)] == own and names[len(own):] == extra
    # Graph order, every tensor a node computes from the input (the constant ones are folded away).
    assert extra == [n for n in node_outputs(model) if n in set(extra)] and len(extra) >= len(model.graph.node) // 2
    want = ort_values(model, feeds, extra)
    for info, got in zip(m.outputs, m.run(feeds)):
        ref = want[info.name]
        assert got.shape == ref.shape and got.dtype == ref.dtype, info.name
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(ref).max())),
                                   err_msg=info.name)


# The bpu rules take symmetric int8 models only (another is a CompileError naming the tensor).
@pytest.mark.parametrize("name,activation,symmetric,rules", [
    ("tiny_cnn", "int8", True, "ort"), ("tiny_cnn", "int8", True, "bpu"), ("mobilenetv2", "uint8", False, "ort"),
    ("resnet18", "int8", True, "ort"), ("resnet18", "int8", True, "bpu")])
def test_quantized_model_int8_tensors_bit_identical(name, activation, symmetric, rules):
    path = quantized.static_model(name, activation=activation, symmetric=symmetric)
    model = onnx.load(str(path))
    feeds = quantized.make_feeds(name)
    with accel.open(f"emu:int8={rules}") as dev:
        m = dev.load(path, extra_outputs="all")
        plain = dev.load(path)
        got = m.run(feeds)
        # Asking to see changes nothing the model computes.
        for a, b in zip(got, plain.run(feeds)):
            np.testing.assert_array_equal(a, b)
    extra = m.extra_outputs
    q_nodes = {n.output[0]: n for n in model.graph.node if n.op_type == "QuantizeLinear"}
    dq_runtime = {n.output[0] for n in model.graph.node if n.op_type == "DequantizeLinear"
                  and n.input[0] in q_nodes}
    assert extra and not dq_runtime & {i.name for i in extra}
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    quantized_extra = [i for i in extra if i.name in q_nodes]
    assert len(quantized_extra) >= len(q_nodes) // 2
    for info in quantized_extra:  # each int8 tensor carries its QuantizeLinear's parameters
        q = q_nodes[info.name]
        assert info.dtype == inits[q.input[2]].dtype and info.quant is not None, info
        assert info.quant.scales == (float(inits[q.input[1]]),)
        assert info.quant.zero_points in (None, (int(inits[q.input[2]]),))
    if rules != "ort":
        return
    want = ort_values(model, feeds, [i.name for i in extra])
    differing = [(i.name, int(np.count_nonzero(g != want[i.name]))) for i, g in zip(m.outputs, got)
                 if not np.array_equal(g, want[i.name])]
    print(f"\n{name} {activation}: {len(got)} outputs, {len(quantized_extra)} int8 tensors; differing from "
          f"onnxruntime: {differing or 'none'}")
    assert not differing


def test_named_tensors_in_the_order_given(device):
    path = quantized.static_model("tiny_cnn", activation="int8", symmetric=True)
    model = onnx.load(str(path))
    feeds = quantized.make_feeds("tiny_cnn")
    dq = [n.output[0] for n in model.graph.node if n.op_type == "DequantizeLinear"
          and n.input[0].endswith("_QuantizeLinear_Output")]
    q = [n.output[0] for n in model.graph.node if n.op_type == "QuantizeLinear"]
    asked = [dq[2], q[1], dq[0]]
    m = device.load(path, extra_outputs=asked)
    assert [o.name for o in m.extra_outputs] == asked
    assert [o.dtype for o in m.extra_outputs] == [np.float32, np.int8, np.float32]
    want = ort_values(model, feeds, asked)
    for info, got in zip(m.extra_outputs, m.run(feeds)[1:]):
        np.testing.assert_array_equal(got, want[info.name])  # dequantization is exact


def test_float_fusions_keep_a_requested_tensor(device):
    """A Conv's output before its Relu, and before a BatchNormalization the compiler would fold into it."""
    r = np.random.default_rng(0)
    w = r.standard_normal((4, 3, 3, 3)).astype(np.float32)
    bn = [np.abs(r.standard_normal(4)).astype(np.float32) + 0.5 for _ in range(4)]
    m = onnx_model([helper.make_node("Conv", ["x", "w"], ["conv"], pads=[1, 1, 1, 1]),
                    helper.make_node("BatchNormalization", ["conv", "s", "b", "mean", "var"], ["bn"]),
                    helper.make_node("Relu", ["bn"], ["y"])],
                   [("x", np.float32, (1, 3, 8, 8))], [("y", np.float32)],
                   {"w": w, "s": bn[0], "b": bn[1], "mean": bn[2], "var": bn[3]})
    x = r.standard_normal((1, 3, 8, 8)).astype(np.float32)
    model = device.load(m.SerializeToString(), extra_outputs=["bn", "conv"])
    y, bn_out, conv = model.run(x)
    ref_y, ref_bn, ref_conv = run_ort(with_outputs(m, ["bn", "conv"]), {"x": x})
    assert (bn_out < 0).any()  # before the Relu
    np.testing.assert_allclose(conv, ref_conv, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(bn_out, ref_bn, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y, ref_y, rtol=1e-5, atol=1e-5)


def test_constant_and_dead_tensors_when_named_constants_left_out_of_all(device):
    m = onnx_model([helper.make_node("Shape", ["x"], ["shape"]),
                    helper.make_node("Reshape", ["x", "flat_shape"], ["flat"]),
                    helper.make_node("Neg", ["flat"], ["y"]),
                    helper.make_node("Abs", ["x"], ["unused"])],
                   [("x", np.float32, (2, 3))], [("y", np.float32)], {"flat_shape": np.array([-1], np.int64)})
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    named = device.load(m.SerializeToString(), extra_outputs=["shape", "unused"])
    y, shape, unused = named.run(x)
    np.testing.assert_array_equal(y, -x.reshape(-1))
    np.testing.assert_array_equal(shape, [2, 3])  # folded to a constant, given all the same
    np.testing.assert_array_equal(unused, np.abs(x))  # not needed by the output, computed since asked for
    everything = device.load(m.SerializeToString(), extra_outputs="all")
    assert [o.name for o in everything.extra_outputs] == ["flat"]  # what the model computes at run time


def test_errors_name_the_tensor(device):
    path = quantized.static_model("tiny_cnn", activation="int8", symmetric=True)
    model = onnx.load(str(path))
    conv = next(n for n in model.graph.node if n.op_type == "Conv")
    with pytest.raises(accel.InvalidArgumentError, match=r"no tensor 'stem_bnx'; the nearest names: 'stem_bn'"):
        device.load(path, extra_outputs=["stem_bnx"])
    with pytest.raises(accel.InvalidArgumentError,
                       match=rf"'{conv.output[0]}' is not computed by the quantized model: node '{conv.name}' \(Conv\)"
                             rf".*its int8 value is '{conv.output[0]}_QuantizeLinear_Output'"):
        device.load(path, extra_outputs=[conv.output[0]])
    own = model.graph.output[0].name
    for bad, match in [([own], "already an output"), (["image"], "is an input of the model"),
                       (["stem_bn_QuantizeLinear_Output"] * 2, "twice"), ([], "empty"), ("stem_bn", r"\['stem_bn'\]")]:
        with pytest.raises(accel.InvalidArgumentError, match=match):
            device.load(path, extra_outputs=bad)
    for bad in (3, [b"x"], [None]):
        with pytest.raises(TypeError, match="extra_outputs"):
            device.load(path, extra_outputs=bad)
    with pytest.raises(compiler.ExtraOutputError, match="no tensor 'nope'"):
        compiler.compile_model(path, extra_outputs=["nope"])
    accm = compiler.compile_model(path)
    with pytest.raises(accel.InvalidArgumentError, match=r"extra_outputs applies to ONNX and Vitis AI \.xmodel models"):
        device.load(accm, extra_outputs="all")


def test_the_cache_tells_extra_outputs_apart(device):
    m = onnx_model([helper.make_node("Neg", ["x"], ["a"]), helper.make_node("Exp", ["a"], ["y"])],
                   [("x", np.float32, (3,))], [("y", np.float32)])
    data = m.SerializeToString()
    assert len(device.load(data).outputs) == 1
    assert [o.name for o in device.load(data, extra_outputs=["a"]).outputs] == ["y", "a"]
    assert len(device.load(data).outputs) == 1


def test_cli_run_saves_intermediates_and_the_run(tmp_path, capsys):
    path = quantized.static_model("tiny_cnn", activation="int8", symmetric=True)
    (x,) = quantized.make_feeds("tiny_cnn").values()
    np.save(tmp_path / "x.npy", x)
    code = cli.main(["run", str(path), "--input", str(tmp_path / "x.npy"), "--save-intermediates",
                     "--save", str(tmp_path / "run.npz"), "--output", str(tmp_path / "out.npz")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "intermediate tensors (saved, not printed)" in out
    rec = run_record.load(tmp_path / "run.npz")
    np.testing.assert_array_equal(rec.inputs["image"], x)
    with accel.open("emu") as dev:
        m = dev.load(path, extra_outputs="all")
        want = dict(zip([o.name for o in m.outputs], m.run(x)))
    assert list(rec.outputs) == list(want)
    for name, array in want.items():
        np.testing.assert_array_equal(rec.outputs[name], array)
    assert all(rec.quant[i.name] == i.quant for i in m.outputs if i.quant is not None)
    assert rec.model == path.name and rec.device.startswith("emu (accel emulator")
    with np.load(tmp_path / "out.npz") as plain:
        assert list(plain) == list(want)

    code = cli.main(["run", str(path), "--input", str(tmp_path / "x.npy"), "--extra-outputs",
                     "stem_bn_QuantizeLinear_Output,image_DequantizeLinear_Output"])
    out = capsys.readouterr().out
    assert code == 0 and "stem_bn_QuantizeLinear_Output: shape (1, 16, 32, 32) int8" in out, out
    assert "image_DequantizeLinear_Output: shape (1, 3, 64, 64) float32" in out


def test_cli_run_errors(tmp_path, capsys):
    path = quantized.static_model("tiny_cnn", activation="int8", symmetric=True)
    (x,) = quantized.make_feeds("tiny_cnn").values()
    np.save(tmp_path / "x.npy", x)
    assert cli.main(["run", str(path), "--input", str(tmp_path / "x.npy"), "--extra-outputs", "stem_bnx"]) == 1
    assert "the nearest names: 'stem_bn'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        cli.main(["run", str(path), "--input", str(tmp_path / "x.npy"), "--save-intermediates"])
    assert e.value.code == 2 and "--save-intermediates needs --save" in capsys.readouterr().err
    accm = tmp_path / "m.accm"
    assert cli.main(["compile", str(path), "-o", str(accm), "--extra-outputs", "all"]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit):
        cli.main(["run", str(accm), "--input", str(tmp_path / "x.npy"), "--extra-outputs", "all"])
    assert "--extra-outputs applies to ONNX and Vitis AI .xmodel models only" in capsys.readouterr().err
    # The compiled model keeps the extra outputs it was compiled with.
    with accel.open("emu") as dev:
        assert len(dev.load(accm).outputs) == len(dev.load(path, extra_outputs="all").outputs)


def test_dtype_of_a_quantized_uint8_tensor_and_its_quantization(device):
    path = quantized.static_model("tiny_cnn", activation="uint8", symmetric=False)
    m = device.load(path, extra_outputs="all")
    u8 = [o for o in m.extra_outputs if o.dtype == np.uint8]
    assert u8 and all(o.quant is not None and o.quant.zero_points is not None for o in u8)


def test_dpu_rules_outputs_unchanged_by_asking():
    """The DPU's fix-point rules on a power-of-two model: all its tensors, and three dequantized ones by name."""
    from models.device_qdq import power_of_two

    model = power_of_two(onnx.load(str(quantized.static_model("mobilenetv2", activation="int8", symmetric=True))))
    feeds = quantized.make_feeds("mobilenetv2")
    data = model.SerializeToString()
    dq = [n.output[0] for n in model.graph.node
          if n.op_type == "DequantizeLinear" and n.input[0].endswith("_QuantizeLinear_Output")][:3]
    with accel.open("emu:int8=dpu") as dev:
        want = dev.load(data).run(feeds)
        everything = dev.load(data, extra_outputs="all")
        named = dev.load(data, extra_outputs=dq)
        got_all, got_named = everything.run(feeds), named.run(feeds)
    for a, b, c in zip(want, got_all, got_named):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    values = dict(zip([o.name for o in everything.outputs], got_all))
    infos = {o.name: o for o in everything.outputs}
    for info, value in zip(named.extra_outputs, got_named[len(want):]):
        q = info.name.replace("_DequantizeLinear_Output", "_QuantizeLinear_Output")  # the int8 tensor it dequantizes
        (scale,) = infos[q].quant.scales
        np.testing.assert_array_equal(value, values[q].astype(np.float32) * np.float32(scale))
