"""ONNX backend node-test conformance of the emulator (the harness is tests/conformance/).

Every onnx node test case whose op is in accel.compiler.SUPPORTED_OPS is compiled, run on the emulator
and compared with onnx's expected outputs (tests/conformance/runner.py says how). No case may fail; a
case the compiler refuses with a declaration ("unsupported ...") is not a failure. The totals are
printed at the end of the session and the full report is written to build/conformance.md (the
committed one, docs/conformance.md, is written by tools/conformance_report.py).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from accel.compiler import SUPPORTED_OPS

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests"))

from conformance import cases, report, runner  # noqa: E402

# Cases of supported ops known to fail, each with why. Allowed only until the fix is merged: the test
# fails when a listed case stops failing (remove it then) and when a listed name is no longer a case.
KNOWN_FAILURES: dict = {
    # case name -> why it fails today. An entry that starts passing fails the test, so the list cannot rot.
}


class _Summary:
    """Prints the totals in pytest's terminal summary, so that CI's log shows them."""

    def __init__(self, results, path):
        self.results, self.path = results, path

    def pytest_terminal_summary(self, terminalreporter):
        terminalreporter.section("ONNX backend node-test conformance")
        terminalreporter.write_line(report.summary(self.results))
        known = sorted(r.case.name for r in self.results
                       if r.outcome == runner.FAILED and r.case.name in KNOWN_FAILURES)
        if known:
            terminalreporter.write_line(f"known failures (KNOWN_FAILURES): {', '.join(known)}")
        terminalreporter.write_line(f"report: {self.path}")


@pytest.fixture(scope="module")
def results(request):
    rs = runner.run_all(cases.collect())
    path = ROOT / "build" / "conformance.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(report.render(rs, onnx.__version__), encoding="utf-8")
    request.config.pluginmanager.register(_Summary(rs, path), "accel_conformance_summary")
    return rs


@pytest.mark.parametrize("op", sorted(SUPPORTED_OPS))
def test_op_conformance(results, op):
    problems = []
    for r in results:
        if r.case.op != op:
            continue
        known = KNOWN_FAILURES.get(r.case.name)
        if r.outcome == runner.FAILED and known is None:
            problems.append(f"{r.case.name}: {r.message}")  # a wrong number's message has the max error
        elif r.outcome != runner.FAILED and known is not None:
            problems.append(f"{r.case.name} is in KNOWN_FAILURES but now {r.outcome}: remove it")
    assert not problems, "\n".join(problems)


def test_known_failures_are_cases_of_supported_ops(results):
    run = {r.case.name for r in results if r.outcome != runner.NOT_RUN}
    assert sorted(set(KNOWN_FAILURES) - run) == []


def test_follow_onnxruntime_cases_still_disagree(results):
    # An entry stays only while onnxruntime and the reference really disagree on that case.
    by_name = {r.case.name: r.case for r in results}
    for name, why in runner.FOLLOW_ONNXRUNTIME.items():
        assert name in by_name, f"{name} is not a case any more"
        case = by_name[name]
        mismatch, _ = runner.compare(case.outputs, runner.onnxruntime_outputs(case), case.rtol, case.atol)
        assert mismatch is not None, f"{name}: onnxruntime now agrees with the reference ({why}): remove it"


def test_looser_atol_cases_need_it_and_pass_with_it(results):
    # onnxruntime's outputs also miss the case's own atol: the loosening is the case's, not accel's.
    by_name = {r.case.name: r for r in results}
    for name, (_, why) in runner.LOOSER_ATOL.items():
        assert name in by_name and by_name[name].outcome == runner.PASSED, f"{name}: {by_name.get(name)}"
        case = by_name[name].case
        mismatch, _ = runner.compare(case.outputs, runner.onnxruntime_outputs(case), case.rtol, case.atol)
        assert mismatch is not None, f"{name}: onnxruntime now meets the case's atol ({why}): remove it"


def test_cases_have_unique_names_and_some_pass(results):
    names = [r.case.name for r in results]
    assert len(names) == len(set(names))  # KNOWN_FAILURES and the report name cases unambiguously
    assert any(r.outcome == runner.PASSED for r in results)


# ---- the harness's own checks: its comparison can fail, and its declarations are what it says ----

def test_compare_passes_within_tolerance_and_reports_the_error():
    ref = np.array([1.0, np.nan, np.inf, 0.0], np.float32)
    got = ref + np.array([1e-4, 0, 0, 5e-8], np.float32)
    mismatch, worst = runner.compare([ref], [got], rtol=1e-3, atol=1e-7)
    assert mismatch is None and worst == pytest.approx(1e-4, rel=1e-2)


@pytest.mark.parametrize("got, what", [
    (np.array([1.0, 2.01], np.float32), "max abs error 0.01"),
    (np.array([1.0, np.nan], np.float32), "1 of 2 elements differ"),
    (np.array([1.0, 2.0, 3.0], np.float32), "shape (3,), expected (2,)"),
    (np.array([1.0, 2.0], np.float64), "dtype float64, expected float32"),
])
def test_compare_fails_on_wrong_outputs(got, what):
    mismatch, _ = runner.compare([np.array([1.0, 2.0], np.float32)], [got], rtol=1e-3, atol=1e-7)
    assert mismatch is not None and what in mismatch


def test_compare_is_exact_on_integers():
    mismatch, _ = runner.compare([np.array([3, 4], np.int64)], [np.array([3, 5], np.int64)], 1e-3, 1e-7)
    assert mismatch == "output 0: 1 of 2 elements differ, first at (1,)"


@pytest.mark.parametrize("message, declared", [
    ("unsupported op 'Foo' (node 'n')", True),
    ("unsupported mode 'cubic' in op 'Resize' (node 'r1')", True),
    ("node 'c' (Cast): casting runtime tensor 'x' from float32 to float16 is not supported", True),
    ("tensor 'x' has dtype int8, but the runtime computes in float32 only (node 'a', op add)", True),
    ("node 'r' (Reshape): cannot reshape (2, 3) to [4]", False),
    ("input 'x' is not a tensor", False),
])
def test_declarations(message, declared):
    assert runner.is_declaration(message) is declared


def test_inputs_the_compiler_needs_constant_are_made_initializers():
    r = np.random.default_rng(0)
    x = r.standard_normal((1, 2, 5, 5)).astype(np.float32)
    w = r.standard_normal((3, 2, 3, 3)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "W"], ["y"], pads=[1, 1, 1, 1])], "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
         helper.make_tensor_value_info("W", TensorProto.FLOAT, w.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    (y,) = ReferenceEvaluator(model).run(None, {"x": x, "W": w})
    case = cases.Case("conv_w_input", "Conv", model, (x, w), (y,), 1e-3, 1e-5)
    (res,) = runner.run_all([case])
    assert (res.outcome, res.constants) == (runner.PASSED, ("W",)), res.message
    (res,) = runner.run_all([cases.Case("conv_wrong", "Conv", model, (x, w), (y + 0.1,), 1e-3, 1e-5)])
    assert res.outcome == runner.FAILED and res.max_error == pytest.approx(0.1, rel=1e-3)


# ---------------------------------------------------------------------------------------------------
# docs/ops.md: generated from the code (tools/op_table.py), so it cannot go stale
# ---------------------------------------------------------------------------------------------------

sys.path.insert(0, str(ROOT / "tools"))
import op_table  # noqa: E402


def test_every_handler_has_a_docstring():
    missing = [f"{fn.__module__}.{fn.__name__} ({', '.join(ops)})"
               for ops, fn in op_table.handler_groups() if not op_table.first_paragraph(fn)]
    assert not missing, "handlers without a docstring saying what they support: " + ", ".join(missing)


def test_ops_md_is_the_generated_table():
    text = op_table.render()
    assert op_table.OPS_MD.read_text(encoding="utf-8") == text, \
        "docs/ops.md is out of date: run python tools/op_table.py"
