"""A camera frame straight into a detector: PP-OCR's text detector compiled with an NV12 input.

    python examples/nv12_detector.py [--text "ACCEL 2026"] [--range full|video] [--save results.npz]

Cameras and video decoders hand over NV12 frames; Horizon's toolchain compiles a model with an NV12 input and puts
the colour conversion and the normalization inside it, so the application passes the frame as it is. The emulator
does the same: `Device.load(path, image_inputs={"x": {"format": "nv12", "to": "bgr", "mean": ..., "scale": ...}})`
prepends the conversion (BT.601, accel.image's formula) to the ONNX model. This example

  1. makes a camera frame: a line of text (printed as the OCR example prints it, with Pillow) in dark blue on a
     colour gradient, as BGR, and its NV12 form with accel.image.bgr_to_nv12 (what a camera would give);
  2. runs the detector compiled with an NV12 input on the frame's bytes (a memoryview: no array, no copy in Python),
     and the plain float detector on the BGR picture normalized by hand, as applications do today;
  3. compares: the text boxes both find, the largest difference in the probability maps, and how many pixels the
     two call text differently (NV12 keeps one colour per 2x2 block: that, and rounding, is all that differs).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import accel
import accel.image as image
from accel.models import ppocr

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ocr_pipeline import MEAN, PAGE_H, PAGE_W, STD, render_page, text_boxes  # the OCR example's

INK_BGR = np.array([120, 30, 20], np.float64)  # dark blue
# Words a font size apart: the detector gives each its own box, so that the two detectors' boxes are compared
# word by word.
WORD_GAP = 1.0


def camera_frame(text: str) -> np.ndarray:
    """A BGR (PAGE_H, PAGE_W, 3) uint8 picture: `text` in dark blue on a warm-to-cool gradient."""
    grey = render_page(text, word_space=WORD_GAP)[:, :, 0].astype(np.float64)
    ink = np.clip((250.0 - grey) / 230.0, 0.0, 1.0)[:, :, None]
    across = np.linspace(0.0, 1.0, PAGE_W)[None, :, None]
    down = np.linspace(0.0, 1.0, PAGE_H)[:, None, None]
    ones = np.ones((PAGE_H, PAGE_W, 1))
    background = 255 * np.concatenate([(0.70 + 0.25 * across) * ones, (0.85 - 0.10 * down) * ones,
                                       (0.95 - 0.25 * across) * ones], axis=2)
    return np.round(background * (1 - ink) + INK_BGR * ink).astype(np.uint8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--text", default="ACCEL 2026", help="what to print on the frame")
    parser.add_argument("--range", default="full", choices=["full", "video"],
                        help="the frame's YUV range: full (Horizon's 'regular', the default) or video (16..235)")
    parser.add_argument("--save", type=Path, help="write the frame and both probability maps to this .npz")
    args = parser.parse_args()

    bgr = camera_frame(args.text)
    nv12 = image.bgr_to_nv12(bgr, range=args.range)  # what the camera gives: (H * 3/2, W) bytes
    det_path = ppocr.fetch("ppocr_det")
    # PP-OCR normalizes the BGR picture as it is (cv2's order) with ImageNet's mean and deviation, in 0..1 units.
    request = {"format": "nv12", "to": "bgr", "range": args.range, "mean": (MEAN * 255).tolist(),
               "scale": (1 / (STD * 255)).tolist()}

    with accel.open("emu:cores=2") as device:
        start = time.perf_counter()
        framed = device.load(det_path, input_shapes={"x": (1, 3, PAGE_H, PAGE_W)}, image_inputs={"x": request})
        plain = device.load(det_path, input_shapes={"x": (1, 3, PAGE_H, PAGE_W)})
        print(f"detectors compiled and loaded in {time.perf_counter() - start:.2f} s")
        info = framed.inputs[0]
        print(f"the NV12 detector takes {info.name!r}: {info.dtype}{list(info.shape)}, {info.image.format} "
              f"{info.image.width}x{info.image.height}, UV plane at byte {info.image.plane_offsets[1]}")

        start = time.perf_counter()
        (from_frame,) = framed.run(memoryview(nv12))  # the frame's bytes as they are
        frame_ms = (time.perf_counter() - start) * 1e3
        start = time.perf_counter()
        (from_bgr,) = plain.run(normalized(bgr))
        bgr_ms = (time.perf_counter() - start) * 1e3
        # The frame as the model sees it: decoded by accel.image, then fed to the float detector.
        (from_decoded,) = plain.run(normalized(image.nv12_to_bgr(nv12, range=args.range)))

    frame_map, bgr_map, decoded_map = from_frame[0, 0], from_bgr[0, 0], from_decoded[0, 0]
    boxes_frame, boxes_bgr = text_boxes(frame_map), text_boxes(bgr_map)
    disagree = int(np.count_nonzero((frame_map > 0.3) != (bgr_map > 0.3)))
    print(f"frame: {PAGE_W}x{PAGE_H}, text {args.text!r}, NV12 {args.range} range, {nv12.nbytes} bytes")
    print(f"NV12 detector:  {len(boxes_frame)} text boxes {boxes_frame} in {frame_ms:.1f} ms")
    print(f"float detector: {len(boxes_bgr)} text boxes {boxes_bgr} in {bgr_ms:.1f} ms (normalized in NumPy)")
    print(f"against the float detector on the frame decoded by accel.image: largest difference "
          f"{np.abs(frame_map - decoded_map).max():.2e} (the conversion inside is accel.image's)")
    print(f"against the float detector on the original picture: largest difference "
          f"{np.abs(frame_map - bgr_map).max():.4f}; {disagree} of {frame_map.size} pixels "
          f"({100 * disagree / frame_map.size:.2f}%) called text by one only (NV12 keeps one colour per 2x2 block)")
    if len(boxes_frame) == len(boxes_bgr):
        shift = max((abs(a - b) for p, q in zip(boxes_frame, boxes_bgr) for a, b in zip(p, q)), default=0)
        print(f"same {len(boxes_frame)} text boxes, edges within {shift} px")
    else:
        print(f"the boxes differ: {len(boxes_frame)} against {len(boxes_bgr)}")
    if args.save:
        np.savez(args.save, bgr=bgr, nv12=nv12, frame_map=frame_map, bgr_map=bgr_map, decoded_map=decoded_map)


def normalized(bgr: np.ndarray) -> np.ndarray:
    """What applications do by hand today: the picture in 0..1, normalized, NCHW, float32."""
    return ((bgr / 255.0 - MEAN) / STD).transpose(2, 0, 1)[None].astype(np.float32)


if __name__ == "__main__":
    main()
