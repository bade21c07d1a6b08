"""The checks, in the order they run, and which check makes what a later one needs."""
from __future__ import annotations

from typing import Tuple

from .checks_compare import check_compare
from .checks_resources import check_closed_device, check_device_memory, check_latency, check_rss
from .checks_runs import (check_async_runs, check_concurrency, check_determinism, check_error_paths,
                          check_inflight, check_sync_run, check_timeouts)
from .checks_setup import check_environment, check_introspection, check_load_model, check_open_device
from .framework import Check

#: The checks, in the order they run. ``needs``: what an earlier check must have made.
CHECKS: Tuple[Check, ...] = (
    Check("environment", check_environment, (), "versions, front-end, platform, drivers"),
    Check("open_device", check_open_device, (), "open the device, read info and stats"),
    Check("load_model", check_load_model, ("device",), "load the model"),
    Check("introspection", check_introspection, ("model",), "inputs and outputs, metadata sanity"),
    Check("sync_run", check_sync_run, ("model",), "one sync run: counts, shapes, dtypes, finite"),
    Check("determinism", check_determinism, ("reference",), "repeats are bit-identical"),
    Check("async_runs", check_async_runs, ("reference",), "run_async agrees with run"),
    Check("concurrency", check_concurrency, ("reference",), "threads at once agree"),
    Check("inflight", check_inflight, ("device", "reference"), "max_inflight jobs in flight"),
    Check("timeouts", check_timeouts, ("reference",), "tiny timeouts complete or raise, never hang"),
    Check("error_paths", check_error_paths, ("model",), "bad inputs raise the right errors"),
    Check("device_memory", check_device_memory, ("device", "reference"), "buffers back to baseline"),
    Check("rss", check_rss, ("reference",), "process memory growth, bounded"),
    Check("latency", check_latency, ("reference",), "p50/p99 of sync runs"),
    Check("closed_device", check_closed_device, ("device", "reference"), "a closed device raises"),
)
#: Run last when a model to compare with is given (``--compare``).
COMPARE = Check("compare", check_compare, ("reference",), "the device's outputs against the emulator's")
#: The check that makes each thing a check may need (``Check.needs``), named when a check is skipped.
MADE_BY = {"device": "open_device", "model": "load_model", "reference": "sync_run"}
