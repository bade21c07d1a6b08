"""The ``compare`` check (``accel selftest --compare MODEL.onnx``): the device's outputs of the selftest's
inputs held against the emulator's, which runs the quantized ONNX model the device's model was made from
with the same integer rules (``emu:int8=dpu`` for a Vitis AI DPU, ``bpu`` for a Horizon BPU): how many
elements are identical and how many quantization steps (LSB) the others are apart. The report a user
attaches to a bug when a board disagrees with the emulator.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np

import accel
from accel.runtime.capabilities import describe_or_unknown

from .._wording import counted
from .framework import CheckFailed, Context, Findings

def default_rules(uri: str) -> str:
    """The rules of the device at ``uri``, as its driver says (an emulator URI's own ``int8=`` option, a board's
    own rules); "ort" where the driver does not say."""
    return describe_or_unknown(uri).int8_rules or "ort"


def _device_to_emulator(x: np.ndarray, info: accel.TensorInfo, target: accel.TensorInfo) -> np.ndarray:
    """A device input as the emulator model takes it: dequantized (exactly: the model's own quantizer
    gives back the same integers) where the emulator model takes floats, in its layout (NCHW for the
    device's NHWC)."""
    a = accel.dequantize(x, info) if info.quant is not None and target.dtype == np.float32 else np.asarray(x)
    if info.layout == "NHWC" and a.ndim == 4 and np.transpose(a, (0, 3, 1, 2)).shape == tuple(target.shape):
        a = np.transpose(a, (0, 3, 1, 2))
    return np.ascontiguousarray(a).astype(target.dtype, copy=False)


def _scale_zero(info: accel.TensorInfo, ndim: int) -> Tuple[np.ndarray, np.ndarray]:
    """Each element's scale and zero point of a quantized device tensor, broadcastable to its shape."""
    q = info.quant
    assert q is not None
    if q.type == "shift":
        assert q.shifts is not None
        scales = np.ldexp(1.0, -np.asarray(q.shifts, np.int64))
    else:
        scales = np.asarray(q.scales, np.float64)
    zeros = np.asarray(q.zero_points if q.zero_points is not None else [0] * scales.size, np.float64)
    if scales.size == 1 or q.axis is None:
        return scales.reshape(()), zeros.reshape(())
    shape = [1] * ndim
    shape[q.axis] = scales.size
    return scales.reshape(shape), zeros.reshape(shape)


def _steps(device: np.ndarray, info: accel.TensorInfo, emulated: np.ndarray) -> Dict[str, Any]:
    """Identical elements and the largest difference between a device output and the emulator's, in the
    device tensor's quantization steps (LSB) when it is quantized, else in its own units."""
    dev = np.asarray(device)
    emu = emulated
    if info.layout == "NHWC" and emu.ndim == 4 and np.transpose(emu, (0, 2, 3, 1)).shape == dev.shape:
        emu = np.transpose(emu, (0, 2, 3, 1))  # the emulator model keeps ONNX's NCHW
    if emu.shape != dev.shape:
        raise CheckFailed(f"output {info.name!r}: the device gives shape {dev.shape}, the emulator {emu.shape}")
    if info.quant is not None and emu.dtype == np.float32:
        scale, zero = _scale_zero(info, dev.ndim)  # the emulator's real values in the device's integers
        a, b, unit = dev.astype(np.float64), np.rint(emu.astype(np.float64) / scale + zero), "LSB"
    else:
        a, b, unit = dev.astype(np.float64), emu.astype(np.float64), "LSB" if info.quant is not None else ""
    diff = np.abs(a - b)
    return {"elements": int(diff.size), "identical": int(np.count_nonzero(diff == 0)),
            "max": float(diff.max()) if diff.size else 0.0, "unit": unit}


def check_compare(ctx: Context, f: Findings) -> None:
    """The reference outputs against the emulator's: --compare's ONNX model on emu:int8=<rules>, fed the
    same inputs (dequantized and in its layout where the device's are integers or NHWC)."""
    assert ctx.model is not None and ctx.inputs is not None and ctx.reference is not None
    assert ctx.compare_model is not None
    rules = ctx.compare_rules or default_rules(ctx.uri)
    with accel.open(f"emu:int8={rules}") as emu:
        model = emu.load(str(ctx.compare_model))
        dev_in, emu_in = list(ctx.model.inputs), list(model.inputs)
        if len(dev_in) != len(emu_in):
            raise CheckFailed(f"the device's model has {counted(len(dev_in), 'input')}, {ctx.compare_model.name} "
                              f"{len(emu_in)}")
        feeds = [_device_to_emulator(x, i, t) for x, i, t in zip(ctx.inputs, dev_in, _matched(dev_in, emu_in))]
        emulated = [np.asarray(o).copy() for o in model.run(feeds)]
        emu_out = list(model.outputs)
    dev_out = list(ctx.model.outputs)
    if len(dev_out) != len(emu_out):
        raise CheckFailed(f"the device's model has {counted(len(dev_out), 'output')}, {ctx.compare_model.name} "
                          f"{len(emu_out)}")
    order = [emu_out.index(t) for t in _matched(dev_out, emu_out)]
    rows: List[Dict[str, Any]] = []
    for out, info, k in zip(ctx.reference, dev_out, order):
        s = _steps(out, info, emulated[k])
        s["name"] = info.name
        rows.append(s)
        by = f"{s['max']:g} {s['unit']}".strip()
        f.note(f"output {info.name!r}: {counted(s['elements'], 'element')}, {s['identical']} identical, largest "
               f"difference {by}")
        f.expect(s["identical"] == s["elements"],
                 f"output {info.name!r}: {s['elements'] - s['identical']} of {s['elements']} elements differ from "
                 f"emu:int8={rules}, by up to {by}")
    f.data.update({"rules": rules, "onnx": str(ctx.compare_model), "outputs": rows})
    same = sum(r["identical"] for r in rows)
    total = sum(r["elements"] for r in rows)
    f.summary = f"against emu:int8={rules} ({ctx.compare_model.name}): {same} of {total} output elements identical"


def _matched(device: List[accel.TensorInfo], emulated: List[accel.TensorInfo]) -> List[accel.TensorInfo]:
    """The emulator model's tensor for each device tensor: the one of the same name, else the same position."""
    by_name: Dict[str, Optional[accel.TensorInfo]] = {t.name: t for t in emulated}
    if all(d.name in by_name for d in device):
        return [by_name[d.name] for d in device]  # type: ignore[misc]
    return emulated
