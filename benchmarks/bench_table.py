"""The speed table: the emulator against onnxruntime on the models users bring, float and int8, on one thread
and on every CPU, latency and throughput, each runtime in a process of its own, in one run.

    python benchmarks/bench_table.py [--models resnet18,mobilenetv2,yolo,vit,bert] [--precisions float,int8]
                                     [--rounds 5] [--layers 12] [--per-layer] [--quick] [--json PATH]

Models: ResNet-18, MobileNetV2 and the YOLOv8-style detector of tests/models/catalog.py at their benchmark
shapes; a ViT-B/16-shaped classifier (224x224) and a BERT-base-shaped encoder (sequence 128) from
tests/models/encoder.py (`--layers` of their 12 layers). int8: the CNNs quantized statically (QDQ, per-channel
int8 weights, uint8 activations: tests/models/quantized.py), onnxruntime running its fused int8 kernels
(session.qdqisint8allowed); the transformers quantized dynamically (onnxruntime.quantization.quantize_dynamic:
int8 weights, activations quantized at run time), as CPU users quantize them.

Six configurations per model and precision, each a child process that loads its runtime once:
  * emu 1t / ort 1t: latency on one thread (emu:cores=1,threads=1; intra_op_num_threads=1);
  * emu / ort:       latency of one job on every CPU, as users open them (`emu`; onnxruntime's defaults);
  * emu tput / ort tput: runs per second with jobs in flight: `emu:hint=throughput` with Model.optimal_jobs
    jobs in flight; one onnxruntime session of one thread run by as many Python threads as there are CPUs.
    Each side's throughput is the better of that and 1/(its every-CPU latency).
Rounds alternate the processes (a different one first each round) and only one measures at a time, so a
noisy machine weighs on each alike and neither runtime's idle threads take the other's CPUs. Figures are
medians over rounds. Ratios are emulator / onnxruntime for times and onnxruntime / emulator for throughput
(below 1: the emulator is ahead), checked against issue 37's targets: float one thread <= 1.0 (goal 0.8);
every CPU latency <= 1.0 (goal 0.8) and throughput ratio <= 1/1.1 (goal 1/1.2); int8 <= 0.7 (goal 0.5).

`--per-layer` adds, per model, the emulator's slowest layers on one thread with the rate each reaches as a
fraction of the peak this run measures: the emulator's own float GEMM (a 1024^3 MatMul) and int8 GEMM (a 1024^3
QLinearMatMul) on one thread.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from processes import Child, serve  # noqa: E402  (benchmarks/, the script's folder)
from profiles import emulator_profile  # noqa: E402
from timing import median_latency  # noqa: E402

MODELS = ("resnet18", "mobilenetv2", "yolo", "vit", "bert")
TRANSFORMERS = ("vit", "bert")
CONFIGS = ("emu 1t", "ort 1t", "emu", "ort", "emu tput", "ort tput")
# Issue 37's targets and goals: (what, ratio at most, goal).
TARGETS = {"float 1t": (1.0, 0.8), "every CPU": (1.0, 0.8), "tput": (1 / 1.1, 1 / 1.2), "int8": (0.7, 0.5)}
BERT_SEQ = 128
ROUND_SECONDS = 1.0
# Ops the emulator fuses into the GEMM before them (per_layer's names).
EPILOGUES = ("Cast", "Mul", "Add", "Relu", "Clip", "Sigmoid", "QuantizeLinear", "DequantizeLinear")


# -- the models ------------------------------------------------------------------------------------------

def model_files(name: str, precision: str, layers: int, quick: bool, folder: Path) -> Tuple[str, Dict]:
    """(ONNX path, {input name: array}) of one model at one precision."""
    from models import catalog, quantized
    from models.encoder import encoder, vit

    if name in TRANSFORMERS:
        float_path = folder / f"{name}.onnx"
        if not float_path.exists():
            if name == "vit":
                onnx.save(vit(layers=layers, image=64 if quick else 224), str(float_path))
            else:
                onnx.save(encoder(layers, 32 if quick else BERT_SEQ), str(float_path))
        shape = [d.dim_value for d in onnx.load(str(float_path), load_external_data=False)
                 .graph.input[0].type.tensor_type.shape.dim]
        x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
        if precision == "float":
            return str(float_path), {"x": x}
        qpath = folder / f"{name}_int8.onnx"
        if not qpath.exists():
            quantized.quantize_dynamic_file(str(float_path), str(qpath))
        return str(qpath), {"x": x}
    spec = catalog.MODELS[name]
    shape = spec.test_shape if quick else spec.bench_shape
    feeds = {spec.input_name: spec.make_input(shape)}
    if precision == "int8":
        return str(quantized.static_model(name, shape=shape)), feeds
    path = folder / f"{name}.onnx"
    if not path.exists():
        onnx.save(quantized.float_model(name, shape), str(path))
    return str(path), feeds


# -- a child process: one runtime, one configuration ---------------------------------------------------------

def ort_session(path: str, threads: int):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    if threads:
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
    opts.add_session_config_entry("session.qdqisint8allowed", "1")  # its int8 kernels on QDQ models
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def throughput(submit: Callable[[int], object], wait: Callable[[object], object], inflight: int,
               seconds: float) -> float:
    """Runs per second with `inflight` submitted and not yet waited for, over about `seconds`."""
    window: List[object] = []
    done, i = 0, 0
    t0 = time.perf_counter()
    end = t0 + seconds
    while done < 3 * inflight or time.perf_counter() < end:
        if len(window) == inflight:
            wait(window.pop(0))
            done += 1
        window.append(submit(i))
        i += 1
    for w in window:
        wait(w)
        done += 1
    return done / (time.perf_counter() - t0)


def ort_threads_throughput(run: Callable[[], object], workers: int, seconds: float) -> float:
    """Runs per second with `workers` Python threads each calling run (onnxruntime releases the GIL)."""
    counts = [0] * workers
    end = time.perf_counter() + seconds

    def loop(k: int) -> None:
        while counts[k] < 3 or time.perf_counter() < end:
            run()
            counts[k] += 1

    t0 = time.perf_counter()
    threads = [threading.Thread(target=loop, args=(k,)) for k in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(counts) / (time.perf_counter() - t0)


def measurer(config: str, path: str, feeds: Dict[str, np.ndarray]) -> Callable[[float], float]:
    """A function of a time budget: the configuration's median latency (s) or its runs per second."""
    if config.startswith("ort"):
        sess = ort_session(path, 1 if config in ("ort 1t", "ort tput") else 0)
        run = lambda: sess.run(None, feeds)  # noqa: E731
        run()
        if config == "ort tput":
            return lambda s: ort_threads_throughput(run, cpus(), s)
        return lambda s: median_latency(run, s)
    import accel
    from accel import compiler

    uri = {"emu 1t": "emu:cores=1,threads=1", "emu": "emu", "emu tput": "emu:hint=throughput"}[config]
    dev = accel.open(uri)
    model = dev.load(compiler.compile_model(path, input_shapes={k: list(v.shape) for k, v in feeds.items()}))
    ins = [dev.tensor(feeds[t.name]) for t in model.inputs]
    jobs = model.optimal_jobs if config == "emu tput" else 1
    outs = [[dev.empty(o.shape, o.dtype) for o in model.outputs] for _ in range(jobs)]
    model.run(ins, outputs=outs[0])
    if config == "emu tput":
        return lambda s: throughput(lambda i: model.run_async(ins, outputs=outs[i % jobs]),
                                    lambda f: f.result(), jobs, s)  # type: ignore[attr-defined]
    return lambda s: median_latency(lambda: model.run(ins, outputs=outs[0]), s)


def worker(config: str, name: str, precision: str, layers: int, quick: bool, folder: str) -> int:
    path, feeds = model_files(name, precision, layers, quick, Path(folder))
    return serve(measurer(config, path, feeds))


def measure_row(name: str, precision: str, layers: int, quick: bool, rounds: int, seconds: float,
                folder: Path) -> Dict[str, float]:
    """{config: median over rounds} for one model and precision."""
    model_files(name, precision, layers, quick, folder)  # made once, before the children read them
    children = [Child(c, [__file__, "--worker", c, name, precision, str(layers), str(int(quick)), str(folder)])
                for c in CONFIGS]
    try:
        for c in children:
            c.wait_ready()
        got: Dict[str, List[float]] = {c.name: [] for c in children}
        for r in range(rounds):
            k = r % len(children)
            for c in children[k:] + children[:k]:
                got[c.name].append(c.measure(seconds))
    finally:
        for c in children:
            c.close()
    return {k: statistics.median(v) for k, v in got.items()}


# -- per layer: the rate against the measured GEMM peaks -----------------------------------------------------

def peak_models(folder: Path, n: int) -> Tuple[str, str]:
    """A one-node float MatMul and a one-node QLinearMatMul (uint8 x int8), both n x n x n."""
    rng = np.random.default_rng(0)
    f = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")], "peak_f32",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [n, n])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, n])],
        [numpy_helper.from_array(rng.standard_normal((n, n)).astype(np.float32), "b")])
    scalars = [numpy_helper.from_array(np.array(v, dt), k) for k, v, dt in
               (("as", 0.02, np.float32), ("az", 128, np.uint8), ("bs", 0.01, np.float32), ("bz", 0, np.int8),
                ("ys", 0.5, np.float32), ("yz", 128, np.uint8))]
    q = helper.make_graph(
        [helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"], name="qmm")],
        "peak_int8", [helper.make_tensor_value_info("a", TensorProto.UINT8, [n, n])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [n, n])],
        scalars + [numpy_helper.from_array(rng.integers(-127, 128, (n, n)).astype(np.int8), "b")])
    paths = []
    for g in (f, q):
        p = folder / f"{g.name}.onnx"
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), str(p))
        paths.append(str(p))
    return paths[0], paths[1]


def model_layers(path: str, feeds: Dict[str, np.ndarray]) -> Dict[str, Tuple[str, int]]:
    """{node name: (its layer, the layer's multiply-adds)} for the source model's Conv, MatMul and Gemm nodes
    (and their integer forms), from onnx's shape inference at the inputs' shapes. A runtime profiles a fused
    layer under one of its nodes' names (quantize_dynamic's MatMulInteger -> Cast -> Mul -> Add runs as one),
    so the single-consumer elementwise nodes after a GEMM map to it too."""
    model = onnx.load(path)
    for inp in model.graph.input:
        if inp.name in feeds:
            dims = inp.type.tensor_type.shape.dim
            for d, v in zip(dims, feeds[inp.name].shape):
                d.dim_value = int(v)
    model = onnx.shape_inference.infer_shapes(model)
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in list(model.graph.value_info) + list(model.graph.output) + list(model.graph.input)}
    shapes.update({t.name: list(t.dims) for t in model.graph.initializer})
    layers: Dict[str, Tuple[str, int]] = {}
    for nd in model.graph.node:
        out = shapes.get(nd.output[0])
        if not out:
            continue
        if nd.op_type in ("Conv", "ConvInteger", "QLinearConv"):
            w = shapes.get(nd.input[3 if nd.op_type == "QLinearConv" else 1])
            if w:
                layers[nd.name] = (nd.name, int(np.prod(out)) * int(np.prod(w[1:])))
        elif nd.op_type in ("MatMul", "MatMulInteger", "QLinearMatMul", "Gemm"):
            a = shapes.get(nd.input[0])
            if a:
                k = a[0] if nd.op_type == "Gemm" and any(at.name == "transA" and at.i for at in nd.attribute) \
                    else a[-1]
                layers[nd.name] = (nd.name, int(np.prod(out)) * int(k))
    consumers: Dict[str, List[onnx.NodeProto]] = {}
    for nd in model.graph.node:
        for i in nd.input:
            consumers.setdefault(i, []).append(nd)
    for nd in [nd for nd in model.graph.node if nd.name in layers]:
        tail = nd
        while len(consumers.get(tail.output[0], [])) == 1 and consumers[tail.output[0]][0].op_type in EPILOGUES:
            tail = consumers[tail.output[0]][0]
            layers.setdefault(tail.name, layers[nd.name])
    return layers


def ort_node_times(path: str, feeds: Dict[str, np.ndarray], folder: Path, runs: int = 3) -> Dict[str, float]:
    """{node name: mean ms} of onnxruntime on one thread, from its own profile (a node it fused is named after the
    source node it grew from: "conv_2_token_1", "l0.k.mm/MatMulAddFusion"; the suffixes are dropped here)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.enable_profiling = True
    opts.profile_file_prefix = str(folder / "ort_profile")
    opts.add_session_config_entry("session.qdqisint8allowed", "1")
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    for _ in range(runs + 1):
        sess.run(None, feeds)
    runs_of: Dict[str, List[float]] = {}
    for ev in json.loads(Path(sess.end_profiling()).read_text()):
        name = ev.get("name", "")
        if ev.get("cat") == "Node" and name.endswith("_kernel_time"):
            node = re.sub(r"_token_\d+$", "", name[: -len("_kernel_time")].split("/")[0])
            runs_of.setdefault(node, []).append(ev["dur"] / 1e3)
    # Each node once per run, the first run's (a warm-up) dropped.
    return {node: float(np.mean(d[1:] if len(d) > 1 else d)) for node, d in runs_of.items()}


def per_layer(name: str, precision: str, layers: int, quick: bool, folder: Path, peaks: Dict[str, float],
              top: int = 8) -> List[str]:
    """The emulator's slowest layers of one model on one thread: each one's share of the time, onnxruntime's
    time for the same layer (from its profile, where its names let it be matched) and, for the GEMM-shaped
    ones, the emulator's rate as a fraction of the measured peak of its precision."""
    path, feeds = model_files(name, precision, layers, quick, folder)
    layer_of = model_layers(path, feeds)
    ort_ms: Dict[str, float] = {}
    for node, ms in ort_node_times(path, feeds, folder).items():
        key = layer_of.get(node, (node, 0))[0]
        ort_ms[key] = ort_ms.get(key, 0.0) + ms
    nodes = emulator_profile(path, feeds, "emu:cores=1,threads=1").slowest_nodes(top)
    lines = []
    for s in nodes:
        key, macs = layer_of.get(s.name, (s.name, 0))
        if not any(op in s.op_type for op in ("Conv", "MatMul", "Gemm")):
            key, macs = s.name, 0  # an epilogue the emulator ran on its own
        theirs = ort_ms.get(key)
        vs = f"{theirs:8.3f} ms {s.mean_ms / theirs:5.2f}x" if theirs else " " * 18
        ops = 2 * macs / (s.mean_ms * 1e-3)
        rate = f"{ops / 1e9:7.1f} GOP/s {ops / peaks[precision]:4.0%}" if macs else ""
        lines.append(f"    {s.name[:32]:<32} {s.op_type[:20]:<20} {s.mean_ms:8.3f} ms {s.share:5.1%} {vs}  {rate}")
    return lines


def gemm_peaks(folder: Path, n: int) -> Dict[str, float]:
    """{precision: operations per second} of the emulator's one-thread 2*n^3 GEMM, float and int8."""
    import accel

    out = {}
    with accel.open("emu:cores=1,threads=1") as dev:
        for precision, path in zip(("float", "int8"), peak_models(folder, n)):
            model = dev.load(path)
            dt = np.float32 if precision == "float" else np.uint8
            a = dev.tensor(np.random.default_rng(0).integers(0, 255, (n, n)).astype(dt))
            y = [dev.empty(o.shape, o.dtype) for o in model.outputs]
            out[precision] = 2 * n ** 3 / median_latency(lambda m=model, a=a, y=y: m.run([a], outputs=y), 1.0)
    return out


# -- the table --------------------------------------------------------------------------------------------

def ratios(row: Dict[str, float]) -> Dict[str, float]:
    emu_tput = max(row["emu tput"], 1 / row["emu"])
    ort_tput = max(row["ort tput"], 1 / row["ort"])
    return {"1t": row["emu 1t"] / row["ort 1t"], "every": row["emu"] / row["ort"], "tput": ort_tput / emu_tput,
            "emu_tput": emu_tput, "ort_tput": ort_tput}


def verdicts(precision: str, r: Dict[str, float]) -> List[str]:
    """The targets a row misses, named."""
    checks = [("1 thread", r["1t"], TARGETS["int8" if precision == "int8" else "float 1t"][0]),
              ("every-CPU latency", r["every"], TARGETS["int8" if precision == "int8" else "every CPU"][0]),
              ("throughput", r["tput"], TARGETS["tput"][0])]
    return [f"{what} {v:.2f} > {limit:.2f}" for what, v, limit in checks if v > limit]


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=",".join(MODELS), help=f"comma-separated, from {', '.join(MODELS)}")
    ap.add_argument("--precisions", default="float,int8")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--layers", type=int, default=12, help="the transformers' layers (12: ViT-B, BERT-base)")
    ap.add_argument("--per-layer", action="store_true", help="the slowest layers' rates against the GEMM peaks")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run: 1 round, short measurements, test-sized inputs, 1 transformer layer")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--worker", nargs=6, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        config, name, precision, layers, quick, folder = args.worker
        return worker(config, name, precision, int(layers), quick == "1", folder)
    names = [n for n in args.models.split(",") if n]
    precisions = [p for p in args.precisions.split(",") if p]
    bad = [n for n in names if n not in MODELS] + [p for p in precisions if p not in ("float", "int8")]
    if bad:
        ap.error(f"unknown: {', '.join(bad)} (models: {', '.join(MODELS)}; precisions: float, int8)")
    rounds, seconds = (1, 0.1) if args.quick else (args.rounds, ROUND_SECONDS)
    layers = 1 if args.quick else args.layers

    import accel

    with accel.open("emu") as dev:
        info = dev.info
    print(f"{cpus()} CPUs; emulator {info.name}, {info.threads} threads per job; {rounds} rounds; load average "
          f"{os.getloadavg()[0]:.1f} at start; times are medians in ms, throughput in runs/s; ratios emulator / "
          f"onnxruntime for times, onnxruntime / emulator for throughput (below 1: the emulator ahead)")
    heads = ("model", "prec", "emu 1t", "ort 1t", "ratio", "emu", "ort", "ratio", "emu/s", "ort/s", "ratio",
             "misses")
    print("{:<12} {:<5} {:>8} {:>8} {:>6} {:>8} {:>8} {:>6} {:>8} {:>8} {:>6}  {}".format(*heads))
    table, misses, layer_lines = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        peaks = gemm_peaks(folder, 256 if args.quick else 1024) if args.per_layer else {}
        for name in names:
            for precision in precisions:
                row = measure_row(name, precision, layers, args.quick, rounds, seconds, folder)
                r = ratios(row)
                miss = verdicts(precision, r)
                print(f"{name:<12} {precision:<5} {row['emu 1t'] * 1e3:>8.2f} {row['ort 1t'] * 1e3:>8.2f} "
                      f"{r['1t']:>6.2f} {row['emu'] * 1e3:>8.2f} {row['ort'] * 1e3:>8.2f} {r['every']:>6.2f} "
                      f"{r['emu_tput']:>8.1f} {r['ort_tput']:>8.1f} {r['tput']:>6.2f}  {'; '.join(miss) or 'met'}",
                      flush=True)
                table.append({"model": name, "precision": precision, **row, **r})
                misses += [f"{name} {precision}: {m}" for m in miss]
                if args.per_layer:
                    layer_lines += [f"  {name} {precision}:"] + per_layer(name, precision, layers, args.quick,
                                                                        folder, peaks)
    if args.per_layer:
        print(f"Per layer, one thread: the emulator's slowest layers, their share of its time, onnxruntime's time for "
              f"the layer and the ratio, the emulator's rate and its fraction of the peaks measured here: float GEMM "
              f"{peaks['float'] / 1e9:.1f} GFLOP/s, int8 GEMM {peaks['int8'] / 1e9:.1f} GOP/s")
        print("\n".join(layer_lines))
    for what, (target, goal) in TARGETS.items():
        print(f"target {what}: ratio <= {target:.2f} (goal {goal:.2f})")
    print(f"{len(misses)} target(s) missed" + (":\n  " + "\n  ".join(misses) if misses else ""))
    print(f"load average {os.getloadavg()[0]:.1f} at the end (above {cpus()}: other work shared the CPUs)")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": table, "peaks": peaks}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
