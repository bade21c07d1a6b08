"""What an ONNX model declares of its inputs and outputs beyond ONNX's types, which the compiled model's tensor records
say: a layout (ONNX's dimension denotations) and fix points recorded as shifts (a metadata property), as a model made
for a device that is not NCHW or that reports fix points says them (a Vitis AI DPU subgraph: xir/dpu_graph.py)."""
from __future__ import annotations

import onnx

__all__ = ["IO_QUANTIZATION_KEY", "denoted_layouts", "io_shifts"]


def denoted_layouts(proto: onnx.ModelProto) -> dict:
    """{name: accm layout} of each 4-D graph input and output whose dims carry ONNX's dimension denotations
    (DATA_BATCH, DATA_CHANNEL, DATA_FEATURE): NHWC with the channel last, NCHW with it second. A model says so where
    its 4-D tensors are not NCHW (a DPU's feature maps); the others are taken as ONNX's NCHW."""
    from . import accm

    out = {}
    for vi in list(proto.graph.input) + list(proto.graph.output):
        dims = vi.type.tensor_type.shape.dim if vi.type.HasField("tensor_type") else []
        marks = [d.denotation for d in dims]
        if len(marks) == 4 and marks[0] == "DATA_BATCH" and marks.count("DATA_CHANNEL") == 1:
            at = marks.index("DATA_CHANNEL")
            if at in (1, 3) and all(m == "DATA_FEATURE" for i, m in enumerate(marks) if i not in (0, at)):
                out[vi.name] = accm.LAYOUT_NCHW if at == 1 else accm.LAYOUT_NHWC
    return out


#: The model metadata key by which a model asks that its power-of-two quantized inputs and outputs be recorded as
#: shifts (value "shift"), as the fix-point device it stands for reports them (a .xmodel's DPU subgraph).
IO_QUANTIZATION_KEY = "accel.io_quantization"


def io_shifts(proto: onnx.ModelProto) -> bool:
    """Whether the model's metadata asks for its inputs' and outputs' power-of-two scales as shifts."""
    return any(p.key == IO_QUANTIZATION_KEY and p.value == "shift" for p in proto.metadata_props)
