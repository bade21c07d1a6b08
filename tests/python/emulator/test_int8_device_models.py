"""Real quantized models on the devices' int8 rules: the tiny CNN, ResNet-18 and MobileNetV2 quantized by
onnxruntime's quantizer with symmetric int8 activations and per-channel weights (tests/models/quantized.py),
run with the `bpu` rules as they are and with the `dpu` rules once their scales are powers of two
(device_qdq.power_of_two, Vitis AI's form). Each compiles, runs and stays close to onnxruntime's own
arithmetic on the same model (cosine similarity, the top class); `pytest -s` prints, per model, how many
outputs are identical to onnxruntime's and how many steps the others are apart: the rules' differences
compounded through a network, which is why a user's CI should run the device's rules, not onnxruntime's.
The same models in onnxruntime's operator form (QLinearConv, QLinearAdd, ...): uint8 refused by both rules as
the QDQ form is, symmetric int8 run with the bpu rules.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import quant_report
from accel import compiler
from models import quantized
from models.device_qdq import power_of_two, run_on_emulator

pytestmark = pytest.mark.emulator


@pytest.mark.parametrize("rules", ["bpu", "dpu"])
@pytest.mark.parametrize("name", ["tiny_cnn", "resnet18", "mobilenetv2"])
def test_real_model_on_the_device_rules(name, rules, tmp_path):
    model = onnx.load(str(quantized.static_model(name, activation="int8", symmetric=True)))
    if rules == "dpu":
        model = power_of_two(model)
    path = tmp_path / f"{name}_{rules}.onnx"
    onnx.save(model, str(path))
    feeds = quantized.make_feeds(name)
    (x,) = feeds.values()
    (want,) = quantized.reference_model(model, feeds)
    (got,) = run_on_emulator(model, x, rules)
    (same,) = run_on_emulator(model, x, "ort")
    scale = next(iter(quant_report.output_scales(path).values()), None)
    stats = quant_report.lsb_diff(got, want, scale)
    print(quant_report.format_row(f"{name} {rules} against onnxruntime", "output", stats))
    cosine = float(np.dot(got.ravel(), want.ravel()) / (np.linalg.norm(got) * np.linalg.norm(want)))
    assert np.array_equal(same, want)  # the model itself is onnxruntime's, bit for bit, with its rules
    assert cosine > 0.995 and got.argmax() == want.argmax(), (cosine, got.argmax(), want.argmax())


@pytest.mark.parametrize("rules", ["bpu", "dpu"])
def test_a_uint8_operator_form_model_is_refused_as_its_qdq_form(rules):
    # onnxruntime's quantizer with QuantFormat.QOperator and QUInt8 activations: the devices compute in int8.
    with pytest.raises(compiler.CompileError, match=f"is uint8: the {rules} int8 rules compute in int8"):
        compiler.compile_model(str(quantized.operator_model("tiny_cnn", activation="uint8")), int8=rules)
    with pytest.raises(compiler.CompileError, match=f"the {rules} int8 rules"):  # (the dpu's first: a scale)
        compiler.compile_model(str(quantized.static_model("tiny_cnn", activation="uint8")), int8=rules)


def test_an_int8_operator_form_model_on_the_bpu_rules():
    # (tiny_cnn's softmax output has zero point -128 in this form, which the bpu rules refuse)
    model = onnx.load(str(quantized.operator_model("mobilenetv2", activation="int8", symmetric=True)))
    assert any(n.op_type == "QLinearConv" for n in model.graph.node)
    feeds = quantized.make_feeds("mobilenetv2")
    (x,) = feeds.values()
    (want,) = quantized.reference_model(model, feeds)
    (got,) = run_on_emulator(model, x, "bpu")
    cosine = float(np.dot(got.ravel(), want.ravel()) / (np.linalg.norm(got) * np.linalg.norm(want)))
    assert cosine > 0.995 and got.argmax() == want.argmax(), (cosine, got.argmax(), want.argmax())
