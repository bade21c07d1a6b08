"""Fuzzes the .xmodel reader and the DPU front end (accel.compiler.xir), and what they hand the compiler (atheris).

    python tests/fuzz/fuzz_xmodel.py [libFuzzer flags] CORPUS_DIR [SEED_DIR...]

Each input is a serialized XIR graph, checked by fuzz_check.check_xmodel. As for ONNX, half of the mutations are
made on the parsed graph (attribute values, tensor dims and fix points, op types, arguments, the register), the
rest on the bytes. Run by ci/fuzz.sh on seeds that tests/fuzz/xmodel_seeds.py writes; inputs that fail become
files in tests/fuzz/regressions/xmodel/, which tests/python/emulator/test_fuzz_regressions.py replays.
"""
from __future__ import annotations

import os
import random
import sys

import atheris

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
with atheris.instrument_imports(include=["accel", "fuzz_check"]):
    from fuzz_check import check_xmodel
import structural

from accel.compiler.xir import schema

_TYPES = ["conv2d-fix", "depthwise-conv2d-fix", "pool-fix", "eltwise-fix", "concat-fix", "reshape-fix",
          "upsample-fix", "hard-sigmoid-fix", "upload", "download", "const-fix", "data-fix", "transposed-conv2d-fix",
          # the quantizer's (fold.py)
          "fix", "data", "const", "conv2d", "depthwise-conv2d", "relu", "leaky-relu", "maxpool2d", "avgpool2d", "mul",
          "add", "hard-sigmoid", "concat", "reshape", "softmax"]
_INTS = [-(1 << 31), -129, -2, -1, 0, 1, 2, 3, 7, 8, 31, 64, 255, 1 << 20, (1 << 31) - 1]


def _mutate_attr(value, rng: random.Random) -> None:
    kind = value.WhichOneof("value")
    if kind == "int32_value":
        value.int32_value = rng.choice(_INTS)
    elif kind == "int32_vec_value" and value.int32_vec_value.value:
        vec = value.int32_vec_value.value
        if rng.random() < 0.3:
            vec.append(rng.choice(_INTS))
        else:
            vec[rng.randrange(len(vec))] = rng.choice(_INTS)
    elif kind == "string_value":
        value.string_value = rng.choice(["", "MAX", "AVG", "ADD", "MUL", "RELU", "LEAKYRELU", "NEAREST", "DPU", "x"])
    elif kind == "bytes_value":
        value.bytes_value.value = value.bytes_value.value[:rng.randrange(len(value.bytes_value.value) + 1)]
    else:
        value.int32_value = rng.choice(_INTS)  # another kind than the reader expects


def _mutate_graph(g, rng: random.Random) -> None:
    choice = rng.randrange(6)
    if not g.op_node:
        return
    op = rng.choice(g.op_node)
    if choice == 0 and op.op_attr:  # an op attribute
        _mutate_attr(op.op_attr[rng.choice(list(op.op_attr))], rng)
    elif choice == 1 and op.output_tensor.tensor_attr:  # a tensor attribute (fix_point, ddr_addr, reg_id)
        _mutate_attr(op.output_tensor.tensor_attr[rng.choice(list(op.output_tensor.tensor_attr))], rng)
    elif choice == 2 and op.output_tensor.tensor_dim:  # a dim
        dims = op.output_tensor.tensor_dim
        dims[rng.randrange(len(dims))] = rng.choice([0, 1, 2, 3, 7, 1 << 20, (1 << 32) - 1])
    elif choice == 3:  # an op type
        op.op_type = rng.choice(_TYPES)
    elif choice == 4 and op.args:  # an argument's source
        arg = rng.choice(op.args)
        names = [o.op_name for o in g.op_node] + ["", "nowhere"]
        if arg.arg_ops:
            arg.arg_ops[rng.randrange(len(arg.arg_ops))] = rng.choice(names)
        else:
            arg.arg_ops.append(rng.choice(names))
    elif choice == 5:  # a subgraph attribute (device, dpu_name, the register)
        subs = [g.subg_root]
        while subs and rng.random() < 0.7 and subs[-1].subg_child:
            subs.append(rng.choice(subs[-1].subg_child))
        attrs = subs[-1].subg_attr
        if attrs:
            _mutate_attr(attrs[rng.choice(list(attrs))], rng)


def _parse(data: bytes):
    g = schema.Graph()
    g.ParseFromString(data)
    return g


custom_mutator = structural.mutator(_parse, _mutate_graph)


def main() -> None:
    atheris.Setup(sys.argv, check_xmodel, custom_mutator=custom_mutator)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
