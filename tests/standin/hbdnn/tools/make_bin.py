"""Packs ONNX models into the libdnn stand-in's `.bin` (FORMAT.md beside this folder).

    python make_bin.py out.bin model.onnx[:spec.json] ...

Each model is compiled with accel.compiler into an emulator model of float32 tensors; its tensors are
described to the user as the spec says (default: float32 with the valid shape as the aligned one):
    {"inputs": {"x": {"type": "S8", "scale": [0.02], "aligned": [1, 4, 224, 224], "layout": "NCHW"}},
     "outputs": {"y": {"type": "S8", "scale": [0.1]}}}
An image input (hb_mapper's input_type_rt) names its type and the conversion the model does inside:
    {"inputs": {"images": {"type": "NV12", "to": "rgb", "mean": [123.7, 116.3, 103.5],
                           "scale": [0.017, 0.017, 0.017], "range": "full"}}}
type NV12, NV12_SEPARATE, Y, YUV444, RGB or BGR; "to", "mean", "scale" and "range" as
accel.compiler.compile_model's image_inputs take them. The model is compiled with the emulator's
preprocessing (it then takes the frame, uint8) and the tensor described as hb_mapper's are: valid shape
(1, 3, H, W) (1 channel for Y), layout NCHW for NV12 and Y, NHWC for the others (planar 3-channel images
are not in the stand-in), "aligned" the padded one ((1, 3, H, 32) for rows of 32 bytes), "valid" a
valid shape of its own (for models the driver must refuse, e.g. NV12 of odd size).
"""
from __future__ import annotations

import struct
import sys
from pathlib import Path
from typing import Any, Dict, List, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common" / "tools"))
import standin_container

TYPES = {"S8": 8, "U8": 9, "F16": 10, "S16": 11, "U16": 12, "F32": 13, "S32": 14, "U32": 15}
# hbDNNDataType's image types, and the emulator's format of each one's frame.
IMAGE_TYPES = {"Y": 0, "NV12": 1, "NV12_SEPARATE": 2, "YUV444": 3, "RGB": 4, "BGR": 5}
IMAGE_FORMATS = {"Y": "y", "NV12": "nv12", "NV12_SEPARATE": "nv12", "YUV444": "yuv444", "RGB": "rgb", "BGR": "bgr"}
LAYOUTS = {"NHWC": 0, "NCHW": 2, "NONE": 255}
QUANT = {"NONE": 0, "SHIFT": 1, "SCALE": 2}
MAX_DIMS = 8


def _shape(dims: Sequence[int]) -> bytes:
    if len(dims) > MAX_DIMS:
        raise ValueError(f"shape {list(dims)} has more than {MAX_DIMS} dimensions")
    padded = list(dims) + [0] * (MAX_DIMS - len(dims))
    return struct.pack("<i8i", len(dims), *padded)


def image_inputs(spec: Dict[str, Any]) -> tuple:
    """(compile_model's image_inputs, the spec) of the image inputs a spec names."""
    images = {name: standin_container.image_options(name, t, IMAGE_FORMATS[t["type"]])
              for name, t in spec.get("inputs", {}).items() if t.get("type") in IMAGE_TYPES}
    return images, spec


def image_spec(images: Dict[str, Dict[str, Any]]) -> Dict[str, Any]:
    """The spec of an emulator model compiled with compile_model's `images`, its frames described as
    hb_mapper describes image inputs (two planes, "nv12_planes", are no libdnn type: plain U8 tensors)."""
    by_format = {"nv12": "NV12", "y": "Y", "yuv444": "YUV444", "rgb": "RGB", "bgr": "BGR"}
    return {"inputs": {name: {"type": by_format[o["format"]]}
                       for name, o in images.items() if o["format"] in by_format}}


def _image_record(name: str, frame: Sequence[int], spec: Dict[str, Any]) -> bytes:
    """An image input whose emulator tensor (the frame, uint8 NHWC) has the shape `frame`."""
    kind = spec["type"]
    layout = spec.get("layout", "NCHW" if kind in ("NV12", "NV12_SEPARATE", "Y") else "NHWC")
    valid = spec.get("valid")
    if valid is None:
        if len(frame) != 4:
            raise ValueError(f"{name}: an image input's frame {list(frame)} is not (1, rows, W, channels)")
        height = frame[1] * 2 // 3 if kind.startswith("NV12") else frame[1]
        channels = 1 if kind == "Y" else 3
        valid = [1, channels, height, frame[2]] if layout == "NCHW" else [1, height, frame[2], channels]
    aligned = spec.get("aligned", list(valid))
    if len(aligned) != len(valid) or any(a < v for a, v in zip(aligned, valid)):
        raise ValueError(f"{name}: aligned shape {aligned} does not contain the valid shape {list(valid)}")
    return (standin_container.string(name) + struct.pack("<ii", LAYOUTS[layout], IMAGE_TYPES[kind])
            + _shape(valid) + _shape(aligned) + struct.pack("<ii", QUANT["NONE"], -1) + struct.pack("<II", 0, 0))


def tensor_record(name: str, valid: Sequence[int], spec: Dict[str, Any]) -> bytes:
    if spec.get("type") in IMAGE_TYPES:
        return _image_record(name, valid, spec)
    aligned = spec.get("aligned", list(valid))
    if len(aligned) != len(valid) or any(a < v for a, v in zip(aligned, valid)):
        raise ValueError(f"{name}: aligned shape {aligned} does not contain the valid shape {list(valid)}")
    quant, quant_values = standin_container.quantization(spec, "b")
    layout = spec.get("layout", "NCHW" if len(valid) == 4 else "NONE")
    return (standin_container.string(name) + struct.pack("<ii", LAYOUTS[layout], TYPES[spec.get("type", "F32")])
            + _shape(valid) + _shape(aligned) + struct.pack("<ii", QUANT[quant], spec.get("axis", -1)) + quant_values)


def model_record(onnx_path: Path, spec: Dict[str, Any]) -> bytes:
    return standin_container.model_record(onnx_path, spec, tensor_record, image_inputs)


def accm_record(name: str, data: bytes, spec: Dict[str, Any]) -> bytes:
    return standin_container.accm_record(name, data, spec, tensor_record)


def pack(models: List[bytes]) -> bytes:
    return standin_container.pack(b"ACCELHB1", models)


def main(argv: List[str]) -> int:
    return standin_container.main(argv, __doc__, model_record, pack)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
