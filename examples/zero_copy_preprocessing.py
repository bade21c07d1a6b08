"""Preprocessing written straight into device memory: camera-style uint8 HWC frames become the model's
normalized float32 NCHW input inside a device tensor, and the outputs land in device tensors too, so
the runtime copies nothing and allocates nothing per frame.

    python examples/zero_copy_preprocessing.py [--frames 20] [--save results.npz]

np.asarray(device_tensor) is a view of device memory, and NumPy ufuncs with out= write into it: the
transpose to NCHW, the scaling and the mean subtraction cost two passes over the frame and no
temporary array. The device's counters (Device.stats) show it: bytes_copied and allocations do not
move during the loop. Passing a NumPy array to run() instead costs one copy of the input per call.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import accel

MODEL = Path(accel.__file__).parent / "models" / "tiny_cnn.onnx"  # the small CNN bundled with accel
MEAN = np.array([0.485, 0.456, 0.406], np.float32)  # ImageNet's, per RGB channel
STD = np.array([0.229, 0.224, 0.225], np.float32)
# (pixel / 255 - mean) / std == pixel * SCALE - OFFSET: one multiply and one subtract per element.
SCALE = (1.0 / (255.0 * STD))[:, None, None]
OFFSET = (MEAN / STD)[:, None, None]


def camera_frames(count: int, height: int, width: int, seed: int = 0):
    """Stand-in for a camera: uint8 RGB frames, height x width x 3 (HWC), as decoders deliver them."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width]
    for i in range(count):
        base = (yy * 3 + xx * 2 + i * 9)[..., None] + rng.integers(0, 40, (1, 1, 3))
        yield (base % 256).astype(np.uint8)


def preprocess_into(frame_hwc: np.ndarray, chw: np.ndarray) -> None:
    """Writes the normalized frame into `chw`, a float32 (3, H, W) view of device memory."""
    # transpose() is a view: the multiply reads the HWC frame in place and writes CHW, so no
    # intermediate float frame is ever made; the subtract then works in place.
    np.multiply(frame_hwc.transpose(2, 0, 1), SCALE, out=chw)
    np.subtract(chw, OFFSET, out=chw)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=20)
    parser.add_argument("--save", type=Path, help="write the last frame and its class scores to this .npz")
    args = parser.parse_args()

    with accel.open("emu") as device:
        model = device.load(MODEL)
        inp, out = model.inputs[0], model.outputs[0]
        _, _, height, width = inp.shape
        print(f"model {model.name}: {inp.name} {inp.dtype}{list(inp.shape)} -> {out.name} {out.dtype}{list(out.shape)}")

        # Allocated once, reused for every frame.
        x = device.empty(inp.shape, inp.dtype)
        y = device.empty(out.shape, out.dtype)
        x_view = np.asarray(x)[0]  # (3, H, W), device memory
        scores = np.asarray(y)

        before = device.stats()
        for frame in camera_frames(args.frames, height, width):
            preprocess_into(frame, x_view)
            model.run(x, outputs=[y])  # reads x and writes y where they are
        after = device.stats()
        print(f"{args.frames} frames through device tensors: "
              f"bytes copied {after['bytes_copied'] - before['bytes_copied']}, "
              f"allocations {after['allocations'] - before['allocations']}")
        print(f"last frame: class {int(np.argmax(scores))} (p={float(np.max(scores)):.4f})")

        # The same frame as a NumPy array: correct too, but each call copies the input into device
        # memory and allocates fresh input and output buffers.
        before = device.stats()
        (copied_scores,) = model.run(np.ascontiguousarray(x_view[None]))
        after = device.stats()
        print(f"1 frame as a NumPy array:        "
              f"bytes copied {after['bytes_copied'] - before['bytes_copied']}, "
              f"allocations {after['allocations'] - before['allocations']}")
        assert np.array_equal(copied_scores, scores)

        if args.save:
            np.savez(args.save, frame=frame, input=np.asarray(x), probabilities=scores)


if __name__ == "__main__":
    main()
