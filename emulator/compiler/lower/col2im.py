"""Col2Im at run time (FORMAT.md op col2im)."""
from __future__ import annotations

import numpy as np

from ..errors import CompileError
from ..op_params import Col2Im
from .context import F32, unsupported

_MAX_SPATIAL = 3  # the op's parameter slots (block, stride, dilation, pads: 3 each)


def _ints(ctx, node, i, what) -> list:
    a = ctx.const_input(node, i, what)
    if a is None:
        raise CompileError(f"{node.label}: input {what} is required")
    return [int(v) for v in np.asarray(a).reshape(-1)]


def lower_col2im(ctx, node):
    """Col2Im (opset 18+): float32 input [N, C*K, L], constant image_shape and block_shape of 1 to 3 spatial dims
    (K their block's element count), dilations, pads and strides: the blocks summed back into [N, C, image...],
    overlaps added in onnxruntime's order (channel, then block offset, then block position), so sums round as
    its do. With 3 spatial dims and a dilation, onnxruntime (1.32) misplaces blocks; the emulator follows the
    definition (as onnx's reference). Other dtypes, more than 3 spatial dims and shapes computed at run time are
    not supported."""
    x = ctx.input(node, 0)
    if x.dtype != F32:
        raise unsupported(node, f"dtype {x.dtype} of input '{x.name}' (float32 only)")
    image = _ints(ctx, node, 1, "image_shape")
    block = _ints(ctx, node, 2, "block_shape")
    s = len(image)
    if not 1 <= s <= _MAX_SPATIAL or len(block) != s:
        raise unsupported(node, f"image_shape {image} and block_shape {block} (1 to {_MAX_SPATIAL} spatial dims, "
                                f"the same number in both)")
    dil = [int(v) for v in node.attr("dilations", [1] * s)]
    strides = [int(v) for v in node.attr("strides", [1] * s)]
    pads = [int(v) for v in node.attr("pads", [0] * (2 * s))]
    if len(dil) != s or len(strides) != s or len(pads) != 2 * s:
        raise CompileError(f"{node.label}: dilations {dil}, strides {strides} and pads {pads} do not have {s} dims")
    if (min(image + block + dil + strides) < 1 or min(pads) < 0):
        raise CompileError(f"{node.label}: image_shape {image}, block_shape {block}, dilations {dil}, strides "
                           f"{strides} must be >= 1 and pads {pads} >= 0")
    if (max(block + dil) > 1 << 20 or any(strides[d] > image[d] or max(pads[d], pads[s + d]) > image[d]
                                          for d in range(s))):
        raise unsupported(node, f"block_shape {block} or dilations {dil} past 2^20, or strides {strides} or pads "
                                f"{pads} past image_shape {image} (the col2im op's limits)")
    grid = [(image[d] + pads[d] + pads[s + d] - dil[d] * (block[d] - 1) - 1) // strides[d] + 1 for d in range(s)]
    k, length = int(np.prod(block)), int(np.prod(grid))
    if len(x.shape) != 3 or min(grid) < 1 or x.shape[1] % k or x.shape[2] != length:
        raise CompileError(f"{node.label}: input '{x.name}' {tuple(x.shape)} is not [N, C*{k}, {length}] for "
                           f"image_shape {image} and block_shape {block}")
    shape = (x.shape[0], x.shape[1] // k, *image)
    y = ctx.define(ctx.output(node), F32, shape)

    def three(v):
        return list(v) + [0] * (_MAX_SPATIAL - len(v))

    ctx.emit("col2im", [x.name], [y], node.name,
             params=Col2Im(block=three(block), stride=three(strides), dilation=three(dil),
                           pad_begin=three(pads[:s]), pad_end=three(pads[s:])))


HANDLERS: dict = {"Col2Im": lower_col2im}
