"""Every ONNX input the compiler fuzzer (tests/fuzz/fuzz_compiler.py, run by ci/fuzz.sh) found a fault
with is kept in tests/fuzz/regressions/onnx/ and must pass the fuzzer's check in every test run, with each
int8 rule set (the fuzzer runs with one, ACCEL_FUZZ_INT8), as must the models the tests build (the
fuzzer's seeds). Likewise the .xmodel fuzzer's (tests/fuzz/fuzz_xmodel.py): tests/fuzz/regressions/xmodel/."""
from __future__ import annotations

import sys
from pathlib import Path

FUZZ = Path(__file__).resolve().parents[2] / "fuzz"
REGRESSIONS = sorted((FUZZ / "regressions" / "onnx").glob("*"))
REGRESSIONS = [p for p in REGRESSIONS if p.is_file() and not p.name.startswith(".")]
XMODEL_REGRESSIONS = [p for p in sorted((FUZZ / "regressions" / "xmodel").glob("*.xmodel")) if p.is_file()]

sys.path.insert(0, str(FUZZ))
import pytest  # noqa: E402
from fuzz_check import check_model, check_xmodel  # noqa: E402
from xmodel_seeds import seeds as xmodel_seeds  # noqa: E402


@pytest.mark.parametrize("rules", ["ort", "dpu", "bpu"])
def test_regressions(rules):
    for path in REGRESSIONS:  # one test, not one per file: an empty folder must not read as skipped
        check_model(path.read_bytes(), rules)


def test_seed_models_pass_the_check(tiny_path, two_io_path, cnn_path):
    for p in (tiny_path, two_io_path, cnn_path):
        check_model(Path(p).read_bytes())


def test_xmodel_regressions_and_seeds():
    assert XMODEL_REGRESSIONS  # the folder holds the findings; an empty one means the glob is wrong
    for path in XMODEL_REGRESSIONS:
        check_xmodel(path.read_bytes())
    for data in xmodel_seeds().values():
        check_xmodel(data)
