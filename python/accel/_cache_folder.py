"""The compile cache's folder on disk: where it is, whether it can be trusted, and the files accel keeps in it.

Where and how much: ``$ACCEL_CACHE_DIR``, else ``$XDG_CACHE_HOME/accel``, else ``~/.cache/accel``, holding at most
``$ACCEL_CACHE_SIZE`` bytes of entries. ``settings()`` reads both, once per use of the cache and before any work: a
value that is not a folder path or a size is an InvalidArgumentError naming the variable, the value and the forms it
takes, on every load alike.

Trust: an entry is a compiled model the emulator runs, and its key and digest are computed from public inputs (the
ONNX bytes, the compiler's source), so anyone able to write an entry can have any model run in its place. The folder
is therefore private to its user: created 0700, and on every use it must be a folder owned by this user (pip's rule
for its cache) that neither its group nor others can write; else it is not used (a warning once, naming it and why)
and models are compiled without it. An entry is read only if it is a regular file (opened without
following a symlink, so that a link cannot point the read elsewhere) owned by this user and writable by no one else.
Entries carry no further authentication (an HMAC under a per-user key kept in the folder): the only writers it would
stop are those the folder's permissions already keep out, and root, which they do not, can read the key too.

Removal: only files accel wrote are removed, by eviction, ``clear()`` and a rejected entry alike: entries named
``<key>.entry`` that are this user's and start with the entry header, and temporary files ``.<key>.<8 chars>.tmp``.
A write removes its temporary file whatever interrupts it (Ctrl-C included); one left by a killed process is removed
by the next eviction or clear once it is a minute old and its writer's lock is free. Anything else in the folder is
left alone and counted in ``info()``.
"""
from __future__ import annotations

import fcntl
import hashlib
import math
import os
import re
import secrets
import stat
import time
import warnings
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Set, Tuple

from ._forksafe import ForkSafeLock
from .errors import InvalidArgumentError

__all__ = ["DEFAULT_SIZE_LIMIT", "Settings", "cache_dir", "clear", "info", "read_entry", "remove_entry",
           "settings", "size_limit", "write_entry"]

DEFAULT_SIZE_LIMIT = 1 << 30
_SUFFIXES = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
_SIZE = re.compile(r"(\d+(?:\.\d*)?|\.\d+)([KMG]?)", re.IGNORECASE)
_SIZE_FORMS = "a number of bytes with an optional K, M or G suffix (512M, 2G, 1.5K, 100), or 0 to keep nothing on disk"
_DIR_FORMS = "a folder path (absolute, relative to the working folder, or ~/...), created if missing"

# An entry: this magic line, the key it was made for and the SHA-256 of the .accm bytes that follow
# (64 hex digits each, one line each), the model it was compiled from (a line of UTF-8: its file's name, input
# shapes and int8 rules, for `accel cache info`), then those bytes. Entries of the first form (no model line) are
# still read, evicted and cleared.
_ENTRY_MAGIC = b"accel compile cache entry 2\n"
_ENTRY_MAGIC_1 = b"accel compile cache entry 1\n"
_ENTRY_HEAD = len(_ENTRY_MAGIC) + 2 * 65
_LABEL_MAX = 300
_ENTRY_NAME = re.compile(r"[0-9a-f]{64}\.entry")
_TEMP_NAME = re.compile(r"\.[0-9a-f]{64}\.[a-z0-9_]{8}\.tmp")
#: How old a temporary file whose writer holds no lock on it must be to count as left by a killed process (the
#: age covers the instant between its creation and its writer locking it).
STALE_AFTER_S = 60.0

_OPEN_FLAGS = os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_warned: Set[Tuple[str, str]] = set()
_warned_lock = ForkSafeLock()


class Settings(NamedTuple):
    """The cache's settings, as ``settings()`` reads them."""

    folder: Optional[Path]  # None: no folder to keep it in (no home folder and no ACCEL_CACHE_DIR)
    limit: int
    explicit: bool  # ACCEL_CACHE_DIR names the folder


def settings() -> Settings:
    """``$ACCEL_CACHE_DIR`` (or the default folder) and ``$ACCEL_CACHE_SIZE``, checked: InvalidArgumentError naming
    a bad value."""
    limit = size_limit()
    explicit = bool(os.environ.get("ACCEL_CACHE_DIR"))
    try:
        folder: Optional[Path] = cache_dir()
    except InvalidArgumentError:
        if explicit:
            raise
        folder = None  # no home folder: the cache lives in memory
    if explicit and folder is not None and folder.exists() and not folder.is_dir():
        raise InvalidArgumentError(f"ACCEL_CACHE_DIR={os.environ['ACCEL_CACHE_DIR']!r} is not a folder: give "
                                   f"{_DIR_FORMS}")
    return Settings(folder, limit, explicit)


def cache_dir() -> Path:
    """The folder of the on-disk cache (it may not exist yet). InvalidArgumentError for an ACCEL_CACHE_DIR naming no
    folder (``~user`` of no user), or when there is no home folder and no ACCEL_CACHE_DIR."""
    text = os.environ.get("ACCEL_CACHE_DIR", "")
    if text:
        path = os.path.expanduser(text)
        if path.startswith("~"):
            raise InvalidArgumentError(f"ACCEL_CACHE_DIR={text!r}: {path.split(os.sep)[0]!r} is no user's home "
                                       f"folder; give {_DIR_FORMS}")
        return Path(path)
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):  # the XDG rule: a relative path there is ignored
        return Path(xdg) / "accel"
    home = os.path.expanduser("~")
    if home.startswith("~"):
        raise InvalidArgumentError("no home folder to keep the compile cache in (HOME is not set): set ACCEL_CACHE_DIR")
    return Path(home) / ".cache" / "accel"


def size_limit() -> int:
    """The most bytes of entries the folder keeps: ``$ACCEL_CACHE_SIZE`` (``512M``, ``2G``, ``0``), else 1 GiB.
    A value that is not a size raises InvalidArgumentError naming it and the forms a size takes."""
    text = os.environ.get("ACCEL_CACHE_SIZE", "").strip()
    if not text:
        return DEFAULT_SIZE_LIMIT
    m = _SIZE.fullmatch(text)
    value = float(m.group(1)) * _SUFFIXES[m.group(2).upper()] if m else math.inf
    if not math.isfinite(value):  # not the syntax, or past a float (1e400, 400 digits)
        raise InvalidArgumentError(f"ACCEL_CACHE_SIZE={text!r} is not a size: give {_SIZE_FORMS}")
    return int(value)


# --- trust ---------------------------------------------------------------------------------------------------

def _refusal(folder: Path) -> Optional[str]:
    """Why the existing ``folder`` may not hold the cache, or None when it is this user's alone."""
    st = os.stat(folder)
    uid = os.geteuid()
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a folder"
    if st.st_uid != uid:
        return f"it is owned by uid {st.st_uid}, not by this user (uid {uid})"
    if st.st_mode & 0o022:
        return f"its group or others can write it (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def _private(folder: Optional[Path], create: bool) -> bool:
    """Whether ``folder`` may be used (created 0700 first when ``create``); warns once when it may not."""
    if folder is None:
        return False
    if create:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        reason = _refusal(folder)
    except OSError:
        return False  # not there yet (a read), or not reachable: nothing to trust
    if reason is None:
        return True
    with _warned_lock:
        first = (str(folder), reason) not in _warned
        _warned.add((str(folder), reason))
    if first:
        warnings.warn(f"accel: the compile cache folder {folder} is not used: {reason}; models are compiled without "
                      f"it. Give the cache a folder only you can write (chmod go-w, or set ACCEL_CACHE_DIR)",
                      RuntimeWarning, stacklevel=6)  # the caller of Device.load
    return False


def _open_own(path: Path) -> Optional[int]:
    """A read-only descriptor of ``path`` if it is a regular file of this user's that no one else can write
    (opened without blocking, so that a FIFO or a device node is seen for what it is, and without following a
    symlink), else None."""
    try:
        fd = os.open(path, os.O_RDONLY | _OPEN_FLAGS)
    except OSError:
        return None
    try:
        st: Optional[os.stat_result] = os.fstat(fd)
    except OSError:
        st = None
    if st is not None and stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o022:
        return fd
    os.close(fd)
    return None


def _entry_bytes(key: str, data: bytes, label: str) -> bytes:
    line = " ".join(label.split())[:_LABEL_MAX].encode("utf-8", "replace")
    return b"".join((_ENTRY_MAGIC, key.encode(), b"\n", hashlib.sha256(data).hexdigest().encode(), b"\n", line,
                     b"\n", data))


def _parse(raw: bytes) -> Optional[Tuple[bytes, bytes, str, bytes]]:
    """(key, digest, model label, .accm bytes) of an entry's bytes, None when they are not an entry's."""
    if len(raw) < _ENTRY_HEAD or not raw.startswith((_ENTRY_MAGIC, _ENTRY_MAGIC_1)):
        return None
    key, digest = raw[len(_ENTRY_MAGIC):_ENTRY_HEAD].split(b"\n")[:2]
    if raw.startswith(_ENTRY_MAGIC_1):
        return key, digest, "", raw[_ENTRY_HEAD:]
    end = raw.find(b"\n", _ENTRY_HEAD, _ENTRY_HEAD + 4 * _LABEL_MAX + 1)
    if end < 0:
        return None
    return key, digest, raw[_ENTRY_HEAD:end].decode("utf-8", "replace"), raw[end + 1:]


# --- entries -------------------------------------------------------------------------------------------------

def read_entry(s: Settings, key: str) -> Optional[bytes]:
    """The .accm bytes of the entry for ``key``, or None when there is none, the folder or the file is not to be
    trusted, or the entry is not what it claims (made for another key, damaged)."""
    if not _private(s.folder, create=False):
        return None
    assert s.folder is not None
    fd = _open_own(s.folder / f"{key}.entry")
    if fd is None:
        return None
    try:
        with os.fdopen(fd, "rb", closefd=False) as f:
            raw = f.read()
        parsed = _parse(raw)
        if parsed is None:
            return None
        made_for, digest, _, data = parsed
        if made_for != key.encode() or digest != hashlib.sha256(data).hexdigest().encode():
            return None  # compiled again, and overwritten
        os.utime(fd)  # used now: the last to be evicted
        return data
    except OSError:
        return None
    finally:
        os.close(fd)


def write_entry(s: Settings, key: str, data: bytes, label: str = "") -> None:
    """Writes the entry for ``key`` (compiled from the model ``label`` names) atomically (a temporary file renamed),
    then evicts down to the limit. OSError when the folder cannot be written; nothing is written to a folder that is
    not to be trusted."""
    if s.limit == 0 or not _private(s.folder, create=True):
        return
    assert s.folder is not None
    entry = s.folder / f"{key}.entry"
    # The name is chosen before the file exists, so that whatever interrupts the write (Ctrl-C at any instant)
    # finds it to remove.
    tmp = s.folder / f".{key}.{secrets.token_hex(4)}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _OPEN_FLAGS, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # written now: not one a killed process left
            with os.fdopen(fd, "wb", closefd=False) as f:
                f.write(_entry_bytes(key, data, label))
            os.replace(tmp, entry)
        finally:
            os.close(fd)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _evict(s.folder, s.limit, keep=entry)


def remove_entry(s: Settings, key: str) -> None:
    """Removes the entry for ``key`` if accel wrote it (an entry the device rejected)."""
    if s.folder is not None and _is_entry(s.folder / f"{key}.entry") is not None:
        _unlink(s.folder / f"{key}.entry")


# --- the folder's contents -----------------------------------------------------------------------------------

class _Contents(NamedTuple):
    entries: List[Tuple[float, int, Path]]  # (last used, bytes, path), least recently used first
    stale: List[Path]  # temporary files of writes a killed process left
    others: int  # files accel did not write


def _is_entry(path: Path) -> Optional[os.stat_result]:
    """The status of ``path`` if it is an entry accel wrote: this user's regular file with the entry header."""
    fd = _open_own(path)
    if fd is None:
        return None
    try:
        return os.fstat(fd) if os.read(fd, len(_ENTRY_MAGIC)) in (_ENTRY_MAGIC, _ENTRY_MAGIC_1) else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _is_stale(path: Path, now: float) -> Optional[bool]:
    """For a temporary file accel wrote (this user's): whether its writer is gone (it is old and unlocked); None
    when it is not accel's."""
    fd = _open_own(path)
    if fd is None:
        return None
    try:
        if os.fstat(fd).st_mtime > now - STALE_AFTER_S:
            return False  # perhaps a writer's that has not locked it yet
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # its writer is alive
        return True
    except OSError:
        return None
    finally:
        os.close(fd)


def _contents(folder: Path) -> _Contents:
    entries: List[Tuple[float, int, Path]] = []
    stale: List[Path] = []
    others = 0
    try:
        names = os.listdir(folder)
    except OSError:
        return _Contents(entries, stale, others)
    now = time.time()
    for name in names:
        path = folder / name
        if _ENTRY_NAME.fullmatch(name):
            st = _is_entry(path)
            if st is not None:
                entries.append((st.st_mtime, st.st_size, path))
                continue
        elif _TEMP_NAME.fullmatch(name):
            gone = _is_stale(path, now)
            if gone is not None:
                if gone:
                    stale.append(path)
                continue
        try:
            others += not stat.S_ISDIR(os.lstat(path).st_mode)  # files; a folder (models/, say) is not one
        except OSError:
            pass  # removed meanwhile by another process
    entries.sort(key=lambda r: r[0])
    return _Contents(entries, stale, others)


def _unlink(path: Path) -> bool:
    try:
        path.unlink()
        return True
    except OSError:
        return False  # removed meanwhile by another process


def _evict(folder: Path, limit: int, keep: Optional[Path] = None) -> int:
    """Removes the temporary files killed writers left, then the least recently used entries until the rest fit in
    ``limit`` bytes, ``keep`` (the entry just written) last: only when it alone is over the limit. Returns how many
    files were removed."""
    c = _contents(folder)
    removed = sum(_unlink(p) for p in c.stale)
    total = sum(r[1] for r in c.entries)
    for _, size, p in [r for r in c.entries if r[2] != keep] + [r for r in c.entries if r[2] == keep]:
        if total <= limit:
            break
        if _unlink(p):
            total -= size
            removed += 1
    return removed


def info(s: Settings) -> Dict[str, object]:
    """The folder, its entries, their bytes, the limit, the files accel did not write, and why the folder is not
    used (None when it is)."""
    problem: Optional[str] = None
    c = _Contents([], [], 0)
    if s.folder is None:
        problem = "no home folder (HOME is not set) and no ACCEL_CACHE_DIR"
    else:
        c = _contents(s.folder)
        try:
            problem = _refusal(s.folder)
        except OSError:
            pass  # not created yet
    models = [{"model": _label(p), "bytes": size, "last_used": used} for used, size, p in reversed(c.entries)]
    return {"folder": str(s.folder) if s.folder else None, "entries": len(c.entries),
            "bytes": sum(r[1] for r in c.entries), "limit_bytes": s.limit, "other_files": c.others,
            "not_used_because": problem, "models": models}


def _label(path: Path) -> str:
    """The model an entry was compiled from, as its header names it ("" for an entry of the first form)."""
    fd = _open_own(path)
    if fd is None:
        return ""
    try:
        parsed = _parse(os.read(fd, _ENTRY_HEAD + 4 * _LABEL_MAX + 1))
        return parsed[2] if parsed is not None else ""
    except OSError:
        return ""
    finally:
        os.close(fd)


def clear(s: Settings) -> int:
    """Removes every entry and the temporary files killed writers left; returns how many files were removed."""
    return _evict(s.folder, -1) if s.folder is not None else 0
