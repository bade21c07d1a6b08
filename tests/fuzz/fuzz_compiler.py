"""Fuzzes the model compiler's ONNX input, and the emulator with what the compiler makes (atheris).

    python tests/fuzz/fuzz_compiler.py [libFuzzer flags] CORPUS_DIR [SEED_DIR...]

Each input is an ONNX model (bytes), checked by fuzz_check.check_model. Most byte-level mutations of a
protobuf only make it unparsable, so half of the mutations are made on the parsed model instead
(attributes, dims, op types, wiring): those reach the compiler's checks. Run by ci/fuzz.sh; inputs that
fail become files in tests/fuzz/regressions/onnx/, which tests/python/emulator/test_fuzz_regressions.py replays
in every test run.
"""
from __future__ import annotations

import os
import random
import sys

import atheris
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
with atheris.instrument_imports(include=["accel", "fuzz_check"]):
    from fuzz_check import check_model
import structural

from accel import compiler


def test_one_input(data: bytes) -> None:
    check_model(data)


# ---- structural mutations ----------------------------------------------------------------------

_OPS = sorted(compiler.SUPPORTED_OPS)


def _mutate_proto(m: onnx.ModelProto, rng: random.Random) -> None:
    g = m.graph
    choice = rng.randrange(7)
    if choice == 0 and g.node:  # an attribute's value
        n = rng.choice(g.node)
        if n.attribute:
            a = rng.choice(n.attribute)
            if a.ints:
                a.ints[rng.randrange(len(a.ints))] = rng.choice([-2, -1, 0, 1, 2, 3, 7, 1 << 31, -(1 << 40)])
            elif a.type == onnx.AttributeProto.INT:
                a.i = rng.choice([-1, 0, 1, 2, 5, 1 << 33])
            elif a.type == onnx.AttributeProto.FLOAT:
                a.f = rng.choice([0.0, -1.0, 1e30, float("nan"), float("inf")])
            elif a.type == onnx.AttributeProto.STRING:
                a.s = rng.choice([b"", b"nearest", b"linear", b"cubic", b"SAME_UPPER", b"VALID", b"x"])
    elif choice == 1:  # a dim of an input or output
        vis = list(g.input) + list(g.output)
        if vis:
            dims = rng.choice(vis).type.tensor_type.shape.dim
            if dims:
                d = dims[rng.randrange(len(dims))]
                d.dim_value = rng.choice([0, 1, 2, 3, 1 << 20, 1 << 40])
    elif choice == 2 and g.node:  # an op type
        rng.choice(g.node).op_type = rng.choice(_OPS)
    elif choice == 3 and g.node:  # wiring: an input replaced by another tensor's name
        names = [i.name for i in g.input] + [o for n in g.node for o in n.output] + [t.name for t in g.initializer]
        n = rng.choice(g.node)
        if n.input and names:
            n.input[rng.randrange(len(n.input))] = rng.choice(names + [""])
    elif choice == 4 and len(g.node) > 1:  # a node dropped
        del g.node[rng.randrange(len(g.node))]
    elif choice == 5 and g.initializer:  # an initializer's shape
        t = rng.choice(g.initializer)
        if t.dims:
            t.dims[rng.randrange(len(t.dims))] = rng.choice([0, 1, 2, 3, 1 << 30])
    elif choice == 6 and g.node:  # an attribute removed
        n = rng.choice(g.node)
        if n.attribute:
            del n.attribute[rng.randrange(len(n.attribute))]


custom_mutator = structural.mutator(onnx.ModelProto.FromString, _mutate_proto)


def main() -> None:
    atheris.Setup(sys.argv, test_one_input, custom_mutator=custom_mutator)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
