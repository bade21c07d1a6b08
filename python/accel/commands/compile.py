"""``accel compile``: an ONNX model to the emulator's ``.accm`` format with ``accel.compiler``."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .._lazy_import import import_or_undo
from ..cli import UsageError
from ..compile_cache import INT8_RULES
from .common import (add_extra_outputs_option, add_image_input_option, add_input_shape_option, existing_file,
                     image_inputs, input_shapes, number_arg, reports_failures, writable_path)
from .progress import while_running


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Adds ``compile`` to the ``accel`` command's subparsers (see accel.cli)."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "compile", help="compile an ONNX model for the emulator (.accm)",
        description="Compiles an ONNX model to the emulator's .accm format, or with --check reports which of its "
                    "ops the compiler supports. Exit code: 0 ok, 1 the model cannot be compiled (the message names "
                    "every unsupported op, or the op and node at fault), 2 usage error.")
    p.add_argument("model", metavar="MODEL.onnx", help="the ONNX model")
    p.add_argument("-o", "--output", metavar="MODEL.accm", help="the .accm file to write (required without --check)")
    p.add_argument("--check", action="store_true",
                   help="write nothing: print each op type the model uses, how many nodes use it and whether it is "
                        "supported, then compile in memory (when the input shapes are known) to find what else is "
                        "not; exit 1 when something is missing")
    add_input_shape_option(p)
    p.add_argument("--int8", default="ort", choices=INT8_RULES,
                   help="the integer arithmetic of a quantized model's int8 ops: 'ort' (onnxruntime's CPU "
                        "kernels, the default), 'dpu' (the Vitis AI DPU's fix-point rules: power-of-two "
                        "scales) or 'bpu' (the Horizon BPU's integer multipliers); the device that loads the "
                        "model must use the same (emu:int8=...)")
    p.add_argument("--fold-limit", type=_mib, default=None, metavar="MIB",
                   help="the most memory folding one constant node may take, in MiB (default 256): a model "
                        "whose constants would need more is refused, naming the node")
    add_extra_outputs_option(p)
    add_image_input_option(p)
    p.set_defaults(handler=command)
    return p


def _mib(text: str) -> int:
    # At most 2**40 MiB (a size past 2**63 bytes would overflow where it is used; 1e999 is inf).
    return int(_MIB_NUMBER(text) * (1 << 20))


_MIB_NUMBER = number_arg(float, 0, 2**40)


@reports_failures("compile")
def command(args: argparse.Namespace) -> int:
    """``accel compile``: compiles, writes the file, prints its summary; returns the exit code."""
    with import_or_undo():
        from ..compiler import FOLD_LIMIT_BYTES, compile_file

    src = existing_file("MODEL", args.model)
    limit = FOLD_LIMIT_BYTES if args.fold_limit is None else args.fold_limit
    if args.check:
        if args.output is not None:
            raise UsageError("--check writes nothing: leave out -o")
        return _check(src, args, limit)
    if args.output is None:
        raise UsageError("-o MODEL.accm is required (or --check)")
    dst = writable_path("-o", args.output)
    with while_running(f"compiling {Path(src).name}", sys.stderr):
        s = compile_file(src, dst, input_shapes(args.input_shape), args.int8, limit, args.extra_outputs,
                         image_inputs(args.image_input))
    print(f"{dst}: {s['nodes']} nodes, {s['tensors']} tensors, {s['weight_bytes']} weight bytes")
    return 0


def _check(src: Any, args: argparse.Namespace, limit: int) -> int:
    """``--check``: the coverage report, then a compile in memory; 1 if either finds something unsupported."""
    with import_or_undo():
        from ..compiler import CompileError, InputShapeError, compile_model, coverage

    rows = coverage.of_model(src)
    print(coverage.report(rows))
    if not all(u.supported for u in rows):
        return 1
    try:
        with while_running(f"compiling {Path(src).name}", sys.stderr):
            compile_model(src, input_shapes(args.input_shape), args.int8, limit, args.extra_outputs,
                          image_inputs(args.image_input))
    except InputShapeError as e:  # the ops are all there; what else holds needs the shapes
        print(f"not compiled: {e.command_line()}")
        return 0
    except CompileError as e:
        print(f"compiling it fails: {e}")
        return 1
    print("it compiles")
    return 0
