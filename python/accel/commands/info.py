"""``accel info``: the installation (versions, front-end, drivers) and the devices it can open; with a model file,
what the file holds (as its model front end describes it)."""
from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any, Dict, List, Optional

from .common import reports_failures


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Adds ``info`` to the ``accel`` command's subparsers (see accel.cli)."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "info", help="versions, front-end, drivers and devices",
        description="Prints accel's versions, the front-end in use, the drivers found and the properties "
                    "of each usable backend's default device (or of --device); with MODEL, what the model file holds "
                    "(a Vitis AI .xmodel: its target, fingerprint, subgraphs and DPU tensors). Exit code: 0 ok, 1 a "
                    "device given with --device cannot be opened or the model cannot be read, 2 usage error.")
    p.add_argument("model", nargs="?", metavar="MODEL", help="a model file to describe instead")
    p.add_argument("--device", metavar="URI", help="show only this device (e.g. emu:cores=2)")
    p.add_argument("--json", action="store_true", help="print the facts as one JSON object")
    p.set_defaults(handler=command)
    return p


def default_uri(scheme: str) -> str:
    """The URI of a backend's first device, as its driver names it (the emulator takes no index, boards count
    from 0); the bare scheme where the driver cannot say."""
    from ..runtime.capabilities import describe_or_unknown

    return describe_or_unknown(scheme).first_uri(scheme)


def device_facts(uri: str) -> Dict[str, Any]:
    """``{"uri", "info": DeviceInfo fields, "capabilities": DeviceCapabilities fields}`` (sets as sorted lists);
    raises accel's error if the device cannot be opened."""
    import accel

    with accel.open(uri) as dev:
        caps = dataclasses.asdict(dev.capabilities)
        caps["file_suffixes"] = list(caps["file_suffixes"])
        caps["image_formats"] = sorted(caps["image_formats"])
        return {"uri": uri, "info": dataclasses.asdict(dev.info), "capabilities": caps}


def gather(device: Optional[str]) -> Dict[str, Any]:
    """Everything ``accel info`` prints. A backend's default device that cannot be opened is listed with
    its error; a ``device`` given explicitly that cannot be opened raises."""
    from ..selftest.environment import environment_facts

    env = environment_facts()
    facts = {k: env[k] for k in ("accel_version", "library_version", "abi_version", "frontend",
                                 "frontend_features", "backends", "driver_files")}
    devices: List[Dict[str, Any]] = []
    if device is not None:
        devices.append(device_facts(device))
    else:
        for scheme in env["backends"]:
            uri = default_uri(scheme)
            try:
                devices.append(device_facts(uri))
            except Exception as e:  # a board that is absent must not hide the others
                devices.append({"uri": uri, "error": f"{type(e).__name__}: {e}"})
    facts["devices"] = devices
    return facts


def print_text(facts: Dict[str, Any]) -> None:
    print(f"accel {facts['accel_version']} (libaccel {facts['library_version']}, ABI {facts['abi_version']})")
    print(f"front-end: {facts['frontend']}")
    print(f"backends: {', '.join(facts['backends']) or '(none)'}")
    print("driver files:" + ("" if facts["driver_files"] else " (none)"))
    for f in facts["driver_files"]:
        print(f"  {f}")
    for d in facts["devices"]:
        print(f"device {d['uri']}:")
        if "error" in d:
            print(f"  cannot open: {d['error']}")
            continue
        for key, value in d["info"].items():
            if key != "hint" or value:  # a driver without performance hints reports none
                print(f"  {key}: {value}")
        c = d["capabilities"]
        print(f"  loads: {c['model_format'] or '(not said)'} ({', '.join(c['file_suffixes']) or 'any suffix'})")
        chosen = ", chosen by the URI's int8=" if c["int8_option"] else ""
        print(f"  int8 rules: {c['int8_rules'] or '(not said)'}{chosen}")
        print(f"  node times: {'yes' if c['node_times'] else 'no'}; runs on this host's CPUs: "
              f"{'yes' if c['host_cpus'] else 'no'}")
        print(f"  image inputs: {', '.join(c['image_formats']) or 'none'}")


def model_facts(path: str) -> Dict[str, Any]:
    """What the model front end that takes ``path``'s format says the file holds (FrontEnd.describe)."""
    from ..cli import UsageError
    from ..front_ends import registered
    from .common import existing_file

    file = existing_file("MODEL", path)
    suffix = file.suffix.lower()
    data = file.read_bytes()
    front = next((f for f in registered() if f.describe is not None and f.claims(data[:16], suffix)), None)
    if front is None:
        formats = ", ".join(f"{f.name} ({', '.join(f.suffixes)})" for f in registered() if f.describe is not None)
        raise UsageError(f"accel info describes {formats or 'no'} model files; {path!r} is none of them")
    assert front.describe is not None
    return {"model": path, **front.describe(data)}


def print_model(facts: Dict[str, Any], indent: str = "") -> None:
    for key, value in facts.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            print(f"{indent}{key}:")
            for item in value:
                print(f"{indent}  - {item.get('name', '')}")
                print_model({k: v for k, v in item.items() if k != "name"}, indent + "    ")
        elif isinstance(value, list):
            print(f"{indent}{key}:" + ("" if value else " (none)"))
            for item in value:
                print(f"{indent}  {item}")
        else:
            print(f"{indent}{key}: {value}")


@reports_failures("info")
def command(args: argparse.Namespace) -> int:
    """``accel info``: prints the facts as text or JSON; returns the exit code."""
    facts = model_facts(args.model) if args.model is not None else gather(args.device)
    if args.json:
        print(json.dumps(facts, indent=2, default=str))
    elif args.model is not None:
        print_model(facts)
    else:
        print_text(facts)
    return 0
