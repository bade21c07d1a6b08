"""``accel selftest``: a conformance run of a device and a model, with a report to attach to a bug.

    accel selftest --device emu:cores=2                    # the emulator and the bundled tiny CNN
    accel selftest --device bpu:0 --model net.hbm --json report.json
    accel selftest --device vart:0 --model net.xmodel --quick

Each check (``CHECKS``, in order; docs/selftest.md says what each one does) ends PASS; FAIL, when it found
the device or the runtime not doing what accel promises; ERROR, when something raised that the check did
not expect (a device error in the middle of a run, say); or SKIP, when it needs what an earlier check
failed to make (no device, no model). The exit code is 0 when every check passed, 1 otherwise, 2 for a
usage error. From Python: ``report = run_selftest("emu:cores=2")``, then ``report.exit_code`` and
``report.to_dict()``.

The package, one job a module: ``framework`` (what a check is: Settings, Context, Findings, Check,
CheckResult, the statuses), ``checks_setup``, ``checks_runs`` and ``checks_resources`` (the checks, by
subject), ``environment`` and ``tensor_metadata`` (what two of them examine), ``helpers`` (what checks of
several subjects share), ``checks`` (their order), ``runner`` (running them), ``report`` (the text and
JSON report) and ``command`` (the ``accel selftest`` subcommand).
"""
from __future__ import annotations

# Beside __all__, the package offers the statuses, Context, MIB, REPORT_FORMAT, run_check, format_result and
# usage_problem, as the single module did. A test that replaces rss_bytes patches it where check_rss reads
# it: accel.selftest.checks_resources.
from .checks import CHECKS
from .command import command, register
from .framework import DEFAULT_MODEL, FULL, QUICK, Check, CheckFailed, CheckResult, Findings, Settings
from .report import Report
from .runner import run_selftest

# The re-exports beside __all__ (`name as name` marks them as such for linters and type checkers).
from .command import usage_problem as usage_problem
from .framework import ERROR as ERROR, FAIL as FAIL, PASS as PASS, SKIP as SKIP, Context as Context
from .helpers import MIB as MIB
from .report import REPORT_FORMAT as REPORT_FORMAT, format_result as format_result
from .runner import run_check as run_check

__all__ = ["CHECKS", "Check", "CheckFailed", "CheckResult", "Findings", "Report", "Settings", "FULL",
           "QUICK", "DEFAULT_MODEL", "run_selftest", "register", "command"]
