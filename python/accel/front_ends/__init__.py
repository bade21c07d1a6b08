"""The model front ends: formats that reach a device by being turned into the one its driver loads
(``front_end.py``: what a front end is; ``onnx.py``: ONNX through accel's compiler into ``.accm``; ``xmodel.py``: a
compiled Vitis AI model's DPU subgraph, into ``.accm`` with the DPU's int8 rules; ``horizon_bin.py``: a Horizon
RDK ``.bin``, the ONNX it was made from behind its interface), and their
registry, which Device.load chooses from by what the device loads (``DeviceCapabilities.model_format``) and by the
file's format. A new format is a module here and one :func:`register` call, at the end of this one."""
from __future__ import annotations

import os
from typing import Any, List, Mapping, Optional, Tuple, Union

from ..errors import InvalidArgumentError

from .front_end import ALL_OPTIONS, FrontEnd, LoadRequest
from .horizon_bin import HORIZON_BIN
from .onnx import ONNX
from .xmodel import XMODEL

__all__ = ["ALL_OPTIONS", "FrontEnd", "LoadRequest", "register", "registered", "choose", "foreign", "check_options",
           "claiming", "for_file"]

_FRONT_ENDS: List[FrontEnd] = []


def register(front_end: FrontEnd) -> None:
    """Adds ``front_end``; one registered earlier with the same name is replaced (a newer one of a format)."""
    if not isinstance(front_end, FrontEnd):
        raise TypeError(f"register() takes an accel.front_ends.FrontEnd, not {type(front_end).__name__}")
    _FRONT_ENDS[:] = [f for f in _FRONT_ENDS if f.name != front_end.name] + [front_end]


def registered() -> Tuple[FrontEnd, ...]:
    """The front ends, in the order they were registered (the first that claims a file takes it)."""
    return tuple(_FRONT_ENDS)


def choose(model_format: str, head: bytes, suffix: str) -> Optional[FrontEnd]:
    """The front end that turns a file (its first bytes, its lower-case suffix or ``""``) into ``model_format``,
    the format the device loads; None when none claims it (the device loads the file as it is)."""
    for f in _FRONT_ENDS:
        if f.produces == model_format and f.claims(head, suffix):
            return f
    return None


def _head_and_suffix(path: Union[str, os.PathLike[str]]) -> Tuple[bytes, str]:
    """A file's first 16 bytes and its lower-case suffix, as front ends' claims take them."""
    with open(path, "rb") as f:
        head = f.read(16)
    return head, os.path.splitext(os.fspath(path))[1].lower()


def for_file(model_format: str, path: Union[str, os.PathLike[str]]) -> Optional[FrontEnd]:
    """choose() for the file at ``path``."""
    return choose(model_format, *_head_and_suffix(path))


def claiming(path: Union[str, os.PathLike[str]]) -> List[FrontEnd]:
    """Every front end that claims the file at ``path``, whatever format it turns it into."""
    head, suffix = _head_and_suffix(path)
    return [f for f in _FRONT_ENDS if f.claims(head, suffix)]


def foreign(suffix: str) -> Optional[FrontEnd]:
    """A front end whose files have ``suffix`` (to say why a device that cannot take them refuses one)."""
    return next((f for f in _FRONT_ENDS if suffix and suffix in f.suffixes), None)


def check_options(front: Optional[FrontEnd], what: str, given: Mapping[str, Any]) -> None:
    """InvalidArgumentError for each of Device.load's options (``{name: value}``, None when not given) that the
    front end ``front`` takes not (None: a file the device loads as it is), naming the formats that take it."""
    for option, value in given.items():
        if value is not None and (front is None or option not in front.options):
            formats = " and ".join(f.name for f in _FRONT_ENDS if option in f.options) or "no"
            kind = "already compiled for the device" if front is None else f"a {front.name} model"
            raise InvalidArgumentError(f"{option} applies to {formats} models only; {what} is {kind}")


register(ONNX)
register(XMODEL)
register(HORIZON_BIN)
