"""The outer structure of the stand-ins' model files (../container.h): an 8-byte magic, then models,
each a name, an emulator model (.accm) compiled from ONNX with float32 tensors, and one record per
input and output whose layout each format (the libdnn `.bin`, the hbUCP `.hbm`) defines.

An image input (a camera frame the model converts itself, as Horizon's toolchain compiles NV12 models) is
compiled with the emulator's own preprocessing (accel.compiler.compile_model's image_inputs), so that the
emulator model takes the frame's bytes (a uint8 tensor) as the vendor's runtime would, and the stand-in
hands them over as they are.

The Horizon stand-ins compute as the BPU does: their models are compiled with the emulator's `bpu` int8
rules (INT8_RULES), and the stand-ins open the emulator with them. A quantized (QDQ) model's interface
is, unless the spec says otherwise, int8 with the scales of the QuantizeLinear that reads each input and
the DequantizeLinear that writes each output (qdq_boundary), as Horizon's toolchain gives a quantized
model's tensors: the stand-in turns those integers into the floats the model's own QuantizeLinear takes
back exactly, so the integers flow end to end."""
from __future__ import annotations

import json
import struct
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

# (name, valid dims, the spec the user gave for it) -> the format's tensor record
TensorRecord = Callable[[str, Sequence[int], Dict[str, Any]], bytes]

# The emulator's int8 rules the Horizon stand-ins compute with (their engines open emu:int8=bpu).
INT8_RULES = "bpu"


def qdq_boundary(onnx_path: Path) -> Dict[str, Dict[str, tuple]]:
    """{"inputs": {name: (scale, zero point, numpy dtype)}, "outputs": {...}}: each graph input that only
    QuantizeLinear nodes of one per-tensor scale read, each graph output a per-tensor DequantizeLinear
    writes; the constants as the model holds them."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(onnx_path))
    consts = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    for n in model.graph.node:
        if n.op_type == "Constant" and n.attribute:
            consts[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)

    def params(n):
        scale = consts.get(n.input[1]) if len(n.input) > 1 else None
        zero = consts.get(n.input[2]) if len(n.input) > 2 and n.input[2] else None
        if scale is None or scale.size != 1 or (zero is not None and zero.size != 1):
            return None
        dtype = np.dtype(np.uint8) if zero is None else zero.dtype
        return float(scale.reshape(())), 0 if zero is None else int(zero.reshape(())), dtype

    found: Dict[str, Dict[str, tuple]] = {"inputs": {}, "outputs": {}}
    for i in model.graph.input:
        readers = [n for n in model.graph.node if i.name in n.input]
        got = {params(n) if n.op_type == "QuantizeLinear" and n.input[0] == i.name else None for n in readers}
        if readers and len(got) == 1 and None not in got:
            found["inputs"][i.name] = got.pop()
    for o in model.graph.output:
        writer = next((n for n in model.graph.node if o.name in n.output), None)
        if writer is not None and writer.op_type == "DequantizeLinear" and params(writer) is not None:
            found["outputs"][o.name] = params(writer)
    return found


def quantized_spec(onnx_path: Path, spec: Dict[str, Any]) -> Dict[str, Any]:
    """`spec` with, for each tensor it leaves undescribed, the int8 interface of qdq_boundary."""
    out = {"inputs": dict(spec.get("inputs", {})), "outputs": dict(spec.get("outputs", {}))}
    for kind, tensors in qdq_boundary(onnx_path).items():
        for name, (scale, zero, dtype) in tensors.items():
            if name not in out[kind] and dtype.name in ("int8", "uint8"):
                out[kind][name] = {"type": "S8" if dtype.name == "int8" else "U8", "scale": [scale],
                                   "zero_point": [zero]}
    return {**spec, **out}


def string(s: str) -> bytes:
    b = s.encode("utf-8")
    return struct.pack("<I", len(b)) + b


def quantization(spec: Dict[str, Any], zero_point_code: str) -> tuple:
    """(quantization name, the packed scale and zero point lists) of a tensor's spec: "scale" and
    "zero_point" lists (each a u32 count, then f32 / `zero_point_code` values), "quant" defaulting to
    SCALE when there are scales."""
    scales = spec.get("scale", [])
    zero_points = spec.get("zero_point", [])
    return (spec.get("quant", "SCALE" if scales else "NONE"),
            struct.pack(f"<I{len(scales)}f", len(scales), *scales)
            + struct.pack(f"<I{len(zero_points)}{zero_point_code}", len(zero_points), *zero_points))


# What a spec may say of an image input's conversion, passed on to the emulator's preprocessing
# (accel.compiler.compile_model's image_inputs).
IMAGE_OPTIONS = ("to", "mean", "scale", "range")

# (the spec) -> (compile_model's image_inputs, the spec of the compiled model's tensors): each format's
# reading of the image inputs a spec names.
ImageInputs = Callable[[Dict[str, Any]], Tuple[Dict[str, Dict[str, Any]], Dict[str, Any]]]


def image_options(name: str, tensor: Dict[str, Any], fmt: str) -> Dict[str, Any]:
    """compile_model's image_inputs entry for input `name` of the spec `tensor`, in the emulator's `fmt`."""
    unknown = set(tensor) - set(IMAGE_OPTIONS) - {"type", "aligned", "layout", "valid"}
    if unknown:
        raise ValueError(f"{name}: an image input takes {', '.join(IMAGE_OPTIONS)} (not {', '.join(sorted(unknown))})")
    return {"format": fmt, **{k: tensor[k] for k in IMAGE_OPTIONS if k in tensor}}


def model_record(onnx_path: Path, spec: Dict[str, Any], tensor_record: TensorRecord,
                 image_inputs: Optional[ImageInputs] = None) -> bytes:
    """One model: `onnx_path` compiled for the emulator with the BPU's int8 rules, its tensors described as
    `spec` says ({"inputs": {name: {...}}, "outputs": {...}}, read by `tensor_record`), a quantized model's
    boundary as quantized_spec gives it where the spec is silent. Image inputs (`image_inputs` reads them
    from the spec) are compiled in with the emulator's own preprocessing: the model then takes the frame."""
    from accel import compiler

    images, spec = image_inputs(spec) if image_inputs else ({}, spec)
    if images:
        data = compiler.compile_model(str(onnx_path), int8=INT8_RULES, image_inputs=images)
    else:
        data = compiler.compile_model(str(onnx_path), int8=INT8_RULES)
    return accm_record(onnx_path.stem, data, quantized_spec(onnx_path, spec), tensor_record)


def accm_record(name: str, data: bytes, spec: Dict[str, Any], tensor_record: TensorRecord) -> bytes:
    """One model named `name`: the emulator model `data` (.accm bytes, float32 tensors), its tensors
    described as `spec` says."""
    from accel.compiler import accm as accm_format

    image = accm_format.read(data)
    out = string(name) + struct.pack("<Q", len(data)) + data
    out += struct.pack("<II", len(image["inputs"]), len(image["outputs"]))
    for kind in ("inputs", "outputs"):
        for index in image[kind]:
            t = image["tensors"][index]
            # float32, but for the uint8 frame of an image input (handed over as bytes).
            if t["dtype_name"] != "float32" and not (kind == "inputs" and t["dtype_name"] == "uint8"):
                raise ValueError(f"{name}: {kind[:-1]} {t['name']!r} is {t['dtype_name']}; the "
                                 f"stand-in's emulator models have float32 tensors (and uint8 image inputs)")
            tensor_spec = spec.get(kind, {}).get(t["name"], {})
            if t["dtype_name"] == "uint8" and "type" not in tensor_spec:  # a frame's bytes, as they are
                tensor_spec = {**tensor_spec, "type": "U8"}
            out += tensor_record(t["name"], t["dims"], tensor_spec)
    return out


def pack(magic: bytes, models: List[bytes]) -> bytes:
    assert len(magic) == 8
    return magic + struct.pack("<I", len(models)) + b"".join(models)


def main(argv: List[str], usage: str, record: Callable[[Path, Dict[str, Any]], bytes],
         pack_models: Callable[[List[bytes]], bytes]) -> int:
    """The tools' command line: out-file model.onnx[:spec.json] ..."""
    if len(argv) < 2:
        print(usage, file=sys.stderr)
        return 2
    records = []
    for arg in argv[1:]:
        path, _, spec_path = arg.partition(":")
        spec = json.loads(Path(spec_path).read_text()) if spec_path else {}
        records.append(record(Path(path), spec))
    Path(argv[0]).write_bytes(pack_models(records))
    return 0
