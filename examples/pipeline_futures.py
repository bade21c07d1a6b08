"""A two-model pipeline driven by futures: a detector finds the brightest object in each frame, a
classifier labels a crop around it, and many frames are in flight at once.

    python examples/pipeline_futures.py [--frames 64] [--save results.npz]

The detector is built here with onnx.helper (a strided convolution scoring 16x16 cells by brightness);
the classifier is the small CNN bundled with accel (its weights are random, so its class indices name
nothing: the pipeline is the point). The frames go through the pipeline three ways, and the three must
agree: one model.run after another; with concurrent.futures (as_completed over the detector's futures,
each finished detection submitting its classifier job); with asyncio (one coroutine per frame, awaiting
each stage). The async versions keep both emulator cores busy while Python crops the next frame;
how much that gains depends on a job's length against Python's cost per job (tens of microseconds):
these models run in a fraction of a millisecond, so the gain needs many frames in flight.
"""
from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import time
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import accel

FRAME = 128  # frames are 3 x FRAME x FRAME
CELL = 16  # the detector scores cells of CELL x CELL pixels
CROP = 64  # the classifier's input is 3 x CROP x CROP
CLASSIFIER = Path(accel.__file__).parent / "models" / "tiny_cnn.onnx"


def build_detector() -> bytes:
    """An ONNX "detector": one score in (0, 1) per cell, high where the cell is bright."""
    # A convolution with a constant kernel and stride CELL is the mean brightness of each cell; the
    # bias and the scale of the kernel turn "brighter than 0.5" into a score near 1 after the sigmoid.
    weight = np.full((1, 3, CELL, CELL), 20.0 / (3 * CELL * CELL), np.float32)
    bias = np.array([-10.0], np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["frame", "w", "b"], ["cell_mean"], strides=[CELL, CELL]),
         helper.make_node("Sigmoid", ["cell_mean"], ["objectness"])],
        "detector",
        [helper.make_tensor_value_info("frame", TensorProto.FLOAT, [1, 3, FRAME, FRAME])],
        [helper.make_tensor_value_info("objectness", TensorProto.FLOAT, [1, 1, FRAME // CELL, FRAME // CELL])],
        [numpy_helper.from_array(weight, "w"), numpy_helper.from_array(bias, "b")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()


def make_frames(count: int, seed: int = 0) -> list[np.ndarray]:
    """Dark noisy frames, each with one bright square somewhere."""
    rng = np.random.default_rng(seed)
    frames = []
    for _ in range(count):
        frame = rng.uniform(0.0, 0.3, (1, 3, FRAME, FRAME)).astype(np.float32)
        y, x = rng.integers(0, FRAME - 24, 2)
        frame[:, :, y:y + 24, x:x + 24] = rng.uniform(0.7, 1.0, (3, 1, 1))
        frames.append(frame)
    return frames


def crop_around_best_cell(frame: np.ndarray, objectness: np.ndarray) -> tuple[np.ndarray, tuple[int, int]]:
    """The CROP x CROP window of `frame` centred on the highest-scoring cell (kept inside the frame),
    and its top-left corner. The crop is a view: run_async copies it once into device memory."""
    cy, cx = np.unravel_index(np.argmax(objectness[0, 0]), objectness.shape[2:])
    top = int(np.clip(cy * CELL + CELL // 2 - CROP // 2, 0, FRAME - CROP))
    left = int(np.clip(cx * CELL + CELL // 2 - CROP // 2, 0, FRAME - CROP))
    return frame[:, :, top:top + CROP, left:left + CROP], (top, left)


def run_sequential(detector: accel.Model, classifier: accel.Model, frames: list[np.ndarray]) -> list:
    results = []
    for frame in frames:
        (objectness,) = detector.run(frame)
        crop, corner = crop_around_best_cell(frame, objectness)
        (probabilities,) = classifier.run(crop)
        results.append((objectness, corner, probabilities))
    return results


def run_with_futures(detector: accel.Model, classifier: accel.Model, frames: list[np.ndarray]) -> list:
    # Every detection is submitted at once (submission blocks only when the device's queue is full);
    # each classification is submitted as soon as its detection is back, whatever the order.
    detections = {detector.run_async(frame): i for i, frame in enumerate(frames)}
    pending = {}
    for done in concurrent.futures.as_completed(detections):
        i = detections[done]
        (objectness,) = done.result()
        crop, corner = crop_around_best_cell(frames[i], objectness)
        pending[i] = (objectness, corner, classifier.run_async(crop))
    return [(obj, corner, fut.result()[0]) for obj, corner, fut in (pending[i] for i in range(len(frames)))]


async def run_with_asyncio(detector: accel.Model, classifier: accel.Model, frames: list[np.ndarray]) -> list:
    async def one_frame(frame: np.ndarray) -> tuple:
        (objectness,) = await detector.run_async(frame)
        crop, corner = crop_around_best_cell(frame, objectness)
        (probabilities,) = await classifier.run_async(crop)
        return objectness, corner, probabilities

    return list(await asyncio.gather(*(one_frame(f) for f in frames)))


def timed(run, *args) -> tuple[list, float]:
    start = time.perf_counter()
    results = run(*args)
    return results, (time.perf_counter() - start) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=64)
    parser.add_argument("--save", type=Path, help="write frames, detections and class scores to this .npz")
    args = parser.parse_args()

    frames = make_frames(args.frames)
    with accel.open("emu:cores=2") as device:
        detector = device.load(build_detector())  # ONNX bytes compile on the fly (and are cached)
        classifier = device.load(CLASSIFIER)
        run_sequential(detector, classifier, frames[:2])  # warm up: first runs touch fresh memory

        sequential, t_seq = timed(run_sequential, detector, classifier, frames)
        with_futures, t_fut = timed(run_with_futures, detector, classifier, frames)
        with_asyncio, t_aio = timed(lambda: asyncio.run(run_with_asyncio(detector, classifier, frames)))

        for (_, corner, probabilities) in sequential:
            print(f"object at (y={corner[0]:3d}, x={corner[1]:3d}) -> class {int(np.argmax(probabilities))} "
                  f"(p={float(np.max(probabilities)):.3f})")
        for name, results in (("concurrent.futures", with_futures), ("asyncio", with_asyncio)):
            for a, b in zip(sequential, results):
                # The same jobs on the same device: bit-identical, whatever order they ran in.
                assert a[1] == b[1] and np.array_equal(a[0], b[0]) and np.array_equal(a[2], b[2]), name
        print(f"{len(frames)} frames, 2 models each:")
        for name, ms in (("one run after another", t_seq), ("concurrent.futures", t_fut), ("asyncio", t_aio)):
            print(f"  {name:22s} {ms:7.2f} ms  ({len(frames) / ms * 1e3:6.0f} frames/s)")

    if args.save:
        np.savez(args.save, frames=np.concatenate(frames),
                 objectness=np.concatenate([r[0] for r in sequential]),
                 corners=np.array([r[1] for r in sequential]),
                 probabilities=np.concatenate([r[2] for r in sequential]))


if __name__ == "__main__":
    main()
