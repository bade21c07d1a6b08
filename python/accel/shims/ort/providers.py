"""Execution providers as onnxruntime's Python API takes them (names, or (name, options) pairs, with or without
provider_options), checked with its messages. Every session runs on accel's device whatever it asks for; the
names only say what the script would get from onnxruntime on a machine like the device: the CPU provider, and on
a Vitis AI board (``--device vart:0``) the Vitis AI provider, which accel stands in for there."""
from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from typing import Any, Dict, List, Optional, Tuple

from .. import DEFAULT_DEVICES, session

__all__ = ["ALL_PROVIDERS", "CPU", "available", "normalize"]

CPU = "CPUExecutionProvider"
# The execution providers onnxruntime's own builds name (onnxruntime.get_all_providers()).
ALL_PROVIDERS = ("TensorrtExecutionProvider", "CUDAExecutionProvider", "MIGraphXExecutionProvider",
                 "OpenVINOExecutionProvider", "DnnlExecutionProvider", "VitisAIExecutionProvider",
                 "QNNExecutionProvider", "NnapiExecutionProvider", "VSINPUExecutionProvider", "JsExecutionProvider",
                 "CoreMLExecutionProvider", "DmlExecutionProvider", "RknpuExecutionProvider",
                 "WebNNExecutionProvider", "WebGpuExecutionProvider", "XnnpackExecutionProvider",
                 "CANNExecutionProvider", "AzureExecutionProvider", CPU)
# The accelerator's own provider, where accel's device is that accelerator (by its URI's scheme).
STAND_INS = {"vart": "VitisAIExecutionProvider"}


def _scheme() -> str:
    uri = os.environ.get(session.ENV_DEVICE) or DEFAULT_DEVICES.get("onnxruntime", "emu")
    return uri.split(":", 1)[0]


def available() -> List[str]:
    """onnxruntime.get_available_providers(): the CPU provider, after the accelerator's where the device is one."""
    stand_in = STAND_INS.get(_scheme())
    return ([stand_in] if stand_in else []) + [CPU]


def normalize(providers: Any, provider_options: Any) -> Tuple[List[str], List[Dict[str, str]]]:
    """The session's providers and their options, as onnxruntime makes them: a name not available here is
    warned about and dropped (onnxruntime does the same on a machine without it), the CPU provider comes last,
    options become str -> str. Raises ValueError with onnxruntime's messages for malformed arguments."""
    names: Dict[str, Dict[str, str]] = {}
    have = available()

    def add(name: str, options: Dict[Any, Any]) -> None:
        if name not in have:
            warnings.warn(f"Specified provider '{name}' is not in available provider names."
                          f"Available providers: '{', '.join(have)}'", stacklevel=5)
        elif name in names:
            warnings.warn(f"Duplicate provider '{name}' encountered, ignoring.", stacklevel=5)
        else:
            names[name] = {str(k): str(v) for k, v in options.items()}

    if providers is None:
        providers = have
    if not isinstance(providers, Sequence):
        raise ValueError("'providers' should be a sequence.")
    if provider_options is not None:
        if not isinstance(provider_options, Sequence):
            raise ValueError("'provider_options' should be a sequence.")
        if len(providers) != len(provider_options):
            raise ValueError("'providers' and 'provider_options' should be the same length if both are given.")
        if not all(isinstance(p, str) for p in providers):
            raise ValueError("Only string values for 'providers' are supported if 'provider_options' is given.")
        if not all(isinstance(o, dict) for o in provider_options):
            raise ValueError("'provider_options' values must be dicts.")
        for name, options in zip(providers, provider_options):
            add(name, options)
    else:
        for p in providers:
            if isinstance(p, str):
                add(p, {})
            elif isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) and isinstance(p[1], dict):
                add(p[0], p[1])
            else:
                raise ValueError("'providers' values must be either strings or (string, dict) tuples.")
    names.setdefault(CPU, {})
    return list(names), list(names.values())


def say_device(providers: Optional[List[str]]) -> None:
    """Says once per process which accel device the sessions run on, in place of which providers."""
    dev = session.device()
    session.say_once("ort-device", f"onnxruntime sessions run on accel device '{dev.uri}' ({dev.info.name}), in place "
                                   f"of {', '.join(providers or [CPU])}")
