"""Loading a Horizon model file for the shims: the shared device (session.device()), and what runs in place of the
file where the device cannot run it as it is (the emulator)."""
from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple, Union

from ...errors import InvalidArgumentError
from .. import session

__all__ = ["Loaded", "load", "on_emulator"]

#: What hb_mapper (.bin) and hb_compile (.hbm) name the calibrated ONNX beside ``<name>.bin`` / ``<name>.hbm``.
CALIBRATED_SUFFIX = "_calibrated_model.onnx"


@dataclass(frozen=True)
class Loaded:
    """A model file on the device: the accel.Model, the vendor's name for it, and (for a .bin) the description
    of its first model as the container gives it (``accel.compiler.hbin.BinModel``), or None."""

    model: Any                # accel.Model
    name: str
    path: str
    described: Optional[Any]  # accel.compiler.hbin.BinModel


def on_emulator(device: Any) -> bool:
    """True on a device that compiles ONNX (the emulator): a vendor's compiled file cannot run there as it is."""
    return bool(device.capabilities.model_format == "accm")


def _source(path: str, kind: str) -> str:
    """The ONNX that runs in place of the .bin or .hbm at ``path`` on the emulator: the launcher's --source, else
    the calibrated model beside it, else a clear error saying what to pass."""
    named = session.source()
    if named is not None:
        return named
    beside = os.path.splitext(path)[0] + CALIBRATED_SUFFIX
    if os.path.isfile(beside):
        return beside
    what = ("its BPU part has no public description" if kind == ".bin"
            else "an S100 .hbm has no public description")
    raise InvalidArgumentError(
        f"{path!r}: {what} and cannot be emulated; the ONNX it was made from runs in its place: name it with "
        f"`accel shim horizon --source model.onnx -- ...`, or put hb_mapper's/hb_compile's "
        f"{os.path.basename(beside)!r} beside it")


def _float_model(path: str, suffix: str) -> Union[Exception, Tuple[Any, Dict[str, Any]], None]:
    """What ``--compare`` runs in float for a model file a board loads as it is: a .bin's or an .hbm's source ONNX
    (or, where there is none, why: said once), anything else itself (None)."""
    if suffix not in (".bin", ".hbm"):
        return None
    try:
        source = _source(path, suffix)
    except InvalidArgumentError as e:
        return e
    return (path, {"source": source}) if suffix == ".bin" else (source, {})


def _describe_bin(path: str) -> Optional[Any]:
    """The first model of the .bin as its container describes it (the valid shape and layout of a camera-frame
    input, the model's name), or None where accel.compiler is not installed or cannot read the file (then the
    device's own description is all there is)."""
    try:
        from ...compiler import hbin
    except ImportError:
        return None
    try:
        with open(path, "rb") as f:
            return hbin.describe(hbin.read(f.read())).models[0]
    except hbin.BinFormatError:
        return None


def load(path: Any, api: str) -> Loaded:
    """Loads the model file ``path`` (str or os.PathLike) on the shared device for the vendor API ``api`` (its
    name in messages). On the emulator a .bin runs its source ONNX behind the .bin's interface and an .hbm runs
    its source ONNX with the ONNX's own interface (said once on stderr); on a board the file loads as it is."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{api}: a model file is a path (str), not {type(path).__name__}")
    path = os.fspath(path)
    if not isinstance(path, str):
        raise TypeError(f"{api}: a model file is a path (str), not bytes")
    if not os.path.isfile(path):
        raise FileNotFoundError(errno.ENOENT, f"{api}: no model file", path)
    device = session.device()
    suffix = os.path.splitext(path)[1].lower()
    stem = os.path.splitext(os.path.basename(path))[0]
    described = _describe_bin(path) if suffix == ".bin" else None
    if on_emulator(device) and suffix == ".bin":
        source = _source(path, suffix)
        session.say_once(f"bin:{path}", f"{os.path.basename(path)}: the .bin's BPU part is not emulated; "
                                        f"{source} runs in its place, behind the .bin's inputs and outputs")
        model = session.load(path, os.path.basename(path), source=source)
    elif on_emulator(device) and suffix == ".hbm":
        source = _source(path, suffix)
        session.say_once(f"hbm:{path}", f"{os.path.basename(path)}: an S100 .hbm cannot be read on the emulator; "
                                        f"{source} runs in its place, with that ONNX's own inputs and outputs")
        model = session.load(source, os.path.basename(path))
    else:
        model = session.load(path, os.path.basename(path), float_model=_float_model(path, suffix))
    name = described.name if described is not None and described.name else stem
    return Loaded(model=model, name=name, path=path, described=described)
