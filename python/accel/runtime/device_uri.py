"""Device URIs (``"<scheme>[:<options>]"``) split by libaccel's one parser (``accel_uri_parse``), and put back
together: what every module that reads or adds an option uses instead of splitting the string itself."""
from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet, Optional, Tuple

from ._frontend import core
from ..errors import InvalidArgumentError

__all__ = ["DeviceUri", "parse_uri"]

Option = Tuple[str, Optional[str]]


@dataclass(frozen=True)
class DeviceUri:
    """A device URI as libaccel reads it: the scheme, and the comma-separated options in order, each a
    ``(key, value)`` pair split at its first ``=`` (value ``None`` for an item without one, as the ``0`` of
    ``"bpu:0"``). ``str()`` gives the URI back."""

    scheme: str
    options: Tuple[Option, ...] = ()

    def option(self, key: str) -> Optional[str]:
        """The value of the last option named ``key`` (as the emulator reads a repeated one), or None."""
        found = None
        for k, v in self.options:
            if k == key:
                found = v
        return found

    @property
    def keys(self) -> FrozenSet[str]:
        """The option keys the URI sets."""
        return frozenset(k for k, _ in self.options)

    def without(self, key: str) -> DeviceUri:
        """This URI without any option named ``key``."""
        return DeviceUri(self.scheme, tuple(o for o in self.options if o[0] != key))

    def with_option(self, key: str, value: str) -> DeviceUri:
        """This URI with ``key=value`` appended."""
        return DeviceUri(self.scheme, (*self.options, (key, value)))

    def __str__(self) -> str:
        if not self.options:
            return self.scheme
        return self.scheme + ":" + ",".join(k if v is None else f"{k}={v}" for k, v in self.options)


def parse_uri(uri: str) -> DeviceUri:
    """``uri`` split by libaccel (``accel_uri_parse``). TypeError if it is not a str; InvalidArgumentError (naming
    it) if it has no scheme or holds a NUL character (which C would read as its end)."""
    if not isinstance(uri, str):
        raise TypeError(f"uri must be a str such as 'emu' or 'bpu:0', not {type(uri).__name__}")
    if "\0" in uri:
        raise InvalidArgumentError(f"device URI {uri!r} holds a NUL character")
    scheme, options = core.parse_uri(uri)
    return DeviceUri(scheme, tuple(options))
