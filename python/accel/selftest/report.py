"""The report of a run: its results in check order, the text lines printed as the checks end, and the
JSON written with ``--json``."""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np

from .._wording import counted
from .framework import ERROR, FAIL, PASS, SKIP, CheckResult

#: The report's format, in the JSON's ``format`` field.
REPORT_FORMAT = "accel-selftest/1"


@dataclass
class Report:
    """The results of a run, in check order; ``hung`` names a check that never finished."""

    uri: str
    model: str
    quick: bool
    started: str
    results: List[CheckResult] = field(default_factory=list)
    seconds: float = 0.0
    hung: Optional[str] = None

    def counts(self) -> Dict[str, int]:
        """How many checks ended with each status."""
        return {s: sum(r.status == s for r in self.results) for s in (PASS, FAIL, ERROR, SKIP)}

    @property
    def passed(self) -> bool:
        """True when every check passed."""
        return bool(self.results) and all(r.status == PASS for r in self.results)

    @property
    def exit_code(self) -> int:
        """0 when every check passed, 1 otherwise."""
        return 0 if self.passed else 1

    def result(self, name: str) -> CheckResult:
        """The result of the check called ``name``."""
        for r in self.results:
            if r.name == name:
                return r
        raise KeyError(name)

    def to_dict(self) -> Dict[str, Any]:
        """The whole report as JSON-ready data (``format`` says its version)."""
        return {"format": REPORT_FORMAT, "result": PASS if self.passed else FAIL, "exit_code": self.exit_code,
                "device": self.uri, "model": self.model, "quick": self.quick, "started": self.started,
                "seconds": self.seconds, "hung": self.hung, "counts": self.counts(),
                "checks": [asdict(r) for r in self.results]}

    def write_json(self, path: os.PathLike[str] | str) -> None:
        """Writes :meth:`to_dict` to ``path`` as JSON."""
        with open(path, "w", encoding="utf-8") as out:
            json.dump(self.to_dict(), out, indent=2, default=_jsonable)
            out.write("\n")

    def header(self) -> str:
        """The report's first line: device, model, mode, start time."""
        return (f"accel selftest: device {self.uri!r}, model {self.model}"
                f"{' (quick)' if self.quick else ''}, started {self.started}")

    def footer(self) -> str:
        """The report's last line: the counts and the result."""
        c = self.counts()
        text = (f"{c[PASS]} passed, {c[FAIL]} failed, {counted(c[ERROR], 'error')}, {c[SKIP]} skipped in "
                f"{self.seconds:.2f} s: {PASS if self.passed else FAIL}")
        return text + (f" (check {self.hung!r} hung)" if self.hung else "")


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (np.dtype, Path)):
        return str(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    return repr(value)


def format_result(r: CheckResult) -> str:
    """A check's lines in the text report: status, name, time and summary, then notes and problems."""
    lines = [f"{r.status:<6} {r.name:<14} {r.seconds * 1e3:9.1f} ms  {r.summary}".rstrip()]
    lines += [f"{'':23}{n}" for n in r.notes]
    lines += [f"{'':21}! {p}" for p in r.problems]
    return "\n".join(lines)
