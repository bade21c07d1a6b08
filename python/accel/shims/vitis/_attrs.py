"""Attributes as Vitis AI's ``xir`` binding gives them to Python (wrapper.cpp's AttrHelper::get): scalars, strings,
bytes and lists as they are, a map only of str to int or of str to str as a dict, any other map (a DPU subgraph's
``reg_id_to_parameter_value``: str to bytes) as None, which is what the binding returns for it. Each value is a copy,
so a script changing it changes nothing stored. And the methods every XIR object has over its attributes."""
from __future__ import annotations

from typing import Any, Dict, Mapping

from ...errors import InvalidArgumentError

__all__ = ["AttrsMixin", "python_value"]


def python_value(v: Any) -> Any:
    """The value as the binding converts it (a copy)."""
    if isinstance(v, dict):
        values = list(v.values())
        if all(isinstance(x, str) for x in values) or all(
                isinstance(x, int) and not isinstance(x, bool) for x in values):
            return dict(v)
        return None  # the binding has no conversion for maps of lists, bytes or floats
    if isinstance(v, list):
        return list(v)
    return v


class AttrsMixin:
    """has_attr, get_attr, get_attrs over ``_attrs()``; ``_what()`` names the object in errors."""

    def _attrs(self) -> Mapping[str, Any]:
        raise NotImplementedError

    def _what(self) -> str:
        raise NotImplementedError

    def has_attr(self, name: str) -> bool:
        return _key(name) in self._attrs()

    def get_attr(self, name: str) -> Any:
        """The attribute's value; XIR aborts the process for a missing one (UNI_LOG_FATAL): the shim raises
        InvalidArgumentError naming those it has."""
        attrs = self._attrs()
        if _key(name) not in attrs:
            have = ", ".join(repr(k) for k in sorted(attrs)) or "none"
            raise InvalidArgumentError(f"{self._what()} has no attribute {name!r} (it has: {have}); XIR aborts the "
                                       f"process here, check with has_attr() first")
        return python_value(attrs[name])

    def get_attrs(self) -> Dict[str, Any]:
        return {k: python_value(v) for k, v in self._attrs().items()}


def _key(name: Any) -> str:
    if not isinstance(name, str):
        raise TypeError(f"an attribute name is a str, not {type(name).__name__}")
    return name
