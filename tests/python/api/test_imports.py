"""The package's own modules import each other without a circle, read from their source (no import runs):
the model compiler (emulator/compiler, installed as accel.compiler), the pure-Python package
(python/accel) and the cffi core (py_cffi/core, installed as accel._cffi_core).

A circle that works only because of import order (a module importing another at its bottom, or inside a
function, so that the other finds it half-initialized) breaks as soon as someone imports the other module
first. Function-level imports count as edges here, as do bottom-of-module ones; only `if TYPE_CHECKING:`
imports, which never run, do not. A late import silenced for ruff (`noqa: E402`) is refused outright. The
compiler's modules also keep their private names to themselves, and no compiler file written by hand grows
past MAX_COMPILER_LINES.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[3]
COMPILER = ROOT / "emulator" / "compiler"
SOURCES = {  # installed package name -> its source directory
    "accel.compiler": COMPILER,
    "accel": ROOT / "python" / "accel",
    "accel._cffi_core": ROOT / "py_cffi" / "core",
}
MAX_COMPILER_LINES = 450
_LATE_IMPORT = re.compile(r"#\s*noqa\b[^#\n]*\bE402\b")


def source_modules() -> Dict[str, Path]:
    """{dotted module name: source file} of every module of SOURCES."""
    modules = {}
    for package, directory in SOURCES.items():
        for path in sorted(directory.rglob("*.py")):
            parts = list(path.relative_to(directory).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join([package, *parts])] = path
    return modules


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of `tree` that can run: all but the bodies of `if TYPE_CHECKING:`."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and ast.unparse(child.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
                stack.extend(child.orelse)
            else:
                stack.append(child)


def _own_module(name: str, modules: Dict[str, Path]) -> str:
    """The longest prefix of the dotted `name` that is one of `modules` ('' if none)."""
    parts = name.split(".")
    while parts and ".".join(parts) not in modules:
        parts.pop()
    return ".".join(parts)


def imports_of(module: str, path: Path, modules: Dict[str, Path],
               typing: bool = False) -> Iterator[Tuple[ast.AST, str, List[str]]]:
    """(import node, imported module of `modules`, names it takes) for each runtime import of `module`, and with
    `typing` each `if TYPE_CHECKING:` one too."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in (ast.walk(tree) if typing else _runtime_nodes(tree)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _own_module(alias.name, modules)
                if target:
                    yield node, target, []
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                if f"{base}.{alias.name}" in modules:  # `from package import submodule`
                    yield node, f"{base}.{alias.name}", []
                elif base in modules:
                    yield node, base, [alias.name]


def import_graph(typing: bool = False) -> Dict[str, Set[str]]:
    modules = source_modules()
    graph: Dict[str, Set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        for _, target, _ in imports_of(module, path, modules, typing):
            if target != module:
                graph[module].add(target)
    return graph


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan), each as a closed path
    [a, b, ..., a] through its modules."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    components: List[Set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_closed_path(graph, c) for c in components]


def _closed_path(graph: Dict[str, Set[str]], component: Set[str]) -> List[str]:
    """A shortest path from the component's first module back to itself (breadth first)."""
    start = min(component)
    parent: Dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for v in frontier:
            for w in sorted(graph[v] & component):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(parent[path[-1]])
                    return [*reversed(path), start]
                if w not in parent:
                    parent[w] = v
                    following.append(w)
        frontier = following
    raise AssertionError(f"{sorted(component)} is not a cycle")


def test_the_sources_are_found():
    modules = source_modules()
    for package in SOURCES:
        assert package in modules, f"no {package} package at {SOURCES[package]}"
    assert "accel.compiler.lower" in modules


def _package_of(module: str) -> str:
    return max((p for p in SOURCES if module == p or module.startswith(f"{p}.")), key=len)


# Circles there today, each with where it is. Strict: the test fails once the circle is gone, so that the
# entry is removed with it.
KNOWN_CIRCLES: dict = {}


@pytest.mark.parametrize("package", [
    pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=KNOWN_CIRCLES[p])) if p in KNOWN_CIRCLES else p
    for p in SOURCES])
def test_no_import_circle(package):
    found = [c for c in cycles(import_graph()) if package in {_package_of(m) for m in c}]
    assert not found, "import circles (a module importing, directly or through others, itself):\n" + \
        "\n".join(" -> ".join(c) for c in found)


# The layers of python/accel, lowest first: a module imports (at run time or for typing alone) only modules of its
# own layer or of a lower one. A folder's modules are its layer's (so the folders show the layers); "accel" is the
# package's __init__ alone. A module of python/accel that no entry names fails test_every_module_has_a_layer: a new
# module is placed here when it is written.
LAYERS: List[Tuple[str, List[str]]] = [
    # What everything may use, and the packages of their own beside accel's (the model compiler, the cffi core).
    ("base", ["accel.errors", "accel._lazy_import", "accel._forksafe", "accel._wording", "accel.compiler",
              "accel._cffi_core"]),
    # The runtime: runtime/ and, at the paths the documents give, its public modules and the model front ends.
    ("runtime", ["accel.runtime", "accel.futures", "accel.profiling", "accel.compile_cache", "accel._cache_folder",
                 "accel.front_ends"]),
    ("ops", ["accel.ops"]),
    # accel.Device: the runtime's device with loading and the ops.
    ("device", ["accel.device"]),
    ("tools", ["accel.comparison", "accel.image", "accel.quantization", "accel.array_files", "accel.run_record"]),
    ("package", ["accel"]),
    ("apps", ["accel.cli", "accel.commands", "accel.selftest", "accel.ray", "accel.demo", "accel.models",
              "accel.shims"]),
]


def layer_of(module: str, layers: List[Tuple[str, List[str]]]) -> int:
    """The index in `layers` of the entry that holds `module` (the longest that names it or a package above it; a
    top-level package's name, "accel", names its __init__ only); -1 if none does."""
    best, found = -1, -1
    for index, (_, entries) in enumerate(layers):
        for entry in entries:
            holds = module == entry or ("." in entry and module.startswith(entry + "."))
            if holds and len(entry) > best:
                best, found = len(entry), index
    return found


def layer_breaks(layers: List[Tuple[str, List[str]]], package: str = "accel") -> List[str]:
    """Each import of a module of `package`'s source (TYPE_CHECKING ones too) that goes to a higher layer, as
    "path:line: module (layer) imports target (layer)", each once."""
    modules = source_modules()
    breaks: Dict[str, None] = {}  # in the order found
    for module, path in modules.items():
        if _package_of(module) != package:
            continue
        for node, target, _ in imports_of(module, path, modules, typing=True):
            low, high = layer_of(module, layers), layer_of(target, layers)
            if high > low:
                breaks[f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}: {module} ({layers[low][0]}) imports "
                       f"{target} ({layers[high][0]})"] = None
    return list(breaks)


def test_every_module_has_a_layer():
    unplaced = [m for m in source_modules() if _package_of(m) == "accel" and layer_of(m, LAYERS) < 0]
    assert not unplaced, "modules in no layer (place each in LAYERS):\n" + "\n".join(unplaced)


def test_imports_go_to_the_same_or_a_lower_layer():
    breaks = layer_breaks(LAYERS)
    assert not breaks, "imports of a higher layer (move the code, or pass what it needs down):\n" + "\n".join(breaks)


def test_no_import_circle_in_the_package_not_even_of_types():
    graph = import_graph(typing=True)
    found = [c for c in cycles(graph) if _package_of(c[0]) == "accel"]
    assert not found, "import circles, TYPE_CHECKING imports included:\n" + "\n".join(" -> ".join(c) for c in found)


def test_no_late_import_to_dodge_a_circle():
    late = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
            for path in source_modules().values()
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
            if _LATE_IMPORT.search(line)]
    assert not late, "imports below the top of a module (import what you need at the top instead):\n" + \
        "\n".join(late)


def test_compiler_modules_import_no_private_name():
    modules = source_modules()
    private = [f"{path.relative_to(ROOT)}:{node.lineno}: {name} from {target}"
               for module, path in modules.items() if module.startswith("accel.compiler")
               for node, target, names in imports_of(module, path, modules)
               for name in names if name.startswith("_") and not name.startswith("__")]
    assert not private, "private names imported from another module (make them public):\n" + "\n".join(private)


def _written_by_hand(path: Path) -> bool:
    """Not a file tools/op_table.py generates from the op schema (its length is the schema's)."""
    head = "".join(path.read_text(encoding="utf-8").splitlines(True)[:5])
    return "Generated by `python tools/op_table.py`" not in head


@pytest.mark.parametrize("path", sorted(p for p in COMPILER.rglob("*.py") if _written_by_hand(p)),
                         ids=lambda p: str(p.relative_to(COMPILER)))
def test_compiler_files_stay_short(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_COMPILER_LINES, f"{path.relative_to(ROOT)} has {lines} lines (> {MAX_COMPILER_LINES}): " \
                                        f"split it by what its parts do"


# The checks checked: each must catch what it is for.

def test_a_circle_is_found_and_named():
    graph = {"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a"}, "p.d": {"p.a"}, "p.e": set()}
    assert cycles(graph) == [["p.a", "p.b", "p.c", "p.a"]]
    assert cycles({"p.a": {"p.b"}, "p.b": set()}) == []


def test_function_level_and_bottom_imports_are_edges_and_type_checking_ones_are_not(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import C\n"
                              "def f():\n    from .b import g\n    return g\n")
    (pkg / "b.py").write_text("def g():\n    pass\nfrom . import a  # noqa: E402\n")
    (pkg / "c.py").write_text("from .a import f\n")
    monkeypatch.setitem(globals(), "SOURCES", {"pkg": pkg})
    graph = import_graph()
    assert graph == {"pkg": set(), "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a"}, "pkg.c": {"pkg.a"}}
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.a"]]
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    with pytest.raises(AssertionError, match=r"pkg/b.py:3"):
        test_no_late_import_to_dodge_a_circle()


def test_an_import_of_a_higher_layer_or_of_no_layer_is_found(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg"
    (pkg / "low").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "low" / "__init__.py").write_text("")
    (pkg / "low" / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..high import H\n")
    (pkg / "high.py").write_text("from .low import a\n")
    (pkg / "loose.py").write_text("")
    monkeypatch.setitem(globals(), "SOURCES", {"pkg": pkg})
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    layers = [("low", ["pkg.low"]), ("high", ["pkg.high"]), ("package", ["pkg"])]
    assert layer_of("pkg.low.a", layers) == 0 and layer_of("pkg", layers) == 2 and layer_of("pkg.loose", layers) == -1
    assert layer_breaks(layers, "pkg") == ["pkg/low/a.py:3: pkg.low.a (low) imports pkg.high (high)"]
    assert cycles(import_graph(typing=True)) == [["pkg.high", "pkg.low.a", "pkg.high"]]
    assert cycles(import_graph()) == []
