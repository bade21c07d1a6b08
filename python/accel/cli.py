"""The ``accel`` command: ``accel <subcommand> [options]``.

Each subcommand lives in its own module of the package, named in ``SUBCOMMANDS``, which provides
``register(subparsers) -> argparse.ArgumentParser``: it adds its parser and sets the default ``handler``,
a function of the parsed arguments returning the exit code. A handler raises :class:`UsageError` for
arguments argparse cannot judge alone; the command then prints the subcommand's usage and exits 2, as
argparse does for its own usage errors.
"""
from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
from typing import List, Optional

__all__ = ["SUBCOMMANDS", "UsageError", "build_parser", "main"]

#: Subcommand name -> the module (in this package) that registers it.
SUBCOMMANDS = {"info": "commands.info", "compile": "commands.compile", "run": "commands.run",
               "bench": "commands.bench", "demo": "commands.demo", "selftest": "selftest",
               "cache": "commands.cache", "compare": "commands.compare", "batch": "commands.batch",
               "shim": "commands.shim"}


class UsageError(Exception):
    """Bad command-line arguments found by a subcommand's handler (exit code 2)."""


def build_parser() -> argparse.ArgumentParser:
    """The ``accel`` parser with every subcommand registered."""
    from . import __version__

    parser = argparse.ArgumentParser(prog="accel", description="accel: one API for edge AI accelerators.")
    parser.add_argument("--version", action="version", version=f"accel {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in SUBCOMMANDS.values():
        sub = importlib.import_module(f"{__package__}.{module}").register(subparsers)
        sub.set_defaults(command_parser=sub)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    """Runs ``accel`` with ``argv`` (default: the process's arguments); returns the exit code."""
    try:
        parser = build_parser()
    except ImportError as e:
        # The package is there but its core is not: say what to try rather than print a traceback.
        print(f"accel: cannot load the accel package: {e} (ACCEL_FRONTEND=cffi selects the other front-end)",
              file=sys.stderr)
        return 1
    args = parser.parse_args(argv)
    try:
        code = int(args.handler(args))
        sys.stdout.flush()  # here, so that a reader gone before the last write is seen below, not at exit
        return code
    except BrokenPipeError:
        return _reader_gone()
    except UsageError as e:
        args.command_parser.error(str(e))  # prints the usage and exits 2
        raise AssertionError("unreachable") from e  # error() never returns
    except KeyboardInterrupt:
        print("accel: interrupted", file=sys.stderr)
        return 130


def _reader_gone() -> int:
    """Ends a command whose stdout reader has gone (``accel info | head``) quietly, as Unix tools do, with the exit
    code a shell gives a process ended by SIGPIPE (Python ignores the signal, so the write raised instead)."""
    # Python's idiom (docs of the signal module): stdout onto devnull, so that the interpreter's own flush at exit
    # does not fail again and print "Exception ignored ... BrokenPipeError".
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 128 + signal.SIGPIPE


if __name__ == "__main__":
    # Run as `python -m accel.cli`: use the package's module, whose UsageError the handlers raise.
    from accel.cli import main as _main

    sys.exit(_main())
