"""Which files the compile cache trusts. An entry's key and digest are computed from public inputs (the ONNX bytes and
the compiler's source), so anyone who can write an entry can have another model run in a model's place: the cache
folder is this user's alone (else not used, with a warning), and an entry is read only if it is a regular file of
this user's that no one else can write. The tests run as root, so another user's files are made with os.chown."""
from __future__ import annotations

import hashlib
import os
import warnings

import pytest
import test_compile_cache

from accel import compile_cache

OTHER_UID = 12345

# The fixture of a private cache folder, and the small models, of the compile cache's own tests.
cache = test_compile_cache.cache
onnx_bytes = test_compile_cache.onnx_bytes


def forged_entry(victim_seed, impostor_seed):
    """(key, bytes) of an entry as another user would plant it: under the key of the model `victim_seed`, a valid
    entry (its key, the right digest) holding the compiled model `impostor_seed`."""
    from accel import compiler

    impostor = compiler.compile_model(onnx_bytes(impostor_seed))
    key = compile_cache.cache_key(onnx_bytes(victim_seed), None)
    entry = b"accel compile cache entry 1\n%s\n%s\n" % (key.encode(), hashlib.sha256(impostor).hexdigest().encode())
    return key, entry + impostor


def load(seed):
    """(the .accm bytes a load of model `seed` gets, whether they came from the cache), the memory cache cleared."""
    compile_cache.clear_memory_cache()
    data, _, hit = compile_cache.compile_onnx(onnx_bytes(seed), None)
    return data, hit


def compiled(seed):
    from accel import compiler

    return compiler.compile_model(onnx_bytes(seed))


def test_the_folder_is_made_private(cache):
    load(1)
    assert cache.stat().st_mode & 0o777 == 0o700
    assert all((cache / n).stat().st_mode & 0o077 == 0 for n in os.listdir(cache))


def test_a_planted_entry_of_our_own_is_read(cache):
    """The forgery itself is right: as this user's file in a private folder, it is what a load gets (so the tests
    below that it is refused test the check, not the forgery)."""
    key, entry = forged_entry(2, 3)
    cache.mkdir(mode=0o700)
    (cache / f"{key}.entry").write_bytes(entry)
    os.chmod(cache / f"{key}.entry", 0o600)
    assert load(2) == (compiled(3), True)


@pytest.mark.parametrize("how", ["others can write it", "owned by another user"])
def test_a_folder_that_is_not_ours_alone_is_not_used(cache, how):
    """Before: an entry another user planted in a folder they could write was run in the model's place."""
    key, entry = forged_entry(4, 5)
    cache.mkdir(mode=0o700)
    (cache / f"{key}.entry").write_bytes(entry)
    if how == "others can write it":
        os.chmod(cache, 0o777)
        reason = "its group or others can write it (mode 777)"
    else:
        os.chown(cache, OTHER_UID, OTHER_UID)
        reason = f"it is owned by uid {OTHER_UID}, not by this user (uid {os.geteuid()})"
    with pytest.warns(RuntimeWarning) as record:
        assert load(4) == (compiled(4), False)
    assert [str(w.message) for w in record] == [
        f"accel: the compile cache folder {cache} is not used: {reason}; models are compiled without it. Give the "
        f"cache a folder only you can write (chmod go-w, or set ACCEL_CACHE_DIR)"]
    assert os.listdir(cache) == [f"{key}.entry"] and (cache / f"{key}.entry").read_bytes() == entry  # none written
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once
        assert load(6) == (compiled(6), False)
    assert len(os.listdir(cache)) == 1 and compile_cache.info()["not_used_because"] == reason


@pytest.mark.parametrize("how", ["another user's", "a symlink", "writable by others"])
def test_an_entry_that_is_not_ours_alone_is_not_read(cache, tmp_path, how):
    """Before: another user's entry, a symlink to a file anywhere, and an entry others could write were read."""
    key, entry = forged_entry(7, 8)
    cache.mkdir(mode=0o700)
    path = cache / f"{key}.entry"
    elsewhere = tmp_path / "forged.entry"
    elsewhere.write_bytes(entry)
    os.chmod(elsewhere, 0o600)
    if how == "a symlink":
        os.symlink(elsewhere, path)
    else:
        path.write_bytes(entry)
        os.chmod(path, 0o600)
        if how == "another user's":
            os.chown(path, OTHER_UID, OTHER_UID)
        else:
            os.chmod(path, 0o666)
    assert load(7) == (compiled(7), False)
    # compiled again and written over it: the next load has its own entry
    assert not path.is_symlink() and path.stat().st_uid == os.geteuid() and load(7) == (compiled(7), True)
    assert elsewhere.read_bytes() == entry  # a link's target is never touched
