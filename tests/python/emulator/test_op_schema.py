"""The runtime ops' one source, emulator/op_schema.py: what it generates is current, it refuses to
contradict itself, and the compiler's parameter classes write the slots FORMAT.md gives."""
from __future__ import annotations

import dataclasses
import re
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tools"))
import op_codegen  # noqa: E402  (a script of the source tree, not an installed module)

from accel.compiler import accm, op_params  # noqa: E402

SCHEMA = op_codegen.load_schema()


@pytest.mark.parametrize("path", sorted(op_codegen.outputs(), key=str), ids=lambda p: p.name)
def test_generated_file_is_current(path):
    # The installed compiler carries op_params.py too: it must be the one generated from the schema.
    assert path.read_text(encoding="utf-8") == op_codegen.outputs()[path], \
        f"{path.relative_to(ROOT)} is out of date: run python tools/op_table.py"


def test_installed_codes_are_the_schema_codes():
    assert {op.name: op.code for op in SCHEMA.OPS} == accm.OPS
    assert {a.name: a.code for a in SCHEMA.ACTIVATIONS} == accm.ACTIVATIONS
    assert {op.name: op.minor for op in SCHEMA.OPS} == op_params.OP_MINOR
    # A new op's minor is the writer's OPS_MINOR, and the writer knows that minor; minors after it added
    # fields only (4: the tensor record's image_format).
    assert max(op.minor for op in SCHEMA.OPS) == accm.OPS_MINOR <= accm.VERSION_MINOR


def test_the_c_reader_knows_the_writers_newest_minor():
    source = op_codegen.ACCM_LAYOUT_H.read_text(encoding="utf-8")  # model_reader.cc's constants
    found = re.search(r"constexpr uint16_t kVersionMinor = (\d+);", source)
    assert found is not None, "kVersionMinor not found in accm_layout.h"
    assert int(found.group(1)) == accm.VERSION_MINOR


def _cpp_constants(text: str) -> dict:
    """{"namespace::name": value} of the integer constants of a generated accm_layout.h."""
    out, space = {}, ""
    for line in text.splitlines():
        if m := re.match(r"namespace (\w+_record) \{", line):
            space = m.group(1) + "::"
        elif line.startswith("}  // namespace") and line.endswith("_record"):
            space = ""
        elif m := re.match(r"constexpr \w+ (\w+) = (0x[0-9A-F]+|\d+|uint64_t\(1\) << \d+)u?;", line):
            value = m.group(2)
            out[space + m.group(1)] = 1 << int(value.split("<< ")[1]) if "<<" in value else int(value, 0)
    return out


def _python_offsets(fields, record) -> dict:
    """{field: byte offset} of a record as accm.py packs it (its struct format, field by field)."""
    import struct

    out, codes = {}, record.format[1:]
    parts = re.findall(r"\d*[a-zA-Z]", codes)
    off = 0
    for (name, _), part in zip(fields, parts):
        out[name] = off
        off += struct.calcsize("<" + part)
    assert off == record.size
    return out


def test_the_c_reader_and_the_writer_share_one_layout():
    from accel.compiler import accm_layout

    c = _cpp_constants(op_codegen.ACCM_LAYOUT_H.read_text(encoding="utf-8"))
    assert (c["kVersionMajor"], c["kVersionMinor"]) == (accm.VERSION_MAJOR, accm.VERSION_MINOR)
    assert c["kImageFormatMinor"] == accm.IMAGE_MINOR and c["kInt8RulesMinor"] == accm.INT8_RULES_MINOR
    for name in ("MAX_TENSOR_COUNT", "MAX_NODE_COUNT", "MAX_IO_COUNT", "MAX_NAME_LENGTH", "MAX_NODE_EDGES",
                 "MAX_TENSOR_BYTES", "DATA_ALIGNMENT", "ABSENT"):
        assert c[op_codegen._camel_k(name.lower())] == getattr(accm_layout, name), name
    for space, record, fields in (("header_record", accm.HEADER, accm.HEADER_FIELDS),
                                  ("tensor_record", accm.TENSOR_RECORD, accm.TENSOR_RECORD_FIELDS),
                                  ("node_record", accm.NODE_RECORD, accm.NODE_RECORD_FIELDS)):
        assert c[f"{space}::kBytes"] == record.size
        for name, offset in _python_offsets(fields, record).items():
            assert c[f"{space}::{name}"] == offset, f"{space}.{name}"
    assert (accm.HEADER_SIZE, accm.TENSOR_RECORD_SIZE, accm.NODE_RECORD_SIZE) == (128, 128, 192)


def test_a_schema_change_reaches_the_reader_and_the_writer():
    # A new field in the node record's reserved u32 (the next minor) moves the version and the offsets of both.
    a = op_codegen.load_accm_schema()
    fields = list(a.NODE.fields)
    at = [f.name for f in fields].index("reserved")
    new = accm.VERSION_MINOR + 1
    fields[at:at + 1] = [a.Field("priority", "u16", "new", minor=new), a.Field("reserved", "u16", "0")]
    node = dataclasses.replace(a.NODE, fields=tuple(fields))
    a.check(records=(a.HEADER, a.TENSOR, node))
    a.RECORDS = (a.HEADER, a.TENSOR, node)  # a module of its own: load_accm_schema runs the file anew
    h = _cpp_constants(op_codegen.accm_layout_h(SCHEMA, a))
    py: dict = {}
    exec(op_codegen.accm_layout_py(SCHEMA, a), py)  # the generated module's text
    assert h["kVersionMinor"] == py["VERSION_MINOR"] == new
    assert h["kPriorityMinor"] == py["PRIORITY_MINOR"] == new
    offsets = _python_offsets(py["NODE_RECORD_FIELDS"], py["NODE_RECORD"])
    assert h["node_record::priority"] == offsets["priority"] == 36
    assert h["node_record::reserved"] == offsets["reserved"] == 38
    assert h["node_record::ints"] == offsets["ints"] == 40


def test_the_layout_schema_refuses_a_record_that_does_not_fill_its_size():
    a = op_codegen.load_accm_schema()
    short = dataclasses.replace(a.NODE, fields=a.NODE.fields[:-1])
    with pytest.raises(ValueError, match="node record: its fields take 168 bytes, not 192"):
        a.check(records=(short,))
    skewed = dataclasses.replace(a.NODE, fields=(a.Field("a", "u16"), *a.NODE.fields[1:]))
    with pytest.raises(ValueError, match="not aligned"):
        a.check(records=(skewed,))


def test_a_new_op_or_activation_minor_is_the_newest_version():
    a = op_codegen.load_accm_schema()
    assert a.newest_minor(SCHEMA.OPS, SCHEMA.ACTIVATIONS) == accm.VERSION_MINOR
    newer = dataclasses.replace(SCHEMA.ACTIVATIONS[-1], code=99, name="new", minor=accm.VERSION_MINOR + 1)
    assert a.newest_minor(SCHEMA.OPS, (*SCHEMA.ACTIVATIONS, newer)) == accm.VERSION_MINOR + 1
    schema = types.SimpleNamespace(**{**vars(SCHEMA), "ACTIVATIONS": (*SCHEMA.ACTIVATIONS, newer)})
    text = op_codegen.format_md(schema, op_codegen.FORMAT_MD.read_text(encoding="utf-8"), a)
    assert text.startswith(f"# The emulator's model format (`.accm`), version 1.{accm.VERSION_MINOR + 1}\n")
    assert f"| 6 | u16 | version_minor | {accm.VERSION_MINOR + 1} (" in text


def test_the_writer_gives_a_file_the_minor_of_its_activations(monkeypatch):
    # An activation code newer than the ops a model uses makes the file that minor (a reader of an older
    # minor then refuses the version, not the code).
    monkeypatch.setitem(accm.ACTIVATION_MINOR, "relu", 3)
    tensors = [accm.Tensor("x", 1, accm.KIND_INPUT, (2,)), accm.Tensor("y", 1, accm.KIND_OUTPUT, (2,))]
    node = accm.Node(accm.OPS["activation"], [0], [1], activation=accm.ACTIVATIONS["relu"])
    assert accm.read(accm.write(tensors, [node], [0], [1]))["header"]["version_minor"] == 3


def test_the_reader_reads_fields_by_their_generated_offsets():
    source = (ROOT / "emulator" / "src" / "model_reader.cc").read_text(encoding="utf-8")
    literal = re.findall(r"in_\.(?:u16|u32|u64|i32|i64|f32|bytes)\((?:base \+ )?\d+", source)
    assert not literal, f"model_reader.cc reads fields at literal offsets (use accm_layout.h): {literal}"


def _op(*params, code=99, name="bad"):
    return dataclasses.replace(SCHEMA.OPS[0], code=code, name=name, params=params)


@pytest.mark.parametrize("ops, message", [
    ((_op(SCHEMA.Param("a", 3, ""), SCHEMA.Param("b", 3, "")),), "a and b share int slot 3|b and a share"),
    ((_op(SCHEMA.Param("a", 0, "", count=8), SCHEMA.Param("b", 7, "")),), "share int slot 7"),
    ((_op(SCHEMA.F("a", 6, "")),), "outside the float slots"),
    ((_op(SCHEMA.Param("a", 15, "", count=2)),), "outside the int slots"),
    ((_op(SCHEMA.Param("a", 0, "", enum="Nope")),), "unknown enum Nope"),
    ((_op(code=1, name="x"), _op(code=1, name="y")), "duplicate op code"),
    ((_op(code=2, name="x"), _op(code=1, name="y")), "op codes are not in order"),
])
def test_schema_refuses_contradictions(ops, message):
    with pytest.raises(ValueError, match=message):
        SCHEMA.check(ops=ops)


def test_every_parameter_class_round_trips_through_a_record():
    for op in SCHEMA.OPS:
        cls = op_params.PARAMS.get(op.name)
        assert (cls is None) == (not op.params), op.name
        if cls is None:
            continue
        # A distinct value per slot, so a swapped or shifted slot shows.
        ints = [100 + k for k in range(SCHEMA.INT_SLOTS)]
        floats = [0.5 + k for k in range(SCHEMA.FLOAT_SLOTS)]
        p = cls.from_record(ints, floats)
        for q in op.params:
            want = ints if q.kind == "int" else floats
            got = getattr(p, q.name)
            expect = tuple(want[q.slot:q.slot + q.count]) if q.count > 1 else want[q.slot]
            assert got == expect, f"{op.name}.{q.name}: {got} is not slot {q.slot}"
        again = cls.from_record(p.ints() + [0] * SCHEMA.INT_SLOTS, p.floats() + [0.0] * SCHEMA.FLOAT_SLOTS)
        assert again == p, op.name


def test_parameter_class_packs_unused_slots_as_zero():
    p = op_params.MaxPool(kernel_h=3, kernel_w=2, stride_h=1, stride_w=1, pad_top=0, pad_left=1, pad_bottom=0,
                          pad_right=1, dilation_h=1, dilation_w=1, ceil_mode=1)
    assert p.ints() == [0, 3, 2, 1, 1, 0, 1, 0, 1, 1, 1, 1]  # slot 0 is not maxpool's
    assert op_params.Transpose(perm=(2, 0, 1)).ints() == [2, 0, 1, 0, 0, 0, 0, 0]
    with pytest.raises(ValueError, match="perm has 9 entries, at most 8"):
        op_params.Transpose(perm=tuple(range(9)))


# Where a parameter may be read by slot: the generated code, and the file layer (the record reader and
# writer), which moves the ints and floats of a record as they are.
_SLOT_READERS = {
    "emulator/src/op_params.h": None,  # generated: every line
    "emulator/src/graph.h": r"^\s*(int64_t ints|float floats)\[\d+\] = \{0\};",
    "emulator/src/model_reader.cc": r"node\.(ints|floats)\[k\] = in_\.",
    "emulator/compiler/op_params.py": None,
    "emulator/compiler/accm.py": None,
    "emulator/compiler/emit.py": r"(ints|floats)=n\.params\.(ints|floats)\(\)",
    "emulator/compiler/importer.py": r"\ba\.ints\b",  # an ONNX AttributeProto's ints, not a node's
}


def _positional_reads(root: Path):
    import re

    cpp = re.compile(r"\b(ints|floats)\[")
    py = re.compile(r"\.(ints|floats)\b(?!\()|\b(ints|floats)=|\[\"(ints|floats)\"\]")
    for path in sorted([*root.glob("emulator/src/**/*.cc"), *root.glob("emulator/src/**/*.h"),
                        *root.glob("emulator/compiler/**/*.py")]):
        rel = path.relative_to(root).as_posix()
        allowed = _SLOT_READERS.get(rel, "")
        if allowed is None:
            continue
        pattern = py if path.suffix == ".py" else cpp
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line) and not (allowed and re.search(allowed, line)):
                yield f"{rel}:{number}: {line.strip()}"


def test_kernels_and_compiler_read_parameters_by_name():
    found = list(_positional_reads(ROOT))
    assert not found, "op parameters read by slot outside generated code (use op_params):\n" + "\n".join(found)


def test_the_positional_read_check_finds_one(tmp_path):
    (tmp_path / "emulator" / "src" / "ops").mkdir(parents=True)
    (tmp_path / "emulator" / "compiler").mkdir(parents=True)
    (tmp_path / "emulator" / "src" / "ops" / "conv.cc").write_text("int64_t g = n.ints[0];\n")
    (tmp_path / "emulator" / "compiler" / "fusion.py").write_text("axis = node.ints[0]\nNode(ints=[1])\n")
    assert [f.split(":")[0] for f in _positional_reads(tmp_path)] == [
        "emulator/compiler/fusion.py", "emulator/compiler/fusion.py", "emulator/src/ops/conv.cc"]


@pytest.mark.parametrize("signature, arity", [
    ("X -> Y", (1, 1, 1, 1, 1)),
    ("X[N,C,H,W], W[M,C/g,kh,kw], B[M] optional -> Y[N,M,OH,OW]", (2, 3, 2, 1, 1)),
    ("X0..Xn-1 (n >= 1) -> Y", (1, SCHEMA.VARIADIC, 1, 1, 1)),
    ("X -> Y, S, Z", (1, 1, 1, 3, 3)),
    ("X, W, R, B optional -> Y, Y_h (those the outputs mask names, in order)", (3, 4, 3, 1, 2)),
])
def test_a_signature_states_the_ops_arity(signature, arity):
    assert dataclasses.astuple(SCHEMA.arity(signature)) == arity


@pytest.mark.parametrize("signature, message", [
    ("X, Y", "has no ' -> '"),
    ("A optional, B -> Y", "a required input follows an optional one"),
    ("X (maybe) -> Y", "'X \\(maybe\\)' is not a tensor"),
])
def test_schema_refuses_a_signature_it_cannot_read(signature, message):
    with pytest.raises(ValueError, match=message):
        SCHEMA.check(ops=(dataclasses.replace(SCHEMA.OPS[0], signature=signature),))


def test_schema_refuses_an_unknown_activation_rule_a_binary_op_of_three_inputs_or_unstated_int_dtypes():
    with pytest.raises(ValueError, match="activation rule 'some'"):
        SCHEMA.check(ops=(dataclasses.replace(SCHEMA.OPS[0], act="some"),))
    with pytest.raises(ValueError, match="a binary op takes two inputs"):
        SCHEMA.check(ops=(dataclasses.replace(SCHEMA.OPS[0], binary=True),))  # conv: up to three inputs
    with pytest.raises(ValueError, match="needs its dtypes stated"):
        SCHEMA.check(ops=(dataclasses.replace(SCHEMA.OPS[0], int_minor=3),))  # conv: float32 only


def test_the_writer_gives_a_file_the_minor_of_its_integer_arithmetic():
    i32 = accm.dtype_code("int32")
    tensors = [accm.Tensor(n, i32, k, (2,)) for n, k in (("a", accm.KIND_INPUT), ("b", accm.KIND_INPUT),
                                                          ("y", accm.KIND_OUTPUT))]
    node = accm.Node(accm.OPS["add"], [0, 1], [2])
    assert op_params.INT_ARITH_MINOR["add"] == 3
    assert accm.read(accm.write(tensors, [node], [0, 1], [2]))["header"]["version_minor"] == 3


def test_every_op_has_a_contract_and_a_definition():
    contract = op_codegen.OP_CONTRACT_H.read_text(encoding="utf-8")
    defs = op_codegen.OP_DEFS_H.read_text(encoding="utf-8")
    registry = op_codegen.REGISTRY_CC.read_text(encoding="utf-8")
    for op in SCHEMA.OPS:
        a = op.arity
        max_in = "kVariadic" if a.max_in == SCHEMA.VARIADIC else a.max_in
        assert f'case Op::{op.cname}: return {{"{op.name}", {a.min_in}, {max_in}, {a.required_in}, {a.min_out}, ' \
               f'{a.max_out}, DTypeRule::{"Float32" if op.float32_only else "Any"}, ' in contract, op.name
        assert f"extern const OpDef k{op.cname}Def;" in defs
        assert f"case Op::{op.cname}: return &k{op.cname}Def;" in registry
    binary = [op.cname for op in SCHEMA.OPS if op.binary]
    assert binary == ["Add", "Sub", "Mul", "Div", "Pow", "Min", "Max", "Mod", "FMod", "BitAnd", "BitOr", "BitXor",
                      "Shl", "Shr"]
    assert f"enum class BinOp {{ {', '.join(binary)} }};" in op_codegen.OP_CODES_H.read_text(encoding="utf-8")


@pytest.mark.parametrize("node, message", [
    (("add", ["a"], ["y"]), r"has inputs \['a'\]: the op takes 2, the first 2 present"),
    (("conv", [None, "w"], ["y"]), r"the op takes 2 to 3, the first 2 present"),
    (("concat", [], ["y"]), r"the op takes 1 or more"),
    (("topk", ["x"], ["v"]), r"has 1 outputs: the op gives 2"),
    (("rnn", ["x", "w", "r"], ["y", "h", "c", "d"]), r"has 4 outputs: the op gives 1 to 3"),
    (("copy", ["x"], ["y"], "", 1), r"activation 1 \(the op's activation rule: none\)"),
    (("activation", ["x"], ["y"]), r"activation 0 \(the op's activation rule: function\)"),
    (("nope", ["x"], ["y"]), r"op nope is not a runtime op"),
])
def test_the_compiler_refuses_a_node_its_ops_contract_does_not_take(node, message):
    from accel.compiler.emit import check_contract
    from accel.compiler.errors import CompileError
    from accel.compiler.ir import Node

    with pytest.raises(CompileError, match=message):
        check_contract(Node(*node))


def test_the_compiler_takes_what_the_contract_allows():
    from accel.compiler.emit import check_contract
    from accel.compiler.ir import Node

    for node in (Node("concat", ["a", "b", "c"], ["y"]), Node("gemm", ["a", "b", None], ["y"]),
                 Node("rnn", ["x", "w", "r"], ["h"]), Node("qconv", ["x", "w"], ["y"], act=1),
                 Node("activation", ["x"], ["y"], act=1), Node("logic", ["a"], ["y"])):
        check_contract(node)


def test_an_activation_fuses_into_the_ops_whose_rule_is_fused():
    from accel.compiler import fusion

    assert fusion.FUSABLE == {op.name for op in SCHEMA.OPS if op.act == "fused"} == op_params.FUSED_ACTIVATION_OPS
    assert {"conv", "matmul", "add", "reduce", "groupnorm"} <= fusion.FUSABLE and "copy" not in fusion.FUSABLE


def test_every_op_definition_carries_its_schema_name():
    # The OpDef each ops/*.cc file defines (k<Name>Def) names its op as the schema does (messages use it).
    found = {}
    for path in (ROOT / "emulator" / "src" / "ops").glob("*.cc"):
        text = path.read_text(encoding="utf-8")
        k_op = re.search(r'constexpr const char\* kOp = "(\w+)";', text)
        for cname, name in re.findall(r'const OpDef k(\w+)Def = \{\s*("\w+"|kOp)', text):
            found[cname] = k_op.group(1) if name == "kOp" and k_op else name.strip('"')
    assert found == {op.cname: op.name for op in SCHEMA.OPS}


def test_the_reader_and_the_writer_give_tensor_kinds_one_code_each():
    # The tensor record's kind: graph.h's TensorKind (the reader), accm.KIND_* (the writer) and FORMAT.md.
    graph_h = (ROOT / "emulator" / "src" / "graph.h").read_text(encoding="utf-8")
    found = re.search(r"enum class TensorKind : uint32_t \{([^}]*)\}", graph_h)
    assert found is not None
    reader = {name.strip().upper(): int(code) for name, code in re.findall(r"(\w+) = (\d+)", found.group(1))}
    writer = {name.removeprefix("KIND_"): value for name, value in vars(accm).items() if name.startswith("KIND_")}
    assert reader == writer == {"ACTIVATION": 0, "INPUT": 1, "OUTPUT": 2, "CONSTANT": 3}
    rule = {f.name: f.rule for f in op_codegen.load_accm_schema().TENSOR.fields}["kind"]
    assert rule == "0 activation (an intermediate), 1 graph input, 2 graph output, 3 constant"
