"""Runs one node test case on an emulator device and says how it went.

A case is compiled with accel.compiler (static input shapes from the case's arrays), loaded with
`Device.load`, run with `Model.run`, and its outputs compared with onnx's expected arrays the way onnx's
own backend runner does: same shape, same dtype, and |got - expected| <= atol + rtol * |expected|
elementwise (NaN matches NaN, an infinity only the same infinity), with the case's rtol and atol (every
current onnx node case uses onnx's defaults, rtol=1e-3 and atol=1e-7).

Parameters that onnx passes as graph inputs (a Conv weight, Resize scales, Slice starts, ...) must be
constants for the compiler: when it says an input "must be a constant", that input becomes an
initializer holding the case's array and the case is compiled again; the result lists those inputs.
When the value it names is computed inside the model (a function body's shape arithmetic, as the
_expanded cases of AffineGrid), the int64 graph inputs (the shape-carrying ones) become initializers one
at a time, in order, until it compiles or none is left.

Where onnxruntime and onnx's reference disagree, the emulator gives what onnxruntime gives (the numbers
users compare with): the cases in FOLLOW_ONNXRUNTIME are compared with onnxruntime's outputs for the same
model and inputs instead, each with why.

Outcomes:
  passed       every output matches.
  failed       a wrong number, shape or dtype; an error loading or running the compiled model; or a
               CompileError that is not a declaration (a valid onnx test model refused for another reason).
  unsupported  the compiler refused the model with a declaration: a CompileError saying what it does not
               support (op, attribute, mode, dtype), whether for the op under test or another op of the
               model; the message is the declaration.
  not run      the op under test is not in accel.compiler.SUPPORTED_OPS, nor refused by decision
               (accel.compiler.declined: those are compiled, and refused with the decision's reason).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import numpy_helper

import accel
from accel import compiler
from accel.compiler import declined

from .cases import Case

PASSED, FAILED, UNSUPPORTED, NOT_RUN = "passed", "failed", "unsupported", "not run"
OUTCOMES = (PASSED, FAILED, UNSUPPORTED, NOT_RUN)

_NEEDS_CONSTANT = re.compile(r"\('([^']+)'\) must be a constant|'([^']+)' computed at run time")
# How the compiler words a refusal of something valid in ONNX (lower.context.unsupported() and the dtype
# rules of emit.py and the lowering handlers).
_DECLARATION = re.compile(r"\bunsupported\b|\bnot supported\b|\bdoes not support\b|float32 only")


# case name -> why its expected outputs are onnxruntime's rather than the reference's.
FOLLOW_ONNXRUNTIME = {
    "test_resize_downsample_scales_linear_align_corners":
        "align_corners with scales: the reference divides by the unrounded resized length (2.4, giving "
        "3.142857), onnxruntime by the output size (2, giving 4.0)",
    "test_resize_downsample_scales_cubic_align_corners":
        "as the linear case: align_corners with scales 0.8 of 4 elements, the reference steps by 3/2.2 "
        "(2.395 at output 1), onnxruntime by 3/2 (2.5), the coordinates of a 2-element output",
    "test_maxunpool_export_with_output_shape":
        "an output_shape larger than the default: the reference places the indices (positions in the default 4x4 "
        "output) on that grid padded to 5x5, onnxruntime takes them as positions in the 5x5 output flattened",
}
# case name -> (atol, why) where the case's atol (1e-7) is below the reference's own rounding: values exactly 0
# that it computes as float noise. Compared with this atol instead (and the case's rtol).
LOOSER_ATOL = dict.fromkeys(
    ("test_dft_inverse", "test_dft_inverse_opset19"),
    (1e-5, "the inverse of a forward transform: values exactly 0 (accel gives 0.0) are float noise of up to 3.8e-6 "
           "in the reference; onnxruntime's differ from the reference by 1.9e-5"))


def onnxruntime_outputs(case: Case) -> list:
    """What onnxruntime computes for the case's model and inputs."""
    import onnxruntime as ort

    session = ort.InferenceSession(case.model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {i.name: a for i, a in zip(case.model.graph.input, case.inputs)}
    return session.run(None, feeds)


@dataclass(frozen=True)
class Result:
    case: Case
    outcome: str
    message: str = ""            # why it failed or what is unsupported; empty when passed
    max_error: float | None = None   # the largest |got - expected| over compared float outputs
    constants: tuple = ()        # graph inputs the compiler needed constant (made initializers)


def is_declaration(message: str) -> bool:
    """A CompileError message that declares something unsupported (rather than calling the model invalid)."""
    return bool(_DECLARATION.search(message))


def compile_case(case: Case):
    """-> (.accm bytes or None, the CompileError or None, the inputs made constant, the runtime feeds).

    The error is the compiler's last word when it refuses the model even with those inputs constant."""
    model = onnx.ModelProto()
    model.CopyFrom(case.model)
    feeds = {vi.name: value for vi, value in zip(model.graph.input, case.inputs)}
    # An empty tensor cannot be fed at run time (accel's dims are >= 1); it carries only a shape and a
    # dtype (CastLike's target, ReduceMean's "no axes"), so it is held constant from the start.
    constants = [name for name, v in feeds.items() if isinstance(v, np.ndarray) and v.size == 0]
    for name in constants:
        _make_constant(model, feeds, name)
    while True:
        shapes = {name: v.shape for name, v in feeds.items() if isinstance(v, np.ndarray)}
        try:
            return compiler.compile_model(model, shapes), None, tuple(constants), feeds
        except compiler.CompileError as e:
            m = _NEEDS_CONSTANT.search(str(e))
            if m is None:
                return None, e, tuple(constants), feeds
            # A tensor the compiler made from an input is named after it ('weight_float32', the float32 copy of
            # a float16 weight); one computed from inputs (an expanded function's Range limit, Pad pads) names
            # none: the integer inputs are the shape-like parameters it comes from.
            named = m.group(1) or m.group(2)
            names = ([named] if named in feeds else
                     [n for n in feeds if named.startswith(f"{n}_")] or
                     [n for n, v in feeds.items() if isinstance(v, np.ndarray) and v.dtype.kind in "iub"])
            names = [n for n in names if isinstance(feeds.get(n), np.ndarray)]
            if not names:
                return None, e, tuple(constants), feeds
            for name in names:
                _make_constant(model, feeds, name)
            constants.extend(names)


def _make_constant(model, feeds, name):
    # Kept in graph.input too (valid at every IR version): the compiler reads an initializer named like
    # an input as a constant.
    model.graph.initializer.append(numpy_helper.from_array(feeds.pop(name), name))


def compare(expected, got, rtol: float, atol: float):
    """-> (None or the first mismatch's description, the largest float error seen)."""
    if len(got) != len(expected):
        return f"{len(got)} outputs, expected {len(expected)}", None
    worst = None
    for i, (ref, out) in enumerate(zip(expected, got)):
        if not isinstance(ref, np.ndarray):
            return f"output {i}: expected a {type(ref).__name__}, got an array", worst
        if out.shape != ref.shape:
            return f"output {i}: shape {out.shape}, expected {ref.shape}", worst
        if out.dtype != ref.dtype:
            return f"output {i}: dtype {out.dtype}, expected {ref.dtype}", worst
        if ref.dtype.kind not in "fc":
            if not np.array_equal(out, ref):
                bad = np.argwhere(out != ref)
                return (f"output {i}: {len(bad)} of {ref.size} elements differ, first at "
                        f"{tuple(int(k) for k in bad[0])}"), worst
            continue
        close = np.isclose(out, ref, rtol=rtol, atol=atol, equal_nan=True)
        both = np.isfinite(out) & np.isfinite(ref)  # the error is measured where both are finite
        diff = np.abs(np.where(both, out, 0).astype(np.float64) - np.where(both, ref, 0))
        err = float(diff.max()) if diff.size else 0.0
        worst = err if worst is None else max(worst, err)
        if not close.all():
            bad = np.argwhere(~close)
            at = tuple(int(k) for k in bad[0])
            return (f"output {i}: {len(bad)} of {ref.size} elements differ, max abs error {err:.3g}; "
                    f"first at {at}: got {out[at]!r}, expected {ref[at]!r}"), worst
    return None, worst


def run_case(dev, case: Case) -> Result:
    """Compiles, loads and runs `case` on the device `dev` (an accel.Device on "emu")."""
    if case.op not in compiler.SUPPORTED_OPS and declined.why(case.op) is None:
        return Result(case, NOT_RUN, f"op {case.op} is not supported")
    try:
        data, error, constants, feeds = compile_case(case)
    except Exception as e:  # noqa: BLE001 - anything but a CompileError out of the compiler is a bug
        return Result(case, FAILED, f"compiler raised {type(e).__name__}: {e}")
    if error is not None:
        outcome = UNSUPPORTED if is_declaration(str(error)) else FAILED
        return Result(case, outcome, f"compile: {error}", constants=constants)
    try:
        model = dev.load(data)
    except Exception as e:  # noqa: BLE001
        return Result(case, FAILED, f"load: {type(e).__name__}: {e}", constants=constants)
    try:
        outs = model.run({t.name: feeds[t.name] for t in model.inputs})
        got = [np.array(o) for o in outs]  # copies: the views would keep device buffers alive
    except Exception as e:  # noqa: BLE001
        return Result(case, FAILED, f"run: {type(e).__name__}: {e}", constants=constants)
    expected = onnxruntime_outputs(case) if case.name in FOLLOW_ONNXRUNTIME else case.outputs
    atol = LOOSER_ATOL[case.name][0] if case.name in LOOSER_ATOL else case.atol
    mismatch, worst = compare(expected, got, case.rtol, atol)
    if mismatch:
        return Result(case, FAILED, mismatch, worst, constants)
    return Result(case, PASSED, "", worst, constants)


def run_all(cases, uri: str = "emu") -> list:
    """Every case's Result, on one device opened at `uri`."""
    with accel.open(uri) as dev:
        return [run_case(dev, c) for c in cases]
