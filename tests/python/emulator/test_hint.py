"""emu:hint=latency|throughput (issue 37): the cores, threads and max_inflight each hint sets from the CPUs this
process may use, explicit options winning, DeviceInfo.hint, Model.optimal_jobs following it, a bad hint refused,
and the same result bits in every mode (the emulator's arithmetic never depends on cores or threads)."""
from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import CNN_PATH, onnx_model, rand_array, run_ort
from onnx import helper

import accel

CPUS = len(os.sched_getaffinity(0))  # what the emulator divides: its affinity mask, not the host's CPUs
PER_CPU = min(CPUS, 64)  # cores= takes 1..64


def info(uri):
    with accel.open(uri) as dev:
        return dev.info


@pytest.mark.parametrize("uri", ["emu", "emu:hint=latency"])
def test_latency_is_the_default_one_job_on_every_cpu(uri):
    i = info(uri)
    assert (i.hint, i.cores, i.threads, i.max_inflight) == ("latency", 1, min(CPUS, 256), 16)


def test_throughput_is_one_job_per_cpu():
    i = info("emu:hint=throughput")
    assert (i.hint, i.cores, i.threads, i.max_inflight) == ("throughput", PER_CPU, 1, max(16, 2 * PER_CPU))


@pytest.mark.parametrize("uri, cores, threads, inflight", [
    ("emu:hint=throughput,cores=1", 1, 1, 16),
    ("emu:threads=2,hint=throughput", PER_CPU, 2, max(16, 2 * PER_CPU)),
    ("emu:hint=throughput,cores=10", 10, 1, 20),
    ("emu:hint=throughput,max_inflight=3", PER_CPU, 1, 3),
    ("emu:hint=latency,threads=1", 1, 1, 16),
    ("emu:hint=latency,cores=2,threads=3", 2, 3, 16),
])
def test_explicit_options_win_over_the_hint(uri, cores, threads, inflight):
    i = info(uri)
    assert (i.cores, i.threads, i.max_inflight) == (cores, threads, inflight), uri
    assert i.hint == ("throughput" if "throughput" in uri else "latency")


@pytest.mark.parametrize("value", ["fast", "", "Throughput", "LATENCY", "0"])
def test_an_unknown_hint_is_refused_naming_the_known_ones(value):
    uri = f"emu:hint={value}"
    for call in (accel.open, accel.describe):  # describe reads the options as opening does
        with pytest.raises(accel.InvalidArgumentError) as e:
            call(uri)
        assert f"hint='{value}'" in str(e.value) and "known: latency, throughput" in str(e.value), str(e.value)


def test_an_unknown_option_names_hint_among_the_known():
    with pytest.raises(accel.InvalidArgumentError, match=r"unknown option 'hints=1' \(known: .*hint"):
        accel.open("emu:hints=1")


@pytest.mark.parametrize("uri, jobs", [
    ("emu", 2),                                   # one core: one job running, one queued
    ("emu:hint=throughput", 2 * PER_CPU),         # two per core, one core per CPU
    ("emu:hint=throughput,cores=3", 6),
    ("emu:hint=throughput,max_inflight=1", 1),    # never past what may be in flight
])
def test_optimal_jobs_follows_the_hint(uri, jobs):
    with accel.open(uri) as dev:
        assert dev.load(str(CNN_PATH)).optimal_jobs == jobs


def threaded_ops_model():
    """Ops whose work the emulator splits over a job's threads: a conv, a softmax over long rows, a MatMul and a
    LayerNormalization, on shapes that do not divide evenly by 2 or 3 threads."""
    r = np.random.default_rng(7)
    w = (r.standard_normal((24, 13, 3, 3)) * 0.2).astype(np.float32)
    m = (r.standard_normal((37 * 29, 45)) * 0.05).astype(np.float32)
    scale, bias = r.standard_normal(45).astype(np.float32), r.standard_normal(45).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Reshape", ["r", "shape"], ["flat"]),
             helper.make_node("Softmax", ["flat"], ["s"], axis=-1),
             helper.make_node("MatMul", ["s", "m"], ["mm"]),
             helper.make_node("LayerNormalization", ["mm", "scale", "bias"], ["y"], axis=-1)]
    return onnx_model(nodes, [("x", np.float32, (3, 13, 37, 29))], [("y", np.float32)],
                      {"w": w, "m": m, "shape": np.array([3, 24, 37 * 29], np.int64), "scale": scale, "bias": bias})


MODES = ["emu", "emu:hint=throughput", "emu:hint=throughput,threads=3", "emu:hint=latency,threads=3",
         "emu:hint=throughput,cores=1"]


@pytest.mark.parametrize("model", ["tiny_cnn", "threaded_ops"])
def test_the_same_bits_in_every_mode(model):
    if model == "tiny_cnn":
        source, feeds = str(CNN_PATH), {"image": rand_array((1, 3, 64, 64), np.float32, seed=3)}
    else:
        m = threaded_ops_model()
        source, feeds = m.SerializeToString(), {"x": rand_array((3, 13, 37, 29), np.float32, seed=3)}
    items = [{k: v + np.float32(0.25 * i) for k, v in feeds.items()} for i in range(5)]
    results = {}
    for uri in MODES:
        with accel.open(uri) as dev:
            loaded = dev.load(source)
            one = [np.array(a) for a in loaded.run(feeds)]
            # several jobs at once on a throughput device: each on a core of its own, the same bits as alone
            batch = [[np.array(a) for a in outs] for outs in loaded.run_batch(items)]
            results[uri] = (one, batch)
    want_one, want_batch = results["emu"]
    if model == "threaded_ops":  # the bits compared are right ones: onnxruntime's within float rounding
        np.testing.assert_allclose(want_one[0], run_ort(threaded_ops_model(), feeds)[0], rtol=1e-4, atol=1e-4)
    for uri, (one, batch) in results.items():
        assert [a.tobytes() for a in one] == [a.tobytes() for a in want_one], uri
        assert [[a.tobytes() for a in o] for o in batch] == [[a.tobytes() for a in o] for o in want_batch], uri
    assert want_batch[0][0].tobytes() != want_batch[1][0].tobytes()  # the items differ, so the batch is no copy
