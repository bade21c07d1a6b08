"""Quantized real models on the emulator against onnxruntime, element by element: the tiny CNN, ResNet-18,
MobileNetV2 and the PP-OCR detector, classifier and recognizer, quantized at test time by onnxruntime's
quantizer (tests/models/quantized.py: QDQ with per-channel int8 weights; uint8 activations, int8 symmetric
and int8 asymmetric ones; and the QOperator form of the CNNs), run on both engines with the same input. The
emulator's int8 rules are onnxruntime's (emu:int8=ort), so every output is expected bit-identical to
onnxruntime's with int8 activations allowed (session.qdqisint8allowed=1). Each test prints, per output,
the elements, how many are identical and the largest difference in quantization steps."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import accel
from accel import compiler

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import quant_report  # noqa: E402 - tests/ is put on the path just above
from models import quantized  # noqa: E402

pytestmark = pytest.mark.emulator

# name -> the static variants it is tested in (activation, symmetric).
VARIANTS = {"uint8": ("uint8", False), "int8_sym": ("int8", True), "int8_asym": ("int8", False)}
MODELS = ("tiny_cnn", "resnet18", "mobilenetv2", "ppocr_det", "ppocr_cls", "ppocr_rec")
OPERATOR_FORM = ("tiny_cnn", "resnet18", "mobilenetv2")


@pytest.fixture(scope="module")
def emu():
    with accel.open("emu:int8=ort") as d:
        yield d


def compare(emu, path: Path, name: str, label: str) -> None:
    feeds = quantized.make_feeds(name)
    want = quantized.reference(path, feeds)
    model = emu.load(compiler.compile_model(str(path)))
    got = model.run(feeds)
    scales = quant_report.output_scales(path)
    failures = []
    for info, g, w in zip(model.outputs, got, want):
        stats = quant_report.lsb_diff(np.asarray(g), w, scales.get(info.name))
        print(quant_report.format_row(label, info.name, stats))
        if stats["identical"] != stats["elements"]:
            failures.append(f"{info.name}: {stats['elements'] - stats['identical']} of {stats['elements']} differ, "
                            f"max {stats['max']} {stats['unit']}")
    assert not failures, f"{label} differs from onnxruntime: " + "; ".join(failures)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", MODELS)
def test_static_qdq(emu, name, variant):
    activation, symmetric = VARIANTS[variant]
    path = quantized.static_model(name, activation=activation, symmetric=symmetric)
    compare(emu, path, name, f"{name} qdq {variant}")


@pytest.mark.parametrize("name", OPERATOR_FORM)
def test_operator_form(emu, name):
    compare(emu, quantized.operator_model(name), name, f"{name} qoperator uint8")
