"""The int8 GEMM's code paths give the same bytes: each model is loaded once per path this CPU has
(ACCEL_EMU_ISA caps the path a load picks: portable, avx2, avx512vnni, amx), run on the same input, and
every output must equal the portable path's byte for byte. The device's name says which path loads pick,
so each run also checks that the path under test is the one that ran."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

import accel
from accel import compiler

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from models import quantized
from models.device_qdq import power_of_two
from models.qdq_builder import CONVS, QDQ, random_weights

pytestmark = pytest.mark.emulator

PATHS = ("portable", "avx2", "avx512vnni", "amx")


def path_of(monkeypatch, isa: str) -> str:
    """The path loads pick with ACCEL_EMU_ISA=isa (a CPU without it gives a slower one)."""
    monkeypatch.setenv("ACCEL_EMU_ISA", isa)
    with accel.open("emu") as d:
        name = d.info.name
    return name.rsplit(", ", 1)[1].rstrip(")")


def available(monkeypatch) -> list:
    """The paths this CPU has, each as the device names it."""
    return [isa for isa in PATHS if path_of(monkeypatch, isa) == isa]


def run_each_path(monkeypatch, accm: bytes, feeds, rules: str = "ort") -> dict:
    outs = {}
    for isa in available(monkeypatch):
        monkeypatch.setenv("ACCEL_EMU_ISA", isa)
        with accel.open(f"emu:int8={rules}") as d:
            assert d.info.name.endswith(f", {isa})"), d.info.name
            model = d.load(accm)
            outs[isa] = [np.array(o) for o in model.run(feeds)]
    return outs


def assert_same_bytes(outs: dict, label: str) -> None:
    ref = outs["portable"]
    print(f"{label}: paths {', '.join(outs)}")
    for isa, got in outs.items():
        for i, (g, r) in enumerate(zip(got, ref)):
            differ = int(np.count_nonzero(g.view(np.uint8) != r.view(np.uint8)))
            assert differ == 0, f"{label}: output {i} on {isa} differs from portable in {differ} bytes"


def test_the_portable_path_is_always_there(monkeypatch):
    assert available(monkeypatch)[0] == "portable"


@pytest.mark.parametrize("model", [("resnet18", "uint8", False), ("mobilenetv2", "int8", True),
                                   ("ppocr_det", "uint8", False)], ids=lambda m: f"{m[0]}-{m[1]}")
def test_models_give_the_same_bytes_on_every_path(monkeypatch, model):
    name, activation, symmetric = model
    path = quantized.static_model(name, activation=activation, symmetric=symmetric)
    outs = run_each_path(monkeypatch, compiler.compile_model(str(path)), quantized.make_feeds(name))
    assert_same_bytes(outs, name)


@pytest.mark.parametrize("rules", ["bpu", "dpu"])
def test_the_devices_rules_give_the_same_bytes_on_every_path(monkeypatch, rules):
    # The Fixed epilogue: AVX-512 vectors, AVX2 through the scalar definition, the portable one.
    model = onnx.load(str(quantized.static_model("mobilenetv2", activation="int8", symmetric=True)))
    model = power_of_two(model) if rules == "dpu" else model
    accm = compiler.compile_model(model.SerializeToString(), int8=rules)
    assert_same_bytes(run_each_path(monkeypatch, accm, quantized.make_feeds("mobilenetv2"), rules),
                      f"mobilenetv2 {rules}")


# The conv copies' edges (qim2col.h; AVX-512 and AVX2 build them in vectors of 16 and 8 units): runs of
# inputs longer than a vector and ragged at both ends, asymmetric padding, a channel count off the 4-channel
# units, strides 2 and 3 (the vector builders leave 3 to the portable loop), row stride apart from column
# stride, and copies too big for L2, built a band of rows at a time.
COPY_CONVS = {
    "3x3_s2_wide": ((1, 5, 21, 67), (7, 5, 3, 3), {"strides": [2, 2], "pads": [1, 2, 0, 1]}),
    "5x5_odd_pads": ((1, 3, 19, 45), (9, 3, 5, 5), {"pads": [2, 1, 2, 3]}),
    "1x1_s2": ((1, 12, 17, 33), (10, 12, 1, 1), {"strides": [2, 2]}),
    "3x3_s2x1": ((1, 6, 20, 37), (8, 6, 3, 3), {"strides": [2, 1], "pads": [1, 1, 1, 1]}),
    "3x3_s3": ((1, 4, 17, 17), (6, 4, 3, 3), {"strides": [3, 3]}),
    "banded": ((1, 64, 112, 112), (8, 64, 3, 3), {"pads": [1, 1, 1, 1]}),
}


@pytest.mark.parametrize("dtype", ["uint8", "int8"])
@pytest.mark.parametrize("case", list(CONVS) + list(COPY_CONVS))
def test_convs_give_the_same_bytes_on_every_path(monkeypatch, dtype, case):
    xshape, wshape, attrs = CONVS[case] if case in CONVS else COPY_CONVS[case]
    b = QDQ(dtype)
    x = b.input("x", xshape, 0.02, 7 if dtype == "uint8" else -3)
    m = wshape[0]
    zw = np.arange(m, dtype=np.int64) % 5 - 2  # nonzero weight zero points take the column-sum route
    w = b.weight("w", random_weights(b.rng, wshape), np.full(m, 0.004, np.float32), zw.astype(np.int8), axis=0)
    b.op("Conv", [x, w], **attrs)
    model = b.model(0.05, 128 if dtype == "uint8" else 0)
    assert_same_bytes(run_each_path(monkeypatch, compiler.compile_model(model), b.feeds), f"conv {case} {dtype}")


@pytest.mark.parametrize("shape", [(1, 1, 3), (5, 17, 31), (2, 33, 64), (3, 65, 130)])
def test_matmuls_give_the_same_bytes_on_every_path(monkeypatch, shape):
    m, k, n = shape
    b = QDQ("uint8")
    a = b.input("a", (m, k), 0.02, 100)
    w = b.weight("w", random_weights(b.rng, (k, n)), 0.003, 0)
    b.op("MatMul", [a, w])
    model = b.model(0.06, 120)
    assert_same_bytes(run_each_path(monkeypatch, compiler.compile_model(model), b.feeds), f"matmul {shape}")


@pytest.mark.parametrize("weight_type", ["QInt8", "QUInt8"])
def test_quantized_lstms_give_the_same_bytes_on_every_path(monkeypatch, tmp_path, weight_type):
    """DynamicQuantizeLSTM's input and recurrent products run on the int8 GEMM (sizes off every tile: 33
    inputs, 4 * 70 gate columns, 5 rows), its uint8 activations quantized per run."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from test_ops_recurrent import rnn_model

    m, feeds = rnn_model("LSTM", s=7, n=5, i=33, h=70, direction="bidirectional", lens=[7, 2, 0, 5, 6], peep=True,
                         seed=11)
    src, dst = tmp_path / "f.onnx", tmp_path / "q.onnx"
    onnx.save(m, src)
    quantize_dynamic(str(src), str(dst), weight_type=getattr(QuantType, weight_type))
    q = onnx.load(dst)
    assert "DynamicQuantizeLSTM" in [n.op_type for n in q.graph.node]
    assert_same_bytes(run_each_path(monkeypatch, q.SerializeToString(), feeds), f"lstm-{weight_type}")
