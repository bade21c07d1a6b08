"""The docs cannot fall behind the code: docs/python-api.md names every public Python name with its
signature, docs/c-api.md names every function accel.h exports (and nothing it does not declare), the
examples of the pages run (the Python ones in order as one session, the C example and the minimal
driver compiled and run), and every relative link of docs/ resolves.

The docs are hand-written; this file only checks them.
"""
from __future__ import annotations

import dataclasses
import inspect
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, Iterator, List, Set, Tuple

import numpy as np
import pytest

import accel
import accel.image
import c_programs

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"
HEADER = ROOT / "libaccel" / "include" / "accel" / "accel.h"
PYTHON_API = DOCS / "python-api.md"
C_API = DOCS / "c-api.md"
DRIVER_GUIDE = DOCS / "writing-a-driver.md"

# The classes whose public methods and properties python-api.md must name as `Class.member`.
CLASSES = ["Device", "Model", "DeviceTensor", "TensorInfo", "Future", "DeviceInfo", "Quantization", "ImageInfo",
           "Profile", "JobRecord", "AccelError", "PendingTensor", "DeviceCapabilities"]
# Special methods that are part of a class's public surface when it has them.
PUBLIC_DUNDERS = {"__dlpack__", "__dlpack_device__"}


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def mentions(text: str, qualified: str) -> bool:
    """True if `qualified` appears in inline code, alone or followed by its arguments or a member."""
    return re.search(r"`" + re.escape(qualified) + r"(?![\w])", text) is not None


# ---- Python: names -----------------------------------------------------------------------------------


def public_members(cls: type) -> List[str]:
    """The members accel defines on `cls` (inherited ones from outside accel excluded)."""
    names: Set[str] = set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith("accel"):
            continue
        names.update(n for n in vars(klass) if not n.startswith("_") or n in PUBLIC_DUNDERS)
        names.update(n for n in getattr(klass, "__annotations__", {}) if not n.startswith("_"))
    if dataclasses.is_dataclass(cls):
        names.update(f.name for f in dataclasses.fields(cls))
    names.update(getattr(cls, "_fields", ()))  # named tuples
    return sorted(names)


def module_names() -> List[str]:
    names = [f"accel.{n}" for n in accel.__all__]
    names += [f"accel.errors.{n}" for n in accel.errors.__all__ if not hasattr(accel, n)]
    names += [f"accel.compile_cache.{n}" for n in accel.compile_cache.__all__]
    names += [f"accel.{n}" for n in accel.profiling.__all__]
    names += [f"accel.image.{n}" for n in accel.image.__all__]
    return names


@pytest.mark.parametrize("name", module_names())
def test_public_name_is_documented(name):
    assert mentions(read(PYTHON_API), name), f"docs/python-api.md does not mention `{name}`"


@pytest.mark.parametrize("cls_name", CLASSES)
def test_class_members_are_documented(cls_name):
    text = read(PYTHON_API)
    cls = getattr(accel, cls_name)
    missing = [m for m in public_members(cls) if not mentions(text, f"{cls_name}.{m}")]
    assert not missing, f"docs/python-api.md does not mention {', '.join(f'`{cls_name}.{m}`' for m in missing)}"


# ---- Python: signatures ------------------------------------------------------------------------------


def render_default(value: Any) -> str:
    if isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    if isinstance(value, str):
        return '"' + value + '"'
    return repr(value)


def render_signature(fn: Any) -> str:
    """`fn`'s parameters as the docs write them: no self, no annotations, defaults as written in code."""
    parts: List[str] = []
    star_done = False
    for p in inspect.signature(fn).parameters.values():
        if p.name == "self":
            continue
        if p.kind is p.KEYWORD_ONLY and not star_done:
            parts.append("*")
            star_done = True
        text = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "") + p.name
        if p.kind is p.VAR_POSITIONAL:
            star_done = True
        if p.default is not p.empty:
            text += "=" + render_default(p.default)
        parts.append(text)
    return ", ".join(parts)


def documented_callables() -> Iterator[Tuple[str, Any]]:
    """(name as the docs write it, the callable) for every public function, method and constructor."""
    for n in accel.__all__:
        obj = getattr(accel, n)
        if inspect.isfunction(obj):
            yield f"accel.{n}", obj
        elif isinstance(obj, type) and obj.__init__ is not object.__init__:
            yield f"accel.{n}", obj.__init__
    for n in accel.errors.__all__:
        if inspect.isfunction(getattr(accel.errors, n)):
            yield f"accel.errors.{n}", getattr(accel.errors, n)
    for n in accel.compile_cache.__all__:
        yield f"accel.compile_cache.{n}", getattr(accel.compile_cache, n)
    for n in accel.image.__all__:
        if inspect.isfunction(getattr(accel.image, n)):
            yield f"accel.image.{n}", getattr(accel.image, n)
    for cls_name in CLASSES:
        cls = getattr(accel, cls_name)
        for m in public_members(cls):
            try:
                member = inspect.getattr_static(cls, m)
            except AttributeError:  # a dataclass field without a default: an instance attribute
                continue
            fn = getattr(cls, m)
            if isinstance(member, property) or not callable(fn):
                continue
            yield f"{cls_name}.{m}", fn


def is_constructor(name: str) -> bool:
    return name.rpartition(".")[2][:1].isupper()


def documented_signatures(text: str, name: str) -> List[str]:
    """The argument lists written after `name(` where the docs define a callable: the headings and the
    first cells of table rows (prose may show calls with arguments of its own); for a class, anywhere."""
    places = "\n".join(line for line in text.splitlines() if line.startswith(("#", "| `")))
    pattern = r"^(?:#+ |\| )`" + re.escape(name) + r"\(([^`]*)\)`"
    if is_constructor(name):
        places, pattern = text, r"`" + re.escape(name) + r"\(([^`]*)\)`"
    return [re.sub(r"\s+", " ", m.group(1)).strip() for m in re.finditer(pattern, places, re.M)]


def test_signatures_match_the_code():
    text = read(PYTHON_API)
    wrong = []
    checked = 0
    for name, fn in documented_callables():
        try:
            expected = render_signature(fn)
        except (TypeError, ValueError):  # a pybind11 builtin: its parameters are test_frontends.py's
            continue
        for written in documented_signatures(text, name):
            checked += 1
            if written != expected:
                wrong.append(f"`{name}({written})` should be `{name}({expected})`")
    assert not wrong, "docs/python-api.md: " + "; ".join(wrong)
    assert checked >= 20, f"only {checked} signatures found in docs/python-api.md"


def test_device_ops_are_documented_with_their_signatures():
    # Device.ops is an accel.ops.Ops (not a public name of its own): every op is a row of its table.
    text = read(PYTHON_API)
    ops = [(n, f) for n, f in vars(accel.ops.Ops).items() if not n.startswith("_") and inspect.isfunction(f)]
    assert len(ops) >= 27
    wrong = []
    for name, fn in ops:
        written = documented_signatures(text, f"Device.ops.{name}")
        if written != [render_signature(fn)]:
            wrong.append(f"`Device.ops.{name}({render_signature(fn)})` (written: {written})")
    assert not wrong, "docs/python-api.md: " + "; ".join(wrong)


def test_every_method_has_a_documented_signature():
    text = read(PYTHON_API)
    missing = [name for name, fn in documented_callables()
               if inspect.isfunction(fn) and not is_constructor(name) and not documented_signatures(text, name)]
    assert not missing, f"docs/python-api.md gives no `name(...)` signature for {missing}"


def test_exceptions_table_matches_the_codes():
    rows = {}
    for line in read(PYTHON_API).splitlines():
        m = re.match(r"\| `accel\.(\w+)` \|", line)
        if m:
            rows[m.group(1)] = line
    for name in accel.errors.__all__:
        cls = getattr(accel.errors, name)
        if not isinstance(cls, type):
            continue
        assert name in rows, f"docs/python-api.md: no row for `accel.{name}` in the errors table"
        if cls is not accel.AccelError:
            assert f"| {cls.default_status}, `{accel.errors.status_name(cls.default_status)}` |" in rows[name], \
                f"docs/python-api.md: `accel.{name}` row does not give status {cls.default_status}"
        for base in cls.__bases__:
            if base.__module__ == "builtins" and base is not Exception:
                assert f"`{base.__name__}`" in rows[name], f"`accel.{name}` row does not say it is a {base.__name__}"


# ---- C: the header's functions -----------------------------------------------------------------------


def exported_functions() -> List[str]:
    text = read(HEADER)
    names = re.findall(r"ACCEL_API\s+[\w\s\*]*?\b(accel_\w+)\s*\(", text)
    assert len(names) == text.count("ACCEL_API"), "accel.h: an ACCEL_API declaration was not understood"
    return names


def header_identifiers() -> Set[str]:
    found: Set[str] = set()
    headers = list((ROOT / "libaccel" / "include").rglob("*.h"))
    for path in headers + list((ROOT / "libaccel" / "driver_kit").rglob("*")):
        if path.is_file():
            found.update(re.findall(r"\b(?:accel|ACCEL)_\w+", read(path)))
    return found


def test_c_guide_mentions_every_exported_function():
    text = read(C_API)
    functions = exported_functions()
    assert len(functions) >= 40
    missing = [f for f in functions if not re.search(r"`" + f + r"[`(]", text)]
    assert not missing, f"docs/c-api.md does not mention {missing}"


def test_c_guide_lists_every_status_code():
    text = read(C_API)
    codes = re.findall(r"^\s*(ACCEL_(?:OK|ERR_\w+)) = (\d+)", read(HEADER), re.M)
    for name, value in codes:
        assert f"| `{name}` | {value} |" in text, f"docs/c-api.md: no row for {name} = {value}"


@pytest.mark.parametrize("page", [C_API, DRIVER_GUIDE], ids=lambda p: p.name)
def test_c_names_in_the_docs_exist(page):
    known = header_identifiers()
    used = set(re.findall(r"\b(?:accel|ACCEL)_\w+", read(page)))
    # Environment variables, CMake options and targets the pages name.
    used = {u for u in used if not re.fullmatch(r"ACCEL_(DRIVER_PATH|EMU_DEBUG|TEST_\w+|FRONTEND|\w+_SDK|BPU_API|"
                                                 r"BUILD_TESTS|CACHE_DIR)|accel_(driver_\w+_ucp|standin_\w+)", u)}
    # A name ending in "_" is a prefix written before a placeholder (accel_driver_<scheme>).
    unknown = sorted(u for u in used - known - {"accel_driver_kit", "accel_driver_emu", "accel_driver_null"}
                     if not u.endswith("_"))
    assert not unknown, f"docs/{page.name} names {unknown}, which no header declares"


# ---- examples ----------------------------------------------------------------------------------------


def code_blocks(path: Path, language: str) -> List[str]:
    return re.findall(r"^```" + language + r"\n(.*?)^```", read(path), re.M | re.S)


@pytest.mark.parametrize("page", [PYTHON_API, DOCS / "emulator-format.md", DOCS / "image-inputs.md"],
                         ids=lambda p: p.name)
def test_python_examples_run(page, monkeypatch):
    blocks = code_blocks(page, "python")
    assert blocks, f"no python example in {page.name}"
    monkeypatch.chdir(ROOT)
    namespace: Dict[str, Any] = {"__name__": "docs_example"}
    for i, block in enumerate(blocks):
        exec(compile(block, f"{page.name} example {i + 1}", "exec"), namespace)
    dev = namespace.get("dev")
    if isinstance(dev, accel.Device):
        dev.close()


def test_the_readme_python_example_runs_outside_the_source_tree(tmp_path, monkeypatch):
    (block,) = code_blocks(ROOT / "README.md", "python")
    monkeypatch.chdir(tmp_path)  # no file of the checkout is at hand: the package ships what it uses
    namespace: Dict[str, Any] = {"__name__": "readme_example"}
    exec(compile(block, "README.md example", "exec"), namespace)
    assert namespace["logits"].shape == (1, 10) and (tmp_path / "trace.json").is_file()


def compile_c(source: str, out: Path, *flags: str) -> None:
    src = out.with_suffix(".c")
    src.write_text(source)
    c_programs.build(src, out, *flags)


def test_c_example_builds_and_runs(tmp_path):
    (source,) = [b for b in code_blocks(C_API, "c") if "int main(" in b]
    exe = tmp_path / "classify"
    compile_c(source, exe, "-std=c99")
    # The model and input as the page says to make them with an installed package, outside the source tree.
    made = subprocess.run([sys.executable, "-m", "accel.models", "tiny_cnn"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert made.returncode == 0 and "tiny_cnn.accm" in made.stdout, made.stderr
    assert "python -m accel.models tiny_cnn" in read(C_API)
    done = subprocess.run([str(exe), "tiny_cnn.accm", "tiny_cnn.input.bin"], cwd=tmp_path,
                          capture_output=True, text=True, env=c_programs.environment(""), timeout=60)
    assert done.returncode == 0, done.stderr
    got = np.array([float(v) for v in done.stdout.split()], dtype=np.float32)
    expected = np.fromfile(ROOT / "models" / "tiny_cnn.expected.bin", dtype=np.float32)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    assert "ran on core" in done.stderr


DRIVER_CHECK = textwrap.dedent("""
    import numpy as np
    import accel

    assert accel.backends() == ["null"], accel.backends()
    with accel.open("null") as dev:
        assert (dev.info.backend, dev.info.alignment) == ("null", 64)
        # A driver without the ABI 1.3 query is described by what libaccel knows of it: no format, no timings.
        caps = dev.capabilities
        assert (caps.model_format, caps.file_suffixes, caps.int8_rules, caps.node_times) == ("", (), None, False)
        a = np.arange(24, dtype=np.int32).reshape(4, 6)[::-1, ::2]
        t = dev.tensor(a)
        assert np.array_equal(np.asarray(t), a)
        assert dev.stats()["bytes_copied"] == a.nbytes and dev.stats()["live_buffers"] == 1
        try:
            dev.load(b"ACCM" + bytes(124))
        except accel.UnsupportedError as e:
            assert "runs no models" in str(e)
        else:
            raise AssertionError("load did not raise")
    try:
        accel.open("null:x=1")
    except accel.InvalidArgumentError as e:
        assert "no options" in str(e)
    else:
        raise AssertionError("an option was accepted")
    print("ok")
""")


def test_minimal_driver_builds_and_loads(tmp_path):
    (source,) = [b for b in code_blocks(DRIVER_GUIDE, "c") if "accel_driver_entry" in b]
    drivers = tmp_path / "drivers"
    drivers.mkdir()
    compile_c(source, drivers / "libaccel_driver_null.so", "-std=c11", "-shared", "-fPIC", "-fvisibility=hidden")
    done = subprocess.run([sys.executable, "-c", DRIVER_CHECK], capture_output=True, text=True,
                          env=c_programs.environment(str(drivers)), timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr


# ---- links -------------------------------------------------------------------------------------------


def slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> Set[str]:
    return {slug(h) for h in re.findall(r"^#+ (.*)$", read(path), re.M)}


PAGES = sorted(DOCS.rglob("*.md"))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_links_resolve(page):
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", read(page)):
        if re.match(r"[a-z]+:", target):
            continue
        file_part, _, anchor = target.partition("#")
        dest = (page.parent / file_part).resolve() if file_part else page
        if not dest.exists() or (anchor and dest.suffix == ".md" and anchor not in anchors(dest)):
            broken.append(target)
    assert not broken, f"docs/{page.relative_to(DOCS)}: broken links {broken}"


def test_index_lists_every_page():
    index = read(DOCS / "README.md")
    linked = {(DOCS / t).resolve() for t in re.findall(r"\]\(([^)#\s]+)", index)}
    missing = [str(p.relative_to(DOCS)) for p in PAGES if p.name != "README.md" and p.resolve() not in linked]
    assert not missing, f"docs/README.md does not link {missing}"
