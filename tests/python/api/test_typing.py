"""Typing and documentation: the package is marked typed (py.typed), the public API is annotated (or
stubbed), and every public name has a docstring."""
from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import accel

PKG = Path(accel.__file__).resolve().parent
PUBLIC_CLASSES = ["Device", "Model", "DeviceTensor", "TensorInfo", "Future"]
PUBLIC_FUNCTIONS = ["open", "backends", "profile"]


def public_names():
    names = getattr(accel, "__all__", None)
    assert names, "accel.__all__ lists the public API"
    return list(names)


def test_py_typed_marker():
    assert (PKG / "py.typed").is_file()


def test_all_is_complete():
    names = set(public_names())
    for n in PUBLIC_CLASSES + PUBLIC_FUNCTIONS + ["AccelError", "ShapeError", "DTypeError", "frontend",
                                                  "frontend_features"]:
        assert n in names, n
    for n in names:
        assert hasattr(accel, n), n


def _members(cls):
    """(name, member) defined by ``cls`` or by a base of it in the package (accel.Device's runtime base), each
    name once, as attribute lookup finds it."""
    seen = set()
    for klass in cls.__mro__:
        if klass is object or not klass.__module__.startswith("accel"):
            continue
        for attr, member in vars(klass).items():
            if attr not in seen:
                seen.add(attr)
                yield attr, member


def _doc_targets():
    for name in public_names():
        obj = getattr(accel, name)
        if isinstance(obj, (str, bytes, int, float, dict, list, tuple, frozenset, set)):
            continue  # data: documented in the module docstring
        yield name, obj
        if inspect.isclass(obj):
            for attr, member in _members(obj):
                if attr.startswith("_"):
                    continue
                if inspect.isfunction(member) or isinstance(member, (property, classmethod, staticmethod)) \
                        or inspect.isroutine(member) or type(member).__name__ in ("instancemethod",
                                                                                  "property"):
                    yield f"{name}.{attr}", member


@pytest.mark.parametrize("name,obj", list(_doc_targets()), ids=[n for n, _ in _doc_targets()])
def test_public_name_has_docstring(name, obj):
    if isinstance(obj, (classmethod, staticmethod)):
        obj = obj.__func__
    doc = inspect.getdoc(obj) if not isinstance(obj, property) else (obj.__doc__ or
                                                                    (obj.fget and obj.fget.__doc__))
    assert doc and doc.strip(), f"{name} has no docstring"
    if inspect.isclass(obj) and obj.__module__ != "builtins":
        # a class's docstring must be its own, not one inherited from a base
        assert obj.__doc__ and obj.__doc__.strip(), name


def test_module_docstrings():
    import importlib

    for name in ("accel", "accel.errors", "accel.device", "accel.runtime", "accel.runtime.device",
                 "accel.runtime.model", "accel.runtime.loading", "accel.futures", "accel.profiling",
                 "accel.runtime.tensor_info"):
        mod = importlib.import_module(name)
        assert mod.__doc__ and mod.__doc__.strip(), name


def _stub_for(obj):
    mod = getattr(obj, "__module__", "") or ""
    if not mod.startswith("accel"):
        return None
    rel = mod.split(".")[1:]
    for candidate in (PKG.joinpath(*rel).with_suffix(".pyi") if rel else PKG / "__init__.pyi",
                      PKG.joinpath(*rel, "__init__.pyi") if rel else PKG / "__init__.pyi"):
        if candidate.is_file():
            return candidate
    return None


def _annotated(fn):
    sig = inspect.signature(fn)
    for p in sig.parameters.values():
        if p.name in ("self", "cls") or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.annotation is inspect.Parameter.empty:
            return False
    return sig.return_annotation is not inspect.Signature.empty


def _signature_targets():
    for name in public_names():
        obj = getattr(accel, name)
        if inspect.isfunction(obj):
            yield name, obj, obj
        elif inspect.isclass(obj) and not issubclass(obj, BaseException):
            for attr, member in _members(obj):
                if attr.startswith("_") and attr not in ("__init__", "__enter__", "__exit__", "__await__"):
                    continue
                fn = member.fget if isinstance(member, property) else member
                if isinstance(fn, (classmethod, staticmethod)):
                    fn = fn.__func__
                if inspect.isfunction(fn):
                    yield f"{name}.{attr}", fn, obj


@pytest.mark.parametrize("name,fn,owner", list(_signature_targets()),
                         ids=[n for n, _, _ in _signature_targets()])
def test_public_api_is_annotated(name, fn, owner):
    assert _annotated(fn) or _stub_for(owner) is not None, f"{name} has no annotations and no stub"


def test_core_classes_are_stubbed_or_annotated():
    """DeviceTensor comes from the compiled core: its types must come from a stub."""
    cls = accel.DeviceTensor
    if inspect.isfunction(getattr(cls, "numpy", None)):
        assert _annotated(cls.numpy)
    else:
        stubs = list(PKG.rglob("*.pyi"))
        assert any("class DeviceTensor" in p.read_text() for p in stubs), stubs


def _annotation_namespace(module) -> dict:
    """The module's globals plus what it imports under ``if TYPE_CHECKING:`` only (names its annotations
    use but that it cannot import at run time without an import circle, e.g. model.py's Device)."""
    names = dict(vars(module))
    for node in ast.parse(inspect.getsource(module)).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom):
                    for alias in stmt.names:
                        if (alias.asname or alias.name) not in names:
                            source = importlib.import_module("." * stmt.level + (stmt.module or ""),
                                                             module.__package__)
                            names[alias.asname or alias.name] = getattr(source, alias.name)
    return names


def test_annotations_resolve():
    """String annotations (``from __future__ import annotations``) name things that exist."""
    import typing

    checked = 0
    for _name, fn, _owner in _signature_targets():
        if _annotated(fn):
            typing.get_type_hints(fn, globalns=_annotation_namespace(sys.modules[fn.__module__]))
            checked += 1
    assert checked > 0


def test_mypy_accepts_typical_usage(tmp_path):
    """With mypy installed (optional), typical user code type-checks strictly against the package;
    without it, the snippet is at least compiled and its names resolved at run time."""
    snippet = tmp_path / "usage.py"
    snippet.write_text(
        "import numpy as np\n"
        "import accel\n"
        "def f(path: str) -> None:\n"
        "    with accel.open('emu') as dev:\n"
        "        m = dev.load(path)\n"
        "        x = dev.empty(m.inputs[0].shape, m.inputs[0].dtype)\n"
        "        ys = m.run(x)\n"
        "        y: np.ndarray = ys[0]\n"
        "        fut = m.run_async(x)\n"
        "        zs = fut.result()\n"
        "        print(y.shape, len(zs), dev.stats()['bytes_copied'], dev.info.cores)\n")
    have_mypy = subprocess.run([sys.executable, "-c", "import mypy"], capture_output=True).returncode == 0
    if have_mypy:
        r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(snippet)],
                           capture_output=True, text=True, cwd=tmp_path)
        assert r.returncode == 0, r.stdout + r.stderr
    else:
        ns: dict = {}
        exec(compile(snippet.read_text(), str(snippet), "exec"), ns)
        import typing

        assert typing.get_type_hints(ns["f"]) == {"path": str, "return": type(None)}
        for attr in ("load", "empty", "stats"):
            assert callable(getattr(accel.Device, attr))
        for attr in ("run", "run_async"):
            assert callable(getattr(accel.Model, attr))
