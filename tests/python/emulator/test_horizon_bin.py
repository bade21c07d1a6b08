"""Horizon's RDK .bin on the emulator (issue 34): the container read (`accel info model.bin`: march, versions,
hb_mapper's settings, each model's inputs with their runtime type and preprocessing, outputs, and where each node
runs), and `Device.load(bin, source=onnx)` running the ONNX it was made from behind exactly the .bin's interface.

The .bin files are the stand-in packer's (tests/standin/hbdnn/tools/make_bin.py), which writes Horizon's container
with its own payload in PACKED_HBM_MODEL; the board-side twin, the same file on the bpu driver,
is tests/python/drivers/test_horizon_bin_board.py.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import run_main
from onnx import TensorProto, helper

import accel
import accel.image as image
from accel.compiler import hbin

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from models import quantized
from standin_toolchain import tool
from test_horizon_calibrated import calibrated_form

MEAN = (123.675, 116.28, 103.53)
SCALE = (1 / 58.395, 1 / 57.12, 1 / 57.375)
H = W = 64


@pytest.fixture(scope="module")
def nv12_bin(tmp_path_factory):
    """(the .bin of the QDQ tiny_cnn with an NV12 input and hb_mapper's mean and scale, its source ONNX)."""
    folder = tmp_path_factory.mktemp("hbin")
    source = folder / "tiny_cnn.onnx"
    source.write_bytes(Path(quantized.static_model("tiny_cnn", activation="int8", symmetric=True)).read_bytes())
    make_bin = tool(".bin")
    spec = {"inputs": {"image": {"type": "NV12", "to": "rgb", "mean": list(MEAN), "scale": list(SCALE)}}}
    path = folder / "tiny_cnn.bin"
    path.write_bytes(make_bin.pack([make_bin.model_record(Path(source), spec)]))
    return path, source


def frame(seed=3):
    rng = np.random.default_rng(seed)
    bgr = rng.integers(0, 256, (H, W, 3), dtype=np.uint8)
    return image.bgr_to_nv12(bgr)


def test_info_describes_the_container(nv12_bin, capsys):
    path, _ = nv12_bin
    code, out, err = run_main(capsys, "info", path, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["format"] == "Horizon .bin" and d["march"] == "bayes-e (RDK X5)"
    (m,) = d["models"]
    assert m["inputs"] == [f"image [1, 3, {H}, {W}] uint8 nv12 NCHW -> rgb (regular), (123.675 116.28 103.53 "
                           f"subtracted) * ({' '.join(f'{s:g}' for s in SCALE)})"]
    assert len(m["outputs"]) == 1 and m["outputs"][0].endswith(" int8")
    assert m["BPU (not emulated)"] == ["tiny_cnn_subgraph_0 (BPU)"] and m["CPU"] == "none"
    assert d["settings"]["INPUT_TYPE_RT"] == "nv12" and d["settings"]["NORM_TYPE"] == "data_mean_and_scale"


def test_runs_its_source_behind_its_interface_bit_for_bit(nv12_bin):
    """The .bin's model on emu:int8=bpu takes the NV12 frame and gives the int8 the source's last
    DequantizeLinear reads: dequantized, exactly the source's float output on the same frame."""
    path, source = nv12_bin
    nv12 = frame()
    with accel.Device("emu:cores=1,int8=bpu") as dev:
        from_bin = dev.load(path, source=source)
        (inp,) = from_bin.inputs
        assert inp.name == "image" and inp.dtype == np.uint8 and inp.image is not None
        assert inp.image.format == "nv12" and (inp.image.width, inp.image.height) == (W, H)
        (out,) = from_bin.outputs
        assert out.dtype == np.int8 and out.quant is not None and out.quant.type == "per_tensor"
        plain = dev.load(source, image_inputs={"image": {"format": "nv12", "to": "rgb", "mean": MEAN,
                                                         "scale": SCALE}})
        (q,) = from_bin.run(nv12)
        (real,) = plain.run(nv12)
    dequantized = ((q.astype(np.float32) - np.float32(out.quant.zero_points[0]))
                   * np.float32(out.quant.scales[0]))
    differ = int(np.count_nonzero(dequantized != real))
    print(f"\n{differ} of {q.size} outputs differ from the source's float output (by up to "
          f"{np.abs(dequantized - real).max() / out.quant.scales[0]:.0f} steps)")
    assert differ == 0


def test_without_a_source_takes_the_calibrated_model_beside_it(nv12_bin, tmp_path):
    """No source named: hb_mapper's <name>_calibrated_model.onnx beside the .bin (its Horizon ops read as the QDQ
    model they stand for) is taken, and gives the QDQ source's integers; with none beside it, the error says
    the BPU part is not emulated and what to pass."""
    path, source = nv12_bin
    nv12 = frame(4)
    with accel.Device("emu:cores=1,int8=bpu") as dev:
        with pytest.raises(accel.InvalidArgumentError, match=r"Horizon \.bin for RDK X5 \(march bayes-e\): its BPU "
                           r"part has no public description and cannot be emulated; pass source='model.onnx'.*"
                           r"'tiny_cnn_calibrated_model.onnx'"):
            dev.load(path)
        beside = tmp_path / "tiny_cnn.bin"
        beside.write_bytes(path.read_bytes())
        calibrated = calibrated_form(onnx.load(str(source)), weights=True)
        assert any(n.op_type == "HzCalibration" for n in calibrated.graph.node)
        onnx.save(calibrated, str(tmp_path / "tiny_cnn_calibrated_model.onnx"))
        (got,) = dev.load(beside).run(nv12)
        (want,) = dev.load(path, source=source).run(nv12)
    differ = int(np.count_nonzero(got != want))
    print(f"\nthe calibrated model: {differ} of {got.size} int8 outputs differ from the QDQ source's")
    assert got.dtype == np.int8 and differ == 0


def test_refuses_what_does_not_fit(nv12_bin, tmp_path):
    path, source = nv12_bin
    # The quantized model needs the BPU's int8 rules.
    with accel.Device("emu") as dev, pytest.raises(accel.UnsupportedError,
                                                   match=r"quantized model for Horizon's BPU.*'emu:int8=bpu'"):
        dev.load(path, source=source)
    other = tmp_path / "other.onnx"
    onnx.save(helper.make_model(helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])]), opset_imports=[helper.make_opsetid("", 17)]),
        str(other))
    with accel.Device("emu:int8=bpu") as dev:
        with pytest.raises(accel.InvalidArgumentError, match=r"the \.bin's inputs are \['image'\] but the ONNX's "
                                                             r"\['x'\]: not the ONNX it was made from"):
            dev.load(path, source=other)
        with pytest.raises(FileNotFoundError, match=r"missing\.onnx"):
            dev.load(path, source=tmp_path / "missing.onnx")
        with pytest.raises(accel.InvalidArgumentError, match=r"source applies to Horizon \.bin models only"):
            dev.load(source, source=source)
        short = tmp_path / "short.bin"
        short.write_bytes(path.read_bytes()[:100])
        with pytest.raises(accel.ModelFormatError, match=r"cannot read '.*short\.bin': not a Horizon \.bin"):
            dev.load(short, source=source)
        text = tmp_path / "text.bin"
        text.write_bytes(b"\x01\x02 not a model")
        with pytest.raises(accel.ModelFormatError, match=r"text\.bin"):
            dev.load(text, source=source)


def _tail_bin(magic: bytes, march: str = "") -> bytes:
    """A .bin as hb_mapper lays out a classifier: a gray input, the BPU node writing int8, a CPU Dequantize with
    per-channel scales, then Softmax."""
    deq = helper.make_node("Dequantize", ["logits_q"], ["logits"], name="dequant", axis=1,
                           scales=[0.1, 0.2, 0.3])
    soft = helper.make_node("Softmax", ["logits"], ["prob"], name="softmax", axis=1)
    graph = hbin.model_graph("net", [("img", TensorProto.UINT8, [1, 1, 28, 28])], [("prob", TensorProto.FLOAT, [1, 3])],
                             magic + b"opaque", [deq, soft], bpu_outputs=["logits_q"])
    graph.value_info.extend([helper.make_tensor_value_info("logits_q", TensorProto.INT8, [1, 3])])
    meta = {**({"MARCH": march} if march else {}),
            **hbin.input_metadata([hbin.BinInput("img", "", (), type_rt="gray", type_train="gray")])}
    return hbin.write(hbin.Container([graph], meta, ("3", "1.2.3")))


def test_cpu_tail_and_other_marches(tmp_path, capsys):
    path = tmp_path / "x3.bin"
    path.write_bytes(_tail_bin(b"#X2Ahbm", "bernoulli2"))
    code, out, err = run_main(capsys, "info", path, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["march"] == "bernoulli2 (RDK X3)" and d["versions"] == "3 1.2.3"
    (m,) = d["models"]
    assert m["CPU"] == ["dequant (Dequantize)", "softmax (Softmax)"] and m["outputs"] == ["prob [1, 3] float32"]
    assert m["inputs"] == ["img [1, 1, 28, 28] uint8 gray -> gray (regular)"]
    for magic, march in ((b"#B25hbm", "bayes (J5)"), (b"#B2Ehbm", "bayes-e (RDK X5)")):
        path.write_bytes(_tail_bin(magic))
        assert json.loads(run_main(capsys, "info", path, "--json")[1])["march"] == march
    with pytest.raises(hbin.BinFormatError, match=r"MARCH is 'bayes-e' but a compiled part is for 'bernoulli2'"):
        hbin.describe(hbin.read(_tail_bin(b"#X2Ahbm", "bayes-e")))
    with pytest.raises(hbin.BinFormatError, match=r"starts with b'#ZZZhbm', no known march's magic"):
        hbin.describe(hbin.read(_tail_bin(b"#ZZZhbm")))


def test_container_round_trips_and_refuses_malformed():
    data = _tail_bin(b"#B2Ehbm", "bayes-e")
    c = hbin.read(data)
    assert hbin.write(c) == data
    with pytest.raises(hbin.BinFormatError, match=r"holds no graph"):
        hbin.read(hbin.write(hbin.Container([], {"MARCH": "bayes-e"})))
    no_bpu = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                               [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                               [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    with pytest.raises(hbin.BinFormatError, match=r"graph 'g' has no BPU node"):
        hbin.describe(hbin.Container([no_bpu]))
    meta = {"INPUT_NAMES": "a;b", "INPUT_TYPE_RT": "nv12;gray;rgb"}
    graph = hbin.read(data).graphs[0]
    with pytest.raises(hbin.BinFormatError, match=r"INPUT_TYPE_RT='nv12;gray;rgb' has 3 values for 2 inputs"):
        hbin.describe(hbin.Container([graph], meta))


def test_damaged_files_are_read_or_refused_cleanly(nv12_bin):
    """Truncated, bit-flipped and spliced .bin files: read and described, or refused with BinFormatError; never
    another exception."""
    rng = np.random.default_rng(5)
    outcomes = {"read": 0, "refused": 0}
    for i in range(400):
        data = _tail_bin(b"#B2Ehbm", "bayes-e") if i % 2 else nv12_bin[0].read_bytes()
        cut = len(data) if rng.random() < 0.5 else int(rng.integers(1, len(data) + 1))
        b = bytearray(data[:cut])
        for _ in range(int(rng.integers(0, 4))):
            b[int(rng.integers(0, len(b)))] ^= 1 << int(rng.integers(0, 8))
        try:
            hbin.describe(hbin.read(bytes(b)))
            outcomes["read"] += 1
        except hbin.BinFormatError:
            outcomes["refused"] += 1
    print(f"\n{outcomes}")
    assert outcomes["refused"] > 0 and outcomes["read"] > 0
