"""The runtime ops' one source, emulator/op_schema.py: what it generates is current, it refuses to
contradict itself, and the compiler's parameter classes write the slots FORMAT.md gives."""
from __future__ import annotations

import dataclasses
import re
import sys
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
    source = (ROOT / "emulator" / "src" / "model_reader.cc").read_text(encoding="utf-8")
    found = re.search(r"constexpr uint16_t kVersionMinor = (\d+);", source)
    assert found is not None, "kVersionMinor not found in model_reader.cc"
    assert int(found.group(1)) == accm.VERSION_MINOR


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
