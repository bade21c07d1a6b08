"""Packs ONNX models into the hbUCP stand-in's `.hbm` (FORMAT.md beside this folder).

    python make_hbm.py out.hbm model.onnx[:spec.json] ...

Each model is compiled with accel.compiler into an emulator model of float32 tensors; its tensors are
described to the user as the spec says (default: dense float32):
    {"inputs": {"x": {"type": "S8", "scale": [0.02], "zero_point": [3], "stride": [4096, 1024, 32, 1]}},
     "outputs": {"y": {"type": "S8", "scale": [0.1, 0.2], "axis": 1, "aligned": [1, 2, 4, 8]}}}
"stride" gives byte strides (-1: dynamic, inputs only; the user sets it at inference), "aligned" a
padded shape laid out densely; "bytes" overrides alignedByteSize (default: what the layout spans,
padding of the outermost dimension included).
An NV12 image input names its type and the conversion the model does inside:
    {"inputs": {"images": {"type": "NV12", "to": "rgb", "mean": [...], "scale": [...], "range": "full"}}}
("to", "mean", "scale" and "range" as accel.compiler.compile_model's image_inputs take them). S100 has no
image types: as hb_compile does, the input becomes two U8 inputs, `images_y` (1, H, W, 1) and `images_uv`
(1, H/2, W/2, 2), whose outer strides are dynamic (the model is compiled with the emulator's "nv12_planes"
preprocessing, which takes those two).
"""
from __future__ import annotations

import struct
import sys
from pathlib import Path
from typing import Any, Dict, List, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common" / "tools"))
import standin_container

TYPES = {"S8": 2, "U8": 3, "F16": 4, "S16": 5, "U16": 6, "F32": 7, "S32": 8, "U32": 9, "BOOL8": 13}
SIZES = {"S8": 1, "U8": 1, "BOOL8": 1, "F16": 2, "S16": 2, "U16": 2, "F32": 4, "S32": 4, "U32": 4}
QUANT = {"NONE": 0, "SCALE": 1}
MAX_DIMS = 10


def _layout(name: str, valid: Sequence[int], spec: Dict[str, Any]) -> tuple:
    """(byte strides, alignedByteSize) of a tensor."""
    size = SIZES[spec.get("type", "F32")]
    if "stride" in spec:
        strides = list(spec["stride"])
        if len(strides) != len(valid):
            raise ValueError(f"{name}: {len(strides)} strides for {len(valid)} dimensions")
        if -1 in strides:
            return strides, -1
        total = strides[0] * valid[0] if valid else size
    else:
        aligned = spec.get("aligned", list(valid))
        if len(aligned) != len(valid) or any(a < v for a, v in zip(aligned, valid)):
            raise ValueError(f"{name}: aligned shape {aligned} does not contain the valid shape {list(valid)}")
        strides, total = [], size
        for a in reversed(aligned):
            strides.insert(0, total)
            total *= a
    return strides, spec.get("bytes", total)


# The y/uv pair hb_compile makes of an NV12 input: U8 planes whose row and plane strides the user sets.
PLANES = {"_y": {"type": "U8", "stride": [-1, -1, 1, 1]}, "_uv": {"type": "U8", "stride": [-1, -1, 2, 1]}}


def image_inputs(spec: Dict[str, Any]) -> tuple:
    """(compile_model's image_inputs, the spec with each NV12 input replaced by its y/uv pair)."""
    images: Dict[str, Dict[str, Any]] = {}
    inputs: Dict[str, Any] = {}
    for name, t in spec.get("inputs", {}).items():
        if t.get("type") not in ("NV12", "NV12_SEPARATE", "Y", "YUV444", "RGB", "BGR"):
            inputs[name] = t
        elif t["type"] != "NV12":
            raise ValueError(f"{name}: S100 has no image type {t['type']}; an NV12 input is a y/uv pair (type NV12)")
        else:
            images[name] = standin_container.image_options(name, t, "nv12_planes")
            inputs.update({name + suffix: dict(plane) for suffix, plane in PLANES.items()})
    return images, {**spec, "inputs": inputs}


def image_spec(images: Dict[str, Dict[str, Any]]) -> Dict[str, Any]:
    """The spec of an emulator model compiled with compile_model's `images`: the planes of an "nv12_planes"
    frame as hb_compile gives them (the y/uv pair); the other frames are plain U8 tensors (S100 has no
    image types)."""
    return {"inputs": {name + suffix: dict(plane) for name, o in images.items() if o["format"] == "nv12_planes"
                       for suffix, plane in PLANES.items()}}


def tensor_record(name: str, valid: Sequence[int], spec: Dict[str, Any]) -> bytes:
    if len(valid) > MAX_DIMS:
        raise ValueError(f"{name}: shape {list(valid)} has more than {MAX_DIMS} dimensions")
    strides, aligned_bytes = _layout(name, valid, spec)
    quant, quant_values = standin_container.quantization(spec, "i")
    pad = MAX_DIMS - len(valid)
    return (standin_container.string(name) + struct.pack("<ii", TYPES[spec.get("type", "F32")], len(valid))
            + struct.pack("<10i", *(list(valid) + [0] * pad)) + struct.pack("<10q", *(strides + [0] * pad))
            + struct.pack("<qii", aligned_bytes, QUANT[quant], spec.get("axis", -1)) + quant_values)


def model_record(onnx_path: Path, spec: Dict[str, Any]) -> bytes:
    return standin_container.model_record(onnx_path, spec, tensor_record, image_inputs)


def accm_record(name: str, data: bytes, spec: Dict[str, Any]) -> bytes:
    return standin_container.accm_record(name, data, spec, tensor_record)


def pack(models: List[bytes]) -> bytes:
    return standin_container.pack(b"ACCELHM1", models)


def main(argv: List[str]) -> int:
    return standin_container.main(argv, __doc__, model_record, pack)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
