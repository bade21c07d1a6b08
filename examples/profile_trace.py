"""Profiling with accel.profile(): per-job timing as the device measured it, summarized as a table and
written as a Chrome trace (open it in https://ui.perfetto.dev or chrome://tracing).

    python examples/profile_trace.py [--output trace.json] [--ops]

Two models share a two-core emulator: first a few synchronous runs (one job at a time, so one core
idles), then a burst of asynchronous runs of both models (the two cores' tracks fill up, and the
jobs' wait in the queue shows in each slice's wait_us). Every slice is one job: its track is the core
that ran it, its name the model's. With --ops every node (layer) of every job is timed too: the
summary adds the time per op type and the slowest layers, and each job's slice holds one slice per
node.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import tempfile
from pathlib import Path

import numpy as np

import accel

MODELS = Path(accel.__file__).parent / "models"


def build_second_model() -> bytes:
    """A second, heavier model so the trace has two kinds of slices: a 3x3 convolution stack."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    nodes, weights, name = [], [], "image"
    for i in range(4):
        w = rng.normal(0.0, 0.1, (16, 3 if i == 0 else 16, 3, 3)).astype(np.float32)
        weights.append(numpy_helper.from_array(w, f"w{i}"))
        nodes.append(helper.make_node("Conv", [name, f"w{i}"], [f"c{i}"], pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"]))
        name = f"r{i}"
    graph = helper.make_graph(
        nodes, "features",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 64, 64])],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 16, 64, 64])], weights)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=Path("trace.json"))
    parser.add_argument("--runs", type=int, default=8, help="runs of each model in each phase")
    parser.add_argument("--ops", action="store_true", help="time every node too (accel.profile(ops=True))")
    args = parser.parse_args()

    with accel.open("emu:cores=2") as device:
        classifier = device.load(MODELS / "tiny_cnn.onnx")
        with tempfile.TemporaryDirectory() as tmp:
            # Loaded from a file, a model is named after it ("features"), and so are its slices.
            path = Path(tmp) / "features.onnx"
            path.write_bytes(build_second_model())
            features = device.load(path)
        x = device.tensor(np.random.default_rng(1).random((1, 3, 64, 64), np.float32))
        classifier.run(x), features.run(x)  # warm-up, outside the profile

        with accel.profile(ops=args.ops) as profile:
            for _ in range(args.runs):
                classifier.run(x)
                features.run(x)
            futures = [m.run_async(x) for _ in range(args.runs) for m in (classifier, features)]
            concurrent.futures.wait(futures)

    print(profile.summary())
    profile.export_chrome_trace(args.output)
    # What a trace viewer reads: "M" events name the processes (devices) and threads (cores), and
    # each "X" event is a job, with its start (ts) and duration (dur) in microseconds.
    events = json.loads(args.output.read_text())["traceEvents"]
    slices = [e for e in events if e["ph"] == "X" and e["cat"] == "job"]
    nodes = [e for e in events if e["ph"] == "X" and e["cat"] == "node"]
    cores = sorted({e["tid"] for e in slices})
    print(f"wrote {args.output}: {len(slices)} jobs on cores {cores}"
          + (f", {len(nodes)} node slices inside them" if nodes else "") + "; open it in https://ui.perfetto.dev")


if __name__ == "__main__":
    main()
