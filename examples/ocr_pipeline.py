"""OCR end to end on the emulator: PP-OCR's text detector and recognizer read a line of printed text.

    python examples/ocr_pipeline.py [--text "ACCEL 2026"] [--save results.npz]

The models are PP-OCRv4's detector and recognizer as the rapidocr-onnxruntime wheel ships them,
fetched once from PyPI with pip (accel.models.ppocr; about 15 MB, cached in ~/.cache/accel/models or
$ACCEL_MODEL_CACHE) and compiled from ONNX for the emulator when loaded. No image library is needed:
the text is drawn with the small bitmap font below. The steps:

  1. detection: the page, normalized, gives a map of text probability per pixel;
  2. DB post-processing: threshold the map, take each connected region's box, grow it back (the model
     is trained to mark a shrunken core of each text line) and drop weak boxes;
  3. recognition: each box, cropped and resized to the recognizer's height of 48, gives per time step
     a probability over the characters, read by CTC greedy decoding (best character per step,
     repeats merged, blanks dropped) with the dictionary stored in the model's metadata.
"""
from __future__ import annotations

import argparse
import time
from collections import deque
from pathlib import Path

import numpy as np
import onnx

import accel
from accel.models import ppocr

PAGE_H, PAGE_W = 96, 512  # the detector takes any multiple of 32; fixed here, compiled once
REC_H, REC_W = 48, 480  # the recognizer's input height is 48; lines up to 10:1 fit this width
MEAN = np.array([0.485, 0.456, 0.406], np.float32)  # the detector's normalization (ImageNet's)
STD = np.array([0.229, 0.224, 0.225], np.float32)

# A 5x7 bitmap font: each glyph is 7 rows of 5 bits, the high bit on the left. render_page rounds
# its square pixels off, which the recognizer, trained on real print, reads far more reliably.
FONT = {
    " ": (0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00),
    "0": (0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E),
    "1": (0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E),
    "2": (0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F),
    "6": (0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E),
    "A": (0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11),
    "C": (0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E),
    "E": (0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F),
    "L": (0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F),
    "O": (0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E),
    "R": (0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11),
    "T": (0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04),
    "X": (0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11),
}


def box_blur(img: np.ndarray, radius: int) -> np.ndarray:
    """The mean over a (2 * radius + 1)^2 square around each pixel (edges repeated)."""
    size = 2 * radius + 1
    for axis in (0, 1):
        padded = np.pad(img, [(radius + 1, radius) if a == axis else (0, 0) for a in (0, 1)], mode="edge")
        sums = np.cumsum(padded, axis=axis, dtype=np.float64)
        n = sums.shape[axis]
        img = (np.take(sums, range(size, n), axis) - np.take(sums, range(n - size), axis)) / size
    return img


def render_page(text: str, scale: int = 5) -> np.ndarray:
    """A white uint8 RGB page (PAGE_H x PAGE_W x 3) with `text` printed in dark grey in the middle."""
    unknown = sorted(set(text) - set(FONT))
    if unknown:
        raise SystemExit(f"the example's font has no glyph for {unknown}; it knows {''.join(sorted(FONT))!r}")
    bits = [[[(row >> (4 - col)) & 1 for col in range(5)] + [0] for row in FONT[ch]] for ch in text]
    ink = np.pad(np.kron(np.concatenate(bits, axis=1), np.ones((scale, scale))), scale)
    ink = box_blur((box_blur(ink, 2) > 0.5).astype(np.float64), 1)  # round the corners, then anti-alias
    top, left = (PAGE_H - ink.shape[0]) // 2, (PAGE_W - ink.shape[1]) // 2
    if top < 0 or left < 0:
        raise SystemExit(f"{text!r} does not fit on a {PAGE_W}x{PAGE_H} page")
    page = np.full((PAGE_H, PAGE_W), 250.0)
    page[top:top + ink.shape[0], left:left + ink.shape[1]] -= 230 * ink
    return np.repeat(np.round(page).astype(np.uint8)[:, :, None], 3, axis=2)


def detector_input(page: np.ndarray) -> np.ndarray:
    return ((page / 255.0 - MEAN) / STD).transpose(2, 0, 1)[None].astype(np.float32)


def connected_regions(mask: np.ndarray) -> list[np.ndarray]:
    """The (row, col) coordinates of each 4-connected region of True pixels."""
    seen = np.zeros_like(mask, bool)
    regions = []
    for start in zip(*np.nonzero(mask)):
        if seen[start]:
            continue
        seen[start] = True
        queue, pixels = deque([start]), []
        while queue:
            y, x = queue.popleft()
            pixels.append((y, x))
            for ny, nx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                if 0 <= ny < mask.shape[0] and 0 <= nx < mask.shape[1] and mask[ny, nx] and not seen[ny, nx]:
                    seen[ny, nx] = True
                    queue.append((ny, nx))
        regions.append(np.array(pixels))
    return regions


def text_boxes(prob: np.ndarray, threshold: float = 0.3, min_score: float = 0.6,
               unclip_ratio: float = 1.6) -> list[tuple[int, int, int, int]]:
    """DB post-processing of the (H, W) probability map: (top, left, bottom, right) per text line."""
    boxes = []
    for pixels in connected_regions(prob > threshold):
        (y0, x0), (y1, x1) = pixels.min(axis=0), pixels.max(axis=0) + 1
        h, w = y1 - y0, x1 - x0
        if min(h, w) < 3 or prob[y0:y1, x0:x1].mean() < min_score:  # specks and faint regions
            continue
        # DB's unclip: grow the box by area * ratio / perimeter on every side.
        d = round(h * w * unclip_ratio / (2 * (h + w)))
        boxes.append((max(0, int(y0) - d), max(0, int(x0) - d),
                      min(prob.shape[0], int(y1) + d), min(prob.shape[1], int(x1) + d)))
    return reading_order(boxes)


def reading_order(boxes: list[tuple[int, int, int, int]]) -> list[tuple[int, int, int, int]]:
    """Top to bottom, then left to right among boxes whose centre lies within one line's height."""
    lines: list[list[tuple[int, int, int, int]]] = []
    for box in sorted(boxes, key=lambda b: b[0] + b[2]):
        if lines and lines[-1][0][0] <= (box[0] + box[2]) / 2 <= lines[-1][0][2]:
            lines[-1].append(box)
        else:
            lines.append([box])
    return [box for line in lines for box in sorted(line, key=lambda b: b[1])]


def resize_bilinear(img: np.ndarray, height: int, width: int) -> np.ndarray:
    """`img` (H, W, C) resized to (height, width, C), sampling pixel centres as OpenCV does."""
    def axis(n_out: int, n_in: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        pos = np.clip((np.arange(n_out) + 0.5) * n_in / n_out - 0.5, 0, n_in - 1)
        lo = np.floor(pos).astype(int)
        return lo, np.minimum(lo + 1, n_in - 1), (pos - lo).astype(np.float32)

    y0, y1, wy = axis(height, img.shape[0])
    x0, x1, wx = axis(width, img.shape[1])
    img = img.astype(np.float32)
    wx = wx[None, :, None]
    rows = img[y0][:, x0] * (1 - wx) + img[y0][:, x1] * wx, img[y1][:, x0] * (1 - wx) + img[y1][:, x1] * wx
    return rows[0] * (1 - wy[:, None, None]) + rows[1] * wy[:, None, None]


def recognizer_input(page: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    """The box's crop at height REC_H (aspect kept), scaled to [-1, 1], padded right with 0 to REC_W."""
    top, left, bottom, right = box
    crop = page[top:bottom, left:right]
    width = min(REC_W, max(1, round(crop.shape[1] * REC_H / crop.shape[0])))
    x = np.zeros((1, 3, REC_H, REC_W), np.float32)
    x[0, :, :, :width] = (resize_bilinear(crop, REC_H, width) / 255.0 - 0.5).transpose(2, 0, 1) / 0.5
    return x


def ctc_greedy_decode(probs: np.ndarray, charset: list[str]) -> tuple[str, float]:
    """The text of (T, classes) per-step probabilities, and its mean confidence."""
    best = probs.argmax(axis=1)
    keep = (best != 0) & np.append(True, best[1:] != best[:-1])  # class 0 is CTC's blank
    text = "".join(charset[i] for i in best[keep]).strip()
    return text, float(probs.max(axis=1)[keep].mean()) if keep.any() else 0.0


def recognizer_charset(path: Path) -> list[str]:
    """PP-OCR's dictionary, one character a line in the model's metadata; the model's classes are the
    CTC blank, then the dictionary, then a space."""
    meta = {p.key: p.value for p in onnx.load(str(path), load_external_data=False).metadata_props}
    return ["<blank>"] + meta["character"].splitlines() + [" "]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--text", default="ACCEL 2026",
                        help=f"what to print, in the characters {''.join(sorted(FONT))!r}")
    parser.add_argument("--save", type=Path, help="write every model input and output to this .npz")
    args = parser.parse_args()

    det_path, rec_path = ppocr.fetch("ppocr_det"), ppocr.fetch("ppocr_rec")
    charset = recognizer_charset(rec_path)
    page = render_page(args.text)

    with accel.open("emu:cores=2") as device:
        start = time.perf_counter()
        # The ONNX files have dynamic sizes: fix them to what this program feeds.
        detector = device.load(det_path, input_shapes={"x": (1, 3, PAGE_H, PAGE_W)})
        recognizer = device.load(rec_path, input_shapes={"x": (1, 3, REC_H, REC_W)})
        print(f"models compiled and loaded in {time.perf_counter() - start:.2f} s")

        start = time.perf_counter()
        det_in = detector_input(page)
        (det_out,) = detector.run(det_in)
        boxes = text_boxes(det_out[0, 0])
        rec_ins, rec_outs, lines = [], [], []
        for box in boxes:
            rec_ins.append(recognizer_input(page, box))
            (probs,) = recognizer.run(rec_ins[-1])
            rec_outs.append(probs)
            lines.append(ctc_greedy_decode(probs[0], charset))
        elapsed = time.perf_counter() - start

    print(f"printed:    {args.text!r} on a {PAGE_W}x{PAGE_H} page")
    for box, (text, confidence) in zip(boxes, lines):
        print(f"text box (top, left, bottom, right) = {box}: {text!r} (confidence {confidence:.3f})")
    print(f"recognized: {' '.join(t for t, _ in lines)!r} in {elapsed * 1e3:.0f} ms")

    if args.save:
        np.savez(args.save, page=page, det_input=det_in, det_output=det_out, boxes=np.array(boxes).reshape(-1, 4),
                 rec_inputs=np.concatenate(rec_ins) if rec_ins else np.zeros((0, 3, REC_H, REC_W), np.float32),
                 rec_outputs=np.concatenate(rec_outs) if rec_outs else np.zeros((0,), np.float32))


if __name__ == "__main__":
    main()
