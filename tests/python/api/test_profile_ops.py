"""accel.profile(ops=True): per-node (layer) times from the device (ABI 1.1, accel_job_get_node_times).
Node records per job (names of the model's nodes, op types as the device runs them, in order, inside
the job's own span), Profile.op_stats() and slowest_nodes(), the summary's per-op-type table, Chrome
trace events nested under their job, and `accel bench --ops`. A device that cannot time nodes runs the
jobs as usual and records their job timing alone, with one RuntimeWarning per model."""
from __future__ import annotations

import json
import warnings

import numpy as np
import onnx
import pytest

import accel
from conftest import ON_EMULATOR, rand
from conftest import run_main

X = np.zeros((1, 3, 64, 64), np.float32)


def _onnx_names(path):
    return {n.name for n in onnx.load(str(path)).graph.node}


def _profiled(cnn, runs=4, async_runs=3):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with accel.profile(ops=True) as p:
            for _ in range(runs):
                cnn.run(X)
            for f in [cnn.run_async(X) for _ in range(async_runs)]:
                f.result(timeout=30)
    return p, [w for w in caught if issubclass(w.category, RuntimeWarning)]


def test_node_records(cnn, cnn_path):
    p, warned = _profiled(cnn)
    records = p.records
    assert len(records) == 7
    if not ON_EMULATOR:
        # The vendor drivers cannot time layers: job timing alone, one warning for the model.
        assert all(r.nodes == () for r in records)
        assert len(warned) == 1 and "cannot time the nodes" in str(warned[0].message)
        assert p.op_stats() == {} and p.slowest_nodes() == []
        assert "no node times recorded" in p.summary()
        return
    assert not warned
    names = _onnx_names(cnn_path)
    first = records[0].nodes
    assert len(first) >= 5
    for r in records:
        assert [(n.name, n.op_type) for n in r.nodes] == [(n.name, n.op_type) for n in first]
        previous_end = r.started_ns
        for n in r.nodes:
            assert n.name in names, (n.name, sorted(names))
            assert previous_end <= n.start_ns <= n.end_ns <= r.finished_ns
            assert n.duration_ns == n.end_ns - n.start_ns
            previous_end = n.end_ns
        assert sum(n.duration_ns for n in r.nodes) <= r.run_ns


@pytest.mark.emulator  # the op types of fused nodes are the emulator's
def test_fused_nodes_are_named_after_their_first_node(cnn):
    with accel.profile(ops=True) as p:
        cnn.run(X)
    nodes = {n.name: n.op_type for n in p.records[0].nodes}
    # Conv + BatchNormalization + Relu run as one node named "stem"; Conv + BN + Clip as "dw".
    assert nodes["stem"] == "Conv+Relu"
    assert nodes["dw"] == "Conv+Clip"
    assert nodes["softmax"] == "Softmax"
    assert "stem_bn" not in nodes and "stem_relu" not in nodes


def test_op_stats_and_slowest_nodes(cnn):
    p, _ = _profiled(cnn, runs=5, async_runs=0)
    stats = p.op_stats()
    if not ON_EMULATOR:
        assert stats == {}
        return
    nodes = p.records[0].nodes
    for op, s in stats.items():
        assert s.op_type == op
        assert s.count == 5 * sum(1 for n in nodes if n.op_type == op)
        assert s.mean_ms == pytest.approx(s.total_ms / s.count)
    assert sum(s.share for s in stats.values()) == pytest.approx(1.0)
    totals = [s.total_ms for s in stats.values()]
    assert totals == sorted(totals, reverse=True)
    # the per-op table sums to at most the time the jobs spent on a core
    assert sum(totals) <= sum(r.run_ns for r in p.records) / 1e6
    slow = p.slowest_nodes(3)
    assert len(slow) == 3
    assert [s.total_ms for s in slow] == sorted((s.total_ms for s in slow), reverse=True)
    everything = p.slowest_nodes(1000)
    assert len(everything) == len(nodes) and all(s.count == 5 and s.model == cnn.name for s in everything)
    assert slow[0].total_ms == max(s.total_ms for s in everything)
    assert sum(s.share for s in everything) == pytest.approx(1.0)


def test_summary_lists_op_types_and_slowest_nodes(cnn):
    p, _ = _profiled(cnn, runs=3, async_runs=0)
    text = p.summary()
    assert cnn.name in text.splitlines()[2]
    if not ON_EMULATOR:
        return
    assert "per op type" in text and "slowest nodes (top 10)" in text
    for op in p.op_stats():
        assert op in text
    table = text.split("per op type")[1].split("slowest nodes")[0]
    assert "share" in table and "%" in table
    assert p.slowest_nodes(1)[0].name in text.split("slowest nodes")[1]


def test_chrome_trace_nests_nodes_in_their_job(cnn):
    p, _ = _profiled(cnn, runs=2, async_runs=2)
    events = [e for e in p.chrome_trace()["traceEvents"] if e["ph"] == "X"]
    jobs = [e for e in events if e["cat"] == "job"]
    nodes = [e for e in events if e["cat"] == "node"]
    assert len(jobs) == 4
    if not ON_EMULATOR:
        assert nodes == []
        return
    assert len(nodes) == 4 * len(p.records[0].nodes)
    for n in nodes:
        parents = [j for j in jobs if j["pid"] == n["pid"] and j["tid"] == n["tid"]
                   and j["ts"] - 1e-3 <= n["ts"] and n["ts"] + n["dur"] <= j["ts"] + j["dur"] + 1e-3]
        assert len(parents) == 1, n
        assert n["args"]["op_type"]
    json.dumps(p.chrome_trace())  # serializable as written


def test_plain_profiles_record_no_nodes(cnn, tiny):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with accel.profile() as plain:
            cnn.run(X)
            with accel.profile(ops=True) as ops:
                cnn.run(X)
                tiny.run(rand((1, 16), 0))
                cnn.run(X)  # warned once per model
            cnn.run(X)
    assert len([w for w in caught if issubclass(w.category, RuntimeWarning)]) == (0 if ON_EMULATOR else 2)
    assert all(r.nodes == () for r in plain.records) and len(plain) == 5
    assert len(ops) == 3
    assert (all(r.nodes for r in ops.records) if ON_EMULATOR else all(r.nodes == () for r in ops.records))
    assert "per op type" not in plain.summary()
    assert ops.ops and not plain.ops


def test_core_job_node_times_refused_without_the_flag(cnn):
    ins, outs = _buffers(cnn)
    job = cnn._core.submit(ins, outs, lambda *a: None)
    try:
        job.wait(30)
        with pytest.raises(accel.UnsupportedError):
            job.node_times()
    finally:
        job.release()


def _buffers(model):
    dev = model._device
    ins = [dev.empty(i.shape, i.dtype).buffer for i in model.inputs]
    outs = [dev.empty(o.shape, o.dtype).buffer for o in model.outputs]
    return ins, outs


def test_bench_ops(capsys, cnn_path):
    code, out, err = run_main(capsys, "bench", cnn_path, "--device", "emu:cores=1", "--runs", "5", "--ops",
                              "--top", "3")
    assert code == 0, err
    assert "latency: p50" in out and "throughput:" in out
    assert out.index("throughput:") < out.index("per op type") < out.index("slowest nodes (top 3)")
    assert "Conv+Relu" in out.split("per op type")[1].split("slowest nodes")[0]
    layers = out.split("slowest nodes (top 3):")[1].strip().splitlines()
    assert len(layers) == 2 + 3  # header, rule, three nodes
    code, out, err = run_main(capsys, "bench", cnn_path, "--device", "emu:cores=1", "--runs", "3", "--ops",
                              "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["ops"] and result["slowest_nodes"]
    assert {"op_type", "count", "total_ms", "mean_ms", "share"} <= set(result["ops"][0])


def test_bench_top_needs_ops(capsys, cnn_path):
    code, _, err = run_main(capsys, "bench", cnn_path, "--device", "emu:cores=1", "--runs", "2", "--top", "3")
    assert code == 2 and "--ops" in err
