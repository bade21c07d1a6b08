"""The ONNX a Horizon ``.bin`` was made from, behind the ``.bin``'s own interface: what the emulator runs in place of
the BPU part it cannot run. The inputs and outputs become the ``.bin``'s: a camera-frame input takes the frame with
the preprocessing hb_mapper compiled in (compile_model's ``image_inputs``), a quantized featuremap input takes the
integers the model's own QuantizeLinear would make, a quantized output gives the integers its DequantizeLinear
reads (hb_mapper's calibrated model read as its QDQ twin: horizon_ops.py); names, dtypes and shapes are checked
against the ``.bin``'s."""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

import numpy as np
import onnx
from onnx import helper

from .. import horizon_ops
from ..errors import CompileError
from .interface import IMAGE_TYPES, BinInput, BinModel, BinTensor, dims

__all__ = ["BinSourceError", "behind"]

_NORMALIZATION = {"data_mean_and_scale": (True, True), "data_mean": (True, False), "data_scale": (False, True),
                  "no_preprocess": (False, False)}


class BinSourceError(CompileError):
    """An ONNX that cannot stand behind the .bin's interface (not the one it was made from), or an interface the
    emulator cannot give; the message names the tensor."""


def _image(i: BinInput) -> Dict[str, Any]:
    if i.dtype != "uint8":
        raise BinSourceError(f"input {i.name!r}: a {i.type_rt} input of dtype {i.dtype} (the emulator takes camera "
                             f"frames as uint8)")
    if i.type_train not in ("rgb", "bgr", "gray"):
        raise BinSourceError(f"input {i.name!r}: a {i.type_rt} frame for a model trained on {i.type_train}: the "
                             f"emulator converts frames to rgb, bgr or gray")
    if (i.type_train == "gray") != (i.type_rt == "gray"):
        raise BinSourceError(f"input {i.name!r}: a {i.type_rt} frame for a model trained on {i.type_train}")
    if i.norm not in _NORMALIZATION:
        raise BinSourceError(f"input {i.name!r}: NORM_TYPE {i.norm!r} is none of {', '.join(_NORMALIZATION)}")
    mean, scale = _NORMALIZATION[i.norm]
    request: Dict[str, Any] = {"format": IMAGE_TYPES[i.type_rt], "range": i.space_and_range}
    if i.type_train != "gray":
        request["to"] = i.type_train
    if mean and i.mean:
        request["mean"] = list(i.mean)
    if scale and i.scale:
        request["scale"] = list(i.scale)
    return request


def _check_shape(kind: str, t: BinTensor, v: onnx.ValueInfoProto) -> None:
    mine = dims(v)
    if len(mine) != len(t.shape) or any(isinstance(a, int) and isinstance(b, int) and a != b
                                        for a, b in zip(mine, t.shape)):
        raise BinSourceError(f"{kind} {t.name!r} is {list(t.shape)} in the .bin but {list(mine)} in the ONNX")


def _rename(graph: onnx.GraphProto, old: str, new: str) -> None:
    for n in graph.node:
        n.input[:] = [new if x == old else x for x in n.input]
        n.output[:] = [new if x == old else x for x in n.output]


def _quantized_input(graph: onnx.GraphProto, i: BinInput, v: onnx.ValueInfoProto) -> None:
    """The input takes the integers of the QuantizeLinear nodes that read it (they must agree), which go."""
    readers = [n for n in graph.node if i.name in n.input]
    quantizers = [n for n in readers if n.op_type == "QuantizeLinear" and n.input[0] == i.name]
    if not readers or len(quantizers) != len(readers) or len({tuple(q.input[1:]) for q in quantizers}) != 1:
        raise BinSourceError(f"input {i.name!r} is {i.dtype} in the .bin, but in the ONNX it is not read by "
                             f"QuantizeLinear alone (a QDQ model's quantized input)")
    for q in quantizers:
        graph.node.remove(q)
        _rename(graph, q.output[0], i.name)
    v.type.tensor_type.elem_type = helper.np_dtype_to_tensor_dtype(np.dtype(i.dtype))


def _quantized_output(graph: onnx.GraphProto, t: BinTensor) -> None:
    """The output gives the integers its DequantizeLinear reads, which goes."""
    writer = next((n for n in graph.node if t.name in n.output), None)
    if writer is None or writer.op_type != "DequantizeLinear" or any(t.name in n.input for n in graph.node):
        raise BinSourceError(f"output {t.name!r} is {t.dtype} in the .bin, but in the ONNX it is not written by a "
                             f"DequantizeLinear alone (a QDQ model's quantized output)")
    graph.node.remove(writer)
    _rename(graph, writer.input[0], t.name)
    out = next(o for o in graph.output if o.name == t.name)
    out.type.tensor_type.elem_type = helper.np_dtype_to_tensor_dtype(np.dtype(t.dtype))


def behind(model: BinModel, source: onnx.ModelProto) -> Tuple[onnx.ModelProto, Dict[str, Dict[str, Any]]]:
    """(``source`` rewritten to take and give the .bin model's tensors, compile_model's image_inputs for its
    frame inputs); BinSourceError naming the first tensor that does not fit."""
    # A calibrated model's Horizon ops become the QuantizeLinear/DequantizeLinear pairs they stand for first, so that
    # its quantized boundary is found as a QDQ model's (a CompileError names a Horizon op that cannot be read).
    proto = onnx.ModelProto()
    proto.CopyFrom(horizon_ops.rewrite(source))
    graph = proto.graph
    weights = {t.name for t in graph.initializer}
    feeds = {v.name: v for v in graph.input if v.name not in weights}
    outs = {v.name: v for v in graph.output}
    for kind, theirs, ours in (("input", [i.name for i in model.inputs], list(feeds)),
                               ("output", [o.name for o in model.outputs], list(outs))):
        if sorted(theirs) != sorted(ours):
            raise BinSourceError(f"the .bin's {kind}s are {theirs} but the ONNX's {ours}: not the ONNX it was "
                                 f"made from")
    images: Dict[str, Dict[str, Any]] = {}
    for i in model.inputs:
        if i.type_rt in IMAGE_TYPES:
            images[i.name] = _image(i)
            continue
        if i.type_rt != "featuremap":
            raise BinSourceError(f"input {i.name!r}: runtime type {i.type_rt!r} is none the emulator takes "
                                 f"({', '.join(IMAGE_TYPES)}, featuremap)")
        if i.layout_rt != i.layout_train:
            raise BinSourceError(f"input {i.name!r}: a featuremap fed in {i.layout_rt} to a model trained in "
                                 f"{i.layout_train}: the emulator does not transpose featuremaps")
        _check_shape("input", i, feeds[i.name])
        if i.dtype in ("int8", "uint8"):
            _quantized_input(graph, i, feeds[i.name])
        elif i.dtype != "float32":
            raise BinSourceError(f"input {i.name!r}: a featuremap of dtype {i.dtype}")
    # The .bin's order of inputs (the weights ONNX may list among them after) and of outputs.
    ordered = [feeds[i.name] for i in model.inputs] + [v for v in graph.input if v.name in weights]
    kept = [onnx.ValueInfoProto() for _ in ordered]
    for k, v in zip(kept, ordered):
        k.CopyFrom(v)
    del graph.input[:]
    graph.input.extend(kept)
    reordered: List[onnx.ValueInfoProto] = []
    for o in model.outputs:
        _check_shape("output", o, outs[o.name])
        if o.dtype in ("int8", "uint8"):
            _quantized_output(graph, o)
        elif o.dtype != "float32":
            raise BinSourceError(f"output {o.name!r}: dtype {o.dtype} (a BPU's accumulators) is not emulated: "
                                 f"the emulator gives float32 or the int8 a DequantizeLinear reads")
        got = onnx.ValueInfoProto()
        got.CopyFrom(next(v for v in graph.output if v.name == o.name))
        reordered.append(got)
    del graph.output[:]
    graph.output.extend(reordered)
    return proto, images
