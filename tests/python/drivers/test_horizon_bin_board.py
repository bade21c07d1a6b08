"""One Horizon .bin on the board and on the emulator (issue 34): the stand-in packer's .bin (Horizon's container,
tests/standin/hbdnn/FORMAT.md) loaded by the bpu driver through the libdnn stand-in, and on emu:int8=bpu the ONNX it
was made from behind the .bin's interface (Device.load(source=)); the same NV12 frame gives the same integers.

Runs when the device under test is the bpu driver with X3/X5 .bin models (ci/test.sh's bpu:0 .bin runs).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import accel
import accel.image as image
from standin_toolchain import tool

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from models import quantized

pytestmark = pytest.mark.vendor("bpu", formats=(".bin",))

MEAN = (123.675, 116.28, 103.53)
SCALE = (1 / 58.395, 1 / 57.12, 1 / 57.375)


def test_one_bin_gives_the_same_integers_on_the_board_and_the_emulator(dev, tmp_path):
    source = tmp_path / "tiny_cnn.onnx"
    source.write_bytes(Path(quantized.static_model("tiny_cnn", activation="int8", symmetric=True)).read_bytes())
    make_bin = tool(".bin")
    spec = {"inputs": {"image": {"type": "NV12", "to": "rgb", "mean": list(MEAN), "scale": list(SCALE)}}}
    path = tmp_path / "tiny_cnn.bin"
    path.write_bytes(make_bin.pack([make_bin.model_record(source, spec)]))
    board = dev.load(path)
    rng = np.random.default_rng(11)
    nv12 = image.bgr_to_nv12(rng.integers(0, 256, (64, 64, 3), dtype=np.uint8))
    with accel.Device("emu:cores=1,int8=bpu") as emu:
        emulated = emu.load(path, source=source)
        assert [(t.name, t.dtype, t.shape) for t in emulated.outputs] == \
               [(t.name, t.dtype, t.shape) for t in board.outputs]
        assert board.inputs[0].image.format == emulated.inputs[0].image.format == "nv12"
        assert emulated.outputs[0].quant.scales == board.outputs[0].quant.scales
        (want,) = emulated.run(nv12)
    (got,) = board.run(nv12)
    differ = int(np.count_nonzero(got != want))
    print(f"\n{differ} of {got.size} int8 outputs differ between bpu:0 and the emulator")
    assert got.dtype == np.int8 and differ == 0
