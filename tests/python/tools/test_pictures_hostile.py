"""Picture files as an attacker would make them, through accel.image.read_image, the one reader of pictures (accel
run and bench, and accel batch's PictureRows): a small PNG that decodes to gigabytes, headers claiming 100000 x
100000 pixels, truncated and corrupt files, and Pillow missing. Each is accel's error naming the file (and in accel
batch the row), refused before decoding where its header says it is too large, in bounded memory (peak RSS measured
in a subprocess). A JPEG larger than needed is decoded at the size needed (its DCT scaled, ``Image.draft``)."""
from __future__ import annotations

import io
import json
import re
import struct
import subprocess
import sys
import types
import zlib

import numpy as np
import pytest
from conftest import run_main

import accel.image as image
from accel.errors import InvalidArgumentError
from accel.models import TINY_CNN
from accel.ray.files import FilePredictor, PictureRows

pytestmark = pytest.mark.emulator

NV12 = "image=nv12"  # TINY_CNN's float input "image" (1, 3, 64, 64) as an NV12 frame input


def png_bytes(width, height, rows=None):
    """An 8-bit RGB PNG of ``width`` x ``height`` black pixels, written a row at a time (so a 12000 x 12000 one is
    made in little memory and is about 420 KB); ``rows``: only that many rows of data (a header that claims more)."""

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    row, z = b"\0" + bytes(3 * width), zlib.compressobj(6)
    data = b"".join(z.compress(row) for _ in range(height if rows is None else rows)) + z.flush()
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")


def gif_claiming(width, height):
    """A GIF of a few bytes whose screen and frame claim ``width`` x ``height``."""
    size = struct.pack("<HH", width, height)
    return b"GIF89a" + size + b"\0\0\0" + b"," + b"\0\0\0\0" + size + b"\0" + b"\x02\x02\x44\x01\0" + b";"


def photo(width, height, seed=0):
    """An RGB picture with smooth gradients, noise and a hard-edged block, as a photo has."""
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    rgb = np.stack([128 + 100 * np.sin(xx / (width / 13)), 128 + 100 * np.cos(yy / (height / 15)),
                    (xx + yy) / (width + height) * 255], -1)
    rgb += np.random.default_rng(seed).normal(0, 8, rgb.shape)
    rgb[height // 3:height // 2, width // 4:width * 2 // 3] = (250, 20, 20)
    return np.clip(rgb, 0, 255).astype(np.uint8)


@pytest.fixture(scope="module")
def bomb(tmp_path_factory):
    """A 12000 x 12000 PNG of about 420 KB: 432 MB once decoded, 1.2 GB at the peak of a full decode to RGB."""
    path = tmp_path_factory.mktemp("bomb") / "bomb.png"
    path.write_bytes(png_bytes(12000, 12000))
    return path


def hostile_files(folder):
    """{what: path} of picture files that must be refused, each a few bytes to a few hundred."""
    from PIL import Image

    good = io.BytesIO()
    Image.fromarray(photo(300, 200)).save(good, "PNG")
    whole = good.getvalue()
    corrupt = bytearray(whole)
    corrupt[len(whole) // 2:len(whole) // 2 + 64] = bytes(64)
    files = {
        "a header claiming 100000 x 100000 (past Pillow's own limit)": ("claims.png", png_bytes(100000, 100000, 1)),
        "a GIF claiming 65535 x 65535": ("claims.gif", gif_claiming(65535, 65535)),
        "a header claiming 9000 x 9000 (under Pillow's limits, past accel's)": ("9000.png", png_bytes(9000, 9000, 1)),
        "a truncated PNG": ("truncated.png", whole[:len(whole) // 2]),
        "a corrupt PNG": ("corrupt.png", bytes(corrupt)),
        "not a picture": ("text.jpg", b"hello, I am not a JPEG\n" * 10),
        "an empty file": ("empty.png", b""),
    }
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.values():
        (folder / name).write_bytes(data)
    return {what: folder / name for what, (name, _) in files.items()}


def peak_growth(code, *args):
    """Runs ``code`` in a fresh Python (with accel.image imported) and returns (what it printed as JSON, how much
    its peak RSS grew while it ran, in MiB)."""
    script = ("import json, resource, sys\nimport accel.image as image\n"
              # VmHWM, not ru_maxrss: Linux carries the parent's (pytest's) peak across fork and exec into
              # ru_maxrss, which would hide the growth measured here.
              "def peak():\n    return int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]) / 1024\n"
              "before = peak()\n" + code + "\nprint(json.dumps([result, peak() - before]))\n")
    done = subprocess.run([sys.executable, "-c", script, *map(str, args)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    result, grown = json.loads(done.stdout.strip().splitlines()[-1])
    return result, grown


# ---- item 1: decoded at the size needed, with a pixel limit checked before decoding -------------------------------


def test_a_small_png_of_12000_x_12000_is_refused_from_its_header_in_bounded_memory(bomb):
    # Pillow's own limit lifted first, as any program may (it is process-wide): accel's check does not rest on it.
    code = ("import PIL.Image\nPIL.Image.MAX_IMAGE_PIXELS = None\nfrom accel.errors import InvalidArgumentError\n"
            "try:\n    result = image.read_image(sys.argv[1], (64, 64)).shape\n"
            "except InvalidArgumentError as e:\n    result = str(e)")
    result, grown = peak_growth(code, bomb)
    assert isinstance(result, str), f"decoded to {result}, the peak RSS growing by {grown:.0f} MiB"
    assert f"picture {str(bomb)!r} is 12000x12000 (144000000 pixels)" in result
    assert f"more than the limit of {image.MAX_PIXELS} pixels" in result
    assert grown < 32, f"peak RSS grew by {grown:.0f} MiB"


def test_the_pixel_limit_is_a_documented_default_and_a_keyword(tmp_path):
    assert image.MAX_PIXELS == 8192 * 8192
    path = tmp_path / "wide.png"
    path.write_bytes(png_bytes(400, 300))
    assert image.read_image(path, (64, 64)).shape == (64, 64, 3)
    with pytest.raises(InvalidArgumentError, match=r"is 400x300 \(120000 pixels\), more than the limit of 100000"):
        image.read_image(path, (64, 64), max_pixels=100_000)
    assert image.read_image(path, max_pixels=120_000).shape == (300, 400, 3)
    for bad in (0, -1, 1.5, "many", True):
        with pytest.raises(InvalidArgumentError, match=re.escape(f"max_pixels={bad!r}: expected a positive integer")):
            image.read_image(path, max_pixels=bad)
    for size in ((0, 64), (64,), "64x64", (64, 2.5)):
        with pytest.raises(InvalidArgumentError, match=r"^size"):
            image.read_image(path, size)


def test_a_large_jpeg_is_decoded_at_the_size_needed_in_bounded_memory(tmp_path):
    from PIL import Image

    path = tmp_path / "grey.jpg"
    Image.new("L", (8000, 6000), 90).save(path)  # 48 MB decoded, 192 MB once made RGB
    result, grown = peak_growth("result = image.read_image(sys.argv[1], (64, 48))[0, 0].tolist()", path)
    assert result == [90, 90, 90]
    assert grown < 32, f"peak RSS grew by {grown:.0f} MiB"


def test_a_larger_jpeg_gives_what_a_full_decode_gives_within_the_resize_tolerance(tmp_path, monkeypatch):
    from PIL import Image

    path = tmp_path / "photo.jpg"
    Image.fromarray(photo(1024, 768)).save(path, quality=90)
    resized = []
    resize = Image.Image.resize
    monkeypatch.setattr(Image.Image, "resize", lambda self, *a, **k: resized.append(self.size) or resize(self, *a, **k))
    bgr = image.read_image(path, (64, 48))
    assert resized == [(128, 96)]  # decoded at 1/8 of its size: still at least the size needed
    with Image.open(path) as full:
        before = np.asarray(resize(full.convert("RGB"), (64, 48), Image.Resampling.BILINEAR))[:, :, ::-1]
    diff = np.abs(bgr.astype(np.int16) - before)
    print(f"draft-decoded vs full decode: mean |diff| {diff.mean():.3f}, max {diff.max()}")
    assert bgr.shape == before.shape and diff.mean() < 1 and diff.max() <= 12


# ---- item 2: every picture error is accel's, naming the file (and the row in accel batch) -------------------------


def test_hostile_files_are_errors_naming_the_file(tmp_path):
    for what, path in hostile_files(tmp_path).items():
        with pytest.raises(InvalidArgumentError, match=re.escape(repr(str(path)))):
            image.read_image(path, (64, 64))
        print(f"{what}: refused")


def test_accel_batch_reads_pictures_through_the_same_reader_and_names_the_row(tmp_path):
    good = tmp_path / "good.png"
    good.write_bytes(png_bytes(64, 64))
    for path in hostile_files(tmp_path / "hostile").values():
        p = FilePredictor(TINY_CNN, [(None, PictureRows([good, path]))], image_inputs={"image": "nv12"})
        with pytest.raises(InvalidArgumentError, match=rf"^row 1: .*{re.escape(repr(str(path)))}"):
            p({"index": np.array([0, 1])})
        p.close()
    large = tmp_path / "large.png"
    large.write_bytes(png_bytes(100, 100))
    small = FilePredictor(TINY_CNN, [(None, PictureRows([large], max_pixels=5000))], image_inputs={"image": "nv12"})
    with pytest.raises(InvalidArgumentError, match=r"^row 0: picture .* more than the limit of 5000 pixels"):
        small({"index": np.array([0])})
    small.close()


@pytest.fixture
def ray_stand_in(monkeypatch):
    """Stand-ins for the modules accel batch imports (Ray and pyarrow, not installed here): enough for it to get to
    its check of the first row, which runs here before Ray starts."""
    ray = types.ModuleType("ray")
    ray.data = types.ModuleType("ray.data")
    ray.is_initialized = lambda: False
    ray.init = lambda **kwargs: pytest.fail("accel batch went on past a first row that it cannot read")
    pyarrow = types.ModuleType("pyarrow")
    pyarrow.parquet = types.ModuleType("pyarrow.parquet")
    for name, module in (("ray", ray), ("ray.data", ray.data), ("pyarrow", pyarrow),
                         ("pyarrow.parquet", pyarrow.parquet)):
        monkeypatch.setitem(sys.modules, name, module)


def test_accel_batch_and_run_report_a_hostile_picture_with_its_name(capsys, tmp_path, bomb, ray_stand_in):
    files = hostile_files(tmp_path / "hostile")
    for what, path in [*files.items(), ("a 12000 x 12000 PNG of 420 KB", bomb)]:
        folder = tmp_path / "one" / path.name
        folder.mkdir(parents=True)
        (folder / path.name).write_bytes(path.read_bytes())
        code, out, err = run_main(capsys, "batch", TINY_CNN, "--input", folder, "--output", tmp_path / "out.parquet",
                                  "--image-input", NV12, "--no-progress")
        assert code == 1 and "accel batch: error: row 0: " in err, (what, out, err)
        assert repr(str(folder / path.name)) in err and "Traceback" not in err, (what, err)
        code, out, err = run_main(capsys, "run", TINY_CNN, "--image-input", NV12, "--input", path)
        assert code == 1 and err.startswith("accel run: error: ") and repr(str(path)) in err, (what, out, err)
        assert "Warning" not in err, err  # Pillow's DecompressionBombWarning would only precede accel's error
    code, out, err = run_main(capsys, "run", TINY_CNN, "--image-input", NV12, "--input", bomb, "--max-pixels", 1000)
    assert code == 1 and "more than the limit of 1000 pixels" in err, err
    for bad in ("0", "-5", "lots"):
        code, out, err = run_main(capsys, "bench", TINY_CNN, "--input", bomb, "--max-pixels", bad)
        assert code == 2 and f"--max-pixels: expected an integer >= 1, got {bad!r}" in err, err


# ---- item 3: optional modules missing are accel's errors saying what to install -----------------------------------


def test_pictures_without_pillow_are_an_error_saying_what_to_install(capsys, tmp_path, monkeypatch, ray_stand_in):
    path = tmp_path / "pictures" / "frame.png"
    path.parent.mkdir()
    path.write_bytes(png_bytes(64, 64))
    monkeypatch.setitem(sys.modules, "PIL", None)  # `import PIL` fails, as on the base install
    monkeypatch.setitem(sys.modules, "PIL.Image", None)
    with pytest.raises(ImportError, match=r"reading picture files needs Pillow: pip install pillow"):
        image.read_image(path)
    p = FilePredictor(TINY_CNN, [(None, PictureRows([path]))], image_inputs={"image": "nv12"})
    with pytest.raises(ImportError, match=r"pip install pillow"):
        p({"index": np.array([0])})
    p.close()
    for verb, extra in (("run", ()), ("bench", ("--runs", 1))):
        code, _, err = run_main(capsys, verb, TINY_CNN, "--image-input", NV12, "--input", path, *extra)
        assert code == 1 and f"accel {verb}: error: reading picture files needs Pillow: pip install pillow" in err, err
    code, _, err = run_main(capsys, "batch", TINY_CNN, "--input", path.parent, "--output", tmp_path / "out.parquet",
                            "--image-input", NV12, "--no-progress")
    assert code == 1 and "accel batch: error: reading picture files needs Pillow: pip install pillow" in err, err


def test_accel_batch_without_pyarrow_says_what_to_install_before_any_row_runs(capsys, tmp_path, monkeypatch,
                                                                              ray_stand_in):
    np.save(tmp_path / "x.npy", np.zeros((2, 3, 64, 64), np.float32))
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    code, _, err = run_main(capsys, "batch", TINY_CNN, "--input", tmp_path / "x.npy", "--output",
                            tmp_path / "out.parquet")
    assert code == 1 and "accel batch: error: the Parquet output needs pyarrow: pip install 'accel[ray]'" in err, err
