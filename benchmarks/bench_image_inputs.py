"""A camera frame into a model: the conversion inside the model (image_inputs) against converting it first.

    python benchmarks/bench_image_inputs.py [--model mobilenetv2] [--frames 16] [--rounds 5]

One NV12 frame of the model's size (224x224 for the catalog's CNNs; tests/models/catalog.py builds them with random
weights) goes through the model three ways, side by side on --uri (default emu:cores=1,threads=1):

  frame       model loaded with image_inputs={"input": {"format": "nv12", ...}}, run on the frame's bytes
  accel.image nv12_to_bgr (float64, exact), normalized in NumPy, then the float model
  opencv      cv2.cvtColor(COLOR_YUV2BGR_NV12) (fixed point), normalized in NumPy, then the float model
              (only where OpenCV is installed)

and once more the float model alone on an input made beforehand ("model only"), so each way's cost of the
conversion shows. Every round times each way over --frames frames in turn (the order rotating); the table gives
the median milliseconds per frame over the rounds and each way's time against "frame" (medians of the rounds'
own ratios: these machines are noisy). It fails (exit 1) only if "frame" and "accel.image" give different results
(beyond 1e-4 of the largest output: the two convert exactly alike).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MEAN = np.array([123.675, 116.28, 103.53], np.float32)
SCALE = np.array([1 / 58.395, 1 / 57.12, 1 / 57.375], np.float32)


def normalize(bgr: np.ndarray) -> np.ndarray:
    return ((bgr[:, :, ::-1].astype(np.float32) - MEAN) * SCALE).transpose(2, 0, 1)[None].copy()


def ways(framed: Any, plain: Any, nv12: np.ndarray) -> Dict[str, Callable[[], Any]]:
    import accel.image as image

    prepared = normalize(image.nv12_to_bgr(nv12))
    found: Dict[str, Callable[[], Any]] = {
        "frame": lambda: framed.run(memoryview(nv12)),
        "accel.image": lambda: plain.run(normalize(image.nv12_to_bgr(nv12))),
        "model only": lambda: plain.run(prepared),
    }
    try:
        import cv2
    except ImportError:
        return found
    found["opencv"] = lambda: plain.run(normalize(cv2.cvtColor(nv12, cv2.COLOR_YUV2BGR_NV12)))
    return found


def main(argv: Any = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="mobilenetv2", choices=["mobilenetv2", "resnet18"])
    parser.add_argument("--uri", default="emu:cores=1,threads=1")
    parser.add_argument("--frames", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)

    import accel
    import accel.image as image

    sys.path.insert(0, str(ROOT / "tests"))
    from models import catalog

    path = str(catalog.model_path(args.model))
    rng = np.random.default_rng(0)
    bgr = rng.integers(0, 256, (224, 224, 3), dtype=np.uint8)
    nv12 = image.bgr_to_nv12(bgr)
    with accel.open(args.uri) as dev:
        plain = dev.load(path)
        name = plain.inputs[0].name
        framed = dev.load(path, image_inputs={name: {"format": "nv12", "to": "rgb", "mean": MEAN.tolist(),
                                                     "scale": SCALE.tolist()}})
        table = ways(framed, plain, nv12)
        (a,) = table["frame"]()
        (b,) = table["accel.image"]()
        error = float(np.abs(a - b).max())
        per_frame: Dict[str, List[float]] = {w: [] for w in table}
        for r in range(args.rounds):
            order = list(table)[r % len(table):] + list(table)[:r % len(table)]
            for w in order:
                start = time.perf_counter()
                for _ in range(args.frames):
                    table[w]()
                per_frame[w].append((time.perf_counter() - start) * 1e3 / args.frames)
    print(f"{args.model} 224x224 on {args.uri}: one NV12 frame, {args.frames} frames x {args.rounds} rounds")
    print(f"{'way':<12} {'ms/frame':>9} {'vs frame':>9}")
    for w, times in per_frame.items():
        ratio = statistics.median(t / f for t, f in zip(times, per_frame["frame"]))
        print(f"{w:<12} {statistics.median(times):>9.3f} {ratio:>8.2f}x")
    bound = 1e-4 * float(np.abs(b).max())
    print(f"frame against accel.image: largest output difference {error:.2e} (bound {bound:.2e})")
    return 0 if error <= bound else 1


if __name__ == "__main__":
    sys.exit(main())
