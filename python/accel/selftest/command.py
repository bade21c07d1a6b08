"""The ``accel selftest`` subcommand: its arguments, the usage errors found before anything runs, and
the command that runs the checks and writes the report."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, Optional

from ..runtime.capabilities import describe_or_unknown
from ..commands.common import number_arg
from ..compile_cache import INT8_RULES
from ..runtime.device_uri import parse_uri
from ..errors import InvalidArgumentError
from ..front_ends.onnx import ONNX
from .framework import FULL, QUICK
from .runner import run_selftest


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Adds ``selftest`` to the ``accel`` command's subparsers (see accel.cli)."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "selftest", help="check that a device and a model work as accel promises",
        description="Runs conformance checks on a device (a board or the emulator) and prints a report "
                    "to attach to a bug. Exit code: 0 all passed, 1 a check failed, 2 usage error.")
    p.add_argument("--device", required=True, metavar="URI",
                   help="the device: emu[:options], bpu:0, vart:0, ...")
    p.add_argument("--model", metavar="PATH",
                   help="the model to run (required except on the emulator, which runs the bundled "
                        "tiny CNN by default): .hbm/.bin on BPU, .xmodel on VART, .onnx or .accm on emu")
    p.add_argument("--json", metavar="REPORT.json", help="also write the full report as JSON")
    p.add_argument("--quick", action="store_true", help="fewer runs per check")
    p.add_argument("--compare", metavar="MODEL.onnx",
                   help="the quantized ONNX model the device's model was made from, or a Vitis AI .xmodel (the "
                        "device's own, or the quantizer's): its outputs on the emulator with the device's int8 "
                        "rules are held against the device's (check compare)")
    p.add_argument("--int8", choices=INT8_RULES, default=None,
                   help="the emulator's int8 rules for --compare (default: the device's: dpu for vart, bpu "
                        "for bpu, an emulator URI's own int8=)")
    p.add_argument("--check-timeout", type=number_arg(float, 1e-3, 86400.0), default=FULL.check_timeout,
                   metavar="SECONDS",
                   help=f"report a check as hung after this long (default {FULL.check_timeout:g}); raised to many "
                        f"times what a check needs once a run's time is measured, whose run counts are fitted to "
                        f"about {FULL.budget:g} s ({QUICK.budget:g} s with --quick)")
    p.set_defaults(handler=command)
    return p


def usage_problem(args: argparse.Namespace) -> Optional[str]:
    """What is wrong with the arguments before anything runs, or None."""
    try:
        scheme = parse_uri(args.device).scheme
    except InvalidArgumentError as e:
        return f"--device {args.device!r} is not a device URI ({e.message}): use emu, bpu:0, vart:0, ..."
    # What the driver's devices load, whatever the options (a bad one is the open_device check's to report).
    compiles_onnx = describe_or_unknown(scheme).model_format == ONNX.produces
    if args.model is None and not compiles_onnx:
        return (f"--model is required for --device {args.device!r}: the bundled ONNX model compiles only "
                f"for the emulator; pass a model compiled for the board (.hbm/.bin on BPU, .xmodel on VART)")
    if args.model is not None and not compiles_onnx and args.model.lower().endswith(".onnx"):
        return (f"--model {args.model!r} is ONNX, which compiles only for the emulator; pass a model "
                f"compiled for {scheme!r} with the vendor's toolchain")
    if args.model is not None and not Path(args.model).is_file():
        return f"--model {args.model!r}: no such file"
    if args.compare is not None and not Path(args.compare).is_file():
        return f"--compare {args.compare!r}: no such file"
    if args.compare is not None and not _emulator_takes(Path(args.compare)):
        return (f"--compare {args.compare!r}: expected the ONNX model the device's model was made from, or a file "
                f"of another format the emulator converts ({_converted_suffixes()})")
    if args.int8 is not None and args.compare is None:
        return "--int8 names the emulator's rules for --compare, which is not given"
    if args.json is not None and not Path(args.json).resolve().parent.is_dir():
        return f"--json {args.json!r}: no such folder"
    return None


def command(args: argparse.Namespace) -> int:
    """``accel selftest``: runs the checks, prints the report, writes the JSON; returns the exit code."""
    from ..cli import UsageError

    problem = usage_problem(args)
    if problem:
        raise UsageError(problem)
    report = run_selftest(args.device, args.model, quick=args.quick, check_timeout=args.check_timeout,
                          out=sys.stdout, compare=args.compare, int8=args.int8)
    if args.json:
        report.write_json(args.json)
        print(f"report written to {args.json}")
    if report.hung:
        # A hung job may never let the device close or the interpreter finalize: leave at once.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(report.exit_code)
    return report.exit_code


def _emulator_takes(path: Path) -> bool:
    """Whether a front end turns the file at ``path`` into what the emulator loads."""
    from .. import front_ends

    return front_ends.for_file("accm", path) is not None


def _converted_suffixes() -> str:
    from .. import front_ends

    return ", ".join(s for f in front_ends.registered() if f.produces == "accm" for s in f.suffixes)
