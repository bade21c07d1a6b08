"""accel.compiler.hbin: Horizon's RDK ``.bin`` (hb_mapper's output for the X3/X5 BPU) for the emulator.

    from accel.compiler import hbin
    info = hbin.describe(hbin.read(data))          # march, versions, metadata, each model's interface (interface.py)
    model, images = hbin.behind(info.models[0], onnx.load("model.onnx"))   # the ONNX it was made from, behind it
    data = hbin.write(container)                   # what the stand-in's packer writes (container.py)

The BPU part (PACKED_HBM_MODEL) has no public description: the emulator cannot run it, only the ONNX the .bin was
made from, behind the .bin's interface (source.py), compiled with the BPU's int8 rules (``int8="bpu"``).
"""
from __future__ import annotations

from .container import MAGICS, PACKED_HBM_MODEL, BinFormatError, Container, read, write
from .interface import (IMAGE_TYPES, BinFile, BinInput, BinModel, BinNode, BinTensor, describe, input_metadata,
                        model_graph)
from .source import BinSourceError, behind

__all__ = ["IMAGE_TYPES", "MAGICS", "PACKED_HBM_MODEL", "BinFile", "BinFormatError", "BinInput", "BinModel",
           "BinNode", "BinSourceError", "BinTensor", "Container", "behind", "describe", "input_metadata",
           "model_graph", "read", "write"]
