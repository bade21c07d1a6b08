"""Writes docs/conformance.md: the emulator's results on onnx's backend node tests.

    python tools/conformance_report.py [-o docs/conformance.md]

Uses the installed accel (`pip install .` first) and the installed onnx's test-case generators; the
harness is tests/conformance/. Takes about half a minute, most of it onnx generating its cases.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from conformance import cases, report, runner  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default=str(ROOT / "docs" / "conformance.md"),
                    help="the markdown file to write (default: docs/conformance.md)")
    args = ap.parse_args(argv)
    results = runner.run_all(cases.collect())
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report.render(results, onnx.__version__), encoding="utf-8")
    print(f"{out}: {report.summary(results)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
