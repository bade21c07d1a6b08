"""What a Horizon ``.bin`` tells of its models (``describe``), and the graph of one as hb_mapper lays it out
(``model_graph``, ``input_metadata``: what the stand-in's packer writes). The user's side of a model: its inputs
with their runtime type (camera frames: nv12, gray, rgb, bgr, yuv444; or a featuremap), layout and the
preprocessing hb_mapper compiled in (mean, scale, colour space and range); its outputs after the CPU nodes; which
nodes run on the BPU and which on the CPU; and the march the compiled part was made for."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple, Union

import onnx
from onnx import TensorProto, helper

from .container import MAGICS, PACKED_HBM_MODEL, BinFormatError, Container

__all__ = ["BinFile", "BinInput", "BinModel", "BinNode", "BinTensor", "IMAGE_TYPES", "describe", "input_metadata",
           "model_graph"]

#: hb_mapper's runtime input types that are camera frames -> the emulator's frame format (frame_inputs.FORMATS).
IMAGE_TYPES = {"nv12": "nv12", "gray": "y", "rgb": "rgb", "bgr": "bgr", "yuv444": "yuv444"}

#: The metadata keys that say, per input (values separated by ";", one per input or one for all), how it is fed.
_PER_INPUT = {"type_rt": "INPUT_TYPE_RT", "layout_rt": "INPUT_LAYOUT_RT", "type_train": "INPUT_TYPE_TRAIN",
              "layout_train": "INPUT_LAYOUT_TRAIN", "norm": "NORM_TYPE", "mean": "MEAN_VALUE", "scale": "SCALE_VALUE",
              "space_and_range": "INPUT_SPACE_AND_RANGE"}

Dim = Union[int, str]


@dataclass(frozen=True)
class BinTensor:
    name: str
    dtype: str                # NumPy's name: "float32", "int8", "uint8", "int32" ...
    shape: Tuple[Dim, ...]    # a dim the graph leaves symbolic is its name


@dataclass(frozen=True)
class BinInput(BinTensor):
    type_rt: str = "featuremap"      # what the application feeds
    layout_rt: str = ""
    type_train: str = "featuremap"   # what the model was trained on
    layout_train: str = ""
    norm: str = "no_preprocess"      # hb_mapper's norm_type
    mean: Tuple[float, ...] = ()
    scale: Tuple[float, ...] = ()
    space_and_range: str = "regular"


@dataclass(frozen=True)
class BinNode:
    name: str
    op_type: str
    where: str                # "BPU" or "CPU"


@dataclass(frozen=True)
class BinModel:
    name: str
    inputs: Tuple[BinInput, ...]
    outputs: Tuple[BinTensor, ...]
    nodes: Tuple[BinNode, ...]
    hbm: Tuple[bytes, ...]    # each BPU part's compiled bytes (PACKED_HBM_MODEL), in node order


@dataclass(frozen=True)
class BinFile:
    march: str                # MARCH as hb_mapper wrote it, else from the hbm's magic
    chip: str                 # what the march runs on ("RDK X5"), or "unknown"
    versions: Tuple[str, str]
    metadata: Dict[str, str]
    models: Tuple[BinModel, ...]


def _dtype(elem_type: int) -> str:
    try:
        return str(helper.tensor_dtype_to_np_dtype(elem_type))
    except (KeyError, ValueError):
        return f"ONNX type {elem_type}"


def dims(v: onnx.ValueInfoProto) -> Tuple[Dim, ...]:
    """A graph value's shape: its dims, a symbolic one by its name ("?" when it has none)."""
    return tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in v.type.tensor_type.shape.dim)


def _tensor(v: onnx.ValueInfoProto) -> Tuple[str, str, Tuple[Dim, ...]]:
    return v.name, _dtype(v.type.tensor_type.elem_type), dims(v)


def _per_input(metadata: Dict[str, str], names: Sequence[str]) -> Dict[str, Dict[str, str]]:
    """{input name: {field: value}} from hb_mapper's ';'-separated keys, in INPUT_NAMES' order (else the graph's)."""
    order = [n.strip() for n in metadata["INPUT_NAMES"].split(";")] if "INPUT_NAMES" in metadata else list(names)
    out: Dict[str, Dict[str, str]] = {n: {} for n in names}
    for fieldname, key in _PER_INPUT.items():
        if key not in metadata:
            continue
        parts = [p.strip() for p in metadata[key].split(";")]
        if len(parts) not in (1, len(order)):
            raise BinFormatError(f"metadata {key}={metadata[key]!r} has {len(parts)} values for {len(order)} inputs "
                                 f"({'; '.join(order)})")
        for i, name in enumerate(order):
            if name in out:
                out[name][fieldname] = parts[0] if len(parts) == 1 else parts[i]
    return out


def _numbers(key: str, text: Optional[str]) -> Tuple[float, ...]:
    if not text:
        return ()
    try:
        return tuple(float(x) for x in text.replace(",", " ").split())
    except ValueError:
        raise BinFormatError(f"metadata {key}: {text!r} is not a list of numbers") from None


def _input(name: str, dtype: str, shape: Tuple[Dim, ...], said: Dict[str, str]) -> BinInput:
    return BinInput(name, dtype, shape, type_rt=said.get("type_rt", "featuremap").lower(),
                    layout_rt=said.get("layout_rt", "").upper(),
                    type_train=said.get("type_train", "featuremap").lower(),
                    layout_train=said.get("layout_train", "").upper(), norm=said.get("norm", "no_preprocess"),
                    mean=_numbers("MEAN_VALUE", said.get("mean")), scale=_numbers("SCALE_VALUE", said.get("scale")),
                    space_and_range=said.get("space_and_range", "regular"))


def _model(graph: onnx.GraphProto, metadata: Dict[str, str]) -> BinModel:
    what = f"graph {graph.name!r}"
    strings = {t.name: t for t in graph.initializer if t.data_type == TensorProto.STRING}
    packed = [n for n in strings if n.startswith(PACKED_HBM_MODEL)]
    bpu = [n for n in graph.node if n.op_type == "BPU"]
    if not bpu:
        raise BinFormatError(f"{what} has no BPU node: not a model hb_mapper compiled")
    hbm: List[bytes] = []
    for node in bpu:
        # The BPU node's own PACKED_HBM_MODEL initializer: the one it reads, else the only one.
        mine = [i for i in node.input if i in packed] or (packed if len(packed) == 1 == len(bpu) else [])
        if len(mine) != 1 or len(strings[mine[0]].string_data) != 1:
            raise BinFormatError(f"{what}: BPU node {node.name!r} has no {PACKED_HBM_MODEL} of its own")
        hbm.append(bytes(strings[mine[0]].string_data[0]))
    weights = {t.name for t in graph.initializer}
    feeds = [v for v in graph.input if v.name not in weights]
    said = _per_input(metadata, [v.name for v in feeds])
    inputs = tuple(_input(*_tensor(v), said[v.name]) for v in feeds)
    outputs = tuple(BinTensor(*_tensor(v)) for v in graph.output)
    nodes = tuple(BinNode(n.name, n.op_type, "BPU" if n.op_type == "BPU" else "CPU") for n in graph.node)
    return BinModel(graph.name, inputs, outputs, nodes, tuple(hbm))


def describe(container: Container) -> BinFile:
    """The models of a read container; BinFormatError where the parts do not fit together."""
    models = tuple(_model(g, container.metadata) for g in container.graphs)
    magics = {h[:7] for m in models for h in m.hbm}
    march = container.metadata.get("MARCH", "")
    for magic in magics:
        made_for = MAGICS.get(magic)
        if made_for is None:
            raise BinFormatError(f"a {PACKED_HBM_MODEL} starts with {magic!r}, no known march's magic "
                                 f"({', '.join(m.decode() for m in MAGICS)})")
        if march and march != made_for[0]:
            raise BinFormatError(f"MARCH is {march!r} but a compiled part is for {made_for[0]!r} ({made_for[1]})")
        march = made_for[0]
    chip = next((c for m, c in MAGICS.values() if m == march), "unknown")
    return BinFile(march, chip, container.versions, dict(container.metadata), models)


def model_graph(name: str, inputs: Sequence[Tuple[str, int, Sequence[int]]],
                outputs: Sequence[Tuple[str, int, Sequence[int]]], hbm: bytes,
                cpu_nodes: Sequence[onnx.NodeProto] = (), bpu_outputs: Optional[Sequence[str]] = None,
                ) -> onnx.GraphProto:
    """A model's graph as hb_mapper lays it out: the inputs ((name, ONNX elem type, shape)), one BPU node whose
    compiled part is ``hbm``, writing ``bpu_outputs`` (default: the outputs), the CPU nodes after it, the outputs."""
    bpu = helper.make_node("BPU", [n for n, _, _ in inputs] + [PACKED_HBM_MODEL],
                           list(bpu_outputs) if bpu_outputs is not None else [n for n, _, _ in outputs],
                           name=f"{name}_subgraph_0")
    # Built by hand: onnx.helper.make_tensor strips a string's trailing NUL bytes.
    packed = TensorProto(name=PACKED_HBM_MODEL, data_type=TensorProto.STRING, dims=[1])
    packed.string_data.append(bytes(hbm))
    return helper.make_graph([bpu, *cpu_nodes], name,
                             [helper.make_tensor_value_info(n, t, list(s)) for n, t, s in inputs],
                             [helper.make_tensor_value_info(n, t, list(s)) for n, t, s in outputs], [packed])


def input_metadata(inputs: Sequence[BinInput]) -> Dict[str, str]:
    """hb_mapper's per-input metadata keys for ``inputs``, each value ';'-separated in input order."""
    def joined(values: Sequence[str]) -> str:
        return ";".join(values)

    out = {"INPUT_NAMES": joined([i.name for i in inputs])}
    for fieldname, key in _PER_INPUT.items():
        values = [getattr(i, fieldname) for i in inputs]
        text = [" ".join(f"{x:g}" for x in v) if isinstance(v, tuple) else v for v in values]
        if any(text):  # a key no input uses is left out, as hb_mapper leaves out mean_value without a mean
            out[key] = joined(text)
    return out
