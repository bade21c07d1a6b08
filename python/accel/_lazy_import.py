"""Imports made on first use (onnx, onnxruntime, accel.compiler) that an interruption cannot leave half made.

When a package's ``__init__`` raises (Ctrl-C while it loads, most often), Python drops the package from
``sys.modules`` but keeps the submodules it had finished importing. The next import runs the package's
``__init__`` again, finds those submodules already loaded and so never binds them as its attributes: every later use
fails with "module 'onnx' has no attribute 'external_data_helper'", blaming whatever the process does next. Each
lazy import is therefore written as::

    with import_or_undo():
        import onnx

which, when the import raises, removes the modules that import loaded and left without their package, so the next
import starts clean. Compiled extension modules are kept (some, such as onnx's nanobind module, abort the process
when initialized twice); they are bound to their package again after its next import.
"""
from __future__ import annotations

import importlib
import importlib.machinery
import sys
import threading
from contextlib import contextmanager
from types import ModuleType
from typing import Iterator, List

__all__ = ["import_optional", "import_or_undo"]

_lock = threading.Lock()
# Extension modules an undone import left without their package: bound to it once it is imported again.
_unbound: List[str] = []


@contextmanager
def import_or_undo() -> Iterator[None]:
    """Runs the import statements of its block; if they raise (anything, KeyboardInterrupt included), removes the
    modules they loaded whose package is gone before the exception goes on."""
    before = set(sys.modules)
    try:
        yield
    except BaseException:
        _undo([name for name in list(sys.modules) if name not in before])
        raise
    if _unbound:
        _bind_unbound()


def import_optional(name: str, needs: str, install: str) -> ModuleType:
    """Module ``name`` of an optional dependency, imported as :func:`import_or_undo` does. When it is missing: an
    ImportError ``"{needs}: {install} (why)"`` (``needs``: what needs it, "plotting needs matplotlib"; ``install``:
    the command, "pip install matplotlib"), which the ``accel`` command prints as its error rather than a
    traceback."""
    with import_or_undo():
        try:
            return importlib.import_module(name)
        except ImportError as e:
            raise ImportError(f"{needs}: {install} ({e})", name=name) from None


def _undo(loaded: List[str]) -> None:
    """Removes from ``sys.modules`` those of ``loaded`` that a missing package leaves orphaned."""
    for name in loaded:
        module = sys.modules.get(name)
        if module is None or not _orphaned(name):
            continue
        if _runs_again(module):
            sys.modules.pop(name, None)
        else:
            with _lock:
                _unbound.append(name)


def _orphaned(name: str) -> bool:
    parts = name.split(".")
    return any(".".join(parts[:i]) not in sys.modules for i in range(1, len(parts)))


def _runs_again(module: object) -> bool:
    """Whether ``module`` can safely be executed again: Python source (or bytecode), or a namespace package."""
    spec = getattr(module, "__spec__", None)
    loader = getattr(spec, "loader", None)
    if isinstance(loader, (importlib.machinery.SourceFileLoader, importlib.machinery.SourcelessFileLoader)):
        return True
    return spec is not None and spec.origin is None and spec.submodule_search_locations is not None


def _bind_unbound() -> None:
    """Sets each kept extension module as its package's attribute, once that package is imported again."""
    with _lock:
        waiting = []
        for name in _unbound:
            parent, _, child = name.rpartition(".")
            package = sys.modules.get(parent)
            if package is None:
                waiting.append(name)
            elif not hasattr(package, child) and name in sys.modules:
                setattr(package, child, sys.modules[name])
        _unbound[:] = waiting
