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
import onnx
import pytest

import accel
from accel import compiler

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import quant_report
from models import quantized

pytestmark = pytest.mark.emulator

# name -> the static variants it is tested in (activation, symmetric).
VARIANTS = {"uint8": ("uint8", False), "int8_sym": ("int8", True), "int8_asym": ("int8", False)}
MODELS = ("tiny_cnn", "resnet18", "mobilenetv2", "ppocr_det", "ppocr_cls", "ppocr_rec")
OPERATOR_FORM = ("tiny_cnn", "resnet18", "mobilenetv2")
# quantize_dynamic's models: MatMuls (and convs) with int8 weights, activations quantized at run time.
DYNAMIC = ("mlp", "tiny_cnn", "ppocr_rec")


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


# Outside their integer ops, dynamically quantized models compute in float32 (softmax, layer norms, ...),
# where the emulator's float kernels and onnxruntime's differ in the last bits: those outputs are compared
# with the float tolerance of the float models' tests, the integer tensors exactly.
FLOAT_RTOL = 1e-4
INTEGER_OPS = ("DynamicQuantizeLinear", "MatMulInteger", "ConvInteger")


@pytest.mark.parametrize("name", DYNAMIC)
def test_dynamic(emu, name):
    path = quantized.dynamic_model(name)
    model = onnx.load(str(path))
    outputs = {o.name for o in model.graph.output}
    for node in model.graph.node:  # every integer tensor becomes an output too, compared exactly
        if node.op_type in INTEGER_OPS:
            for o in node.output:
                if o and o not in outputs:
                    model.graph.output.append(onnx.helper.make_empty_tensor_value_info(o))
                    outputs.add(o)
    feeds = quantized.make_feeds(name)
    want = quantized.reference_model(model, feeds)
    m = emu.load(compiler.compile_model(model))
    got = m.run(feeds)
    exact = 0
    for info, g, w in zip(m.outputs, got, want):
        g = np.asarray(g)
        stats = quant_report.lsb_diff(g, w)
        print(quant_report.format_row(f"{name} dynamic", info.name, stats))
        if np.issubdtype(w.dtype, np.integer):
            exact += 1
            assert stats["identical"] == stats["elements"], f"{info.name}: {stats}"
        else:
            np.testing.assert_allclose(g, w, rtol=FLOAT_RTOL, atol=FLOAT_RTOL * float(np.abs(w).max()))
    assert exact >= 2, "the model has no integer tensors to compare"
