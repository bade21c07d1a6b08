"""Running the checks: each in a worker thread with a time limit, skipped when it needs what an earlier
check failed to make; the report written as the results come."""
from __future__ import annotations

import datetime
import os
import time
import traceback
from dataclasses import asdict, replace
from pathlib import Path
from typing import Optional, Sequence, TextIO

from .checks import CHECKS, COMPARE, MADE_BY
from .framework import (DEFAULT_MODEL, ERROR, FAIL, FULL, PASS, QUICK, SKIP, Check, CheckFailed, CheckResult,
                        Context, Findings)
from .helpers import in_thread
from .report import Report, format_result


def _skip_reason(check: Check, ctx: Context, report: Report) -> Optional[str]:
    if report.hung:
        return f"not run: check {report.hung!r} did not finish"
    missing = [n for n in check.needs if getattr(ctx, n) is None]
    if missing:
        return f"not run: needs the {missing[0]} that {MADE_BY[missing[0]]} makes"
    return None


def run_check(check: Check, ctx: Context, report: Report) -> CheckResult:
    """Runs one check in a worker thread, at most ``settings.check_timeout`` seconds."""
    reason = _skip_reason(check, ctx, report)
    if reason:
        return CheckResult(check.name, SKIP, 0.0, reason)
    f = Findings()
    t0 = time.perf_counter()
    finished, _, error = in_thread(lambda: check.run(ctx, f), ctx.settings.check_timeout)
    seconds = time.perf_counter() - t0
    status = PASS
    if not finished:
        report.hung = check.name
        f.problem(f"did not finish within {ctx.settings.check_timeout:g} s")
    elif isinstance(error, CheckFailed):
        f.problem(str(error))
    elif error is not None:
        status = ERROR
        f.summary = f"{type(error).__name__}: {error}"
        f.data["traceback"] = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        f.notes.append(f"at {traceback.extract_tb(error.__traceback__)[-1].name}(), "
                       f"see the JSON report's traceback")
    if status == PASS and f.problems:
        status = FAIL
        f.summary = f.summary or f.problems[0]
    return CheckResult(check.name, status, seconds, f.summary, f.notes, list(f.problems), f.data)


def run_selftest(uri: str, model: Optional[os.PathLike[str] | str] = None, *, quick: bool = False,
                 check_timeout: Optional[float] = None, out: Optional[TextIO] = None,
                 checks: Sequence[Check] = CHECKS, compare: Optional[os.PathLike[str] | str] = None,
                 int8: Optional[str] = None) -> Report:
    """Runs ``checks`` on the device at ``uri`` with ``model`` (default: the bundled tiny CNN, which
    only the emulator can load) and returns the :class:`Report`; each result is written to ``out`` as
    it comes. ``compare``: the ONNX model the device's model was made from, run on the emulator with the
    int8 rules ``int8`` (default: the device's) as a last check, ``compare``."""
    settings = QUICK if quick else FULL
    if check_timeout is not None:
        settings = replace(settings, check_timeout=float(check_timeout))
    path = Path(model) if model is not None else None
    ctx = Context(uri, path, settings, Path(compare) if compare is not None else None, int8)
    if compare is not None:
        checks = (*checks, COMPARE)
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    report = Report(uri, str(path or DEFAULT_MODEL), quick, started)
    _emit(out, report.header())
    t0 = time.perf_counter()
    try:
        for check in checks:
            result = run_check(check, ctx, report)
            if check.name == "sync_run" and ctx.run_seconds is not None:
                _fit_to_latency(ctx, result)
            report.results.append(result)
            _emit(out, format_result(result))
    finally:
        if ctx.device is not None and not report.hung:
            ctx.device.close()
    report.seconds = time.perf_counter() - t0
    _emit(out, report.footer())
    return report


def _fit_to_latency(ctx: Context, result: CheckResult) -> None:
    """The later checks' run counts and hang limit fitted to the model's run time (a 40 ms model does not run
    2,000 times per check), said in the sync run's notes."""
    assert ctx.run_seconds is not None
    before, ctx.settings = ctx.settings, ctx.settings.for_latency(ctx.run_seconds)
    s = ctx.settings
    result.data["settings"] = asdict(s)
    if s != before:
        result.notes.append(f"a run takes {ctx.run_seconds * 1e3:.1f} ms: the checks run about {s.budget:g} s each "
                            f"({s.rss_runs} RSS runs, {s.latency_runs} latency runs, {s.leak_runs} leak runs), and "
                            f"one is reported hung after {s.check_timeout:g} s")


def _emit(out: Optional[TextIO], text: str) -> None:
    if out is not None:
        out.write(text + "\n")
        out.flush()
