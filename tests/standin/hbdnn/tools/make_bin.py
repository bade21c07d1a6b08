"""Packs ONNX models into the libdnn stand-in's `.bin` (FORMAT.md beside this folder).

    python make_bin.py out.bin model.onnx[:spec.json] ...

Each model is compiled with accel.compiler into an emulator model of float32 tensors; its tensors are
described to the user as the spec says (default: float32 with the valid shape as the aligned one):
    {"inputs": {"x": {"type": "S8", "scale": [0.02], "aligned": [1, 4, 224, 224], "layout": "NCHW"}},
     "outputs": {"y": {"type": "S8", "scale": [0.1]}}}
"""
from __future__ import annotations

import struct
import sys
from pathlib import Path
from typing import Any, Dict, List, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common" / "tools"))
import standin_container

TYPES = {"S8": 8, "U8": 9, "F16": 10, "S16": 11, "U16": 12, "F32": 13, "S32": 14, "U32": 15}
LAYOUTS = {"NHWC": 0, "NCHW": 2, "NONE": 255}
QUANT = {"NONE": 0, "SHIFT": 1, "SCALE": 2}
MAX_DIMS = 8


def _shape(dims: Sequence[int]) -> bytes:
    if len(dims) > MAX_DIMS:
        raise ValueError(f"shape {list(dims)} has more than {MAX_DIMS} dimensions")
    padded = list(dims) + [0] * (MAX_DIMS - len(dims))
    return struct.pack("<i8i", len(dims), *padded)


def tensor_record(name: str, valid: Sequence[int], spec: Dict[str, Any]) -> bytes:
    aligned = spec.get("aligned", list(valid))
    if len(aligned) != len(valid) or any(a < v for a, v in zip(aligned, valid)):
        raise ValueError(f"{name}: aligned shape {aligned} does not contain the valid shape {list(valid)}")
    quant, quant_values = standin_container.quantization(spec, "b")
    layout = spec.get("layout", "NCHW" if len(valid) == 4 else "NONE")
    return (standin_container.string(name) + struct.pack("<ii", LAYOUTS[layout], TYPES[spec.get("type", "F32")])
            + _shape(valid) + _shape(aligned) + struct.pack("<ii", QUANT[quant], spec.get("axis", -1)) + quant_values)


def model_record(onnx_path: Path, spec: Dict[str, Any]) -> bytes:
    return standin_container.model_record(onnx_path, spec, tensor_record)


def accm_record(name: str, data: bytes, spec: Dict[str, Any]) -> bytes:
    return standin_container.accm_record(name, data, spec, tensor_record)


def pack(models: List[bytes]) -> bytes:
    return standin_container.pack(b"ACCELHB1", models)


def main(argv: List[str]) -> int:
    return standin_container.main(argv, __doc__, model_record, pack)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
