"""``python -m accel.models tiny_cnn [FOLDER]``: writes the shipped CNN compiled for the emulator and its example
input into FOLDER (default: here), for the C examples (docs/c-api.md)."""
from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from . import write_tiny_cnn


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m accel.models", description=__doc__.splitlines()[0])
    ap.add_argument("model", choices=("tiny_cnn",), help="the model")
    ap.add_argument("folder", nargs="?", default=".", help="where to write (default: the current folder)")
    args = ap.parse_args(argv)
    for path in write_tiny_cnn(args.folder).values():
        print(f"wrote {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
