"""The .accm container (emulator/FORMAT.md): a byte-exact writer and a reader.

`write(tensors, nodes, inputs, outputs)` lays the file out in the order FORMAT.md gives (header, tensor
table, node table, io table, edge table, string table, 64-aligned data section). `read(path_or_bytes)`
parses a file back into plain dicts, for tests and tools; it checks the structure it relies on and
raises ValueError on a malformed file (the emulator's C reader is the strict validator).
"""

from __future__ import annotations

import math
import os
import struct
from dataclasses import dataclass, field

import numpy as np

# The codes, generated from emulator/op_schema.py; accm.OPS and accm.ACTIVATIONS stay their names here.
from .op_params import ACTIVATION_NAMES as ACTIVATION_NAMES
from .op_params import ACTIVATIONS as ACTIVATIONS
from .op_params import ACTIVATION_MINOR, INT_ARITH_MINOR, OP_MINOR, Int8Rules
from .op_params import OP_NAMES as OP_NAMES
from .op_params import OPS as OPS
from .op_params import PARAMS

# The tensor record's image_format (minor 4): its codes (accel_image_format's table, accel.image.formats), its rules
# (accm_image.py).
from ._shared import IMAGE_FORMATS as IMAGE_FORMATS
from .accm_image import IMAGE_FORMAT_NAMES as IMAGE_FORMAT_NAMES
from .accm_image import check_image, check_image_pairs
from .accm_image import image_size as image_size
from .accm_quant import quant_bytes, quant_fields, read_quant

# The versions, limits and record layouts, generated from emulator/accm_schema.py (the C reader's
# accm_layout.h is generated from the same table); accm.VERSION_MINOR and the rest stay their names here.
from .accm_layout import ABSENT as ABSENT
from .accm_layout import DATA_ALIGNMENT as DATA_ALIGNMENT
from .accm_layout import FLOAT_MINOR as FLOAT_MINOR
from .accm_layout import HEADER, HEADER_FIELDS, NODE_RECORD, NODE_RECORD_FIELDS, TENSOR_RECORD, TENSOR_RECORD_FIELDS
from .accm_layout import HEADER_SIZE as HEADER_SIZE
from .accm_layout import IMAGE_FORMAT_MINOR as IMAGE_MINOR
from .accm_layout import NO_INPUTS_MINOR as NO_INPUTS_MINOR
from .accm_layout import INT8_RULES_MINOR as INT8_RULES_MINOR
from .accm_layout import MAGIC as MAGIC
from .accm_layout import MAX_IO_COUNT, MAX_NODE_COUNT, MAX_TENSOR_COUNT
from .accm_layout import MAX_NAME_LENGTH as MAX_NAME_LENGTH
from .accm_layout import MAX_TENSOR_BYTES as MAX_TENSOR_BYTES
from .accm_layout import NODE_RECORD_SIZE as NODE_RECORD_SIZE
from .accm_layout import OPS_MINOR as OPS_MINOR
from .accm_layout import TENSOR_RECORD_SIZE as TENSOR_RECORD_SIZE
from .accm_layout import VERSION_MAJOR as VERSION_MAJOR
from .accm_layout import VERSION_MINOR as VERSION_MINOR

# Ops that compute on integers from a later minor on (float32 only before): op_schema.py's int_minor.
INT_ARITH_OPS = frozenset(INT_ARITH_MINOR)
MAX_DIMS = dict(TENSOR_RECORD_FIELDS)["dims"]
MAX_ELEMENTS = (1 << 31) - 1  # what the compiler writes: the kernels' GEMMs take 32-bit sizes
INT_SLOTS = dict(NODE_RECORD_FIELDS)["ints"]
FLOAT_SLOTS = dict(NODE_RECORD_FIELDS)["floats"]


def _pack(record, fields, **values) -> bytes:
    """A record's bytes from its fields by name (an array a sequence of its length; a field not given 0)."""
    flat: list = []
    for name, count in fields:
        value = values.pop(name, 0)
        flat += list(value) if count > 1 else [value]
    if values:
        raise TypeError(f"no such record field: {', '.join(values)}")
    return record.pack(*flat)


def _unpack(record, fields, buf, offset: int) -> dict:
    """A record's fields by name (an array a tuple) from buf at offset."""
    flat = record.unpack_from(buf, offset)
    out, i = {}, 0
    for name, count in fields:
        out[name] = tuple(flat[i:i + count]) if count > 1 else flat[i]
        i += count
    return out


# accel_dtype codes (accel.h) <-> numpy.
DTYPES: dict[int, np.dtype] = {
    1: np.dtype(np.float32), 2: np.dtype(np.float16), 3: np.dtype(np.int8), 4: np.dtype(np.uint8),
    5: np.dtype(np.int16), 6: np.dtype(np.int32), 7: np.dtype(np.int64), 8: np.dtype(np.uint16),
    9: np.dtype(np.uint32), 10: np.dtype(np.uint64), 11: np.dtype(np.bool_),
}
_DTYPE_CODES = {v: k for k, v in DTYPES.items()}

LAYOUT_NONE, LAYOUT_NCHW, LAYOUT_NHWC = 0, 1, 2
KIND_ACTIVATION, KIND_INPUT, KIND_OUTPUT, KIND_CONSTANT = 0, 1, 2, 3
INT8_RULES = Int8Rules.BY_NAME  # header field int8_rules (minor 2): whose integer arithmetic the model computes


def dtype_code(dtype) -> int | None:
    """The accel_dtype code of a numpy dtype, or None if accel has no such dtype."""
    try:
        return _DTYPE_CODES.get(np.dtype(dtype).newbyteorder("="))
    except TypeError:
        return None


@dataclass
class Tensor:
    """One tensor record. `data` is set for constants (kind 3) only."""

    name: str
    dtype: int
    kind: int
    dims: tuple
    layout: int = LAYOUT_NONE
    data: np.ndarray | None = None
    # Quantization (minor 2): float32 scales and int32 zero points of one length, and the axis they run
    # along (None: per tensor, one of each).
    scales: np.ndarray | None = None
    zero_points: np.ndarray | None = None
    quant_axis: int | None = None
    # Or power-of-two shifts (real = q / 2^shift, u8 each, along quant_axis or one for the tensor): a fix-point
    # device's own record of the same scales, for tensors a device reports so (a .xmodel's inputs and outputs).
    shifts: np.ndarray | None = None
    # The pixel format of an image graph input (minor 4): an IMAGE_FORMATS value, 0 for a plain tensor.
    image_format: int = 0


@dataclass
class Node:
    """One node record. inputs/outputs are tensor indices; None in inputs is an absent optional input."""

    op: int
    inputs: list
    outputs: list
    name: str = ""
    activation: int = 0
    act_alpha: float = 0.0
    act_beta: float = 0.0
    ints: list = field(default_factory=list)
    floats: list = field(default_factory=list)


def _params_of(op_name, ints, floats):
    cls = PARAMS.get(op_name)
    return None if cls is None else cls.from_record(ints, floats)


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


class _Strings:
    """The string table: each distinct string stored once."""

    def __init__(self):
        self._buf = bytearray()
        self._index: dict[bytes, int] = {}

    def add(self, s: str) -> tuple[int, int]:
        b = s.encode("utf-8")
        if not b:
            return 0, 0
        off = self._index.get(b)
        if off is None:
            off = len(self._buf)
            self._index[b] = off
            self._buf += b
        return off, len(b)

    def data(self) -> bytes:
        return bytes(self._buf)


def _truncate_utf8(s: str, limit: int) -> str:
    b = s.encode("utf-8")
    if len(b) <= limit:
        return s
    return b[:limit].decode("utf-8", errors="ignore")


def _minor(tensors: list[Tensor], nodes: list[Node]) -> int:
    """The oldest format minor that holds every op and field used."""
    minor = max([OP_MINOR[OP_NAMES[n.op]] for n in nodes if n.op in OP_NAMES] + [FLOAT_MINOR]
                + [ACTIVATION_MINOR[ACTIVATION_NAMES[n.activation]] for n in nodes if n.activation in ACTIVATION_NAMES])
    minor = max([minor] + [INT_ARITH_MINOR[OP_NAMES[n.op]] for n in nodes  # integer add .. max (1.3)
                           if OP_NAMES.get(n.op) in INT_ARITH_OPS and tensors[n.outputs[0]].dtype != 1])
    if any(_minor3_gather(tensors, n) for n in nodes):
        minor = max(minor, 3)
    if any(t.image_format for t in tensors):
        minor = max(minor, IMAGE_MINOR)
    return max(minor, 2) if any(t.scales is not None or t.shifts is not None for t in tensors) else minor


def _minor3_gather(tensors: list[Tensor], node: Node) -> bool:
    """A gather whose indices minor 1 does not hold: computed at run time, or int32 (op_schema.py)."""
    if OP_NAMES.get(node.op) != "gather" or len(node.inputs) < 2 or node.inputs[1] is None:
        return False
    ind = tensors[node.inputs[1]]
    return ind.kind != KIND_CONSTANT or ind.dtype != dtype_code(np.int64)


def write(tensors: list[Tensor], nodes: list[Node], inputs: list[int], outputs: list[int],
          int8_rules: str = "ort") -> bytes:
    """Serializes a graph into .accm bytes. Raises ValueError on anything FORMAT.md does not allow."""
    strings = _Strings()
    tcount, ncount = len(tensors), len(nodes)
    if not 1 <= tcount <= MAX_TENSOR_COUNT:
        raise ValueError(f"tensor count {tcount} is outside 1..{MAX_TENSOR_COUNT}")
    if ncount > MAX_NODE_COUNT:
        raise ValueError(f"node count {ncount} exceeds {MAX_NODE_COUNT}")
    if not 0 <= len(inputs) <= MAX_IO_COUNT or not 1 <= len(outputs) <= MAX_IO_COUNT:
        raise ValueError(f"input count {len(inputs)} outside 0..{MAX_IO_COUNT} or output count {len(outputs)} "
                         f"outside 1..{MAX_IO_COUNT}")

    # Data section: each constant 64-aligned within the section.
    blobs: list[tuple[int, bytes]] = []
    data_size = 0
    const_place: dict[int, tuple[int, int]] = {}
    for i, t in enumerate(tensors):
        if t.kind == KIND_CONSTANT:
            if t.data is None:
                raise ValueError(f"constant tensor '{t.name}' has no data")
            arr = np.asarray(t.data, order="C")
            if dtype_code(arr.dtype) != t.dtype or tuple(arr.shape) != tuple(t.dims):
                raise ValueError(f"constant tensor '{t.name}': data does not match dtype/dims")
            raw = arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes(order="C")
            off = _align(data_size, DATA_ALIGNMENT)
            blobs.append((off, raw))
            const_place[i] = (off, len(raw))
            data_size = off + len(raw)
    quant_place: dict[int, int] = {}
    for i, t in enumerate(tensors):
        raw_quant = quant_bytes(t)
        if raw_quant is not None:
            off = _align(data_size, 4)
            blobs.append((off, raw_quant))
            quant_place[i] = off
            data_size = off + len(raw_quant)

    tensor_records = bytearray()
    for i, t in enumerate(tensors):
        name_b = t.name.encode("utf-8")
        if not 1 <= len(name_b) <= MAX_NAME_LENGTH or b"\0" in name_b:
            raise ValueError(f"tensor name {t.name!r} is empty, too long or contains NUL")
        dims = tuple(int(d) for d in t.dims)
        if len(dims) > MAX_DIMS or any(d < 1 for d in dims):
            raise ValueError(f"tensor '{t.name}': dims {dims} not allowed (rank <= 8, dims >= 1)")
        if t.dtype not in DTYPES:
            raise ValueError(f"tensor '{t.name}': unknown dtype code {t.dtype}")
        if math.prod(dims) * DTYPES[t.dtype].itemsize > MAX_TENSOR_BYTES:
            raise ValueError(f"tensor '{t.name}': dims {dims} of {DTYPES[t.dtype]} take more than "
                             f"{MAX_TENSOR_BYTES} bytes, the format's limit")
        if math.prod(dims) > MAX_ELEMENTS:
            raise ValueError(f"unsupported tensor size: '{t.name}' {dims} has more than {MAX_ELEMENTS} "
                             f"elements (the emulator's kernels index GEMMs with 32-bit ints)")
        if t.layout in (LAYOUT_NCHW, LAYOUT_NHWC) and len(dims) != 4:
            raise ValueError(f"tensor '{t.name}': layout {t.layout} requires 4 dims")
        check_image(t.name, t.image_format, DTYPES[t.dtype].name, t.kind, t.layout, dims)
        name_off, name_len = strings.add(t.name)
        doff, dsize = const_place.get(i, (0, 0))
        qtype, qaxis, qcount = quant_fields(t)
        tensor_records += _pack(
            TENSOR_RECORD, TENSOR_RECORD_FIELDS, name_offset=name_off, name_length=name_len, dtype=t.dtype,
            layout=t.layout, kind=t.kind, ndim=len(dims), dims=dims + (0,) * (MAX_DIMS - len(dims)),
            data_offset=doff, data_size=dsize, quant_type=qtype, quant_axis=qaxis, quant_count=qcount,
            image_format=t.image_format, quant_offset=quant_place.get(i, 0))

    node_records = bytearray()
    edges: list[int] = []
    for n in nodes:
        ints = [int(v) for v in n.ints] + [0] * (INT_SLOTS - len(n.ints))
        floats = [float(v) for v in n.floats] + [0.0] * (FLOAT_SLOTS - len(n.floats))
        if len(ints) != INT_SLOTS or len(floats) != FLOAT_SLOTS:
            raise ValueError(f"node '{n.name}': too many parameters")
        # Names are for messages; the reader refuses NUL.
        name_off, name_len = strings.add(_truncate_utf8(n.name.replace("\0", "\ufffd"), MAX_NAME_LENGTH))
        ins = [ABSENT if t is None else int(t) for t in n.inputs]
        outs = [int(t) for t in n.outputs]
        for index in ins + outs:
            if index != ABSENT and not 0 <= index < tcount:
                raise ValueError(f"node '{n.name}': tensor index {index} out of range")
        node_records += _pack(
            NODE_RECORD, NODE_RECORD_FIELDS, op=n.op, input_count=len(ins), output_count=len(outs),
            edge_offset=len(edges), name_offset=name_off, name_length=name_len, activation=n.activation,
            act_alpha=n.act_alpha, act_beta=n.act_beta, ints=ints, floats=floats)
        edges += ins + outs

    if all(0 <= int(i) < tcount for i in inputs):  # (an index out of range is the C reader's to refuse)
        graph_inputs = [tensors[int(i)] for i in inputs]
        check_image_pairs([t.image_format for t in graph_inputs], [tuple(t.dims) for t in graph_inputs],
                          [t.name for t in graph_inputs])
    io = list(inputs) + list(outputs)
    string_data = strings.data()

    tensor_off = HEADER_SIZE
    node_off = tensor_off + len(tensor_records)
    io_off = node_off + len(node_records)
    edge_off = io_off + 4 * len(io)
    str_off = edge_off + 4 * len(edges)
    data_off = _align(str_off + len(string_data), DATA_ALIGNMENT)
    file_size = data_off + data_size

    if int8_rules not in INT8_RULES:
        raise ValueError(f"unknown int8 rules {int8_rules!r} (known: {', '.join(INT8_RULES)})")
    minor = _minor(tensors, nodes) if inputs else max(_minor(tensors, nodes), NO_INPUTS_MINOR)
    # A model without quantized tensors is written as format 1.1, whose header reserves the field: its
    # arithmetic is the same whatever the rules, and it loads on a device of any rules.
    rules = INT8_RULES[int8_rules] if minor >= INT8_RULES_MINOR else 0
    header = _pack(
        HEADER, HEADER_FIELDS, magic=MAGIC, version_major=VERSION_MAJOR, version_minor=minor,
        header_size=HEADER_SIZE, file_size=file_size, tensor_count=tcount, node_count=ncount,
        input_count=len(inputs), output_count=len(outputs), edge_count=len(edges), int8_rules=rules,
        tensor_table_offset=tensor_off, node_table_offset=node_off, io_table_offset=io_off,
        edge_table_offset=edge_off, string_table_offset=str_off, string_table_size=len(string_data),
        data_offset=data_off, data_size=data_size, reserved2=(0, 0))

    out = bytearray(file_size)
    out[0:HEADER_SIZE] = header
    out[tensor_off:node_off] = tensor_records
    out[node_off:io_off] = node_records
    out[io_off:edge_off] = struct.pack(f"<{len(io)}I", *io)
    out[edge_off:str_off] = struct.pack(f"<{len(edges)}I", *edges)
    out[str_off:str_off + len(string_data)] = string_data
    for off, raw in blobs:
        out[data_off + off:data_off + off + len(raw)] = raw
    return bytes(out)


def _check_range(what: str, off: int, size: int, limit: int) -> None:
    if off < 0 or size < 0 or off > limit or size > limit - off:
        raise ValueError(f"{what}: range {off}+{size} exceeds {limit} bytes")


def read(path_or_bytes) -> dict:
    """Parses an .accm file (a path or its bytes) into dicts.

    Returns {"header": {...}, "tensors": [...], "nodes": [...], "inputs": [idx], "outputs": [idx],
    "edges": [idx], "strings": bytes}. A tensor dict has name, dtype, dtype_name, layout, kind, ndim,
    dims (tuple), data_offset, data_size, quant_type, quant_axis, quant_count, quant_offset, image_format
    (the u32 at offset 116, reserved before minor 4) and image_format_name ("none" .. "bgr", "unknown"),
    and "data" (a numpy array for constants, else None). A node dict has op, op_name, name, inputs
    (tensor indices, None for absent), outputs, edge_offset, activation, activation_name, act_alpha,
    act_beta, reserved, ints (16), floats (6).
    """
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        buf = bytes(path_or_bytes)
    else:
        with open(os.fspath(path_or_bytes), "rb") as f:
            buf = f.read()
    if len(buf) < HEADER_SIZE:
        raise ValueError(f"file is {len(buf)} bytes, shorter than the {HEADER_SIZE}-byte header")
    header = _unpack(HEADER, HEADER_FIELDS, buf, 0)
    header["reserved2"] = list(header["reserved2"])
    if header["magic"] != MAGIC:
        raise ValueError(f"bad magic {header['magic']!r}")
    if header["version_major"] != VERSION_MAJOR:
        raise ValueError(f"unknown version_major {header['version_major']}")
    if header["file_size"] != len(buf):
        raise ValueError(f"file_size {header['file_size']} != actual size {len(buf)}")
    size = len(buf)
    _check_range("tensor table", header["tensor_table_offset"],
                 header["tensor_count"] * TENSOR_RECORD_SIZE, size)
    _check_range("node table", header["node_table_offset"],
                 header["node_count"] * NODE_RECORD_SIZE, size)
    n_io = header["input_count"] + header["output_count"]
    _check_range("io table", header["io_table_offset"], 4 * n_io, size)
    _check_range("edge table", header["edge_table_offset"], 4 * header["edge_count"], size)
    _check_range("string table", header["string_table_offset"], header["string_table_size"], size)
    _check_range("data section", header["data_offset"], header["data_size"], size)

    s0 = header["string_table_offset"]
    strings = buf[s0:s0 + header["string_table_size"]]

    def name_at(off: int, length: int) -> str:
        _check_range("name", off, length, len(strings))
        return strings[off:off + length].decode("utf-8")

    data0 = header["data_offset"]
    tensors = []
    for i in range(header["tensor_count"]):
        t = _unpack(TENSOR_RECORD, TENSOR_RECORD_FIELDS, buf, header["tensor_table_offset"] + i * TENSOR_RECORD_SIZE)
        ndim = t["ndim"]
        if ndim > MAX_DIMS:
            raise ValueError(f"tensor {i}: ndim {ndim} > {MAX_DIMS}")
        t.update({
            "index": i, "name": name_at(t["name_offset"], t["name_length"]), "dims": t["dims"][:ndim],
            "dims_raw": t["dims"], "data": None, "scales": None, "zero_points": None, "shifts": None,
            "image_format_name": IMAGE_FORMAT_NAMES.get(t["image_format"], "unknown"),
        })
        read_quant(t, buf, data0, lambda what, off, size: _check_range(what, off, size, header["data_size"]))
        t["dtype_name"] = DTYPES[t["dtype"]].name if t["dtype"] in DTYPES else "unknown"
        if t["kind"] == KIND_CONSTANT:
            if t["dtype"] not in DTYPES:
                raise ValueError(f"tensor '{t['name']}': unknown dtype {t['dtype']}")
            _check_range(f"tensor '{t['name']}' data", t["data_offset"], t["data_size"],
                         header["data_size"])
            dt = DTYPES[t["dtype"]].newbyteorder("<")
            count = int(np.prod(t["dims"], dtype=np.int64))
            if count * dt.itemsize != t["data_size"]:
                raise ValueError(f"tensor '{t['name']}': data_size {t['data_size']} != "
                                 f"{count} x {dt.itemsize}")
            start = data0 + t["data_offset"]
            t["data"] = np.frombuffer(buf, dtype=dt, count=count, offset=start).reshape(
                t["dims"]).astype(dt.newbyteorder("="))
        tensors.append(t)

    e0 = header["edge_table_offset"]
    edges = list(struct.unpack_from(f"<{header['edge_count']}I", buf, e0))
    nodes = []
    for i in range(header["node_count"]):
        r = _unpack(NODE_RECORD, NODE_RECORD_FIELDS, buf, header["node_table_offset"] + i * NODE_RECORD_SIZE)
        op, n_in, n_out, eoff = r["op"], r["input_count"], r["output_count"], r["edge_offset"]
        if eoff + n_in + n_out > len(edges):
            raise ValueError(f"node {i}: edges {eoff}+{n_in}+{n_out} exceed edge_count")
        ins = [None if e == ABSENT else e for e in edges[eoff:eoff + n_in]]
        outs = edges[eoff + n_in:eoff + n_in + n_out]
        nodes.append({
            "index": i, "op": op, "op_name": OP_NAMES.get(op, "unknown"),
            "name": name_at(r["name_offset"], r["name_length"]),
            "input_count": n_in, "output_count": n_out, "edge_offset": eoff,
            "inputs": ins, "outputs": list(outs),
            "activation": r["activation"], "activation_name": ACTIVATION_NAMES.get(r["activation"], "unknown"),
            "act_alpha": r["act_alpha"], "act_beta": r["act_beta"], "reserved": r["reserved"],
            "ints": list(r["ints"]), "floats": list(r["floats"]),
            # By name: the op's parameter class (op_params.PARAMS), None for an op without parameters.
            "params": _params_of(OP_NAMES.get(op), r["ints"], r["floats"]),
        })

    io = list(struct.unpack_from(f"<{n_io}I", buf, header["io_table_offset"]))
    return {
        "header": header, "tensors": tensors, "nodes": nodes,
        "inputs": io[:header["input_count"]], "outputs": io[header["input_count"]:],
        "edges": edges, "strings": strings,
    }
