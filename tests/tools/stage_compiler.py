#!/usr/bin/env python3
"""Stages the model compiler from the source tree as an importable `accel.compiler`, for the C tests (a build step:
tests/CMakeLists.txt runs it on every build) and for tests/python/emulator/test_compiler_package.py.

    stage_compiler.py OUT_DIR      ->  OUT_DIR/accel/compiler/... and the modules it declares, nothing else

What is staged is the compiler's own folder (emulator/compiler) and the modules of accel it declares in
emulator/compiler/_shared.py (read from its import statements, not imported), copied, not linked: a link into the
source tree lets a tool that cleans the staging folder delete sources. The packages above them get an empty
__init__.py: the real accel/__init__.py loads a front-end, which a plain CMake build has not built, and the
compiler needs nothing from it. A copy is rewritten only when its source changed, and files whose source is gone
are removed, so that a rebuild leaves the staging folder as the sources are.
"""

from __future__ import annotations

import ast
import os
import shutil
import sys
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[2]
COMPILER = ROOT / "emulator" / "compiler"  # installed as accel.compiler (pyproject.toml's wheel.packages)
PACKAGE = ROOT / "python" / "accel"  # installed as accel
DECLARATION = COMPILER / "_shared.py"
_STUB = "# staged for the C tests by tests/tools/stage_compiler.py: the model compiler and what it declares only\n"


def declared_modules(declaration: Path = DECLARATION) -> List[str]:
    """The dotted names of the accel modules `declaration` (the compiler's _shared.py) imports, in its order."""
    modules: List[str] = []
    for node in ast.parse(declaration.read_text(encoding="utf-8"), str(declaration)).body:
        if not isinstance(node, ast.ImportFrom) or node.level < 2:
            continue  # `from __future__`, or the compiler's own modules
        base = ["accel", *(node.module.split(".") if node.module else [])]  # level 2: above accel.compiler
        for alias in node.names:  # `from ..image import formula` names a module; `from ..x import NAME` does not
            candidate = [*base, alias.name]
            name = ".".join(candidate if _source_of(candidate).is_file() else base)
            if name not in modules:
                modules.append(name)
    return modules


def _source_of(dotted: List[str]) -> Path:
    """The source file of the accel module `dotted` (['accel', 'image', 'formula'])."""
    return PACKAGE.joinpath(*dotted[1:]).with_suffix(".py")


def staged_files() -> Dict[Path, Path]:
    """{path under the staging folder: source file} of everything staged."""
    files = {Path("accel", "compiler", p.relative_to(COMPILER)): p for p in sorted(COMPILER.rglob("*.py"))
             if "__pycache__" not in p.parts}
    for module in declared_modules():
        dotted = module.split(".")
        source = _source_of(dotted)
        if not source.is_file():
            raise SystemExit(f"{DECLARATION}: declares {module}, which has no source file {source}")
        files[Path(*dotted[:-1], dotted[-1] + ".py")] = source
    return files


def stage(out: Path) -> List[str]:
    """Brings `out`/accel up to date with the sources; returns the declared modules staged beside the compiler."""
    files = staged_files()
    packages = {parent for path in files for parent in path.parents if parent != Path(".")}
    root = out / "accel"
    if root.is_symlink():  # an older build's link: removed, never followed
        root.unlink()
    for path in sorted(root.rglob("*"), reverse=True) if root.exists() else []:
        relative = path.relative_to(out)
        if path.is_symlink() or (path.is_file() and relative not in files and relative.name != "__init__.py"):
            path.unlink()
        elif path.is_dir() and not path.is_symlink() and relative not in packages:
            shutil.rmtree(path)
    for package in sorted(packages):
        (out / package).mkdir(parents=True, exist_ok=True)
        init = out / package / "__init__.py"
        if package / "__init__.py" not in files and (not init.is_file() or init.read_text() != _STUB):
            init.write_text(_STUB)
    for relative, source in files.items():
        target = out / relative
        data = source.read_bytes()
        if not target.is_file() or target.read_bytes() != data:
            tmp = target.with_name(f"{target.name}.tmp{os.getpid()}")
            tmp.write_bytes(data)
            os.replace(tmp, target)
    return declared_modules()


def main(argv: List[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    stage(Path(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
