"""``accel shim VENDOR [--device URI] [--force] [--compare] -- python app.py ARGS``: a script written for a vendor's
(Vitis AI's xir/vart, Horizon's pyeasy_dnn and hbm_runtime, onnxruntime) run unchanged on accel (accel.shims)."""
from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> argparse.ArgumentParser:
    from ..shims import launcher

    p = subparsers.add_parser("shim", help="run a script written for a vendor's Python API on accel",
                              description="Runs COMMAND with the vendor's Python modules (xir and vart; hobot_dnn "
                                          "and hbm_runtime; onnxruntime) provided by accel, on the emulator unless "
                                          "--device says otherwise. See docs/shims.md.")
    launcher.add_arguments(p)
    p.set_defaults(handler=lambda args: _run(args, p))
    parser: argparse.ArgumentParser = p  # subparsers is untyped
    return parser


def _run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from ..shims import launcher

    return launcher.run_args(launcher.resolve(args, parser))
