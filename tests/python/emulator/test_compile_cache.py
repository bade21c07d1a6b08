"""The on-disk compile cache's size limit (least recently used entries go first), its settings (ACCEL_CACHE_SIZE,
ACCEL_CACHE_DIR), the files it removes (only its own, temporary ones included) and the `accel cache info|clear` verb.
Which files it trusts: test_cache_trust.py."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import accel
from accel import cli, compile_cache


def onnx_bytes(seed, n=64):
    """A MatMul model whose weight (n x n float32) makes each entry about n*n*4 bytes."""
    w = np.random.default_rng(seed).standard_normal((n, n)).astype(np.float32)
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "m",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])],
                          [numpy_helper.from_array(w, "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m.SerializeToString()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ACCEL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ACCEL_CACHE_SIZE", raising=False)
    compile_cache.clear_memory_cache()
    yield tmp_path / "cache"
    compile_cache.clear_memory_cache()


def compile_one(seed):
    compile_cache.clear_memory_cache()  # the disk is what is tested
    data = onnx_bytes(seed)
    _, key, hit = compile_cache.compile_onnx(data, None)
    return compile_cache.cache_dir() / f"{key}.entry", hit


def test_least_recently_used_entries_go_first(cache, monkeypatch):
    a, _ = compile_one(1)
    size = a.stat().st_size
    monkeypatch.setenv("ACCEL_CACHE_SIZE", str(int(2.5 * size)))  # room for two entries
    b, _ = compile_one(2)
    os.utime(a, (1000, 1000))
    os.utime(b, (2000, 2000))
    assert compile_one(1) == (a, True)  # a hit: `a` is now the most recently used
    c, hit = compile_one(3)
    assert not hit and a.exists() and c.exists() and not b.exists()
    assert compile_cache.info()["entries"] == 2 and compile_cache.info()["bytes"] <= 2.5 * size
    os.utime(a, (3000, 3000))
    os.utime(c, (4000, 4000))
    assert compile_one(2) == (b, False)  # compiled again; `a` is now the least recently used and goes
    assert sorted(p.name for p in cache.glob("*.entry")) == sorted([b.name, c.name])


def test_a_limit_of_zero_keeps_nothing_on_disk(cache, monkeypatch):
    monkeypatch.setenv("ACCEL_CACHE_SIZE", "0")
    path, _ = compile_one(4)
    assert not path.exists() and compile_one(4) == (path, False)


def test_an_entry_larger_than_the_limit_is_not_kept(cache, monkeypatch):
    monkeypatch.setenv("ACCEL_CACHE_SIZE", "1K")
    path, _ = compile_one(5)
    assert not path.exists() and compile_cache.info()["entries"] == 0


@pytest.mark.parametrize("text, limit", [("512M", 512 << 20), ("2g", 2 << 30), ("1.5K", 1536), ("100", 100),
                                         ("", compile_cache.DEFAULT_SIZE_LIMIT)])
def test_size_limit_syntax(monkeypatch, text, limit):
    monkeypatch.setenv("ACCEL_CACHE_SIZE", text)
    assert compile_cache.size_limit() == limit


@pytest.mark.parametrize("text", ["lots", "-1", "5T", "M", "1e400", pytest.param("9" * 400, id="400-digits"), "inf",
                                  "nan", "1e3", "0x10"])
def test_a_bad_size_limit_is_named(monkeypatch, text):
    """Before: 1e400 (and 400 digits) a raw OverflowError, inf the same, nan a raw ValueError."""
    monkeypatch.setenv("ACCEL_CACHE_SIZE", text)
    with pytest.raises(accel.InvalidArgumentError, match=f"ACCEL_CACHE_SIZE='{text}' is not a size: give a number "
                                                         f"of bytes with an optional K, M or G suffix"):
        compile_cache.size_limit()


def test_cache_verb_info_and_clear(cache, capsys):
    compile_one(6)
    compile_one(7)
    assert cli.main(["cache", "info", "--json"]) == 0
    i = json.loads(capsys.readouterr().out)
    assert i["folder"] == str(cache) and i["entries"] == 2 and i["bytes"] > 0
    assert i["limit_bytes"] == compile_cache.DEFAULT_SIZE_LIMIT
    assert cli.main(["cache", "info"]) == 0
    assert "entries: 2" in capsys.readouterr().out
    assert cli.main(["cache", "clear"]) == 0
    assert "removed 2 files" in capsys.readouterr().out
    assert not list(cache.glob("*.entry")) and compile_one(6)[1] is False


def test_cache_info_names_each_entrys_model(cache, capsys, tmp_path):
    """Each entry says what it was compiled from (the file's name, the input shapes, the rules), most recently used
    first; an entry an older accel wrote (no model line) is still read, listed unnamed, and cleared."""
    model = tmp_path / "named_net.onnx"
    model.write_bytes(onnx_bytes(8))
    with accel.open("emu:int8=dpu") as dev:
        dev.load(str(model), input_shapes={"x": (1, 64)})
    _, key, _ = compile_cache.compile_onnx(onnx_bytes(9), None, "the model bytes")
    older = cache / f"{key}.entry"
    raw = older.read_bytes()
    head_end = raw.index(b"\n", len(b"accel compile cache entry 2\n") + 130)
    data = raw[head_end + 1:]
    older.write_bytes(b"accel compile cache entry 1\n" + raw[len(b"accel compile cache entry 2\n"):
                                                          len(b"accel compile cache entry 2\n") + 130] + data)
    compile_cache.clear_memory_cache()
    assert compile_cache.compile_onnx(onnx_bytes(9), None)[2] is True  # read from disk as it is
    models = [m["model"] for m in compile_cache.info()["models"]]
    assert models == ["", "named_net.onnx (x=1x64, int8=dpu)"], models
    assert cli.main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert "named_net.onnx (x=1x64, int8=dpu)" in out and "(written by an older accel: unnamed)" in out
    assert cli.main(["cache", "clear"]) == 0 and "removed 2 files" in capsys.readouterr().out


def test_int8_rules_spelled_as_the_compiler_has_them():
    """The rule sets the command line and accel.compare offer without loading the compiler are the compiler's."""
    from accel import compiler

    assert accel.compile_cache.INT8_RULES == compiler.INT8_RULES


# The settings: read once per load, before any work; a bad one fails every load alike.

@pytest.mark.parametrize("name, value, message", [
    ("ACCEL_CACHE_SIZE", "lots", "ACCEL_CACHE_SIZE='lots' is not a size: give a number of bytes"),
    ("ACCEL_CACHE_SIZE", "1e400", "ACCEL_CACHE_SIZE='1e400' is not a size: give a number of bytes"),
    ("ACCEL_CACHE_DIR", "{file}", "ACCEL_CACHE_DIR='{file}' is not a folder: give a folder path"),
    ("ACCEL_CACHE_DIR", "~no_such_user_31/cache", "ACCEL_CACHE_DIR='~no_such_user_31/cache': '~no_such_user_31' is "
                                                  "no user's home folder; give a folder path"),
])
def test_a_bad_setting_fails_every_load_alike(cache, monkeypatch, tmp_path, name, value, message):
    """Before: a size that is not one failed the first load after compiling it and let the second through (the
    compiled model was kept in memory), 1e400 was a raw OverflowError, and a folder that is a file or names an unknown
    user's home was used without a word (a folder '~no_such_user_31' made in the working folder)."""
    file = tmp_path / "a_file"
    file.write_bytes(b"")
    monkeypatch.setenv(name, value.format(file=file))
    monkeypatch.chdir(tmp_path)
    from accel import compiler

    compiled = []
    monkeypatch.setattr(compiler, "compile_model", lambda *a, **k: compiled.append(a) or b"")
    with accel.open("emu") as dev:
        for _ in range(2):
            with pytest.raises(accel.InvalidArgumentError) as e:
                dev.load(onnx_bytes(8))
            assert str(e.value).startswith(message.format(file=file)), str(e.value)
    assert not compiled and not (tmp_path / "~no_such_user_31").exists()


# Only what accel wrote is removed.

def planted(cache):
    """Files in the cache folder that accel did not write, by their names: each must outlive eviction and clear."""
    cache.mkdir(parents=True, exist_ok=True)
    magic = b"accel compile cache entry 1\n"
    elsewhere = cache.parent / "elsewhere.entry"
    elsewhere.write_bytes(magic + b"0" * 200)
    files = {"foo.entry": b"not an entry", "a" * 64 + ".entry": b"x" * 300, "b" * 64 + ".entry": magic + b"0" * 200,
             "notes.txt": b"mine", "." + "c" * 64 + ".zz.tmp": b""}
    for name, data in files.items():
        (cache / name).write_bytes(data)
    os.chown(cache / ("b" * 64 + ".entry"), 12345, 12345)  # an entry's header, but another user's file
    os.symlink(elsewhere, cache / ("d" * 64 + ".entry"))  # a link: not a file accel wrote
    return sorted([*files, "d" * 64 + ".entry"])


def test_eviction_and_clear_remove_only_what_accel_wrote(cache, monkeypatch, capsys):
    """Before: every `*.entry` in the folder was deleted (a file of any content, another user's, a symlink's
    target counted), and clear said nothing of what else the folder held."""
    foreign = planted(cache)
    a, _ = compile_one(21)
    monkeypatch.setenv("ACCEL_CACHE_SIZE", str(a.stat().st_size))  # room for one entry: `a` goes
    b, _ = compile_one(22)
    assert not a.exists() and b.exists()
    assert sorted(n for n in os.listdir(cache) if n != b.name) == foreign
    assert compile_cache.info()["other_files"] == len(foreign)
    assert cli.main(["cache", "info"]) == 0
    assert f"others:  {len(foreign)} files accel did not write (left alone)" in capsys.readouterr().out
    assert cli.main(["cache", "clear"]) == 0
    assert f"removed 1 file; left alone {len(foreign)} files accel did not write" in capsys.readouterr().out
    assert sorted(os.listdir(cache)) == foreign
    assert (cache.parent / "elsewhere.entry").exists()


# Temporary files: an interrupted write removes its own; a killed writer's go with the next eviction or clear.

def temporary_files(cache):
    return sorted(n for n in os.listdir(cache) if n.endswith(".tmp"))


@pytest.mark.parametrize("when", ["created", "written"])
def test_an_interrupted_write_leaves_no_temporary_file(cache, monkeypatch, when):
    """Before: Ctrl-C just after the temporary file was created (inside tempfile.mkstemp, before the write's own
    cleanup was in force) left it in the folder for good."""
    cache.mkdir(mode=0o700, parents=True)
    real_open, real_replace = os.open, os.replace

    def open_then_interrupt(path, flags, *args, **kwargs):
        fd = real_open(path, flags, *args, **kwargs)
        if flags & os.O_CREAT:
            os.close(fd)  # the descriptor a real Ctrl-C there would leak: not what is tested
            raise KeyboardInterrupt
        return fd

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    if when == "created":
        monkeypatch.setattr(os, "open", open_then_interrupt)
    else:
        monkeypatch.setattr(os, "replace", interrupt)
    with pytest.raises(KeyboardInterrupt):
        compile_one(23)
    monkeypatch.setattr(os, "open", real_open)
    monkeypatch.setattr(os, "replace", real_replace)
    assert os.listdir(cache) == []
    assert compile_one(23)[1] is False and temporary_files(cache) == []  # a write that completes


def test_a_killed_writers_temporary_file_is_removed_once_its_lock_is_free(cache, tmp_path):
    """Before: a write killed (SIGKILL) before its rename left a `.tmp` that neither eviction nor clear removed.
    Now it goes once its writer's lock is free and it is a minute old; a live writer's, whatever its age, stays."""
    cache.mkdir(mode=0o700, parents=True)
    child = subprocess.Popen([sys.executable, "-c", f"""if True:
        import os, sys, time
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        from test_compile_cache import onnx_bytes
        from accel import compile_cache
        os.replace = lambda *a: time.sleep(600)  # the writer stops between its write and its rename
        compile_cache.compile_onnx(onnx_bytes(24), None)
        """], env=dict(os.environ, ACCEL_CACHE_DIR=str(cache)))
    try:
        deadline = time.monotonic() + 60
        while not temporary_files(cache) and time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.05)
        (name,) = temporary_files(cache)
        old = time.time() - 3600
        os.utime(cache / name, (old, old))
        assert compile_cache.clear() == 0 and temporary_files(cache) == [name]  # its writer holds it: alive
        child.send_signal(signal.SIGKILL)
        child.wait(30)
        fresh = "." + "e" * 64 + ".abcdefgh.tmp"
        (cache / fresh).write_bytes(b"")  # just made, not yet locked: may be a writer's
        compile_one(25)  # eviction
        assert temporary_files(cache) == [fresh]
        os.utime(cache / fresh, (old, old))
        assert compile_cache.clear() == 2 and os.listdir(cache) == []  # the fresh one, now old, and the entry
    finally:
        child.kill()
        child.wait(30)
