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
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common" / "tools"))
import standin_container

TYPES = {"S8": 8, "U8": 9, "F16": 10, "S16": 11, "U16": 12, "F32": 13, "S32": 14, "U32": 15}
# hbDNNDataType's image types, and the emulator's format of each one's frame.
IMAGE_TYPES = {"Y": 0, "NV12": 1, "NV12_SEPARATE": 2, "YUV444": 3, "RGB": 4, "BGR": 5}
IMAGE_FORMATS = {"Y": "y", "NV12": "nv12", "NV12_SEPARATE": "nv12", "YUV444": "yuv444", "RGB": "rgb", "BGR": "bgr"}
LAYOUTS = {"NHWC": 0, "NCHW": 2, "NONE": 255}
QUANT = {"NONE": 0, "SHIFT": 1, "SCALE": 2}
MAX_DIMS = 8
# hb_mapper's runtime input type of each image type (the container's INPUT_TYPE_RT).
RUNTIME_TYPES = {"Y": "gray", "NV12": "nv12", "NV12_SEPARATE": "nv12", "YUV444": "yuv444", "RGB": "rgb", "BGR": "bgr"}
# A PACKED_HBM_MODEL's first bytes: X5's magic (the stand-in is X5's libdnn), then the stand-in's own tag.
HBM_MAGIC = b"#B2Ehbm"
STANDIN_TAG = b"ACCELHB2"


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


@dataclass(frozen=True)
class BinRecord:
    """One model for pack(): the stand-in's model record (FORMAT.md) and the compile_model image_inputs its image
    inputs were compiled with (hb_mapper's preprocessing, which the container's metadata says)."""

    record: bytes
    images: Dict[str, Dict[str, Any]]


def model_record(onnx_path: Path, spec: Dict[str, Any]) -> BinRecord:
    images, _ = image_inputs(spec)
    return BinRecord(standin_container.model_record(onnx_path, spec, tensor_record, image_inputs), images)


def accm_record(name: str, data: bytes, spec: Dict[str, Any],
                images: Optional[Dict[str, Dict[str, Any]]] = None) -> BinRecord:
    return BinRecord(standin_container.accm_record(name, data, spec, tensor_record), dict(images or {}))


def pack(models: Sequence[BinRecord]) -> bytes:
    """The .bin file of `models`: Horizon's container (accel.compiler.hbin), one graph per model whose BPU node's
    PACKED_HBM_MODEL is X5's magic, then ACCELHB2, then the model's record."""
    from accel.compiler import hbin

    graphs, inputs = [], []
    for m in models:
        name, ins, outs = _interface(m.record)
        for n, _, shape, layout, kind in ins:
            inputs.append(hbin.BinInput(n, "", tuple(shape), layout_rt=layout, layout_train=layout,
                                        **_preprocessing(kind, m.images.get(n))))
        graphs.append(hbin.model_graph(name, [i[:3] for i in ins], [o[:3] for o in outs],
                                       HBM_MAGIC + STANDIN_TAG + m.record))
    metadata = {"MARCH": "bayes-e", **hbin.input_metadata(inputs)}
    return hbin.write(hbin.Container(graphs, metadata, ("accel stand-in", "1")))


def _preprocessing(kind: str, image: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """BinInput's runtime and training types and normalization of an input whose hbDNNDataType is `kind`."""
    if kind not in RUNTIME_TYPES:
        return {}
    image = image or {}
    out: Dict[str, Any] = {"type_rt": RUNTIME_TYPES[kind],
                           "type_train": "gray" if kind == "Y" else image.get("to", "rgb"),
                           "space_and_range": {"full": "regular", "video": "bt601_video"}.get(
                               image.get("range", "full"), image.get("range", "full"))}
    mean, scale = image.get("mean"), image.get("scale")
    if mean is not None or scale is not None:
        out["norm"] = ("data_mean_and_scale" if mean is not None and scale is not None
                       else "data_mean" if mean is not None else "data_scale")
        out["mean"] = tuple(float(x) for x in (mean if isinstance(mean, (list, tuple)) else [mean or 0.0]))
        out["scale"] = tuple(float(x) for x in (scale if isinstance(scale, (list, tuple)) else [scale or 1.0]))
    return out


def _interface(record: bytes) -> Tuple[str, list, list]:
    """(name, inputs, outputs) of a model record, each tensor (name, ONNX elem type, valid shape, layout name,
    hbDNNDataType name): what the container's graph says of it."""
    from onnx import TensorProto

    elem = {"S8": TensorProto.INT8, "U8": TensorProto.UINT8, "F16": TensorProto.FLOAT16, "S16": TensorProto.INT16,
            "U16": TensorProto.UINT16, "F32": TensorProto.FLOAT, "S32": TensorProto.INT32, "U32": TensorProto.UINT32}
    names = {v: k for k, v in {**TYPES, **IMAGE_TYPES}.items()}
    layouts = {v: k for k, v in LAYOUTS.items()}
    at = 0

    def take(fmt: str) -> tuple:
        nonlocal at
        values = struct.unpack_from(fmt, record, at)
        at += struct.calcsize(fmt)
        return values

    def text() -> str:
        nonlocal at
        (n,) = take("<I")
        at += n
        return record[at - n:at].decode("utf-8")

    name = text()
    (size,) = take("<Q")
    at += size
    counts = take("<II")
    tensors: List[list] = [[], []]
    for kind, count in enumerate(counts):
        for _ in range(count):
            tensor = text()
            layout, dtype = take("<ii")
            valid = take("<i8i")
            take("<i8iii")
            (scales,) = take("<I")
            at += 4 * scales
            (zero_points,) = take("<I")
            at += zero_points
            kind_name = names[dtype]
            tensors[kind].append((tensor, elem.get(kind_name, TensorProto.UINT8), list(valid[1:1 + valid[0]]),
                                  layouts.get(layout, "NONE"), kind_name))
    return name, tensors[0], tensors[1]


def main(argv: List[str]) -> int:
    return standin_container.main(argv, __doc__, model_record, pack)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
