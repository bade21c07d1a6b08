"""``accel compile``: an ONNX model to the emulator's ``.accm`` format with ``accel.compiler``."""
from __future__ import annotations

import argparse
from typing import Any

from .common import add_input_shape_option, existing_file, input_shapes, reports_failures, writable_path


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Adds ``compile`` to the ``accel`` command's subparsers (see accel.cli)."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "compile", help="compile an ONNX model for the emulator (.accm)",
        description="Compiles an ONNX model to the emulator's .accm format. Exit code: 0 ok, 1 the model "
                    "cannot be compiled (the message names the op and the node), 2 usage error.")
    p.add_argument("model", metavar="MODEL.onnx", help="the ONNX model")
    p.add_argument("-o", "--output", required=True, metavar="MODEL.accm", help="the .accm file to write")
    add_input_shape_option(p)
    # The choices are accel.compiler.INT8_RULES, spelled out: the compiler (and onnx) load only when it runs.
    p.add_argument("--int8", default="ort", choices=("ort", "dpu", "bpu"),
                   help="the integer arithmetic of a quantized model's int8 ops: 'ort' (onnxruntime's CPU "
                        "kernels, the default), 'dpu' (the Vitis AI DPU's fix-point rules: power-of-two "
                        "scales) or 'bpu' (the Horizon BPU's integer multipliers); the device that loads the "
                        "model must use the same (emu:int8=...)")
    p.add_argument("--fold-limit", type=_mib, default=None, metavar="MIB",
                   help="the most memory folding one constant node may take, in MiB (default 256): a model "
                        "whose constants would need more is refused, naming the node")
    p.set_defaults(handler=command)
    return p


def _mib(text: str) -> int:
    try:
        mib = float(text)
    except ValueError:
        mib = -1.0
    if not mib >= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size in MiB (a number >= 0)")
    return int(mib * (1 << 20))


@reports_failures("compile")
def command(args: argparse.Namespace) -> int:
    """``accel compile``: compiles, writes the file, prints its summary; returns the exit code."""
    from ..compiler import FOLD_LIMIT_BYTES, compile_file

    src = existing_file("MODEL", args.model)
    dst = writable_path("-o", args.output)
    limit = FOLD_LIMIT_BYTES if args.fold_limit is None else args.fold_limit
    s = compile_file(src, dst, input_shapes(args.input_shape), args.int8, limit)
    print(f"{dst}: {s['nodes']} nodes, {s['tensors']} tensors, {s['weight_bytes']} weight bytes")
    return 0
