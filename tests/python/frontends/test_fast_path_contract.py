"""What Model.run's fast path takes, held to one description: ``accel.runtime.model``'s Python path.

Each core writes its own match (py_pybind/fast_run.cpp, py_cffi/core/fast_run.py) of the specs Model gives
it (``_Spec.fast()``, CORE_API.md ``set_fast_path``). Here one matrix of calls goes through both cores in one
process, each with its own model and the public DeviceTensor class over its own CoreTensor: the two take and
decline exactly the same calls with the same results, and every call a fast path takes, the Python path
(``Model.run`` with a timeout, which the fast path never takes) takes too, with the same results. The cores'
``tensor_matches``, which the Python path asks rather than check a DeviceTensor again, accepts exactly the tensors
the Python path's rule (``Model._tensor_error``) finds nothing wrong with.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Tuple

import numpy as np
import pytest

from accel import _cffi_core, _pybind, compiler
from accel.runtime.device_tensor import tensor_class
from accel.runtime.model import _Spec
from accel.runtime.tensor_info import from_core
from conftest import IMPORTS_MEMORY

CORES = {"pybind": _pybind, "cffi": _cffi_core}
Call = Tuple[Any, Any, Any]


class _Owner:
    """The public Device a fast path is set up with (it compares tensors' devices by identity)."""

    uri = "emu:cores=1"


def _fast_model(core: Any, accm: bytes) -> Tuple[Any, Any, Any, List[_Spec], List[_Spec]]:
    device = core.CoreDevice("emu:cores=1")
    model = device.load(accm)
    ins = [_Spec(from_core(t), "input", i) for i, t in enumerate(model.inputs())]
    outs = [_Spec(from_core(t), "output", i) for i, t in enumerate(model.outputs())]
    owner = _Owner()
    model.set_fast_path(owner, device, [s.fast() for s in ins], [s.fast() for s in outs])
    return device, model, owner, ins, outs


def _calls(core: Any, device: Any, owner: Any, ins: List[_Spec], outs: List[_Spec]) -> Dict[str, Callable[[], Call]]:
    """Every kind of call, by name; each made fresh on the core's own objects (same values for both cores)."""
    tensor = tensor_class(core.CoreTensor)

    def make(shape: Tuple[int, ...], dtype: Any, of: Any = owner, layout: Any = None, fill: float = 1.0) -> Any:
        dt = np.dtype(dtype)
        t = tensor(device.alloc(max(int(np.prod(shape)) * dt.itemsize, 1)), shape, dt, layout, of)
        np.asarray(t)[...] = fill
        return t

    def array(s: _Spec, fill: float = 0.5) -> np.ndarray:
        return np.full(s.shape, fill, s.dtype)

    def good_in() -> List[Any]:
        return [make(s.shape, s.dtype, fill=0.25 * (i + 1)) for i, s in enumerate(ins)]

    def good_out() -> List[Any]:
        return [make(s.shape, s.dtype, fill=0.0) for s in outs]

    one = len(ins) == 1
    shared = good_in()
    calls: Dict[str, Callable[[], Call]] = {
        "tensors": lambda: (good_in(), None, 0),
        "tensors as a tuple, outputs as a tuple": lambda: (tuple(good_in()), tuple(good_out()), 0),
        "tensors and given outputs": lambda: (good_in(), good_out(), 0),
        "arrays": lambda: ([array(s) for s in ins], None, 0),
        "arrays and given outputs": lambda: ([array(s) for s in ins], good_out(), 255),
        "one tensor bare": lambda: (good_in()[0], None, 0),
        "one array bare": lambda: (array(ins[0]), None, 0),
        "a tensor of another device": lambda: ([make(s.shape, s.dtype, of=_Owner()) for s in ins], None, 0),
        "a tensor of another dtype": lambda: ([make(s.shape, np.int32) for s in ins], None, 0),
        "a tensor of another shape": lambda: ([make((int(np.prod(s.shape)),), s.dtype) for s in ins], None, 0),
        "a tensor of another layout": lambda: ([make(s.shape, s.dtype, layout="NHWC" if s.layout == "NCHW"
                                                     else "NCHW") for s in ins], None, 0),
        "an array of another dtype": lambda: ([array(s).astype(np.float64) for s in ins], None, 0),
        "a strided array": lambda: ([np.repeat(array(s), 2, axis=-1)[..., ::2] for s in ins], None, 0),
        "nested lists": lambda: ([array(s).tolist() for s in ins], None, 0),
        "a dict": lambda: ({s.name: array(s) for s in ins}, None, 0),
        "one input too many": lambda: (good_in() + good_in()[:1], None, 0),
        "an output of another shape": lambda: (good_in(), [make((int(np.prod(s.shape)),), s.dtype) for s in outs],
                                               0),
        "an array output": lambda: (good_in(), [array(s) for s in outs], 0),
        "a bare output": lambda: (good_in(), good_out()[0], 0),
        "outputs in a dict": lambda: (good_in(), {s.name: t for s, t in zip(outs, good_out())}, 0),
        "a bare CoreTensor": lambda: ([core.CoreTensor(t.buffer, t.shape, t.dtype, None, owner) for t in good_in()],
                                      None, 0),
        "priority True": lambda: (good_in(), None, True),
        "priority 256": lambda: (good_in(), None, 256),
        "priority -1": lambda: (good_in(), None, -1),
        "numpy priority": lambda: (good_in(), None, np.int64(3)),
    }
    if one and len(outs) == 1 and ins[0].alloc >= outs[0].alloc:
        # the input's own buffer as the output: the Python path refuses that, naming both
        calls["the input's buffer as the output"] = lambda: (
            shared, [tensor(shared[0].buffer, outs[0].shape, outs[0].dtype, None, owner)], 0)
    if len(outs) >= 2:
        # one buffer for two outputs (a tensor over the first output's buffer, if the second fits in it)
        def twice() -> Call:
            given = good_out()
            first = given[0].buffer
            if outs[1].alloc <= first.nbytes:
                given[1] = tensor(first, outs[1].shape, outs[1].dtype, None, owner)
            return good_in(), given, 0
        calls["one buffer for two outputs"] = twice
    if len(ins) >= 2 and ins[1].alloc >= outs[0].alloc:
        calls["the second input's buffer as the first output"] = lambda: (
            shared, [tensor(shared[1].buffer, outs[0].shape, outs[0].dtype, None, owner)] + good_out()[1:], 0)
    return calls


def _decisions(core: Any, accm: bytes) -> Dict[str, Any]:
    device, model, owner, ins, outs = _fast_model(core, accm)
    out: Dict[str, Any] = {}
    for name, call in _calls(core, device, owner, ins, outs).items():
        before = device.stats()["jobs_submitted"]
        res = model.run_tensors(*call())
        assert res is None or isinstance(res, list), (name, res)
        if res is None:
            assert device.stats()["jobs_submitted"] == before, f"{name}: declined after submitting"
        out[name] = None if res is None else [np.array(r) for r in res]
    return out


@pytest.mark.parametrize("model_name", ["tiny", "two_io"])
def test_both_cores_take_and_decline_the_same_calls(model_dir, model_name):
    accm = compiler.compile_model(str(model_dir / f"{model_name}.onnx"))
    got = {frontend: _decisions(core, accm) for frontend, core in CORES.items()}
    pyb, cff = got["pybind"], got["cffi"]
    assert sorted(pyb) == sorted(cff)
    taken = {name for name, res in pyb.items() if res is not None}
    assert taken == {name for name, res in cff.items() if res is not None}, \
        f"pybind11 takes {sorted(taken)}, cffi {sorted(n for n, r in cff.items() if r is not None)}"
    assert {"tensors", "tensors and given outputs", "arrays"} <= taken  # the common case is the fast one
    for name in taken:
        for a, b in zip(pyb[name], cff[name]):
            assert a.dtype == b.dtype and np.array_equal(a, b), name


@pytest.mark.parametrize("model_name", ["tiny", "two_io"])
def test_what_the_fast_path_takes_the_python_path_runs_alike(dev, request, model_name):
    import accel

    model = request.getfixturevalue(model_name)
    fast = model._core.run_tensors
    ins = list(model._in_specs)
    outs = list(model._out_specs)
    calls = _calls(accel.runtime._frontend.core, dev._core, dev, ins, outs)
    taken = 0
    for name, call in calls.items():
        inputs, outputs, priority = call()
        res = fast(inputs, outputs, priority)
        if res is None:
            continue
        taken += 1
        inputs, outputs, priority = call()
        slow = model.run(inputs, outputs=outputs, priority=priority, timeout=3600.0)
        assert len(slow) == len(res), name
        for f, s in zip(res, slow):
            assert f.dtype == s.dtype and f.shape == s.shape and np.array_equal(f, s), name
    assert taken >= 3


def _tensors(given: Any, specs: List[_Spec]) -> List[Tuple[_Spec, Any]]:
    """(spec, tensor) for each accel.DeviceTensor of a call's inputs or outputs given in order (bare, or a
    list/tuple)."""
    import accel

    items = given if isinstance(given, (list, tuple)) else [given]
    return [(s, x) for s, x in zip(specs, items) if isinstance(x, accel.DeviceTensor)]


@pytest.mark.parametrize("model_name", ["tiny", "two_io"])
def test_the_cores_tensor_match_is_the_python_paths_rule(dev, request, model_name):
    """The core's tensor_matches, which the Python path asks instead of checking a tensor again, accepts exactly
    the DeviceTensors Model._tensor_error (the rule in words) finds nothing wrong with: every tensor of the matrix,
    and one over imported memory (which it matches, though the fast path leaves that call to the Python path)."""
    import accel

    model = request.getfixturevalue(model_name)
    ins = list(model._in_specs)
    outs = list(model._out_specs)
    calls = _calls(accel.runtime._frontend.core, dev._core, dev, ins, outs)
    seen = {True: 0, False: 0}
    for name, call in calls.items():
        inputs, outputs, _ = call()
        for spec, t in _tensors(inputs, ins) + _tensors(outputs, outs):
            try:
                model._tensor_error(spec, t)
                fine = True
            except (accel.AccelError, ValueError, TypeError):
                fine = False
            got = model._core.tensor_matches(t, spec.index, spec.output)
            assert got is fine, f"{name}: {spec.kind} {spec.name!r}: the core says {got}, the Python rule {fine}"
            assert model._core.tensor_matches(t, spec.index, spec.output) is fine, f"{name}: remembered otherwise"
            seen[fine] += 1
    assert seen[True] and seen[False], seen


def _aligned(shape: Tuple[int, ...], dtype: Any, fill: float, align: int = 64) -> np.ndarray:
    """A C-contiguous array of `fill` whose data starts on an `align`-byte boundary (what Device.wrap needs)."""
    dt = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dt.itemsize
    raw = np.empty(nbytes + align, np.uint8)
    start = (-raw.ctypes.data) % align
    out = raw[start:start + nbytes].view(dt).reshape(shape)
    out[...] = fill
    return out


@pytest.mark.parametrize("model_name", ["tiny", "two_io"])
def test_a_tensor_over_imported_memory_matches_and_runs_the_python_way(dev, request, model_name):
    """A DeviceTensor over imported memory (Device.wrap) matches, but run_tensors leaves its call to the Python
    path, which holds the imported object for the job's life; where the backend cannot import (the BPU), wrap
    refuses, saying so."""
    import accel

    model = request.getfixturevalue(model_name)
    ins = list(model._in_specs)
    arrays = [_aligned(s.shape, s.dtype, 0.5) for s in ins]
    if not IMPORTS_MEMORY:
        with pytest.raises(accel.UnsupportedError):
            dev.wrap(arrays[0])
        return
    wrapped = [dev.wrap(a) for a in arrays]
    assert all(model._core.tensor_matches(t, s.index, False) for s, t in zip(ins, wrapped))
    assert model._core.run_tensors(wrapped, None, 0) is None
    expected = model.run([np.full(s.shape, 0.5, s.dtype) for s in ins])
    for a, b in zip(model.run(wrapped), expected):
        assert np.array_equal(a, b)
