"""The fuzzers' mutator for protobuf inputs (an ONNX model, an XIR graph): most byte-level mutations of a protobuf
only make it unparsable, so half of the mutations are made on the parsed message (1 to 3 edits by the fuzzer's own
`edit(message, rng)`), the rest on the bytes (atheris)."""
from __future__ import annotations

import random
from typing import Any, Callable

import atheris


def mutator(parse: Callable[[bytes], Any], edit: Callable[[Any, random.Random], None]) -> Callable[[bytes, int, int],
                                                                                                     bytes]:
    """A libFuzzer custom mutator over messages that `parse` reads and `edit` changes in place."""

    def mutate(data: bytes, max_size: int, seed: int) -> bytes:
        rng = random.Random(seed)
        if rng.random() < 0.5:
            try:
                message = parse(data)
            except Exception:  # not a message (any more): mutate its bytes instead
                return atheris.Mutate(data, max_size)
            try:
                for _ in range(rng.randint(1, 3)):
                    edit(message, rng)
                out = message.SerializeToString()
            except Exception:  # a value protobuf refuses (out of range, not UTF-8): mutate the bytes
                return atheris.Mutate(data, max_size)
            return out if len(out) <= max_size else data
        return atheris.Mutate(data, max_size)

    return mutate
