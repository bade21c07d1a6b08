"""Both bindings checked against one typed stub of the core contract, ``accel/_pybind.pyi`` (CORE_API.md is
the narrative around it): every name the stub declares, and no public name it does not; each function's and
method's parameters (names, kinds, which have defaults, and the defaults); and the types of what the calls
that need no arguments return, on live objects of each core, against the stub's annotations.

test_frontends.py checks the two cores against each other; this checks each against the written contract,
so that a change made to both bindings alike but not to the stub fails too.
"""
from __future__ import annotations

import collections.abc
import inspect
import typing
from pathlib import Path
from typing import Any, Dict, Tuple

import numpy as np
import pytest

import accel
from accel import _cffi_core, _pybind
from test_frontends import DUNDERS, FEATURE_NAMES, NOT_CONSTRUCTED, parameters

CORES = {"pybind": _pybind, "cffi": _cffi_core}
STUB = Path(accel.__file__).with_name("_pybind.pyi")
# Module names a core may have beyond the stub: what it declares of itself (CORE_API.md, Front-ends).
OPTIONAL_NAMES = {"FEATURES"}


def _load_stub() -> Dict[str, Any]:
    """The stub executed as a module (a .pyi is Python whose bodies are ``...``): its functions and
    classes, with their signatures and annotations."""
    namespace: Dict[str, Any] = {"__name__": "accel_core_stub"}
    exec(compile(STUB.read_text(), str(STUB), "exec"), namespace)
    return namespace


STUB_NS = _load_stub()
STUB_FUNCTIONS = sorted(n for n, v in STUB_NS.items() if inspect.isfunction(v) and not n.startswith("_"))
STUB_CLASSES = sorted(n for n, v in STUB_NS.items() if inspect.isclass(v) and v.__module__ == "accel_core_stub")


def _core_names(core: Any) -> set:
    names = getattr(core, "__all__", None) or [n for n in dir(core) if not n.startswith("_")]
    return set(names) - OPTIONAL_NAMES


def _members(cls: type) -> Dict[str, str]:
    """name -> "property" or "method", for the public members and the protocol methods of the contract."""
    out = {}
    for name in dir(cls):
        if name.startswith("_") and name not in DUNDERS and name not in FEATURE_NAMES:
            continue
        member = inspect.getattr_static(cls, name)
        if name in ("__init__", "__repr__") and member is getattr(object, name):
            continue
        if name == "__init__" and cls.__name__ in NOT_CONSTRUCTED:
            continue
        out[name] = "property" if isinstance(member, property) or type(member).__name__ == "property" else "method"
    return out


@pytest.mark.parametrize("frontend", CORES)
def test_every_name_of_the_stub_and_no_other(frontend):
    assert _core_names(CORES[frontend]) == set(STUB_FUNCTIONS) | set(STUB_CLASSES), frontend


@pytest.mark.parametrize("frontend", CORES)
@pytest.mark.parametrize("cls_name", STUB_CLASSES)
def test_every_member_of_the_stub_and_no_other(frontend, cls_name):
    # The names of a declared difference (the buffer protocol, __array_interface__) depend on the core
    # and the Python: test_frontends.test_declared_differences_are_the_only_ones checks them.
    stub = {n: k for n, k in _members(STUB_NS[cls_name]).items() if n not in FEATURE_NAMES}
    core = {n: k for n, k in _members(getattr(CORES[frontend], cls_name)).items() if n not in FEATURE_NAMES}
    assert core == stub, f"{frontend} {cls_name}: {sorted(set(core.items()) ^ set(stub.items()))}"


@pytest.mark.parametrize("frontend", CORES)
def test_module_functions_take_the_stub_s_parameters(frontend):
    for name in STUB_FUNCTIONS:
        assert parameters(getattr(CORES[frontend], name)) == parameters(STUB_NS[name]), (frontend, name)


@pytest.mark.parametrize("frontend", CORES)
@pytest.mark.parametrize("cls_name", STUB_CLASSES)
def test_methods_take_the_stub_s_parameters(frontend, cls_name):
    stub_cls, core_cls = STUB_NS[cls_name], getattr(CORES[frontend], cls_name)
    for name, kind in _members(stub_cls).items():
        if kind != "method" or name in FEATURE_NAMES or not hasattr(core_cls, name):
            continue  # presence is test_every_member_of_the_stub_and_no_other's
        got = parameters(getattr(core_cls, name))
        want = parameters(getattr(stub_cls, name))
        # pybind11 writes a default as its repr, Python as repr() too: both compare as text
        assert got == want, f"{frontend} {cls_name}.{name}: {got} != stub {want}"


# ---- types ---------------------------------------------------------------------------------------------

def _conforms(value: Any, tp: Any) -> bool:
    """Whether ``value`` is of the typing annotation ``tp`` (the forms the stub uses)."""
    if tp is Any:
        return True
    if tp is None or tp is type(None):
        return value is None
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Union:
        return any(_conforms(value, a) for a in args)
    if origin in (list, collections.abc.Sequence):
        return isinstance(value, list) and all(_conforms(v, args[0]) for v in value)
    if origin is tuple:
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_conforms(v, args[0]) for v in value)
        return len(value) == len(args) and all(_conforms(v, a) for v, a in zip(value, args))
    if origin is dict:
        return isinstance(value, dict) and all(_conforms(k, args[0]) and _conforms(v, args[1])
                                               for k, v in value.items())
    if isinstance(tp, type):
        if tp.__module__ == "accel_core_stub":  # a class of the contract: the core's own of that name
            return type(value).__name__ == tp.__name__
        if tp is int:
            return isinstance(value, int) and not isinstance(value, bool)
        return isinstance(value, tp)
    raise AssertionError(f"the stub uses an annotation this check does not know: {tp!r}")


def _hints(fn: Any) -> Dict[str, Any]:
    if isinstance(fn, property):
        fn = fn.fget
    return typing.get_type_hints(fn, globalns=STUB_NS)


def _live_objects(core: Any, tiny_accm: Path) -> Dict[str, Any]:
    device = core.CoreDevice("emu:cores=1")
    model = device.load(tiny_accm.read_bytes())
    inputs = [device.alloc(max(t[5], 1)) for t in model.inputs()]
    outputs = [device.alloc(max(t[5], 1)) for t in model.outputs()]
    job = model.submit(inputs, outputs, lambda status, message, timing: None, flags=2)
    job.wait(30)
    spec = model.outputs()[0]
    tensor = core.CoreTensor(outputs[0], spec[1], accel.runtime.dtypes.dtype_from_code(spec[2]), "NCHW", "emu")
    return {"CoreDevice": device, "CoreBuffer": inputs[0], "CoreModel": model, "CoreJob": job,
            "CoreTensor": tensor}


# Calls with no arguments that change something, or need a setup first: not called here.
NOT_CALLED = {"close", "release", "check", "run_tensors", "__dlpack__", "__buffer__"}
# The module functions that take arguments, with the ones they are called with here.
ARGUMENTS: Dict[str, Tuple[Any, ...]] = {"describe": ("emu",), "parse_uri": ("emu:cores=2,int8=dpu",)}


@pytest.mark.parametrize("frontend", CORES)
def test_what_each_call_returns_has_the_stub_s_type(frontend, tiny_accm):
    core = CORES[frontend]
    for name in STUB_FUNCTIONS:
        value = getattr(core, name)(*ARGUMENTS.get(name, ()))
        assert _conforms(value, _hints(STUB_NS[name])["return"]), (frontend, name, value)
    objects = _live_objects(core, tiny_accm)
    checked = 0
    for cls_name, obj in objects.items():
        stub_cls = STUB_NS[cls_name]
        # and the `_`-named properties the stub declares: what accel.DeviceTensor reads of CoreTensor
        private = {n: "property" for n, m in vars(stub_cls).items()
                   if n.startswith("_") and not n.startswith("__") and isinstance(m, property)}
        for name, kind in {**_members(stub_cls), **private}.items():
            if name in NOT_CALLED or name.startswith("__init"):
                continue
            member = inspect.getattr_static(stub_cls, name)
            if kind == "method" and any(p.default is p.empty for p in
                                        list(inspect.signature(member).parameters.values())[1:]):
                continue  # needs arguments
            value = getattr(obj, name) if kind == "property" else getattr(obj, name)()
            assert _conforms(value, _hints(member)["return"]), \
                f"{frontend} {cls_name}.{name} returned {value!r}, the stub says {_hints(member)['return']}"
            checked += 1
    assert checked >= 20, checked
    tensor = objects["CoreTensor"]
    assert np.asarray(tensor).shape == tensor._shape and np.shares_memory(np.asarray(tensor), tensor._buffer.memory)
