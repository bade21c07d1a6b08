"""ReverseSequence at run time (FORMAT.md op reversesequence). All-constant nodes never get here: the driver
(lower/__init__.py) folds them first, checking their lengths (folding._check_positions)."""
from __future__ import annotations

import numpy as np

from ..errors import CompileError
from ..op_params import ReverseSequence
from .context import normalize_axis


def lower_reverse_sequence(ctx, node):
    """ReverseSequence (opset 10+): X of any dtype, rank >= 2, batch_axis and time_axis 0 and 1 (default 1 and
    0; negative counts from the end), sequence_lens int64 [batch], constant or computed at run time: for each
    batch b the first sequence_lens[b] steps along the time axis are reversed, the others copied. A length
    outside 0..T (T the time axis' size) is a CompileError when constant and fails the run otherwise (naming
    it), as onnxruntime fails it."""
    x, lens = ctx.input(node, 0), ctx.input(node, 1)
    rank = len(x.shape)
    if rank < 2:
        raise CompileError(f"{node.label}: input '{x.name}' has rank {rank}, ReverseSequence takes rank >= 2")
    b = normalize_axis(node, node.attr("batch_axis", 1), rank, "batch_axis")
    t = normalize_axis(node, node.attr("time_axis", 0), rank, "time_axis")
    if {b, t} != {0, 1}:
        raise CompileError(f"{node.label}: batch_axis {b} and time_axis {t} must be 0 and 1")
    if lens.dtype != np.dtype(np.int64) or tuple(lens.shape) != (x.shape[b],):
        raise CompileError(f"{node.label}: sequence_lens '{lens.name}' {lens.dtype} {tuple(lens.shape)} are not "
                           f"int64 [{x.shape[b]}]")
    if lens.is_const:
        v = np.asarray(lens.const)
        bad = np.flatnonzero((v < 0) | (v > x.shape[t]))
        if bad.size:
            raise CompileError(f"{node.label}: sequence length {int(v[bad[0]])} at [{int(bad[0])}] of input 1 "
                               f"('{lens.name}') is outside 0..{x.shape[t]} (input 0 ('{x.name}') has "
                               f"{x.shape[t]} along axis {t})")
    y = ctx.define(ctx.output(node), x.dtype, tuple(x.shape))
    ctx.emit("reversesequence", [x.name, lens.name], [y], node.name,
             params=ReverseSequence(batch_axis=b, time_axis=t))


HANDLERS: dict = {"ReverseSequence": lower_reverse_sequence}
