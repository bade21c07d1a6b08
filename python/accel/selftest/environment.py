"""What a bug report needs to know about the installation and the machine: versions, front-end, platform,
the driver files found (the ``environment`` check prints it)."""
from __future__ import annotations

import os
import platform
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

import accel

from .framework import PACKAGE_DIR


def _header_abi() -> Optional[Tuple[int, int]]:
    header = PACKAGE_DIR / "include" / "accel" / "accel.h"
    try:
        text = header.read_text()
    except OSError:
        return None
    major = re.search(r"#define\s+ACCEL_ABI_VERSION_MAJOR\s+(\d+)", text)
    minor = re.search(r"#define\s+ACCEL_ABI_VERSION_MINOR\s+(\d+)", text)
    return (int(major.group(1)), int(minor.group(1))) if major and minor else None


def _unused_because(path: Path, usable: List[str]) -> Optional[str]:
    """Why the loader does not use the driver file `path` (its own words, which it gives for the file's
    scheme: skipped as not a regular file, refused for its ABI, ...), or None if it is used."""
    scheme = path.name[len("libaccel_driver_"):-len(".so")] if path.name.endswith(".so") else ""
    if not scheme or scheme in usable:
        return None
    try:
        accel.open(scheme).close()  # answered from the loader's notes: the file is not opened again
    except accel.AccelError as e:
        return e.message
    return None


def _driver_files() -> List[str]:
    """The driver files the loader looks at, in its order: ACCEL_DRIVER_PATH's folders and files when it
    is set (it replaces the default folder), else the package's folder; one it does not use says why."""
    entries = [Path(d) for d in os.environ.get("ACCEL_DRIVER_PATH", "").split(os.pathsep) if d]
    if not entries:
        entries = [PACKAGE_DIR / "lib" / "accel-drivers"]
    usable = accel.backends()
    found = []
    for entry in entries:
        try:
            files = sorted(entry.glob("libaccel_driver_*.so")) if entry.is_dir() else [entry]
        except OSError:
            continue
        for f in files:
            why = _unused_because(f, usable)
            found.append(str(f) if why is None else f"{f} (not used: {why})")
    return found


def environment_facts() -> Dict[str, Any]:
    """What a bug report needs to know about the installation and the machine."""
    abi = accel.abi_version()
    header_abi = _header_abi()
    return dict(
        accel_version=accel.__version__, library_version=accel.library_version(),
        abi=(abi >> 16, abi & 0xFFFF), abi_version=f"{abi >> 16}.{abi & 0xFFFF}", header_abi=header_abi,
        header_abi_version=None if header_abi is None else "{}.{}".format(*header_abi),
        frontend=accel.frontend, frontend_features=dict(accel.frontend_features),
        python=sys.version.split()[0], python_implementation=platform.python_implementation(),
        platform=platform.platform(), machine=platform.machine(), cpu_count=os.cpu_count(),
        numpy=np.__version__, backends=accel.backends(), driver_files=_driver_files(),
        environment={k: v for k, v in sorted(os.environ.items()) if k.startswith("ACCEL_")})
