"""OCR end to end on the emulator: PP-OCR's text detector and recognizer read a line of printed text.

    python examples/ocr_pipeline.py [--text "ACCEL 2026"] [--save results.npz]

The models are PP-OCRv4's detector and recognizer as the rapidocr-onnxruntime wheel ships them,
fetched once from PyPI with pip (accel.models.ppocr; about 15 MB, cached in ~/.cache/accel/models or
$ACCEL_MODEL_CACHE) and compiled from ONNX for the emulator when loaded. The text is printed with Pillow's
ImageDraw in its default font (pip install pillow). The steps:

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
from PIL import Image, ImageDraw, ImageFont

import accel
from accel.models import ppocr

PAGE_H, PAGE_W = 96, 512  # the detector takes any multiple of 32; fixed here, compiled once
REC_H, REC_W = 48, 480  # the recognizer's input height is 48; lines up to 10:1 fit this width
MEAN = np.array([0.485, 0.456, 0.406], np.float32)  # the detector's normalization (ImageNet's)
STD = np.array([0.229, 0.224, 0.225], np.float32)

TEXT_SIZE = 36  # the font's size in pixels (its capitals are about 26 high)
# The space between words, in font sizes. The recognizer reads the font's own space (about a quarter) as no space
# at all, and the detector splits a line at a gap of about two thirds into two boxes: 0.35 to 0.5 read as one line
# with its spaces.
WORD_SPACE = 0.45


def render_page(text: str, size: int = TEXT_SIZE, word_space: float = WORD_SPACE) -> np.ndarray:
    """A white uint8 RGB page (PAGE_H x PAGE_W x 3) with `text` printed in dark grey in the middle, in Pillow's
    own font (ImageFont.load_default: a scalable sans serif, anti-aliased), its words `word_space` x `size` apart."""
    font = ImageFont.load_default(size=size)
    page = Image.new("L", (PAGE_W, PAGE_H), 250)
    draw = ImageDraw.Draw(page)
    words = text.split()
    boxes = [draw.textbbox((0, 0), word, font=font) for word in words]
    gap = round(word_space * size)
    width = sum(right for _, _, right, _ in boxes) + gap * (len(words) - 1)
    top, bottom = min([b[1] for b in boxes], default=0), max([b[3] for b in boxes], default=0)
    if width > PAGE_W - size // 2 or bottom - top > PAGE_H:  # a quarter of the size left each side
        raise SystemExit(f"{text!r} does not fit on a {PAGE_W}x{PAGE_H} page")
    x, y = (PAGE_W - width) // 2, (PAGE_H - (bottom - top)) // 2 - top
    for word, (_, _, right, _) in zip(words, boxes):
        draw.text((x, y), word, fill=20, font=font)
        x += right + gap
    return np.repeat(np.asarray(page)[:, :, None], 3, axis=2)


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
                        help="what to print (one line)")
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
