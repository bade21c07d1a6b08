"""The two front-ends against each other, both loaded in this one process (whichever ``accel`` selected):

- the same surface: every module function and class of the core contract (CORE_API.md), with the same
  public names, the same parameters (names, kinds, defaults) and the same docstrings, and only the
  declared differences (``accel.frontend_features``);
- the same public ``accel`` package over each (names, features' keys), checked in child processes since
  a process selects one front-end at import;
- the same numbers: every test model, run through each core with the same inputs, gives bit-identical
  outputs, and so does the public ``Model.run`` of the front-end in use.
"""
from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import pytest

import accel
from accel import _cffi_core, _pybind, compiler
from accel.runtime.device_tensor import TensorAPI, tensor_class

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from models import catalog

CORES = {"pybind": _pybind, "cffi": _cffi_core}
CONTRACT_FUNCTIONS = ["abi_version", "version", "backends", "inflight_callbacks"]
CONTRACT_CLASSES = ["CoreDevice", "CoreBuffer", "CoreModel", "CoreJob", "CoreTensor"]
# Protocol methods that are part of the surface (the others, object's own, are not).
DUNDERS = {"__init__", "__repr__", "__dlpack__", "__dlpack_device__"}
# Surface that depends on a declared feature: name -> the feature that says whether a core has it.
FEATURE_NAMES = {"__array_interface__": "array_interface", "__buffer__": "buffer_protocol"}
# Classes a user never constructs: their __init__ only refuses.
NOT_CONSTRUCTED = {"CoreBuffer", "CoreModel", "CoreJob"}


# ---- surface ----------------------------------------------------------------------------------------

def _split_top_level(text: str) -> List[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _pybind_parameters(doc: str) -> List[Tuple[str, str, Optional[str]]]:
    """(name, kind, default) of each parameter but self, from pybind11's signature line:
    ``name(self: T, a: object, *, b: object = None) -> R``."""
    line = doc.splitlines()[0]
    inner = line[line.index("(") + 1:line.rindex(")")]
    params, kind = [], "positional_or_keyword"
    for p in _split_top_level(inner):
        if p == "*":
            kind = "keyword_only"
            continue
        name, _, rest = p.partition(":")
        default = rest.split("=", 1)[1].strip() if "=" in rest else None
        params.append((name.strip(), kind, default))
    return params[1:] if params and params[0][0] == "self" else params


def _python_parameters(fn: Any) -> List[Tuple[str, str, Optional[str]]]:
    sig = inspect.signature(fn)
    out = []
    for p in sig.parameters.values():
        if p.name in ("self", "cls"):
            continue
        kind = "keyword_only" if p.kind is p.KEYWORD_ONLY else "positional_or_keyword"
        out.append((p.name, kind, None if p.default is p.empty else repr(p.default)))
    return out


def _is_pybind(obj: Any) -> bool:
    return type(obj).__name__ in ("builtin_function_or_method", "instancemethod") or \
        (type(obj).__name__ == "method_descriptor")


def parameters(fn: Any) -> List[Tuple[str, str, Optional[str]]]:
    """A callable's parameters as comparable data, from Python's introspection where it works (Python
    functions; builtins with a text signature), else from pybind11's signature line."""
    try:
        return _python_parameters(fn)
    except (ValueError, TypeError):
        return _pybind_parameters(fn.__doc__ or "")


def docstring(obj: Any) -> str:
    """The documentation a user reads, without pybind11's generated signature lines."""
    doc = obj.__doc__ or ""
    if isinstance(obj, property) and not doc and obj.fget is not None:
        doc = obj.fget.__doc__ or ""
    lines = doc.strip().splitlines()
    while lines and "(" in lines[0] and ("->" in lines[0] or lines[0].endswith(")")) and \
            lines[0].split("(", 1)[0].isidentifier():
        lines = lines[1:]  # pybind11's "name(self: T, ...) -> R" (and overload) lines
        while lines and not lines[0].strip():
            lines = lines[1:]
    return inspect.cleandoc("\n".join(lines))


def class_surface(cls: type, features: Dict[str, Any]) -> Dict[str, Any]:
    surface: Dict[str, Any] = {"doc": docstring(cls)}
    for name in sorted(dir(cls)):
        if name.startswith("_") and name not in DUNDERS and name not in FEATURE_NAMES:
            continue
        if name in FEATURE_NAMES:
            continue  # compared against the features below
        member = inspect.getattr_static(cls, name)
        if name in ("__init__", "__repr__") and member is getattr(object, name):
            continue
        if name == "__init__" and cls.__name__ in NOT_CONSTRUCTED:
            continue
        if isinstance(member, property) or type(member).__name__ == "property":
            surface[name] = ("property", docstring(member))
        else:
            fn = getattr(cls, name)
            surface[name] = ("method", parameters(fn), docstring(fn) if name != "__init__" else "")
    return surface


def feature_names(cls: type) -> Dict[str, bool]:
    return {name: name in dir(cls) for name in FEATURE_NAMES}


@pytest.mark.parametrize("name", CONTRACT_FUNCTIONS)
def test_module_functions_are_the_same(name):
    pyb, cff = getattr(_pybind, name), getattr(_cffi_core, name)
    assert parameters(pyb) == parameters(cff), name
    assert docstring(pyb) == docstring(cff), name
    assert pyb() == cff(), f"{name}() differs between the cores"


@pytest.mark.parametrize("name", CONTRACT_CLASSES)
def test_classes_have_the_same_surface(name):
    pyb = class_surface(getattr(_pybind, name), {})
    cff = class_surface(getattr(_cffi_core, name), {})
    assert sorted(pyb) == sorted(cff), f"{name}: members differ: {sorted(set(pyb) ^ set(cff))}"
    for member in pyb:
        assert pyb[member] == cff[member], f"{name}.{member}: pybind11 {pyb[member]!r} != cffi {cff[member]!r}"


def test_declared_differences_are_the_only_ones():
    # What differs is what the features say: the buffer protocol (a Python class has it only from
    # Python 3.12 on) and __array_interface__, which the cffi core offers instead on older Pythons.
    from accel.runtime import _frontend

    for frontend, core in CORES.items():
        features = _frontend._features(frontend, core)
        for cls_name in ("CoreTensor",):
            cls = getattr(core, cls_name)
            has = feature_names(cls)
            assert has["__array_interface__"] is bool(features["array_interface"]), (frontend, cls_name)
            t = _tensor(core)
            try:
                memoryview(t)
                exports = True
            except TypeError:
                exports = False
            assert exports is bool(features["buffer_protocol"]), (frontend, "buffer protocol")
            assert np.shares_memory(np.asarray(t), t.numpy()), frontend
        assert features["dlpack"] and features["fast_run"], frontend


def _tensor(core: Any) -> Any:
    """The public DeviceTensor class over this core's CoreTensor, made as accel.DeviceTensor is."""
    dev = core.CoreDevice("emu")
    return tensor_class(core.CoreTensor)(dev.alloc(64), (4, 4), np.dtype(np.float32), None, "emu")


@pytest.mark.parametrize("frontend", CORES)
def test_device_tensor_is_one_python_class_over_each_core_s_base(frontend):
    # The API is written once (runtime/device_tensor.py); each core gives only the base, and the fast path
    # takes the subclass: a run over each core's tensors, in place.
    core = CORES[frontend]
    t = _tensor(core)
    assert isinstance(t, core.CoreTensor) and isinstance(t, TensorAPI)
    assert type(t).shape is TensorAPI.shape and type(t).numpy is TensorAPI.numpy
    assert (t.shape, t.dtype, t.nbytes, t.ndim, t.size, t.layout, t.device) == ((4, 4), np.float32, 64, 2, 16,
                                                                                 None, "emu")
    assert np.shares_memory(np.asarray(t), t.numpy()) and repr(t).startswith("DeviceTensor(shape=(4, 4)")
    if frontend == accel.frontend:
        assert tensor_class(core.CoreTensor) is accel.DeviceTensor


PUBLIC_SURFACE = r"""
import json, accel, inspect
print(json.dumps({"all": sorted(accel.__all__), "features": sorted(accel.frontend_features),
                  "frontend": accel.frontend,
                  "errors": sorted(n for n in dir(accel.errors) if not n.startswith("_"))}))
"""


def test_public_package_is_the_same_over_both():
    out = {}
    for frontend in CORES:
        env = dict(os.environ, ACCEL_FRONTEND=frontend)
        r = subprocess.run([sys.executable, "-c", PUBLIC_SURFACE], env=env, capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 0, r.stderr
        out[frontend] = json.loads(r.stdout)
        assert out[frontend]["frontend"] == frontend
    assert out["pybind"]["all"] == out["cffi"]["all"]
    assert out["pybind"]["features"] == out["cffi"]["features"]
    assert out["pybind"]["errors"] == out["cffi"]["errors"]


# ---- the same numbers ---------------------------------------------------------------------------------

def _inputs_for(infos: List[Any], seed: int) -> List[np.ndarray]:
    rng = np.random.default_rng(seed)
    arrays = []
    for info in infos:
        if info.dtype.kind == "f":
            arrays.append(rng.standard_normal(info.shape).astype(info.dtype))
        else:
            arrays.append(rng.integers(0, 4, info.shape).astype(info.dtype))
    return arrays


def run_on_core(core: Any, accm: bytes, inputs: List[np.ndarray]) -> List[bytes]:
    """One run through a core's contract alone: load, copy the inputs in, run, read the outputs."""
    dev = core.CoreDevice("emu:cores=1")
    model = dev.load(accm)
    bufs = []
    for x, info in zip(inputs, model.inputs()):
        b = dev.alloc(max(info[5], 1))
        b.write(x)
        bufs.append(b)
    outs = [dev.alloc(max(info[5], 1)) for info in model.outputs()]
    model.run(bufs, outs)
    result = [bytes(memoryview(o.memory)[:info[5]]) for o, info in zip(outs, model.outputs())]
    model.release()
    dev.close()
    return result


def _model_bytes(name: str, request) -> bytes:
    if name in catalog.MODELS:
        spec = catalog.MODELS[name]
        folder = None if spec.build is None else request.getfixturevalue("tmp_path_factory").mktemp(name)
        path = catalog.model_path(name, folder)
        return compiler.compile_model(str(path), input_shapes={spec.input_name: spec.test_shape})
    return compiler.compile_model(str(request.getfixturevalue(f"{name}_path")))


@pytest.mark.parametrize("name", ["tiny", "two_io", "cnn", *catalog.MODELS])
def test_both_cores_give_bit_identical_outputs(name, request):
    accm = _model_bytes(name, request)
    probe = accel.open("emu")
    model = probe.load(accm)
    inputs = _inputs_for(model.inputs, seed=3)
    got = {frontend: run_on_core(core, accm, inputs) for frontend, core in CORES.items()}
    assert len(got["pybind"]) == len(model.outputs) > 0
    for i, (a, b) in enumerate(zip(got["pybind"], got["cffi"])):
        assert a == b, f"{name}: output {model.outputs[i].name} differs between pybind11 and cffi"
    # The public API of the front-end in use (its fast path and its Python path) gives the same bits.
    via_api = model.run(inputs)
    tensors = [probe.tensor(x) for x in inputs]
    via_tensors = model.run(tensors)
    for i, info in enumerate(model.outputs):
        expected = np.frombuffer(got["pybind"][i], info.dtype)[:int(np.prod(info.shape))].reshape(info.shape)
        assert np.array_equal(np.asarray(via_api[i]), expected, equal_nan=True), (name, info.name)
        assert np.array_equal(np.asarray(via_tensors[i]), expected, equal_nan=True), (name, info.name)
    probe.close()


# ---- behaviour both cores must share that the public API does not show ------------------------------

@pytest.mark.parametrize("frontend", list(CORES))
def test_callback_exception_reaches_unraisablehook(frontend, tiny_accm, monkeypatch):
    core = CORES[frontend]
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append((u.exc_type, str(u.exc_value))))
    dev = core.CoreDevice("emu")
    model = dev.load(tiny_accm.read_bytes())
    calls = []

    def callback(status, message, timing):
        calls.append((status, message, len(timing)))
        raise RuntimeError("raised by the callback")

    job = model.submit([dev.alloc(64)], [dev.alloc(32)], callback)
    job.wait(5)
    for _ in range(500):  # the callback runs on the completion thread, around the wait's return
        if seen:
            break
        import time

        time.sleep(0.01)
    assert calls == [(0, "", 4)]
    assert seen == [(RuntimeError, "raised by the callback")]
    assert model.submit([dev.alloc(64)], [dev.alloc(32)], lambda *a: None).wait(5) is None  # still works


def _strided(shape, gap=2):
    """A uint8 array of `shape` whose dimensions of extent > 1 are none contiguous with the next (a
    view into a larger array), so that only the unit ones go when libaccel merges."""
    full_shape = [n * gap if n > 1 else n for n in shape]
    full = np.arange(int(np.prod(full_shape)), dtype=np.uint8).reshape(full_shape)
    return full[tuple(slice(None, None, gap) if n > 1 else slice(None) for n in shape)]


@pytest.mark.parametrize("frontend", list(CORES))
def test_strided_write_merges_and_refuses_in_libaccel(frontend):
    # Both cores hand the array's own shape and strides to accel_buffer_write_strided: an array of many
    # dimensions but few at heart is copied, one of more than ACCEL_MAX_DIMS at heart is refused with
    # libaccel's message, the same over both.
    core = CORES[frontend]
    dev = core.CoreDevice("emu")
    buf = dev.alloc(1 << 16)
    deep = _strided((1, 2, 1, 3) + (1,) * 50 + (2, 1, 2, 2, 1, 2, 1, 3))  # 62 dims, 7 at heart
    assert deep.ndim == 62 and not deep.flags.c_contiguous
    buf.write(deep)
    assert bytes(memoryview(buf.memory)[:deep.size]) == deep.tobytes()
    wide = _strided((2,) * 9)
    with pytest.raises(accel.AccelError) as e:
        buf.write(wide)
    assert isinstance(e.value, accel.InvalidArgumentError)
    assert "the array has 9 dimensions, 9 once unit ones are dropped and contiguous ones merged" in str(e.value)
    empty = _strided((3, 0, 2) + (2,) * 10)
    assert empty.size == 0 and empty.ndim == 13
    buf.write(empty)  # nothing to copy, however many dimensions
    dev.close()


@pytest.mark.parametrize("frontend", list(CORES))
def test_inflight_callbacks_counts_until_the_callback_returned(frontend, tiny_accm):
    # accel.futures.inflight() is the core's count: a job submitted with a callback counts until that
    # callback has returned.
    core = CORES[frontend]
    dev = core.CoreDevice("emu")
    model = dev.load(tiny_accm.read_bytes())
    release = threading.Event()
    inside = threading.Event()

    def callback(status, message, timing):
        inside.set()
        release.wait(10)

    before = core.inflight_callbacks()
    job = model.submit([dev.alloc(64)], [dev.alloc(32)], callback)
    assert inside.wait(10)
    assert core.inflight_callbacks() == before + 1
    release.set()
    job.wait(5)
    deadline = time.monotonic() + 5
    while core.inflight_callbacks() != before and time.monotonic() < deadline:
        time.sleep(0.001)
    assert core.inflight_callbacks() == before
    model.release()
    dev.close()


SELECT = r"""
import sys
if {block!r}:
    sys.modules["accel._pybind"] = None  # the pybind11 core cannot be imported
try:
    import accel
except ImportError as e:
    print("ImportError:", e)
else:
    print(accel.frontend, "|", accel.frontend_features.get("fallback_reason", ""))
"""


@pytest.mark.parametrize("env,block,expected", [
    ("", True, "cffi | pybind unavailable: ModuleNotFoundError: import of accel._pybind halted"),
    ("cffi", True, "cffi | "),
    ("pybind", True, "ImportError: ACCEL_FRONTEND=pybind: the pybind core (accel._pybind) cannot be imported"),
    ("CFFI ", False, "cffi | "),
    ("ctypes", False, "ImportError: ACCEL_FRONTEND='ctypes' is not a front-end; valid values: pybind, cffi"),
    ("", False, "pybind | "),
])
def test_frontend_selection(env, block, expected):
    environ = dict(os.environ, ACCEL_FRONTEND=env)
    r = subprocess.run([sys.executable, "-c", SELECT.format(block=block)], env=environ, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(expected), r.stdout
