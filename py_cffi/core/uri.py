"""The core's URI parser and device query: ``accel_uri_parse`` and ``accel_device_describe`` as Python values
(python/accel/CORE_API.md, "Module functions")."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ._lib import check, ffi, lib, text

__all__ = ["parse_uri", "describe"]


def _encoded(uri: object) -> bytes:
    if not isinstance(uri, str):
        raise TypeError(f"uri must be a str, not {type(uri).__name__}")
    return uri.encode("utf-8", "surrogatepass")


def parse_uri(uri: str) -> Tuple[str, List[Tuple[str, Optional[str]]]]:
    """``(scheme, [(key, value or None), ...])`` of a device URI (accel_uri_parse)."""
    raw = _encoded(uri)
    count = ffi.new("size_t *")
    check(lib.accel_uri_parse(raw, ffi.NULL, 0, count))
    items = ffi.new("accel_uri_item[]", count[0])
    check(lib.accel_uri_parse(raw, items, count[0], count))

    def part(offset: int, length: int) -> str:
        return raw[offset:offset + length].decode("utf-8", "replace")

    options = [(part(it.key_offset, it.key_length), part(it.value_offset, it.value_length) if it.has_value else None)
               for it in (items[i] for i in range(1, count[0]))]
    return part(items[0].key_offset, items[0].key_length), options


def describe(uri: str) -> Dict[str, Any]:
    """What a device opened with ``uri`` would load and how it computes (accel_device_describe)."""
    raw = _encoded(uri)
    d = ffi.new("accel_device_description *")
    d.struct_size = ffi.sizeof("accel_device_description")
    check(lib.accel_device_describe(raw, d))
    return {"flags": int(d.flags), "int8_rules": int(d.int8_rules), "image_formats": int(d.image_formats),
            "model_format": text(d.model_format), "file_suffixes": text(d.file_suffixes),
            "first_device": text(d.first_device)}
