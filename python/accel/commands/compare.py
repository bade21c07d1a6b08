"""``accel compare``: two models run on the same inputs, compared tensor by tensor (which layer goes wrong)."""
from __future__ import annotations

import argparse
import sys
from typing import Any, List

from ..cli import UsageError
from ..compile_cache import INT8_RULES
from ..comparison.plot import require_matplotlib
from .common import (add_device_option, add_input_shape_option, existing_file, input_shapes, number_arg,
                     reports_failures, writable_path)
from .run import Picture, read_inputs

DEFAULT_THRESHOLD = 0.99


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Adds ``compare`` to the ``accel`` command's subparsers (see accel.cli)."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "compare", help="run two models on the same inputs and compare them tensor by tensor",
        description="Runs models A and B on the same inputs (ONNX on the emulator with every intermediate "
                    "tensor; compiled models: their outputs) and prints, tensor by tensor in A's graph order, "
                    "how close they are: cosine similarity, max and mean absolute error, and for quantized "
                    "tensors how many integers differ and by how many steps. B may be a run saved by "
                    "`accel run --save` (its inputs are then A's). The last line names the first tensor "
                    "whose cosine is below --threshold. Exit code: 0 (below the threshold or not), 1 failure, "
                    "2 usage error.")
    p.add_argument("a", metavar="A", help="model A: .onnx (emulator) or compiled (.accm, .bin, .hbm, .xmodel)")
    p.add_argument("b", metavar="B", help="model B as A, or a run record .npz (accel run --save)")
    p.add_argument("--input", action="append", default=[], metavar="[NAME=]FILE.npy",
                   help="an input: FILE.npy for A's inputs in order, NAME=FILE.npy by name (repeatable)")
    p.add_argument("--random", type=number_arg(int, 1), metavar="N",
                   help="run N random input sets (floats uniform in [0, 1), token ids and other indices valid for "
                        "both models) instead, one at a time (memory of one set); the default when no --input is "
                        "given and B is a model: 1")
    p.add_argument("--seed", type=number_arg(int, 0), default=0, metavar="S",
                   help="the random inputs' seed, an integer >= 0 (default 0)")
    add_device_option(p)
    p.add_argument("--device-b", metavar="URI", help="the device B runs on (default: --device)")
    p.add_argument("--int8", choices=INT8_RULES,
                   help="run the ONNX models on the emulator with these int8 rules (emu:int8=...)")
    p.add_argument("--threshold", type=number_arg(float, -1.0, 1.0), default=DEFAULT_THRESHOLD, metavar="T",
                   help=f"flag tensors whose cosine is below T, in [-1, 1] (default {DEFAULT_THRESHOLD:g})")
    p.add_argument("--json", metavar="FILE.json", help="also write the rows as JSON")
    p.add_argument("--plot", metavar="FILE.png", help="also plot the cosine per tensor (needs matplotlib)")
    add_input_shape_option(p)
    p.set_defaults(handler=command)
    return p


def check_usage(args: argparse.Namespace) -> None:
    if args.input and args.random is not None:
        raise UsageError("give --input or --random, not both")


@reports_failures("compare")
def command(args: argparse.Namespace) -> int:
    """``accel compare``: runs both sides, prints the table and the first tensor below the threshold."""
    import accel

    check_usage(args)
    existing_file("A", args.a)
    existing_file("B", args.b)
    json_path = writable_path("--json", args.json) if args.json else None
    plot_path = writable_path("--plot", args.plot) if args.plot else None
    read = read_inputs(args.input)
    for value, (_, array) in zip(args.input, read):
        if isinstance(array, Picture):  # its frame depends on each side's image input, which compare does not set
            raise UsageError(f"--input {value!r}: accel compare takes .npy arrays, not pictures (accel run MODEL "
                             f"--input PICTURE --save run.npz, then compare against that run)")
    given: List[Any] = [array if name is None else (name, array) for name, array in read]
    if plot_path is not None:
        try:  # said before anything runs, rather than after a comparison that may take a while
            require_matplotlib()
        except ImportError as e:
            print(f"accel compare: error: --plot: {e}", file=sys.stderr)
            return 1
    result = accel.compare(args.a, args.b, given or None, random=args.random, seed=args.seed,
                           device=args.device, device_b=args.device_b, int8=args.int8,
                           input_shapes=input_shapes(args.input_shape), threshold=args.threshold)
    print(result.table())
    if json_path is not None:
        result.to_json(json_path)
        print(f"rows saved to {json_path}")
    if plot_path is not None:
        result.plot(plot_path)
        print(f"plot saved to {plot_path}")
    print(result.summary())
    return 0
