"""The runtime ops' one source, emulator/op_schema.py: what it generates is current, it refuses to
contradict itself, and the compiler's parameter classes write the slots FORMAT.md gives."""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
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
    assert max(op.minor for op in SCHEMA.OPS) == accm.VERSION_MINOR


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
