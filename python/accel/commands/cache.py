"""``accel cache info|clear``: the on-disk cache of ONNX models compiled for the emulator
(:mod:`accel.compile_cache`)."""
from __future__ import annotations

import argparse
import json
import time
from typing import Any

from .._wording import counted
from .common import reports_failures


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Adds ``cache`` to the ``accel`` command's subparsers (see accel.cli)."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "cache", help="show or empty the compile cache",
        description="The cache of ONNX models compiled for the emulator: 'info' prints its folder, entries, size and "
                    "limit ($ACCEL_CACHE_DIR, $ACCEL_CACHE_SIZE); 'clear' removes every entry (only files accel "
                    "wrote: others are left alone).")
    p.add_argument("action", choices=("info", "clear"), help="what to do")
    p.add_argument("--json", action="store_true", help="info: print JSON")
    p.set_defaults(handler=command)
    return p


@reports_failures("cache")
def command(args: argparse.Namespace) -> int:
    from .. import compile_cache

    if args.action == "clear":
        folder = compile_cache.cache_dir()
        removed = compile_cache.clear()
        print(f"{folder}: removed {_files(removed)}{_left_alone(compile_cache.info())}")
        return 0
    i = compile_cache.info()
    if args.json:
        print(json.dumps(i))
    else:
        print(f"folder:  {i['folder']}\nentries: {i['entries']}\nsize:    {_mib(i['bytes'])} of "
              f"{_mib(i['limit_bytes'])} (ACCEL_CACHE_SIZE; least recently used entries go first)")
        if i["other_files"]:
            print(f"others:  {_files(i['other_files'])} accel did not write (left alone)")
        if i["not_used_because"]:
            print(f"not used: {i['not_used_because']}; models are compiled without it")
        models: Any = i["models"]
        for m in models:  # most recently used first: the last to go
            used = time.strftime("%Y-%m-%d %H:%M", time.localtime(m["last_used"]))
            print(f"  {_mib(m['bytes']):>10}  used {used}  {m['model'] or '(written by an older accel: unnamed)'}")
    return 0


def _left_alone(i: Any) -> str:
    return f"; left alone {_files(i['other_files'])} accel did not write" if i["other_files"] else ""


def _files(n: Any) -> str:
    return counted(n, "file")


def _mib(n: Any) -> str:
    return f"{int(n) / (1 << 20):.1f} MiB"
