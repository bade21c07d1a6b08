"""``accel compile``: an ONNX model to the emulator's ``.accm`` format with ``accel.compiler``, or a model of another
format its front end converts (a Vitis AI ``.xmodel``'s DPU part)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, List

from .._lazy_import import import_or_undo
from .._wording import counted
from ..cli import UsageError
from ..compile_cache import INT8_RULES
from .common import (add_extra_outputs_option, add_image_input_option, add_input_shape_option, existing_file,
                     image_inputs, input_shapes, number_arg, reports_failures, writable_path)
from .progress import while_running


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Adds ``compile`` to the ``accel`` command's subparsers (see accel.cli)."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "compile", help="compile an ONNX model (or a Vitis AI .xmodel) for the emulator (.accm)",
        description="Compiles an ONNX model to the emulator's .accm format, or with --check reports which of its "
                    "ops the compiler supports; a Vitis AI .xmodel (compiled, or the quantizer's) becomes the .accm "
                    "of its DPU part with the DPU's int8 rules. Exit code: 0 ok, 1 the model cannot be compiled "
                    "(the message names every unsupported op, or the op and node at fault), 2 usage error.")
    p.add_argument("model", metavar="MODEL.onnx", help="the ONNX model, or a .xmodel")
    p.add_argument("-o", "--output", metavar="MODEL.accm", help="the .accm file to write (required without --check)")
    p.add_argument("--check", action="store_true",
                   help="write nothing: print each op type the model uses, how many nodes use it and whether it is "
                        "supported (those inside If branches and Loop and Scan bodies in a table of their own), then "
                        "compile in memory (when the input shapes are known) to find what else is "
                        "not; exit 1 when something is missing")
    add_input_shape_option(p)
    p.add_argument("--int8", default=None, choices=INT8_RULES,
                   help="the integer arithmetic of a quantized model's int8 ops: 'ort' (onnxruntime's CPU "
                        "kernels, the default for ONNX), 'dpu' (the Vitis AI DPU's fix-point rules: power-of-two "
                        "scales; a .xmodel's) or 'bpu' (the Horizon BPU's integer multipliers); the device that "
                        "loads the model must use the same (emu:int8=...)")
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
    front = _front_end(src)
    if front is not None:
        return _convert(src, front, args)
    args.int8 = args.int8 or "ort"
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
    print(f"{dst}: {compiled(s)}")
    return 0


def compiled(s: Any) -> str:
    """What a compiled file holds, from the compiler's summary ``s``."""
    return (f"{counted(s['nodes'], 'node')}, {counted(s['tensors'], 'tensor')}, "
            f"{counted(s['weight_bytes'], 'weight byte')}")


def _front_end(src: Any) -> Any:
    """The front end that converts ``src`` to .accm when it is not ONNX (which the compiler reads itself, with
    --check and --fold-limit), else None."""
    from .. import front_ends
    from ..front_ends.onnx import ONNX

    front = front_ends.for_file("accm", src)
    return None if front is None or front is ONNX else front


def _convert(src: Any, front: Any, args: argparse.Namespace) -> int:
    """A model of another format through its front end: the .accm it loads on the emulator, written."""
    with import_or_undo():
        from ..compiler import write_file
    from .. import front_ends
    from ..front_ends.front_end import LoadRequest

    for flag, value in (("--check", args.check or None), ("--fold-limit", args.fold_limit)):
        if value is not None:
            raise UsageError(f"{flag} applies to ONNX models; {str(src)!r} is a {front.name} model")
    given = {"input_shapes": input_shapes(args.input_shape), "extra_outputs": args.extra_outputs,
             "image_inputs": image_inputs(args.image_input)}
    front_ends.check_options(front, repr(str(src)), given)
    if args.output is None:
        raise UsageError("-o MODEL.accm is required")
    dst = writable_path("-o", args.output)
    made: List[bytes] = []
    request = LoadRequest(Path(src).read_bytes(), repr(str(src)), str(src), None, args.extra_outputs, None,
                          args.int8 or front.int8_rules or "ort")
    with while_running(f"converting {Path(src).name}", sys.stderr):
        front.load(request, made.append)
    s = write_file(made[0], dst)
    print(f"{dst}: {compiled(s)} (from a "
          f"{front.name} model; load it on emu:int8={request.int8_rules})")
    return 0


def _check(src: Any, args: argparse.Namespace, limit: int) -> int:
    """``--check``: the coverage report, then a compile in memory; 1 if either finds something unsupported."""
    with import_or_undo():
        from ..compiler import CompileError, InputShapeError, compile_model, coverage

    rows = coverage.of_model(src)
    print(coverage.report(rows))
    inside = coverage.of_subgraphs(src)
    if inside:
        # Not the exit code's business: a branch an If does not take is never compiled; the compile below is.
        print("\ninside subgraphs (If branches, Loop and Scan bodies; an If decided at compile time keeps one branch):")
        print(coverage.report(inside))
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
