"""Real quantized models on the devices' int8 rules: the tiny CNN, ResNet-18 and MobileNetV2 quantized by
onnxruntime's quantizer with symmetric int8 activations and per-channel weights (tests/models/quantized.py),
run with the `bpu` rules as they are and with the `dpu` rules once their scales are powers of two
(device_qdq.power_of_two, Vitis AI's form). Each compiles, runs and stays close to onnxruntime's own
arithmetic on the same model (cosine similarity, the top class); `pytest -s` prints, per model, how many
outputs are identical to onnxruntime's and how many steps the others are apart: the rules' differences
compounded through a network, which is why a user's CI should run the device's rules, not onnxruntime's.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import quant_report
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
