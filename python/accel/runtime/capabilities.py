"""What a device loads and how it computes, as its driver says (``accel_device_describe``): the facts the
package once inferred from a backend's name."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, FrozenSet, Optional, Tuple

from ._frontend import core
from .device_uri import parse_uri
from ..errors import AbiMismatchError, NotFoundError
from .image_formats import IMAGE_FORMATS

__all__ = ["DeviceCapabilities", "describe", "describe_or_unknown", "INT8_RULES_NAMES"]

# accel.h's accel_device_flags.
_NODE_TIMES, _HOST_CPUS, _INT8_OPTION, _LOADS_SUBGRAPH = 1, 2, 4, 8
#: accel_int8_rules codes -> the names the compiler and the emulator's int8= option use (0: the driver does not say).
INT8_RULES_NAMES = {1: "ort", 2: "dpu", 3: "bpu"}


@dataclass(frozen=True)
class DeviceCapabilities:
    """What a device opened with a URI loads and how it computes (``Device.capabilities``,
    ``accel.describe(uri)``).

    Attributes:
        model_format: the format its driver loads: ``"accm"`` (accel's compiler's output: the emulator, which so
            takes ONNX through the compiler), ``"hbm"`` (Horizon's ``.bin``/``.hbm``), ``"xmodel"`` (Vitis AI);
            ``""`` if the driver does not say.
        file_suffixes: the suffixes of those files, lower case, e.g. ``(".bin", ".hbm")``.
        int8_rules: the integer arithmetic of its quantized models, ``"ort"``, ``"dpu"`` or ``"bpu"`` (None: not
            said).
        int8_option: the URI's ``int8=`` option chooses ``int8_rules`` (the emulator).
        node_times: it times each node of a job (``accel.profile(ops=True)``).
        host_cpus: it computes on this host's CPUs, sized by its URI's ``cores=`` and ``threads=`` (the
            emulator); otherwise it is hardware of its own, one per board.
        image_formats: the ``TensorInfo.image`` formats its models' inputs may take (``"nv12"``, ``"rgb"``...).
        first_device: the options of the driver's first device: ``""`` (the emulator) or ``"0"`` (boards).
        loads_subgraph: it loads one runnable subgraph of a file by name (``Device.load(..., subgraph=)``: a Vitis
            AI .xmodel's DPU subgraphs on vart).
    """

    model_format: str
    file_suffixes: Tuple[str, ...]
    int8_rules: Optional[str]
    int8_option: bool
    node_times: bool
    host_cpus: bool
    image_formats: FrozenSet[str]
    first_device: str
    loads_subgraph: bool = False

    def first_uri(self, scheme: str) -> str:
        """The URI of the driver's first device: ``scheme`` with ``first_device`` as its options."""
        return f"{scheme}:{self.first_device}" if self.first_device else scheme


#: What a URI whose driver is not on this host is taken for: hardware of its own that says nothing.
UNKNOWN = DeviceCapabilities("", (), None, False, False, False, frozenset(), "")


def _from_core(d: Dict[str, Any]) -> DeviceCapabilities:
    flags, images = int(d["flags"]), int(d["image_formats"])
    return DeviceCapabilities(
        model_format=str(d["model_format"]),
        file_suffixes=tuple(s for s in str(d["file_suffixes"]).split(",") if s),
        int8_rules=INT8_RULES_NAMES.get(int(d["int8_rules"])),
        int8_option=bool(flags & _INT8_OPTION), node_times=bool(flags & _NODE_TIMES),
        host_cpus=bool(flags & _HOST_CPUS),
        image_formats=frozenset(name for name, code in IMAGE_FORMATS.items() if code and images >> code & 1),
        first_device=str(d["first_device"]), loads_subgraph=bool(flags & _LOADS_SUBGRAPH))


def describe(uri: str) -> DeviceCapabilities:
    """What a device opened with ``uri`` would load and how it computes, without opening one. Raises as
    ``accel.open(uri)`` would for an unknown scheme (NotFoundError) or an option the driver checks (the emulator's
    ``int8=``: InvalidArgumentError)."""
    parse_uri(uri)  # the type, NUL and scheme checks, in the package's words
    return _from_core(core.describe(uri))


def describe_or_unknown(uri: str) -> DeviceCapabilities:
    """:func:`describe`, or :data:`UNKNOWN` when no usable driver serves the scheme on this host (a Ray driver
    process sizing actors for boards elsewhere): such a device is taken for hardware of its own."""
    try:
        return describe(uri)
    except (NotFoundError, AbiMismatchError):
        return UNKNOWN
