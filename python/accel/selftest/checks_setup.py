"""The checks that set up the run: the environment, opening the device, loading the model and reading
its inputs and outputs."""
from __future__ import annotations

import hashlib
import time
from dataclasses import asdict

import accel

from .environment import environment_facts
from .framework import DEFAULT_MODEL, Context, Findings
from .._wording import counted
from .helpers import MIB, describe
from .tensor_metadata import quant_text, tensor_problems

STATS_KEYS = ("bytes_in_use", "peak_bytes_in_use", "live_buffers", "allocations", "bytes_copied",
              "jobs_submitted", "jobs_completed")


def check_environment(ctx: Context, f: Findings) -> None:
    """Versions, front-end, platform, the drivers found; FAIL if no driver serves the URI's scheme or
    libaccel's ABI major version is not the one the package was built for."""
    f.data.update(environment_facts())
    d = f.data
    runtime_abi, header_abi, backends = d["abi"], d["header_abi"], d["backends"]
    features = [k for k, v in d["frontend_features"].items() if v is True]
    fallback = d["frontend_features"].get("fallback_reason")
    f.summary = (f"accel {d['accel_version']}, libaccel {d['library_version']}, ABI {d['abi_version']}, "
                 f"front-end {d['frontend']}, Python {d['python']}, drivers: {', '.join(backends) or 'none'}")
    f.note(f"front-end {d['frontend']} ({', '.join(features)})" + (f"; {fallback}" if fallback else ""))
    f.note(f"platform {d['platform']} ({d['machine']}, {d['cpu_count']} CPUs), "
           f"{d['python_implementation']} {d['python']}, NumPy {d['numpy']}")
    f.note("driver files: " + (", ".join(d["driver_files"]) or "none"))
    if d["environment"]:
        f.note("environment: " + " ".join(f"{k}={v}" for k, v in d["environment"].items()))
    if header_abi is None:
        f.note("accel.h is not installed with the package: the ABI version is not compared")
    elif header_abi[0] != runtime_abi[0] or runtime_abi[1] < header_abi[1]:
        f.problem(f"libaccel's ABI is {d['abi_version']} but the package was built for "
                  f"{d['header_abi_version']}")
    f.expect(ctx.scheme in backends,
             f"no usable driver for {ctx.scheme!r} (usable: {', '.join(backends) or 'none'}); put "
             f"libaccel_driver_{ctx.scheme}.so in a folder named by ACCEL_DRIVER_PATH")


def check_open_device(ctx: Context, f: Findings) -> None:
    """Opens the device and reads its info and stats; FAIL on info that cannot be right."""
    t0 = time.perf_counter()
    ctx.device = device = accel.open(ctx.uri)
    f.data["open_ms"] = (time.perf_counter() - t0) * 1e3
    i = device.info
    f.data["info"] = asdict(i)
    threads = f", {counted(i.threads, 'thread')} per core" if i.threads else ""
    f.summary = (f"{i.name!r}: backend {i.backend}, {counted(i.cores, 'core')}{threads}, "
                 f"max_inflight {i.max_inflight}, alignment {i.alignment}, pool {i.pool_bytes / MIB:.0f} MiB"
                 + (", debug" if i.debug else "") + f", opened in {f.data['open_ms']:.1f} ms")
    f.expect(i.backend == ctx.scheme, f"backend {i.backend!r} opened for URI scheme {ctx.scheme!r}")
    f.expect(i.cores >= 1, f"{counted(i.cores, 'core')}")
    f.expect(i.max_inflight >= 1, f"max_inflight {i.max_inflight}")
    f.expect(i.alignment >= 1 and i.alignment & (i.alignment - 1) == 0,
             f"alignment {i.alignment} is not a power of two")
    stats = device.stats()
    f.data["stats"] = stats
    f.expect(sorted(stats) == sorted(STATS_KEYS),
             f"stats keys {sorted(stats)}, expected {sorted(STATS_KEYS)}")
    f.expect(all(v >= 0 for v in stats.values()), f"negative stats: {stats}")


def check_load_model(ctx: Context, f: Findings) -> None:
    """Loads the model (an ONNX model compiles first on the emulator); FAIL if it has no input or
    no output."""
    assert ctx.device is not None
    path = ctx.model_path if ctx.model_path is not None else DEFAULT_MODEL
    data = path.read_bytes()
    f.data.update(path=str(path), bytes=len(data), sha256=hashlib.sha256(data).hexdigest())
    t0 = time.perf_counter()
    ctx.model = model = ctx.device.load(str(path))
    f.data["load_ms"] = (time.perf_counter() - t0) * 1e3
    f.summary = (f"{path.name} ({len(data)} bytes) in {f.data['load_ms']:.1f} ms: "
                 f"{counted(len(model.inputs), 'input')}, {counted(len(model.outputs), 'output')}")
    f.note(f"sha256 {f.data['sha256']}")
    f.expect(len(model.inputs) >= 1, "the model has no inputs")
    f.expect(len(model.outputs) >= 1, "the model has no outputs")


def check_introspection(ctx: Context, f: Findings) -> None:
    """Prints every input and output (dtype, shape, strides, layout, byte size, quantization); FAIL on
    duplicate names or metadata that cannot be right (``tensor_problems``)."""
    assert ctx.model is not None
    f.data["inputs"], f.data["outputs"] = [], []
    for kind, infos in (("input", ctx.model.inputs), ("output", ctx.model.outputs)):
        names = [i.name for i in infos]
        f.expect(len(set(names)) == len(names), f"duplicate {kind} names: {names}")
        for i in infos:
            padded = "" if i.dense else " (padded)"
            f.note(f"{kind} {i.name!r}: {describe(i)} layout {i.layout or 'none'}, strides "
                   f"{list(i.strides)}, {i.nbytes} bytes{padded}, {quant_text(i.quant)}")
            f.data[kind + "s"].append(dict(asdict(i), dtype=str(i.dtype), dense=i.dense))
            for text in tensor_problems(i):
                f.problem(text)
    f.summary = ("(" + ", ".join(describe(i) for i in ctx.model.inputs) + ") -> ("
                 + ", ".join(describe(o) for o in ctx.model.outputs) + ")")
