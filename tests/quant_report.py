"""How far apart two outputs of a quantized model are, in the unit that matters for it: quantization steps
(LSB) for integer outputs and for float outputs whose scale is known, else the absolute difference.

    stats = lsb_diff(got, want, output_scales(path).get("logits"))
    print(format_row("resnet18", "logits", stats))   # resnet18/logits: 1000 elements, 1000 identical, max 0 LSB
    assert stats["max"] <= 1, stats

An int8 model run by two engines that follow the same rules gives the same integers; one rounding step
apart is a different rounding rule somewhere, more is a different computation. A float difference alone
cannot tell these apart, which is why the float outputs are measured in their last DequantizeLinear's scale.
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, Optional, Union

import numpy as np
import onnx
from onnx import numpy_helper

Stats = Dict[str, Union[int, float, str]]


def lsb_diff(got: np.ndarray, want: np.ndarray, info: Optional[float] = None) -> Stats:
    """Compares `got` with `want` (same shape and dtype): `elements`, `identical` (equal elements), `max` (the
    largest |got - want|) and its `unit`: "LSB" for integer arrays (exact, as int64: no wrap-around of
    uint8), "LSB" for float arrays when `info` gives their quantization scale (|got - want| / scale), "abs"
    otherwise; `max_abs` is the difference in the arrays' own units."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        raise ValueError(f"cannot compare {got.dtype}{list(got.shape)} with {want.dtype}{list(want.shape)}")
    stats: Stats = {"elements": int(got.size), "identical": int(np.count_nonzero(got == want))}
    if np.issubdtype(got.dtype, np.integer):
        diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
        top = int(diff.max(initial=0))
        stats.update(max=top, unit="LSB", max_abs=top)
        return stats
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    top_abs = float(diff.max(initial=0.0))
    if info is not None:
        stats.update(max=top_abs / info, unit="LSB", scale=float(info), max_abs=top_abs)
    else:
        stats.update(max=top_abs, unit="abs", max_abs=top_abs)
    return stats


def format_row(model_name: str, output_name: str, stats: Stats) -> str:
    """One line for a test's output or a report: "resnet18/logits: 1000 elements, 1000 identical, max 0 LSB"
    (a float's LSB count with up to 3 significant digits, the scale in parentheses when one was given)."""
    top = stats["max"]
    top_text = str(top) if isinstance(top, int) else f"{top:.3g}"
    row = f"{model_name}/{output_name}: {stats['elements']} elements, {stats['identical']} identical, " \
          f"max {top_text} {stats['unit']}"
    return row + (f" (scale {stats['scale']:.3g})" if "scale" in stats else "")


def output_scales(path: Union[str, Path]) -> Dict[str, float]:
    """The scale of each graph output of the model at `path` made by a DequantizeLinear with one constant
    (per-tensor) scale: the `info` lsb_diff takes for that output."""
    graph = onnx.load(str(path)).graph
    consts = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    consts.update({n.output[0]: numpy_helper.to_array(n.attribute[0].t) for n in graph.node
                   if n.op_type == "Constant" and n.attribute[0].name == "value"})
    outputs = {o.name for o in graph.output}
    scales = {}
    for node in graph.node:
        if node.op_type == "DequantizeLinear" and node.output[0] in outputs and node.input[1] in consts:
            scale = consts[node.input[1]]
            if scale.size == 1:
                scales[node.output[0]] = float(scale.reshape(()))
    return scales
