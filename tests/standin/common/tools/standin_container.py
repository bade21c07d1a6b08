"""The outer structure of the stand-ins' model files (../container.h): an 8-byte magic, then models,
each a name, an emulator model (.accm) compiled from ONNX with float32 tensors, and one record per
input and output whose layout each format (the libdnn `.bin`, the hbUCP `.hbm`) defines."""
from __future__ import annotations

import json
import struct
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence

# (name, valid dims, the spec the user gave for it) -> the format's tensor record
TensorRecord = Callable[[str, Sequence[int], Dict[str, Any]], bytes]


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


def model_record(onnx_path: Path, spec: Dict[str, Any], tensor_record: TensorRecord) -> bytes:
    """One model: `onnx_path` compiled for the emulator, its tensors described as `spec` says
    ({"inputs": {name: {...}}, "outputs": {...}}, read by `tensor_record`)."""
    from accel import compiler

    return accm_record(onnx_path.stem, compiler.compile_model(str(onnx_path)), spec, tensor_record)


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
            if t["dtype_name"] != "float32":
                raise ValueError(f"{name}: {kind[:-1]} {t['name']!r} is {t['dtype_name']}; the "
                                 f"stand-in's emulator models have float32 tensors")
            out += tensor_record(t["name"], t["dims"], spec.get(kind, {}).get(t["name"], {}))
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
