"""Shared fixtures of the Python API tests: a device, and the models every test file uses.

Models (ONNX, built here with fixed seeds and written once per session):
  tiny     one input  x[1, 16] float32 -> y[1, 8] = relu(x @ W + b)
  two_io   inputs a[1, 3, 8, 8] (NCHW), b[2, 8] -> conv_out = relu(conv3x3(a)) [1, 4, 8, 8],
           mm_out = b @ W [2, 5]
  slow     x[512, 512] -> 20 chained 512x512 MatMuls (~50-200 ms per run on one emulated core)
  cnn      the bundled accel/models/tiny_cnn.onnx
Reference numerics come from onnxruntime (`ort_run`).

The device under test is ``ACCEL_TEST_DEVICE`` (default ``emu:cores=2``), e.g. ``bpu:0`` or ``vart:0`` with
the stand-in SDKs (ci/test.sh; ``ACCEL_TEST_MODEL_FORMAT=.hbm`` for the BPU driver built for S100). On a
device other than the emulator:
  - only the tests that use the device under test (the fixture ``dev``, directly or through a model
    fixture) run, minus those marked ``emulator`` (they test the emulator itself: its URI options, its
    compile cache, its memory pool); the others are deselected, and the summary says how many and why;
  - ``Device.load`` goes through the stand-in's toolchain (``standin_toolchain.py``): ONNX and emulator
    models become the device's own format (``.bin``, ``.xmodel``) first, as the vendor's compiler would
    make them, so every test loads its models as it does on the emulator;
  - tests marked ``vendor`` run (tests/python/drivers/test_vendor_formats.py: what only vendor models have).
"""
from __future__ import annotations

import gc
import os
import re
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import accel
from accel.runtime.device_uri import parse_uri

F = TensorProto.FLOAT
DEVICE_URI = os.environ.get("ACCEL_TEST_DEVICE", "") or "emu:cores=2"
BACKEND = parse_uri(DEVICE_URI).scheme
ON_EMULATOR = BACKEND == "emu"
# On vart a device tensor escapes VART's copy only when it is the own buffer of the runner that runs the
# job (libaccel/backends/vart/README.md): there the runtime's copies are bounded, not exact.
EXACT_COPIES = BACKEND != "vart"
# The BPU runtime cannot use memory it did not allocate (libaccel/backends/bpu/buffer.cc): there Device.wrap
# refuses, saying so.
IMPORTS_MEMORY = BACKEND != "bpu"
# S100 models (.hbm) describe no tensor layout: an image tensor is a plain shape there.
NCHW = None if os.environ.get("ACCEL_TEST_MODEL_FORMAT") == ".hbm" else "NCHW"
# The fixtures through which a test uses the device under test.
DEVICE_FIXTURES = frozenset({"dev", "dev1", "tiny", "two_io", "slow", "cnn"})


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "emulator: tests the emulator itself (not run when ACCEL_TEST_DEVICE names another device)")
    config.addinivalue_line(
        "markers", "vendor(*backends, formats=()): needs a vendor device (of one of these backends, if any are named; "
                   "whose model format, ACCEL_TEST_MODEL_FORMAT, is one of `formats`, if any are named)")
    if not ON_EMULATOR:
        import standin_toolchain

        standin_toolchain.install(BACKEND)


def _runs_here(item) -> bool:
    vendor = item.get_closest_marker("vendor")
    if ON_EMULATOR:
        return vendor is None
    if vendor is not None:
        formats = vendor.kwargs.get("formats", ())
        if formats:
            import standin_toolchain

            if standin_toolchain.suffix_for(BACKEND) not in formats:
                return False
        return not vendor.args or BACKEND in vendor.args
    on_device = DEVICE_FIXTURES.intersection(getattr(item, "fixturenames", ()))
    return bool(on_device) and item.get_closest_marker("emulator") is None


def pytest_collection_modifyitems(config, items):
    keep, drop = [], []
    for item in items:
        (keep if _runs_here(item) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    config._accel_deselected = len(drop)  # noqa: SLF001 - read by the summary below


def pytest_terminal_summary(terminalreporter, config):
    why = ("they need a vendor device (ACCEL_TEST_DEVICE=bpu:0 or vart:0 runs them)" if ON_EMULATOR else
           "they test the emulator itself, another backend, or do not use the device under test")
    terminalreporter.write_line(f"device under test: {DEVICE_URI}; "
                                f"{getattr(config, '_accel_deselected', 0)} tests deselected: {why}")
SLOW_DIM = 512
SLOW_DEPTH = 20


def _model(nodes, inputs, outputs, inits, name):
    g = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, F, list(s)) for n, s in inputs],
        [helper.make_tensor_value_info(n, F, list(s)) for n, s in outputs],
        [numpy_helper.from_array(np.asarray(a), k) for k, a in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def make_tiny():
    r = np.random.default_rng(1)
    w = r.standard_normal((16, 8)).astype(np.float32)
    b = r.standard_normal(8).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["xw"]),
             helper.make_node("Add", ["xw", "b"], ["xwb"]),
             helper.make_node("Relu", ["xwb"], ["y"])]
    return _model(nodes, [("x", (1, 16))], [("y", (1, 8))], {"w": w, "b": b}, "tiny")


def make_two_io():
    r = np.random.default_rng(2)
    k = (r.standard_normal((4, 3, 3, 3)) * 0.3).astype(np.float32)
    kb = r.standard_normal(4).astype(np.float32)
    w = r.standard_normal((8, 5)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["a", "k", "kb"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["conv_out"]),
             helper.make_node("MatMul", ["b", "w"], ["mm_out"])]
    return _model(nodes, [("a", (1, 3, 8, 8)), ("b", (2, 8))],
                  [("conv_out", (1, 4, 8, 8)), ("mm_out", (2, 5))], {"k": k, "kb": kb, "w": w}, "two_io")


def make_slow(dim=SLOW_DIM, depth=SLOW_DEPTH):
    """x[dim, dim] -> x @ Q @ Q ... (depth MatMuls sharing one orthogonal Q: values stay bounded)."""
    r = np.random.default_rng(3)
    q, _ = np.linalg.qr(r.standard_normal((dim, dim)))
    nodes, prev = [], "x"
    for i in range(depth):
        out = "y" if i == depth - 1 else f"h{i}"
        nodes.append(helper.make_node("MatMul", [prev, "q"], [out]))
        prev = out
    return _model(nodes, [("x", (dim, dim))], [("y", (dim, dim))], {"q": q.astype(np.float32)},
                  f"slow{depth}")


def make_symbolic():
    """x[N, 16] with a symbolic batch dim: needs input_shapes to load."""
    r = np.random.default_rng(4)
    w = r.standard_normal((16, 4)).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "symbolic",
        [helper.make_tensor_value_info("x", F, ["N", 16])],
        [helper.make_tensor_value_info("y", F, ["N", 4])],
        [numpy_helper.from_array(w, "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


CNN_PATH = Path(accel.__file__).resolve().parent / "models" / "tiny_cnn.onnx"


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("models")
    for name, make in [("tiny", make_tiny), ("two_io", make_two_io), ("slow", make_slow),
                       ("symbolic", make_symbolic)]:
        onnx.save(make(), str(d / f"{name}.onnx"))
    return d


@pytest.fixture(scope="session")
def tiny_path(model_dir):
    return model_dir / "tiny.onnx"


@pytest.fixture(scope="session")
def two_io_path(model_dir):
    return model_dir / "two_io.onnx"


@pytest.fixture(scope="session")
def slow_path(model_dir):
    return model_dir / "slow.onnx"


@pytest.fixture(scope="session")
def symbolic_path(model_dir):
    return model_dir / "symbolic.onnx"


@pytest.fixture(scope="session")
def cnn_path():
    assert CNN_PATH.is_file(), CNN_PATH
    return CNN_PATH


@pytest.fixture(scope="session")
def tiny_accm(model_dir, tiny_path):
    """The tiny model compiled to the emulator's own format."""
    from accel import compiler

    p = model_dir / "tiny.accm"
    p.write_bytes(compiler.compile_model(str(tiny_path)))
    return p


@pytest.fixture
def dev():
    """A fresh device under test (the emulator with 2 cores unless ACCEL_TEST_DEVICE says otherwise);
    closed after the test."""
    d = accel.open(DEVICE_URI)
    try:
        yield d
    finally:
        d.close()


@pytest.fixture
def dev1():
    """A fresh one-core emulator device. Exact memory baselines use it: the emulator keeps one workspace
    per job of a model running at the same time (bounded by the cores), so on one core the device's
    memory after load is the baseline."""
    d = accel.open("emu:cores=1" if ON_EMULATOR else DEVICE_URI)
    try:
        yield d
    finally:
        d.close()


@pytest.fixture
def tiny(dev, tiny_path):
    return dev.load(str(tiny_path))


@pytest.fixture
def two_io(dev, two_io_path):
    return dev.load(str(two_io_path))


@pytest.fixture
def slow(dev, slow_path):
    return dev.load(str(slow_path))


@pytest.fixture
def cnn(dev, cnn_path):
    return dev.load(str(cnn_path))


# ---------------------------------------------------------------------------------------------------
# helpers (imported by the test files: `from conftest import ...`)
# ---------------------------------------------------------------------------------------------------

_ORT_CACHE: dict = {}


def ort_run(path, feeds):
    """onnxruntime's outputs for `feeds` (a dict), one thread."""
    import onnxruntime as ort

    key = str(path)
    sess = _ORT_CACHE.get(key)
    if sess is None:
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        sess = _ORT_CACHE[key] = ort.InferenceSession(key, opts, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def run_main(capsys, *args):
    """(exit code, stdout, stderr) of the `accel` command's main(args), argparse's SystemExit included."""
    from accel import cli

    try:
        code = cli.main([str(a) for a in args])
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def elem(dtype) -> int:
    """The ONNX element type of a NumPy dtype."""
    from onnx import helper

    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def onnx_model(nodes, inputs, outputs, inits=(), opset=17, ir_version=8):
    """A one-graph ONNX model. inputs: [(name, dtype, shape)]; outputs: [(name, dtype)]; inits: {name: array}."""
    from onnx import helper, numpy_helper

    g = helper.make_graph(
        nodes, "t",
        [helper.make_tensor_value_info(n, elem(dt), list(s)) for n, dt, s in inputs],
        [helper.make_tensor_value_info(n, elem(dt), None) for n, dt in outputs],
        [numpy_helper.from_array(np.asarray(a), k) for k, a in dict(inits).items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir_version
    return m


def run_ort(m, feeds):
    """onnxruntime's outputs of an in-memory model for `feeds` (a dict), one thread."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    return ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"]).run(None, feeds)


def rand_array(shape, dtype, seed=0, lo=None, hi=None, scale=1.0):
    """Random values of `dtype`: floats normal times `scale`, bools half true, integers over [lo, hi] (default:
    the dtype's whole range)."""
    r = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return np.asarray(r.random(shape) < 0.5)
    if dt.kind == "f":
        return np.asarray(r.standard_normal(shape) * scale, dt)
    info = np.iinfo(dt)
    lo = info.min if lo is None else lo
    hi = info.max if hi is None else hi
    return np.asarray(r.integers(lo, hi, size=shape, dtype=dt, endpoint=True))


def emu_outputs(dev, m, feeds):
    """The outputs of the in-memory model `m` loaded on `dev`, as NumPy arrays."""
    return [np.array(a) for a in dev.load(m.SerializeToString()).run(feeds)]


def assert_same_outputs(got, want):
    """The same count, dtypes and shapes, and every element equal (NaN equal to NaN)."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        np.testing.assert_array_equal(g, w)


def runtime_ops(m) -> list:
    """The runtime op names the compiler makes of the ONNX model `m`, in order."""
    from accel import compiler
    from accel.compiler import accm

    return [n["op_name"] for n in accm.read(compiler.compile_model(m))["nodes"]]


def compile_error(m, match):
    """Compiling `m` raises a CompileError whose message matches `match`."""
    import pytest
    from accel import compiler

    with pytest.raises(compiler.CompileError, match=match):
        compiler.compile_model(m)


def rand(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def shape_pattern(shape):
    """A regex matching `shape` written as (1, 16), [1, 16], 1x16 or 1, 16."""
    dims = [str(int(d)) for d in shape]
    if len(dims) == 1:
        return rf"[\(\[]\s*{dims[0]}\s*,?\s*[\)\]]|\b{dims[0]}\b"
    comma = r"\s*,\s*".join(dims)
    cross = r"\s*[x×]\s*".join(dims)  # noqa: RUF001 (a message may write a shape with a multiplication sign)
    return rf"(?<![\d])(?:{comma}|{cross})(?![\d])"


def assert_names_shape(msg, shape):
    assert re.search(shape_pattern(shape), msg), f"message does not name shape {tuple(shape)}: {msg!r}"


def settle(dev, baseline=None, timeout=5.0):
    """Collects garbage until every submitted job is counted as completed and, when `baseline` (a stats
    dict) is given, live buffers and bytes in use are back to it, or `timeout` passes; returns the last
    stats. (A Future completes inside the job's completion callback, a moment before the device counts
    the job as completed and drops its references.)"""
    deadline = time.monotonic() + timeout
    while True:
        gc.collect()
        s = dev.stats()
        if s["jobs_completed"] >= s["jobs_submitted"] and (
                baseline is None or (s["live_buffers"] <= baseline["live_buffers"]
                                     and s["bytes_in_use"] <= baseline["bytes_in_use"])):
            return s
        if time.monotonic() > deadline:
            return s
        time.sleep(0.01)


def buffer_protocol():
    """True on a front-end whose DeviceTensor has the buffer protocol (pybind11); the cffi core offers
    __array_interface__ instead (accel.frontend_features says which)."""
    return bool(accel.frontend_features.get("buffer_protocol"))


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
