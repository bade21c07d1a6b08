"""accel.profile(): per-job timing from the device; summary() table; export_chrome_trace() JSON that
chrome://tracing and Perfetto open (traceEvents, X events with ts/dur in microseconds, one track per
emulated core, named by metadata events)."""
from __future__ import annotations

import json
import re

import numpy as np

import accel
from conftest import rand


def _row(summary, name):
    rows = [line for line in summary.splitlines() if re.match(rf"\s*{re.escape(name)}\s", line)]
    assert len(rows) == 1, (name, summary)
    return rows[0].split()


def test_summary_table(dev, tiny, cnn):
    with accel.profile() as p:
        for _ in range(10):
            cnn.run(np.zeros((1, 3, 64, 64), np.float32))
        for i in range(5):
            tiny.run(rand((1, 16), i))
    s = p.summary()
    assert isinstance(s, str)
    header = s.splitlines()[0].lower()
    for col in ("count", "mean", "p50", "p99"):
        assert col in header, header
    cnn_row = _row(s, cnn.name)
    tiny_row = _row(s, tiny.name)
    assert cnn.name != tiny.name
    assert cnn_row[1] == "10" and tiny_row[1] == "5"
    # mean/p50/p99 are positive numbers with p50 <= p99
    nums = [float(v) for v in cnn_row[2:] if re.fullmatch(r"[0-9.]+", v)]
    assert len(nums) >= 3 and all(v > 0 for v in nums)
    assert nums[1] <= nums[2] + 1e-9


def test_records_only_inside_the_block(dev, tiny):
    tiny.run(rand((1, 16), 0))
    with accel.profile() as p:
        tiny.run(rand((1, 16), 1))
        tiny.run_async(rand((1, 16), 2)).result(timeout=10)
    tiny.run(rand((1, 16), 3))
    assert _row(p.summary(), tiny.name)[1] == "2"


def test_timing_is_consistent(dev, slow):
    with accel.profile() as p:
        slow.run(rand((512, 512), 1))
    trace = _trace(p)
    (ev,) = _jobs(trace)
    assert 5_000 < ev["dur"] < 5_000_000  # tens of ms, in microseconds


def _trace(p, tmp_path=None):
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        p.export_chrome_trace(path)
        with open(path, encoding="utf-8") as f:
            return json.load(f)


def _jobs(trace):
    return [e for e in trace["traceEvents"] if e.get("ph") == "X"]


def test_chrome_trace_structure(slow, tiny):
    with accel.profile() as p:
        futs = [slow.run_async(rand((512, 512), i)) for i in range(6)]
        for f in futs:
            f.result(timeout=60)
        for i in range(4):
            tiny.run(rand((1, 16), i))
    trace = _trace(p)
    assert isinstance(trace, dict) and isinstance(trace["traceEvents"], list)
    jobs = _jobs(trace)
    assert len(jobs) == 10
    assert sorted(e["name"] for e in jobs) == sorted([slow.name] * 6 + [tiny.name] * 4)
    for e in jobs:
        assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float))
        assert e["ts"] >= 0 and e["dur"] >= 0
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
    # one track per core: 6 slow jobs on the device (2 cores on the emulator) use every core
    info = slow.device.info
    slow_tids = {e["tid"] for e in jobs if e["name"] == slow.name}
    assert slow_tids == set(range(info.cores))
    # jobs on one core never overlap; libdnn does not say when a task starts, so a BPU job's span starts
    # when libdnn accepted it and spans overlap there (libaccel/backends/bpu/README.md)
    for tid in slow_tids if info.backend != "bpu" else ():
        evs = sorted((e for e in jobs if e["tid"] == tid), key=lambda e: e["ts"])
        for a, b in zip(evs, evs[1:]):
            assert a["ts"] + a["dur"] <= b["ts"] + 1.0, (a, b)
    # metadata names the process (device) and every core track
    meta = [e for e in trace["traceEvents"] if e.get("ph") == "M"]
    thread_names = {(e["pid"], e["tid"]): e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    for e in jobs:
        assert (e["pid"], e["tid"]) in thread_names
        assert "core" in thread_names[(e["pid"], e["tid"])].lower()
    procs = [e for e in meta if e["name"] == "process_name"]
    assert procs and all(info.backend in e["args"]["name"] for e in procs)


def test_chrome_trace_two_devices_two_processes(tiny_path):
    with accel.open("emu:cores=1") as d1, accel.open("emu:cores=1,pool=32M") as d2:
        m1, m2 = d1.load(str(tiny_path)), d2.load(str(tiny_path))
        with accel.profile() as p:
            m1.run(rand((1, 16), 1))
            m2.run(rand((1, 16), 2))
    jobs = _jobs(_trace(p))
    assert len(jobs) == 2
    assert jobs[0]["pid"] != jobs[1]["pid"]


def test_sequential_jobs_are_ordered_in_time(tiny):
    with accel.profile() as p:
        for i in range(20):
            tiny.run(rand((1, 16), i))
    jobs = sorted(_jobs(_trace(p)), key=lambda e: e["ts"])
    assert len(jobs) == 20
    for a, b in zip(jobs, jobs[1:]):
        assert a["ts"] + a["dur"] <= b["ts"] + 1.0


def test_empty_profile(tmp_path):
    with accel.profile() as p:
        pass
    assert "count" in p.summary().lower()
    path = tmp_path / "empty.json"
    p.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    assert _jobs(trace) == []


def test_nested_profiles(tiny):
    with accel.profile() as outer:
        tiny.run(rand((1, 16), 1))
        with accel.profile() as inner:
            tiny.run(rand((1, 16), 2))
    assert _row(outer.summary(), tiny.name)[1] == "2"
    assert _row(inner.summary(), tiny.name)[1] == "1"


def test_profile_from_threads(cnn):
    import threading

    def work():
        for _ in range(5):
            cnn.run(np.zeros((1, 3, 64, 64), np.float32))

    with accel.profile() as p:
        ts = [threading.Thread(target=work) for _ in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    assert _row(p.summary(), cnn.name)[1] == "20"
    assert len(_jobs(_trace(p))) == 20


def test_failed_jobs_are_recorded_sync_and_async(slow_path):
    """A job that fails (here: its own timeout) still ran and has timing: both ways of running record it."""
    with accel.open("emu:cores=1") as d:
        m = d.load(str(slow_path))
        x = rand((512, 512), 1)
        with accel.profile() as p:
            m.run(x)
            try:
                m.run(x, timeout=1e-3)
            except accel.TimeoutError:
                pass
            assert type(m.run_async(x, timeout=1e-3).exception(timeout=30)) is accel.TimeoutError
        statuses = sorted(r.status for r in p.records)
        assert statuses == [0, 8, 8], statuses
        assert "(+2 failed)" in p.summary()


def test_profile_object_api(tiny):
    p = accel.profile()
    assert isinstance(p, accel.Profile) and not p.active and len(p) == 0
    p.start()
    assert p.active
    tiny.run(rand((1, 16), 1))
    tiny.run_async(rand((1, 16), 2)).result(timeout=10)
    p.stop()
    tiny.run(rand((1, 16), 3))
    assert not p.active and len(p) == 2
    recs = p.records
    assert all(isinstance(r, accel.JobRecord) for r in recs)
    for r in recs:
        assert r.model == tiny.name and r.device == tiny.device.uri and r.status == 0
        assert 0 < r.queued_ns <= r.started_ns <= r.finished_ns and r.core in (0, 1)
        assert r.latency_ns >= r.run_ns > 0
    st = p.stats()[tiny.name]
    assert st["count"] == 2 and st["failed"] == 0
    assert 0 < st["run_p50_ms"] <= st["run_p99_ms"]
    p.clear()
    assert len(p) == 0 and p.records == []
