"""The model compiler is a package of its own (emulator/compiler, installed as accel.compiler): it imports from the
rest of accel only what it declares in its _shared.py, each of those a leaf, and it imports, compiles and runs as
`python -m accel.compiler` with nothing else of accel present, as tests/tools/stage_compiler.py stages it for the C
tests (copies, never links into the sources)."""
from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Iterator, List, Set, Tuple

import onnx
from onnx import TensorProto, helper

ROOT = Path(__file__).resolve().parents[3]
COMPILER = ROOT / "emulator" / "compiler"
PACKAGE = ROOT / "python" / "accel"
DECLARATION = COMPILER / "_shared.py"


def _stager():
    spec = importlib.util.spec_from_file_location("stage_compiler", ROOT / "tests" / "tools" / "stage_compiler.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _imported_modules(path: Path, package: str) -> Iterator[Tuple[int, str]]:
    """(line, absolute module name) of every import statement in `path` (a module of `package`), wherever it is
    (top level, in a function, under TYPE_CHECKING): a `from X import a` yields X and X.a, as a may be a module."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def _package_of(path: Path, root: Path, name: str) -> str:
    parts = list(path.relative_to(root).parent.parts)
    return ".".join([name, *parts])


def _is_module(name: str) -> bool:
    """Whether the dotted `name` is a module of python/accel (not a name inside one)."""
    parts = name.split(".")[1:]
    return PACKAGE.joinpath(*parts).with_suffix(".py").is_file() or (PACKAGE.joinpath(*parts) / "__init__.py").is_file()


def test_the_compiler_imports_from_accel_only_in_its_declaration():
    declared = _stager().declared_modules()
    assert declared == ["accel._lazy_import", "accel.image.formula", "accel.runtime.image_formats"]
    outside = []
    for path in sorted(COMPILER.rglob("*.py")):
        for line, name in _imported_modules(path, _package_of(path, COMPILER, "accel.compiler")):
            if name.split(".")[0] != "accel" or name.startswith("accel.compiler") or not _is_module(name):
                continue
            if name in ("accel", "accel.image"):
                continue  # the packages above a declared module, imported on the way to it
            where = f"{path.relative_to(ROOT)}:{line}: {name}"
            if path != DECLARATION or name not in declared:
                outside.append(where)
    assert not outside, "imports of accel outside the compiler's _shared.py declaration:\n" + "\n".join(outside)


def test_what_the_compiler_declares_imports_nothing_of_accel():
    for module in _stager().declared_modules():
        path = PACKAGE.joinpath(*module.split(".")[1:]).with_suffix(".py")
        package = module.rpartition(".")[0]
        taken = [f"{line}: {name}" for line, name in _imported_modules(path, package)
                 if name.split(".")[0] == "accel" and _is_module(name)]
        assert not taken, f"{module} (declared by the compiler) imports accel modules: {taken}"


def _image_model(path: Path) -> None:
    x = helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, 4, 6])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 4, 6])
    graph = helper.make_graph([helper.make_node("Relu", ["images"], ["y"])], "g", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


def _packages_above(modules: List[str]) -> Set[str]:
    """The packages that hold `modules` ("accel", "accel.image" for "accel.image.formula"): staged as empty ones."""
    return {".".join(m.split(".")[:i]) for m in modules for i in range(1, len(m.split(".")))}


def test_the_compiler_compiles_with_only_what_it_declares(tmp_path):
    staging = tmp_path / "staging"
    declared = _stager().stage(staging)
    model = tmp_path / "model.onnx"
    _image_model(model)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYTHONPATH=str(staging), PYTHONDONTWRITEBYTECODE="1")
    script = textwrap.dedent(f"""
        import sys
        import accel.compiler as compiler
        assert compiler.__file__.startswith({str(staging)!r}), compiler.__file__
        data = compiler.compile_model({str(model)!r}, image_inputs={{"images": {{"format": "nv12", "to": "rgb"}}}})
        tables = compiler.accm.read(data)
        assert tables["tensors"][0]["image_format"] == compiler.accm.IMAGE_FORMATS["nv12"]
        print(sorted(m for m in sys.modules if m.startswith("accel") and not m.startswith("accel.compiler")))
    """)
    run = subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert ast.literal_eval(run.stdout.strip()) == sorted({*_packages_above(declared), *declared})
    cli = subprocess.run([sys.executable, "-m", "accel.compiler", str(model), "-o", str(tmp_path / "m.accm")],
                         env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert cli.returncode == 0, cli.stderr
    assert " nodes, " in cli.stdout and (tmp_path / "m.accm").stat().st_size > 0


def test_staging_copies_and_never_follows_an_older_link(tmp_path):
    # An older build dir held links into the sources (accel/compiler, accel/image, accel/errors.py): restaging
    # removes the links and never what they point at.
    sources = tmp_path / "sources"
    (sources / "image").mkdir(parents=True)
    (sources / "image" / "keep.py").write_text("# a source\n")
    (sources / "errors.py").write_text("# a source\n")
    staging = tmp_path / "staging"
    (staging / "accel").mkdir(parents=True)
    (staging / "accel" / "image").symlink_to(sources / "image", target_is_directory=True)
    (staging / "accel" / "errors.py").symlink_to(sources / "errors.py")
    (staging / "accel" / "compiler").symlink_to(sources, target_is_directory=True)
    (staging / "accel" / "stale.py").write_text("# gone from the sources\n")
    stager = _stager()
    stager.stage(staging)
    assert (sources / "image" / "keep.py").is_file() and (sources / "errors.py").is_file()
    staged = sorted(p.relative_to(staging).as_posix() for p in staging.rglob("*"))
    assert not [p for p in staging.rglob("*") if p.is_symlink()]
    empty_inits = {name.replace(".", "/") + "/__init__.py" for name in _packages_above(_stager().declared_modules())}
    assert sorted(p.as_posix() for p in stager.staged_files()) == [
        p for p in staged if p.endswith(".py") and p not in empty_inits]
    for target, source in stager.staged_files().items():
        assert (staging / target).read_bytes() == source.read_bytes()
