"""Batch inference on a local Ray cluster: rows per second with one actor and with two, and without Ray.

    python benchmarks/bench_ray.py [--model resnet18] [--rows 384] [--batch 16] [--rounds 3] [--min-scaling 1.6]

A local Ray cluster of --cpus CPUs (default 2) maps the model (tests/models/catalog.py builds it, random weights,
224x224) over --rows random float32 rows, in blocks of --batch rows, with accel.ray.map_model: a pool of one actor,
then of two, each actor holding one CPU and so running the emulator as emu:cores=1,threads=1. Beside them the same
blocks go one after another through one accel.ray.Predictor in this process on emu:cores=1,threads=1 ("no Ray").

A run's throughput is that of its middle half: the rows that arrive between a quarter and three quarters of the
rows, over the time between, so that starting the actors and loading the model (about two seconds an actor, which
the table gives apart as "first row") do not count. Every round runs every way (the order rotating); the table
gives the medians over the rounds, and each way's throughput against one actor (the median of the rounds' own
ratios: these machines are noisy). Each run's outputs are compared with the local ones, element by element.

Exit 1 if any output differs, or if two actors' throughput over one actor's is below --min-scaling (default 0: only
report).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Tuple

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
#: A run: the batches of outputs it yields, in row order.
Way = Callable[[List[np.ndarray]], Iterator[Dict[str, np.ndarray]]]


def ray_way(ray: Any, path: str, actors: int, name: str) -> Way:
    import accel.ray

    def run(blocks: List[np.ndarray]) -> Iterator[Dict[str, np.ndarray]]:
        ds = ray.data.from_numpy(blocks).rename_columns({"data": name})
        out = accel.ray.map_model(ds, path, concurrency=actors, batch_size=len(blocks[0]))
        yield from out.iter_batches(batch_size=None, batch_format="numpy")
    return run


def local_way(path: str, name: str) -> Way:
    from accel.ray import Predictor

    predictor = Predictor(path, device="emu:cores=1,threads=1")

    def run(blocks: List[np.ndarray]) -> Iterator[Dict[str, np.ndarray]]:
        for block in blocks:
            yield predictor({name: block})
    return run


def timed(way: Way, blocks: List[np.ndarray], names: List[str]) -> Tuple[float, float, Dict[str, np.ndarray]]:
    """(seconds to the first output, rows/s of the middle half, the outputs by name)."""
    start = time.perf_counter()
    arrivals: List[Tuple[float, int]] = []
    got: List[Dict[str, np.ndarray]] = []
    rows = 0
    for batch in way(blocks):
        rows += len(batch[names[0]])
        arrivals.append((time.perf_counter() - start, rows))
        got.append(batch)
    quarter, three = rows / 4, rows * 3 / 4
    a = next(p for p in arrivals if p[1] >= quarter)
    b = next(p for p in arrivals if p[1] >= three)
    rate = (b[1] - a[1]) / max(b[0] - a[0], 1e-9)
    return arrivals[0][0], rate, {n: np.concatenate([g[n] for g in got]) for n in names}


def main(argv: Any = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet18", choices=["mobilenetv2", "resnet18"])
    parser.add_argument("--rows", type=int, default=384)
    parser.add_argument("--batch", type=int, default=16, help="rows per block and per Ray batch (default 16)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cpus", type=int, default=2, help="the local Ray cluster's CPUs (default 2)")
    parser.add_argument("--min-scaling", type=float, default=0.0,
                        help="exit 1 if two actors' throughput over one actor's is below this (default 0)")
    args = parser.parse_args(argv)

    import ray

    from accel.ray import Predictor

    sys.path.insert(0, str(ROOT / "tests"))
    from models import catalog

    path = str(catalog.model_path(args.model))
    probe = Predictor(path, device="emu:cores=1,threads=1")
    name, names = probe.model.inputs[0].name, [o.name for o in probe.model.outputs]
    shape = tuple(probe.model.inputs[0].shape[1:])
    probe.close()
    rows = np.random.default_rng(0).standard_normal((args.rows,) + shape).astype(np.float32)
    blocks = [rows[i:i + args.batch] for i in range(0, args.rows, args.batch)]
    local = local_way(path, name)
    expected = {n: np.concatenate([b[n] for b in local(blocks)]) for n in names}

    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.execution_options.preserve_order = True
    ways: Dict[str, Way] = {"no Ray": local, "1 actor": ray_way(ray, path, 1, name),
                            "2 actors": ray_way(ray, path, 2, name)}
    firsts: Dict[str, List[float]] = {w: [] for w in ways}
    rates: Dict[str, List[float]] = {w: [] for w in ways}
    differing = 0
    for r in range(args.rounds):
        for w in list(ways)[r % len(ways):] + list(ways)[:r % len(ways)]:
            first, rate, got = timed(ways[w], blocks, names)
            firsts[w].append(first)
            rates[w].append(rate)
            differing += sum(int(np.count_nonzero(got[n] != expected[n])) for n in names)
    ray.shutdown()

    print(f"{args.model} {list(shape)} float32, {args.rows} rows in blocks of {args.batch}, {args.rounds} rounds; "
          f"local Ray with {args.cpus} CPUs, each actor one CPU (emu:cores=1,threads=1)")
    print(f"{'way':<10} {'first row':>10} {'rows/s':>8} {'vs 1 actor':>11}")
    for w, values in rates.items():
        ratio = statistics.median(v / o for v, o in zip(values, rates["1 actor"]))
        print(f"{w:<10} {statistics.median(firsts[w]):>9.2f}s {statistics.median(values):>8.1f} {ratio:>10.2f}x")
    scaling = statistics.median(t / o for t, o in zip(rates["2 actors"], rates["1 actor"]))
    print(f"outputs differing from the local run: {differing} elements")
    print(f"2 actors over 1 actor: {scaling:.2f}x (required: {args.min_scaling:.2f}x)")
    return 0 if differing == 0 and scaling >= args.min_scaling else 1


if __name__ == "__main__":
    sys.exit(main())
