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
from typing import Dict, List, Optional, Sequence, Tuple

from . import DEFAULT_DEVICES, VENDORS, session

__all__ = ["add_arguments", "importable", "installed", "main", "run"]

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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("vendor", choices=sorted(VENDORS), help="whose Python API the script uses")
    parser.add_argument("--device", metavar="URI", default=None,
                        help="the device the script's models run on (default: the emulator with the vendor's int8 "
                             f"rules: {', '.join(f'{v} {u}' for v, u in sorted(DEFAULT_DEVICES.items()))})")
    parser.add_argument("--force", action="store_true",
                        help="use the shim even where the vendor's real package is installed")
    parser.add_argument("--source", metavar="ONNX", default=None,
                        help="Horizon: the ONNX a .bin was made from (default: <name>_calibrated_model.onnx beside it)")
    parser.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND ...",
                        help="the command to run, after --: python app.py ARGS")


def run(vendor: str, command: Sequence[str], device: Optional[str] = None, force: bool = False,
        source: Optional[str] = None) -> int:
    """Runs ``command`` under the vendor's shim; returns its exit code (2 for a usage error, said on stderr)."""
    command, given = _leading_options(command)
    device = given.get("device", device)
    source = given.get("source", source)
    force = force or "force" in given
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
    for key, value in ((session.ENV_DEVICE, device), (session.ENV_SOURCE, source)):
        if value is not None:
            env[key] = os.path.abspath(value) if key == session.ENV_SOURCE else value
        else:
            env.pop(key, None)
    try:
        return subprocess.call(command, env=env)
    except FileNotFoundError:
        print(f"accel shim: no such command: {command[0]!r}", file=sys.stderr)
        return 127
    except KeyboardInterrupt:
        return 130


def _leading_options(command: Sequence[str]) -> Tuple[List[str], Dict[str, str]]:
    """The command after ``--``, and the launcher's options written between VENDOR and ``--`` (``accel shim
    onnxruntime --force -- python app.py``): argparse's REMAINDER positional takes everything after VENDOR, those
    options included, so they are read here."""
    rest, given = list(command), {}
    while rest and (rest[0] in ("--force", "--device", "--source") or rest[0].startswith(("--device=", "--source="))):
        name, _, value = rest.pop(0)[2:].partition("=")
        if name != "force" and not value and rest:
            value = rest.pop(0)
        given[name] = value
    return (rest[1:] if rest and rest[0] == "--" else rest), given


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m accel.shims",
                                     description="Runs a script written for a vendor's Python API on accel.")
    add_arguments(parser)
    args = parser.parse_args(argv)
    return run(args.vendor, args.command, args.device, args.force, args.source)
