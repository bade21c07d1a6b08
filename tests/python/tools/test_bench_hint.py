"""`accel bench --hint`: the model measured on the emulator with hint=latency, hint=throughput or both in turn,
each mode's figures naming its device, cores and threads and the jobs in flight it used (Model.optimal_jobs of
that device), and the usage errors of the option."""
import json
import os
import re

import pytest
from conftest import CNN_PATH, run_main

CPUS = min(len(os.sched_getaffinity(0)), 64)


def usage_error(capsys, *args):
    code, out, err = run_main(capsys, *args)
    assert code == 2, (code, out, err)
    return err


def test_bench_hint_both_text(capsys):
    code, out, err = run_main(capsys, "bench", CNN_PATH, "--hint", "both", "--runs", "4")
    assert code == 0, err
    blocks = out.split("\n\n")
    assert len(blocks) == 3, out
    lat, tput, summary = blocks
    assert lat.startswith(f"tiny_cnn.onnx on emu:hint=latency (1 core x {CPUS} thread"), lat
    assert re.search(r"^latency: p50 [0-9.]+ ms, p99 [0-9.]+ ms \(4 runs, one at a time\)$", lat, re.M), lat
    assert re.search(r"^throughput: [0-9.]+ runs/s \(4 runs, 2 jobs in flight on 1 core: 1 waits", lat, re.M), lat
    cores = f"{CPUS} core{'s' if CPUS > 1 else ''}"
    assert tput.startswith(f"tiny_cnn.onnx on emu:hint=throughput ({cores} x 1 thread)"), tput
    assert re.search(rf"^throughput: [0-9.]+ runs/s \(4 runs, {2 * CPUS} jobs in flight on {cores}: ", tput,
                     re.M), tput
    assert re.fullmatch(r"throughput hint against latency hint: [0-9.]+x the runs/s, [0-9.]+x the p50 latency of "
                        r"one run\n", summary), summary


def test_bench_one_hint_json_and_given_jobs(capsys):
    code, out, err = run_main(capsys, "bench", CNN_PATH, "--device", "emu:cores=1", "--hint", "throughput",
                              "--runs", "3", "--jobs", "5", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["device"] == "emu:cores=1,hint=throughput"  # the URI's cores= wins over the hint's
    assert (r["hint"], r["cores"], r["threads"], r["jobs"]) == ("throughput", 1, 1, 5)
    assert r["latency_runs"] == 3 and r["throughput_runs"] == 3


def test_bench_hint_both_json(capsys):
    code, out, err = run_main(capsys, "bench", CNN_PATH, "--hint", "both", "--runs", "2", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["model"] == str(CNN_PATH)
    assert [(h["device"], h["hint"], h["cores"], h["threads"], h["jobs"]) for h in r["hints"]] == [
        ("emu:hint=latency", "latency", 1, min(CPUS, 256), 2), ("emu:hint=throughput", "throughput", CPUS, 1, 2 * CPUS)]
    assert all(h["throughput_per_s"] > 0 and h["latency_p50_ms"] > 0 for h in r["hints"])


def test_bench_without_hint_measures_the_device_as_given(capsys):
    code, out, err = run_main(capsys, "bench", CNN_PATH, "--device", "emu:cores=1", "--runs", "1")
    assert code == 0, err
    assert out.startswith("tiny_cnn.onnx on emu:cores=1: inputs ") and "hint" not in out, out
    code, out, err = run_main(capsys, "bench", CNN_PATH, "--device", "emu:cores=1", "--runs", "1", "--json")
    assert code == 0, err
    r = json.loads(out)  # one object, as before --hint; the device's hint among its facts
    assert "hints" not in r and r["jobs"] == r["cores"] == 1 and r["hint"] == "latency"


@pytest.mark.parametrize("args, message", [
    (["--device", "emu:hint=latency", "--hint", "throughput"], "the device 'emu:hint=latency' sets hint= already"),
    (["--hint", "both", "--trace", "t.json"], "--trace writes one device's jobs"),
    (["--hint", "fast"], "argument --hint: invalid choice: 'fast'"),
])
def test_bench_hint_usage_errors(capsys, args, message):
    assert message in usage_error(capsys, "bench", CNN_PATH, "--runs", "1", *args)


def test_bench_hint_both_keeps_the_uris_own_options(capsys):
    # threads=1 given: both modes run on one thread per core, the hint choosing only the cores.
    code, out, err = run_main(capsys, "bench", CNN_PATH, "--device", "emu:threads=1", "--hint", "both", "--runs", "1",
                              "--json")
    assert code == 0, err
    assert [(h["device"], h["cores"], h["threads"]) for h in json.loads(out)["hints"]] == [
        ("emu:threads=1,hint=latency", 1, 1), ("emu:threads=1,hint=throughput", CPUS, 1)]
