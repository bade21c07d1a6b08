"""DFT and STFT (lower/rewrites.py: products with constant cosine and sine matrices) against onnxruntime's FFT and
numpy's: real and complex inputs, every axis, one-sided, inverse, a dft_length that pads or cuts, STFT frames with
a constant or a runtime window; the one-sided inverse against numpy's irfft."""

import numpy as np
import pytest
from conftest import compile_error, onnx_model, run_ort
from onnx import helper

# The emulator's compiler and kernels (a board's toolchain compiles what it supports itself).
pytestmark = pytest.mark.emulator


def _run(dev, m, feeds):
    model = dev.load(m.SerializeToString())
    return [np.asarray(o) for o in model.run({t.name: feeds[t.name] for t in model.inputs})]


def _close(got, want, what):
    scale = float(np.abs(want).max())
    err = float(np.abs(got - want).max())
    print(f"{what}: max abs error {err:.3g} of an output scale {scale:.3g}")
    assert got.shape == want.shape and err <= 1e-5 * max(scale, 1.0)


@pytest.mark.parametrize("axis, complex_in, onesided, inverse, length", [
    (1, False, False, False, None), (2, True, False, False, None), (1, False, True, False, None),
    (2, True, False, True, None), (1, False, False, False, 16), (2, False, True, False, 6),
    (-2, False, False, True, 9)])
def test_dft_is_onnxruntimes(dev, axis, complex_in, onesided, inverse, length):
    x = np.random.default_rng(axis + 3).standard_normal((2, 12, 10, 2 if complex_in else 1)).astype(np.float32)
    inputs = ["x", "len" if length else "", "axis"]
    inits = {"axis": np.array(axis, np.int64)}
    if length:
        inits["len"] = np.array(length, np.int64)
    m = onnx_model([helper.make_node("DFT", inputs, ["y"], onesided=int(onesided), inverse=int(inverse))],
                   [("x", "float32", x.shape)], [("y", "float32")], inits, opset=20)
    (got,) = _run(dev, m, {"x": x})
    (want,) = run_ort(m, {"x": x})
    _close(got, want, "DFT")
    if not inverse and length is None:  # and numpy's, in float64
        c = x[..., 0].astype(np.float64) + (1j * x[..., 1] if complex_in else 0)
        ref = (np.fft.rfft if onesided else np.fft.fft)(c, axis=axis)
        _close(got, np.stack([ref.real, ref.imag], -1).astype(np.float32), "DFT against numpy")


@pytest.mark.parametrize("window_kind", [None, "constant", "input"])
def test_stft_is_onnxruntimes(dev, window_kind):
    signal = np.random.default_rng(7).standard_normal((2, 200, 1)).astype(np.float32)
    window = np.hanning(32).astype(np.float32)
    inputs, specs, inits = ["signal", "step"], [("signal", "float32", signal.shape)], {"step": np.array(10, np.int64)}
    feeds = {"signal": signal}
    if window_kind is None:
        inputs += ["", "flen"]
        inits["flen"] = np.array(32, np.int64)
    elif window_kind == "constant":
        inputs.append("window")
        inits["window"] = window
    else:
        inputs.append("window")
        specs.append(("window", "float32", (32,)))
        feeds["window"] = window
    m = onnx_model([helper.make_node("STFT", inputs, ["y"])], specs, [("y", "float32")], inits, opset=17)
    (got,) = _run(dev, m, feeds)
    (want,) = run_ort(m, feeds)
    assert got.shape == (2, 17, 17, 2)
    _close(got, want, "STFT")


@pytest.mark.parametrize("length", [None, 9, 12])
def test_one_sided_inverse_is_the_real_signal(dev, length):
    # numpy's irfft: the spectrum's first bins, the rest their conjugate mirror; cut or padded to dft_length.
    spectrum = np.fft.rfft(np.random.default_rng(10).standard_normal((3, 10)), axis=1)
    x = np.stack([spectrum.real, spectrum.imag], -1).astype(np.float32)
    inputs, inits = ["x", "len" if length else "", "axis"], {"axis": np.array(1, np.int64)}
    if length:
        inits["len"] = np.array(length, np.int64)
    m = onnx_model([helper.make_node("DFT", inputs, ["y"], inverse=1, onesided=1)], [("x", "float32", x.shape)],
                   [("y", "float32")], inits, opset=20)
    (got,) = _run(dev, m, {"x": x})
    want = np.fft.irfft(spectrum, n=length or 10, axis=1)[..., None]
    _close(got, want.astype(np.float32), "one-sided inverse against numpy")


def test_mel_weight_matrix_of_constants_folds_as_onnxruntime_computes_it(dev):
    # A log-mel front end: the table from constant sizes and rates, applied to a runtime spectrum.
    inits = {"bins": np.array(8, np.int64), "dft": np.array(64, np.int64), "rate": np.array(16000, np.int64),
             "lo": np.array(20.0, np.float32), "hi": np.array(7600.0, np.float32)}
    nodes = [helper.make_node("MelWeightMatrix", ["bins", "dft", "rate", "lo", "hi"], ["w"]),
             helper.make_node("MatMul", ["spec", "w"], ["mel"])]
    m = onnx_model(nodes, [("spec", "float32", (5, 33))], [("mel", "float32")], inits, opset=17)
    spec = np.abs(np.random.default_rng(9).standard_normal((5, 33))).astype(np.float32)
    (got,) = _run(dev, m, {"spec": spec})
    (want,) = run_ort(m, {"spec": spec})
    _close(got, want, "MelWeightMatrix")


def test_mel_weight_matrix_of_a_runtime_input_is_refused_by_name():
    inits = {"dft": np.array(64, np.int64), "rate": np.array(16000, np.int64), "lo": np.array(20.0, np.float32),
             "hi": np.array(7600.0, np.float32)}
    m = onnx_model([helper.make_node("MelWeightMatrix", ["bins", "dft", "rate", "lo", "hi"], ["w"], name="mel")],
                   [("bins", "int64", ())], [("w", "float32")], inits, opset=17)
    compile_error(m, r"'mel' \(MelWeightMatrix\): input 0 \('bins'\) must be a constant")


def test_float16_dft_computes_in_float32(dev):
    x = np.random.default_rng(11).standard_normal((2, 8, 1)).astype(np.float16)
    m = onnx_model([helper.make_node("DFT", ["x", "", "axis"], ["y"])], [("x", "float16", x.shape)],
                   [("y", "float16")], {"axis": np.array(1, np.int64)}, opset=20)
    (got,) = _run(dev, m, {"x": x})
    wide = onnx_model([helper.make_node("DFT", ["x", "", "axis"], ["y"])], [("x", "float32", x.shape)],
                      [("y", "float32")], {"axis": np.array(1, np.int64)}, opset=20)
    (want,) = _run(dev, wide, {"x": x.astype(np.float32)})
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, want.astype(np.float16))
