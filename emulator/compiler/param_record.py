"""The base of the generated op parameter classes (op_params.py): an op's named parameters packed into a
node record's `ints` and `floats` slots (FORMAT.md "Node record") and read back from them.

Written by hand, not generated: it is the same for every op; op_params.py gives each op its layout.
"""
from __future__ import annotations

from typing import Any, ClassVar, List, Sequence, Tuple

Layout = Tuple[Tuple[str, int, int], ...]


class Params:
    """What every op's parameter class shares: packing into the record's slots and back. INTS and FLOATS
    are the layout, (field, first slot, count) each; count > 1 is an array field (a tuple, unused
    entries 0 in the file)."""

    OP: ClassVar[str] = ""
    INTS: ClassVar[Layout] = ()
    FLOATS: ClassVar[Layout] = ()

    def __post_init__(self) -> None:
        for name, _, count in self.INTS + self.FLOATS:
            if count > 1:
                value = tuple(getattr(self, name))
                if len(value) > count:
                    raise ValueError(f"{self.OP}: {name} has {len(value)} entries, at most {count}")
                object.__setattr__(self, name, value)

    def _pack(self, layout: Layout, kind: type) -> list:
        out: list = []
        for name, slot, count in layout:
            out += [kind(0)] * (slot - len(out))
            value = getattr(self, name)
            if count > 1:
                out += [kind(v) for v in value] + [kind(0)] * (count - len(value))
            else:
                out.append(kind(value))
        return out

    def ints(self) -> List[int]:
        """The record's ints up to the last one used."""
        return self._pack(self.INTS, int)

    def floats(self) -> List[float]:
        """The record's floats up to the last one used."""
        return self._pack(self.FLOATS, float)

    @classmethod
    def from_record(cls, ints: Sequence[int], floats: Sequence[float]) -> Any:
        """The parameters in a node record's ints and floats."""
        fields = {}
        for layout, values, kind in ((cls.INTS, ints, int), (cls.FLOATS, floats, float)):
            for name, slot, count in layout:
                chunk = [kind(v) for v in values[slot:slot + count]]
                fields[name] = tuple(chunk) if count > 1 else chunk[0]
        return cls(**fields)
