"""The launcher: ``accel shim VENDOR [options] -- COMMAND ...`` runs COMMAND (``python app.py ARGS``) with the
vendor's shim modules importable under the vendor's names and the options in its environment (session.py), and
returns its exit code."""
from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import List, Optional, Sequence

from . import DEFAULT_DEVICES, VENDORS, session

__all__ = ["add_arguments", "importable", "installed", "main", "run", "run_args"]

#: Where each vendor's names are importable from (``importable/<vendor>/<name>``, each re-exporting the shim).
IMPORTABLE = Path(__file__).resolve().parent / "importable"


def importable(vendor: str) -> Path:
    return IMPORTABLE / vendor


def installed(vendor: str) -> List[str]:
    """The vendor's module names that the real package provides in this interpreter (not our shim)."""
    found = []
    for name in VENDORS[vendor]:
        module = sys.modules.get(name)
        spec = importlib.util.find_spec(name) if module is None else getattr(module, "__spec__", None)
        origin = getattr(spec, "origin", None) or ""
        if spec is not None and not str(origin).startswith(str(IMPORTABLE)):
            found.append(f"{name} ({os.path.dirname(origin) or 'built in'})")
    return found


def _add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", metavar="URI", default=None,
                        help="the device the script's models run on (default: the emulator with the vendor's int8 "
                             f"rules: {', '.join(f'{v} {u}' for v, u in sorted(DEFAULT_DEVICES.items()))})")
    parser.add_argument("--force", action="store_true",
                        help="use the shim even where the vendor's real package is installed")
    parser.add_argument("--source", metavar="ONNX", default=None,
                        help="Horizon: the ONNX a .bin was made from (default: <name>_calibrated_model.onnx beside it)")
    parser.add_argument("--profile", metavar="TRACE.json", default=None,
                        help="profile every job per layer and write the trace there when the script exits")
    parser.add_argument("--compare", action="store_true",
                        help="hold every output of every run against the same run of the model's float counterpart "
                             "(on the host's emulator) and print the table (cosine, errors, steps) when the script "
                             "exits")
    parser.add_argument("--compare-json", metavar="FILE.json", default=None,
                        help="with --compare: also write the table's rows there")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The launcher's arguments: VENDOR, the options (before or after it), then -- COMMAND ... (resolve())."""
    _add_options(parser)
    parser.add_argument("vendor", choices=sorted(VENDORS), help="whose Python API the script uses")
    parser.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND ...",
                        help="the command to run, after --: python app.py ARGS")


def resolve(args: argparse.Namespace, parser: argparse.ArgumentParser) -> argparse.Namespace:
    """``args`` with the options written after VENDOR (argparse leaves them in the command's remainder) read, and
    the command what follows ``--``."""
    rest = list(args.command)
    if "--" in rest:
        given, args.command = rest[:rest.index("--")], rest[rest.index("--") + 1:]
        options = argparse.ArgumentParser(prog=parser.prog, add_help=False)
        _add_options(options)
        unknown = options.parse_known_args(given, namespace=args)[1]
        if unknown:
            parser.error(f"unrecognized arguments before --: {' '.join(unknown)}")
    return args


def run_args(args: argparse.Namespace) -> int:
    """run() with the launcher's parsed arguments (add_arguments, resolve)."""
    return run(args.vendor, args.command, device=args.device, force=args.force, source=args.source,
               profile=args.profile, compare=args.compare, compare_json=args.compare_json)


def run(vendor: str, command: Sequence[str], device: Optional[str] = None, force: bool = False,
        source: Optional[str] = None, profile: Optional[str] = None, compare: bool = False,
        compare_json: Optional[str] = None) -> int:
    """Runs ``command`` under the vendor's shim; returns its exit code (2 for a usage error, said on stderr)."""
    if compare_json is not None and not compare:
        print("accel shim: --compare-json writes --compare's table: give --compare too", file=sys.stderr)
        return 2
    if not command:
        print("accel shim: no command to run: accel shim VENDOR -- python app.py ARGS", file=sys.stderr)
        return 2
    real = installed(vendor)
    if real and not force:
        print(f"accel shim: the real {', '.join(real)} is installed here: the script would use it, not accel. "
              f"Run it as it is, or pass --force to use accel's shim in its place", file=sys.stderr)
        return 2
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(importable(vendor))] + [p for p in [env.get("PYTHONPATH", "")] if p])
    env[session.ENV_VENDOR] = vendor
    settings = ((session.ENV_DEVICE, device), (session.ENV_SOURCE, source), (session.ENV_PROFILE, profile),
                (session.ENV_COMPARE, "1" if compare else None), (session.ENV_COMPARE_JSON, compare_json))
    for key, value in settings:
        if value is not None:
            env[key] = value if key in (session.ENV_DEVICE, session.ENV_COMPARE) else os.path.abspath(value)
        else:
            env.pop(key, None)
    try:
        return subprocess.call(command, env=env)
    except FileNotFoundError:
        print(f"accel shim: no such command: {command[0]!r}", file=sys.stderr)
        return 127
    except KeyboardInterrupt:
        return 130


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m accel.shims",
                                     description="Runs a script written for a vendor's Python API on accel.")
    add_arguments(parser)
    return run_args(resolve(parser.parse_args(argv), parser))
