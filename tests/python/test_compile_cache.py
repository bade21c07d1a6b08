"""The on-disk compile cache's size limit (least recently used entries go first), ACCEL_CACHE_SIZE, and the
`accel cache info|clear` verb."""
from __future__ import annotations

import json
import os

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


@pytest.mark.parametrize("text", ["lots", "-1", "5T", "M"])
def test_a_bad_size_limit_is_named(monkeypatch, text):
    monkeypatch.setenv("ACCEL_CACHE_SIZE", text)
    with pytest.raises(accel.InvalidArgumentError, match=f"ACCEL_CACHE_SIZE='{text}'"):
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
    assert "removed 2 entries" in capsys.readouterr().out
    assert not list(cache.glob("*.entry")) and compile_one(6)[1] is False


def test_int8_rules_spelled_as_the_compiler_has_them():
    """The rule sets the command line and accel.compare offer without loading the compiler are the compiler's."""
    from accel import compiler

    assert accel.compile_cache.INT8_RULES == compiler.INT8_RULES
