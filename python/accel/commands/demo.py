"""``accel demo``: ``accel-demo`` (:mod:`accel.demo`) as a verb of the ``accel`` command."""
from __future__ import annotations

import argparse
from typing import Any

from .. import demo


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Adds ``demo`` to the ``accel`` command's subparsers (see accel.cli)."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "demo", help="compile and run the bundled CNN on the emulator (as accel-demo)", description=demo.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    demo.add_arguments(p)
    p.set_defaults(handler=demo.run)
    return p
