"""The `.accm` container's records, limits and versions: the one source of the byte layout that the compiler's
writer (emulator/compiler/accm.py) and the emulator's reader (emulator/src/model_reader.cc) share.

`python tools/op_table.py` generates from it (beside what emulator/op_schema.py gives)
- `emulator/src/accm_layout.h`: the versions, limits and each record's field offsets (the reader),
- `emulator/compiler/accm_layout.py`: the same, with each record's `struct` format (the writer),
- FORMAT.md's title and its header, tensor record and node record tables,
and `--check` fails when one of them is stale.

A record is its fields in order: each field's offset is the sum of the sizes before it, and the fields fill
the record exactly (check() refuses a gap or an overflow). A field, once given, keeps its offset and meaning;
a new one takes reserved space, with `minor` the format minor version that gave it (a reader checks it only
in files of that minor on). The newest minor is derived: the largest minor of any field, op or activation,
so a new op code or field bumps the version in every generated file at once.
"""
from __future__ import annotations

from dataclasses import dataclass

# field type -> (struct code, bytes)
TYPES = {"char": ("s", 1), "u16": ("H", 2), "u32": ("I", 4), "i32": ("i", 4), "u64": ("Q", 8), "i64": ("q", 8),
         "f32": ("f", 4)}

MAGIC = "ACCM"
VERSION_MAJOR = 1
# What a model without quantized tensors or later features is written as: readers of 1.1 load it.
FLOAT_MINOR = 1

# The reader's limits (FORMAT.md); the writer refuses what the reader would.
LIMITS = (
    ("max_tensor_count", 1000000, "tensors in a file"),
    ("max_node_count", 1000000, "nodes in a file"),
    ("max_io_count", 4096, "graph inputs, and graph outputs"),
    ("max_name_length", 4096, "bytes of a tensor or node name"),
    ("max_node_edges", 4096, "inputs of one node, and its outputs"),
    ("max_tensor_bytes", 1 << 40, "element count * dtype size of one tensor"),
    ("data_alignment", 64, "of the data section and of each constant in it"),
    ("absent", 0xFFFFFFFF, "an edge table entry: an optional input not given"),
)


@dataclass(frozen=True)
class Field:
    name: str
    type: str        # a key of TYPES
    rule: str = ""   # as FORMAT.md gives it ({VERSION_MINOR} is the newest minor)
    count: int = 1   # > 1: an array
    minor: int = 0   # the format minor that gave it (a reserved field before)

    @property
    def size(self) -> int:
        return TYPES[self.type][1] * self.count

    @property
    def struct(self) -> str:
        code = TYPES[self.type][0]
        return f"{self.count}{code}" if self.count > 1 else code


@dataclass(frozen=True)
class Record:
    name: str        # "header", "tensor", "node"
    title: str       # FORMAT.md's section title
    size: int
    fields: tuple

    def offsets(self):
        """(offset, field) for every field, in order."""
        off = 0
        for f in self.fields:
            yield off, f
            off += f.size


HEADER = Record("header", "Header", 128, (
    Field("magic", "char", "`ACCM`", count=4),
    Field("version_major", "u16", "1"),
    Field("version_minor", "u16", "{VERSION_MINOR} (the compiler writes the oldest minor that holds the model: 1 for a "
          "float model, 2 with quantized tensors, 3 with the ops and dtypes of 1.3, 4 with an image input, 5 with "
          "what 1.5 added, 6 with no inputs or what 1.6 added; older minors are read too)"),
    Field("header_size", "u32", ">= 128"),
    Field("flags", "u32", "0 (reserved)"),
    Field("file_size", "u64", "equals the size of the file"),
    Field("tensor_count", "u32", "1 .. 1,000,000"),
    Field("node_count", "u32", "0 .. 1,000,000"),
    Field("input_count", "u32", "1 .. 4096; from minor 6, 0 .. 4096 (a model computed from its constants alone)"),
    Field("output_count", "u32", "1 .. 4096"),
    Field("edge_count", "u32", "sum of the nodes' input_count + output_count"),
    Field("int8_rules", "u32", "minor 2: whose integer arithmetic the quantized ops compute: 0 `ort` (onnxruntime's "
          "CPU kernels), 1 `dpu` (the Vitis AI DPU's fix-point rules: every quantized tensor int8 or int32, its "
          "scales powers of two 2^-fp with fp in [-30, 30] and zero points 0), 2 `bpu` (the Horizon BPU's integer "
          "multipliers: every quantized tensor int8 or int32, zero points 0); a device with other rules refuses a "
          "model with quantized tensors; 0 before minor 2 (reserved)", minor=2),
    Field("tensor_table_offset", "u64"),
    Field("node_table_offset", "u64"),
    Field("io_table_offset", "u64"),
    Field("edge_table_offset", "u64"),
    Field("string_table_offset", "u64"),
    Field("string_table_size", "u64"),
    Field("data_offset", "u64", "multiple of 64"),
    Field("data_size", "u64"),
    Field("reserved2", "u64", "0", count=2),
))

TENSOR = Record("tensor", "Tensor record", 128, (
    Field("name_offset", "u32", "into the string table"),
    Field("name_length", "u32", "bytes; 1 .. 4096; the name contains no NUL; names are unique"),
    Field("dtype", "u32", "an `accel_dtype` value (accel.h): 1 float32, 2 float16, 3 int8, 4 uint8, 5 int16, 6 "
          "int32, 7 int64, 8 uint16, 9 uint32, 10 uint64, 11 bool"),
    Field("layout", "u32", "0 none, 1 NCHW, 2 NHWC (NCHW/NHWC require ndim 4)"),
    Field("kind", "u32", "0 activation (an intermediate), 1 graph input, 2 graph output, 3 constant"),
    Field("ndim", "u32", "0 .. 8 (0 is a scalar)"),
    Field("dims", "i64", "dims[i] >= 1 for i < ndim; 0 after ndim; element count * dtype size <= 2^40", count=8),
    Field("data_offset", "u64", "constants: relative to data_offset, multiple of 64; else 0"),
    Field("data_size", "u64", "constants: exactly element count * dtype size, inside the data section; else 0"),
    Field("quant_type", "u32", "0 none, 1 per-tensor, 2 per-axis, 3 shift (`accel_quant_type`)"),
    Field("quant_axis", "i32", "per-axis/shift with count > 1: 0 .. ndim-1; else -1"),
    Field("quant_count", "u32", "0 for none; 1 for per-tensor; dims[quant_axis] for per-axis; 1 or "
          "dims[quant_axis] for shift"),
    Field("image_format", "u32", "minor 4: an `accel_image_format` value (accel.h), the pixel format of an image "
          "graph input (below); 0 for every other tensor. Reserved and 0 before minor 4", minor=4),
    Field("quant_offset", "u64", "relative to data_offset, multiple of 4: quant_count f32 scales then quant_count "
          "i32 zero points (per-tensor, per-axis), or quant_count u8 shifts (shift)"),
))

NODE = Record("node", "Node record", 192, (
    Field("op", "u32", "an op code below"),
    Field("input_count", "u32", "as the op requires, counting absent optional inputs"),
    Field("output_count", "u32", "as the op requires"),
    Field("edge_offset", "u32", "first entry in the edge table: input_count inputs, then output_count outputs"),
    Field("name_offset", "u32", "into the string table (the ONNX node name, for error messages)"),
    Field("name_length", "u32", "0 .. 4096"),
    Field("activation", "u32", "fused activation applied to the output: see below"),
    Field("act_alpha", "f32"),
    Field("act_beta", "f32"),
    Field("reserved", "u32", "0"),
    Field("ints", "i64", "op parameters, below; unused entries 0", count=16),
    Field("floats", "f32", "op parameters, below; unused entries 0", count=6),
))

RECORDS = (HEADER, TENSOR, NODE)

# What a minor allows that older readers refuse, without a field of its own: (name, minor, what).
RULE_MINORS = (
    ("no_inputs", 6, "input_count may be 0: a model computed from its constants alone"),
)


def newest_minor(ops, activations, records=RECORDS) -> int:
    """The newest format minor: the largest that gave a field, a rule, an op or an activation code."""
    return max([f.minor for r in records for f in r.fields] + [m for _, m, _ in RULE_MINORS] + [o.minor for o in ops]
               + [a.minor for a in activations])


def check(records=RECORDS) -> None:
    """Raises ValueError if a record's fields do not fill it exactly or repeat a name."""
    for r in records:
        names = [f.name for f in r.fields]
        if len(set(names)) != len(names):
            raise ValueError(f"{r.name} record: duplicate field name")
        for off, f in r.offsets():
            if f.type not in TYPES or f.count < 1:
                raise ValueError(f"{r.name} record: field {f.name} has type {f.type} x {f.count}")
            if off % TYPES[f.type][1] != 0:
                raise ValueError(f"{r.name} record: field {f.name} at offset {off} is not aligned to its type")
        total = sum(f.size for f in r.fields)
        if total != r.size:
            raise ValueError(f"{r.name} record: its fields take {total} bytes, not {r.size}")
