"""python -m accel.compiler model.onnx -o model.accm [--input-shape name=1,3,224,224 ...]"""

from __future__ import annotations

import argparse
import os
import sys

from . import CompileError, InputShapeError, compile_file


def _shape_arg(text: str):
    name, sep, dims = text.rpartition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected name=d0,d1,..., got '{text}'")
    try:
        shape = tuple(int(d) for d in dims.replace("x", ",").split(",") if d.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad dims in '{text}'") from None
    return name, shape


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m accel.compiler",
                                 description="Compile an ONNX model to the emulator's .accm format.")
    ap.add_argument("model", help="the ONNX model (.onnx)")
    ap.add_argument("-o", "--output", help="the .accm file to write (default: MODEL with .accm)")
    ap.add_argument("--input-shape", action="append", default=[], type=_shape_arg,
                    metavar="NAME=D0,D1,...", help="fix an input's shape (repeatable)")
    args = ap.parse_args(argv)
    dst = args.output or os.path.splitext(args.model)[0] + ".accm"
    shapes = dict(args.input_shape) or None
    try:
        s = compile_file(args.model, dst, shapes)
    except CompileError as e:
        print(f"error: {e.command_line() if isinstance(e, InputShapeError) else e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"{dst}: {s['nodes']} nodes, {s['tensors']} tensors, {s['weight_bytes']} weight bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
