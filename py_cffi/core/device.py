"""CoreDevice (open, info, stats, alloc, import_buffer, load, check, close) and the module-level functions."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from ._lib import check, error, ffi, last_message, lib, new_owner, text
from .buffer import CoreBuffer, allocate, import_memory
from .device_base import DeviceBase
from .model import CoreModel, wrap_model

__all__ = ["CoreDevice", "abi_version", "version", "backends"]



def abi_version() -> int:
    """accel_abi_version(): (major << 16) | minor"""
    return int(lib.accel_abi_version())


def version() -> str:
    """libaccel's release version"""
    return text(lib.accel_version_string())


def backends() -> List[str]:
    """The schemes of the usable drivers, in loader order."""
    count = ffi.new("size_t *")
    check(lib.accel_driver_count(count))
    name = ffi.new("const char **")
    names = []
    for i in range(count[0]):
        check(lib.accel_driver_name(i, name))
        names.append(text(name[0]))
    return names


class CoreDevice(DeviceBase):
    """An open device (one accel_device reference)."""

    __slots__ = ("_device", "__weakref__")

    def __init__(self, uri: str) -> None:
        """Opens a device by URI (accel_device_open)."""
        if not isinstance(uri, str):
            raise TypeError(f"uri must be a str, not {type(uri).__name__}")
        box = new_owner("device")
        status = lib.accel_device_open(uri.encode("utf-8", "surrogatepass"), box)
        if status:
            raise error(status, last_message())
        self._device = box

    def _get(self) -> Any:
        """The device's owner (its handle is [0]): a caller keeps it while its calls run, so that
        close() from another thread cannot release the device under them."""
        device = self._device
        if device is None:
            raise error(lib.ACCEL_ERR_CLOSED, "the device is closed")
        return device

    def info(self) -> Dict[str, Any]:
        """name, backend, cores, threads, hint, max_inflight, debug, alignment, pool_bytes"""
        info = ffi.new("accel_device_info *")
        info.struct_size = ffi.sizeof("accel_device_info")
        device = self._get()
        check(lib.accel_device_get_info(device[0], info))
        return {"name": text(info.name), "backend": text(info.backend), "cores": int(info.cores),
                "threads": int(info.threads), "hint": int(info.hint),
                "max_inflight": int(info.max_inflight), "debug": bool(info.debug),
                "alignment": int(info.alignment), "pool_bytes": int(info.pool_bytes)}

    def stats(self) -> Dict[str, int]:
        """bytes_in_use, peak_bytes_in_use, live_buffers, allocations, bytes_copied, jobs_submitted, jobs_completed"""
        st = ffi.new("accel_memory_stats *")
        st.struct_size = ffi.sizeof("accel_memory_stats")
        device = self._get()
        check(lib.accel_device_get_stats(device[0], st))
        return {k: int(getattr(st, k)) for k in ("bytes_in_use", "peak_bytes_in_use", "live_buffers", "allocations",
                                                 "bytes_copied", "jobs_submitted", "jobs_completed")}

    def alloc(self, nbytes: int) -> CoreBuffer:
        """Allocates device memory (accel_buffer_alloc)."""
        if nbytes.__class__ is not int and (isinstance(nbytes, float) or not hasattr(type(nbytes), "__index__")):
            raise TypeError(f"alloc(): nbytes must be an int, not {type(nbytes).__name__}")
        device = self._get()
        return allocate(device[0], nbytes)

    def import_buffer(self, obj: Any) -> CoreBuffer:
        """Device memory over a C-contiguous buffer-protocol object's own bytes, no copy (accel_buffer_import)."""
        device = self._get()
        return import_memory(device[0], obj)

    def load(self, data: Any, subgraph: Optional[str] = None) -> CoreModel:
        """Loads a model from a buffer's bytes, a subgraph of it by name (accel_model_load_memory_with_options)."""
        device = self._get()  # held: close() from another thread cannot free it under the load
        view = ffi.from_buffer(data, require_writable=False)
        box = new_owner("model")
        if subgraph is None:
            status = lib.accel_model_load_memory(device[0], view, len(view), box)
        else:
            if not isinstance(subgraph, str):
                raise TypeError(f"load(): subgraph must be a str or None, not {type(subgraph).__name__}")
            name = ffi.new("char[]", subgraph.encode("utf-8"))
            options = ffi.new("accel_load_options*", {"struct_size": ffi.sizeof("accel_load_options"),
                                                     "subgraph": name})
            status = lib.accel_model_load_memory_with_options(device[0], view, len(view), options, box)
        if status:
            raise error(status, last_message())
        return wrap_model(box)

    def check(self) -> None:
        """Checks every live buffer's guard bytes (accel_device_check)."""
        device = self._get()
        check(lib.accel_device_check(device[0]))

    def close(self) -> None:
        """Drops this object's device reference (idempotent)."""
        self._device = None  # the handle's owner releases it once no call holds it any more
