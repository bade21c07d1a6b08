"""``accel batch``: a model over a folder of pictures or ``.npy`` arrays on a Ray cluster (a local one by default),
every row's outputs written to one Parquet file, in row order, with a progress bar. Needs ``pip install
'accel[ray]'``; docs/ray.md."""
from __future__ import annotations

import argparse
import logging
import os
import re
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from .._wording import counted
from ..cli import UsageError
from .common import (DEFAULT_DEVICE, add_device_option, add_image_input_option, add_input_shape_option,
                     add_max_pixels_option, converted_options, image_inputs, input_shapes, number_arg, pictures_default,
                     refuse_option, reports_failures, writable_path)
from .progress import ProgressBar
from .run import split_input

# The options' ranges (past them Ray is asked for more actors, or an actor for a larger batch, than it can hold).
MAX_WORKERS = 4096
MAX_BATCH_SIZE = 1 << 20


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Adds ``batch`` to the ``accel`` command's subparsers (see accel.cli)."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "batch", help="run a model over a folder of pictures or .npy arrays on Ray; outputs to Parquet",
        description="Runs a model over every row of its inputs on a Ray cluster (a local one started in this "
                    "process unless --address names one), in a pool of actors each holding the model, and writes "
                    "each row's outputs to one Parquet file, in row order: the column index (the row), path (for "
                    "pictures), then one column per output. Rows: a .npy array's first axis, or a folder's "
                    "pictures (any depth, sorted by path), each read with Pillow, resized (bilinear) to the "
                    "input's frame size and converted to its frame format. A float input of an ONNX model fed "
                    "pictures without --image-input takes them as RGB scaled to [0, 1] (rgb,scale=1/255). The "
                    "files must be at the same path on every node. Needs pip install 'accel[ray]'. Exit code: 0 "
                    "ok, 1 failure (a bad row, a model that cannot load), 2 usage error.")
    p.add_argument("model", metavar="MODEL", help="the model: .onnx (emulator) or compiled (.accm, .bin, .hbm, ...)")
    p.add_argument("--input", action="append", default=[], required=True, metavar="[NAME=]DIR|FILE.npy",
                   help="an input's rows: a .npy array (rows along its first axis) or a folder of pictures; unnamed "
                        "ones feed the model's inputs in order (repeatable)")
    p.add_argument("--output", required=True, metavar="OUT.parquet", help="the Parquet file to write")
    p.add_argument("--address", metavar="ADDRESS",
                   help="the Ray cluster to join (as ray.init takes it: auto, HOST:6379, ray://HOST:10001); default: "
                        "a local Ray with this machine's CPUs, stopped at the end")
    p.add_argument("--workers", type=number_arg(int, 1, MAX_WORKERS), metavar="N",
                   help="actors holding the model (default: one per CPU of the cluster on the emulator, one per "
                        "board of the device's kind otherwise)")
    p.add_argument("--batch-size", type=number_arg(int, 1, MAX_BATCH_SIZE), default=64, metavar="N",
                   help="rows per actor call (default 64)")
    p.add_argument("--int8", choices=["ort", "dpu", "bpu"], help="the emulator's integer rules for a quantized model")
    p.add_argument("--no-progress", action="store_true", help="print no progress bar")
    add_device_option(p)
    add_input_shape_option(p)
    add_image_input_option(p)
    add_max_pixels_option(p)
    p.set_defaults(handler=command)
    return p


def sources(values: Sequence[str], max_pixels: Optional[int] = None
            ) -> Tuple[List[Tuple[Optional[str], Any]], int, Dict[str, List[str]]]:
    """``([(input name or None, source)], rows, {path column: relative paths})`` from the ``--input`` values
    (pictures of at most ``max_pixels`` pixels); UsageError for a missing file, an empty folder, or inputs of
    different row counts."""
    from ..ray.files import ArrayRows, PictureRows, picture_files

    given: List[Tuple[Optional[str], Any]] = []
    paths: Dict[str, List[str]] = {}
    counts = []
    for value in values:
        name, text = split_input(value)
        where = Path(text)
        if where.is_dir():
            files = picture_files(where)
            if not files:
                raise UsageError(f"--input {value!r}: no pictures in that folder")
            source: Any = PictureRows([str(f.resolve()) for f in files], max_pixels)
            paths[name or str(len(given))] = [f.relative_to(where).as_posix() for f in files]
        elif where.is_file():
            source = ArrayRows(where.resolve())
            try:
                if source.array().ndim == 0:
                    raise UsageError(f"--input {value!r}: a scalar, not rows")
            except ValueError as e:
                raise UsageError(f"--input {value!r}: not a NumPy .npy array ({e})") from None
        else:
            raise UsageError(f"--input {value!r}: no such file or folder")
        given.append((name, source))
        counts.append((value, len(source)))
    if len({c for _, c in counts}) > 1:
        raise UsageError("the inputs differ in rows: " + ", ".join(f"{v} {c}" for v, c in counts))
    if counts[0][1] == 0:
        raise UsageError(f"--input {counts[0][0]!r}: no rows")
    # One folder of pictures: its column is "path"; several: "<input>_path" ("<position>_path" if unnamed).
    named = {("path" if len(paths) == 1 else f"{k}_path"): v for k, v in paths.items()}
    return given, counts[0][1], named


def pictured(model: Any, given: Sequence[Tuple[Optional[str], Any]]) -> List[str]:
    """The inputs of ``model`` that ``given`` (see :func:`sources`) feeds pictures."""
    from ..ray.files import PictureRows, assign

    return [info.name for _, source, info in assign(list(model.inputs), given) if isinstance(source, PictureRows)]


#: A line of a traceback that gives an exception's class and message.
_RAISED = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception)): (.+)$")


def ray_failure(e: BaseException) -> Optional[str]:
    """The message of the error an actor raised, from Ray's wrapping of it (which holds the actor's traceback as
    text, the error's own line before Ray's): None if ``e`` is not Ray's."""
    if type(e).__module__.split(".")[0] != "ray":
        return None
    raised = [m.group(2) for m in map(_RAISED.match, str(e).splitlines())
              if m is not None and not m.group(1).startswith("ray.")]
    return raised[-1] if raised else str(e).strip().splitlines()[-1]


#: The line Ray's core worker logs at ERROR level (once per process, to stderr) for every Ray Data actor pool: Ray
#: Data gives its actors their constructor arguments as object references and restarts them by default, and such a
#: restart fails if those objects are lost (ray-project/ray#53727). Here they live on this node, held by this
#: process for the whole run: if they are lost, so is the run. A false alarm on every successful batch.
_RESTART_ALARM = re.compile(rb"core_worker\.cc:\d+: Actor .*has constructor arguments in the object store and "
                            rb"max_restarts > 0")


@contextmanager
def without_the_restart_alarm() -> Iterator[None]:
    """While it runs, what this process's native code writes to stderr (file descriptor 2: Ray's core worker logs)
    goes through a thread that drops Ray's :data:`_RESTART_ALARM` line and passes everything else on; Python's own
    writes go to stderr as they did (a terminal stays one for the progress bar)."""
    sys.stderr.flush()
    saved = os.dup(2)
    read_end, write_end = os.pipe()
    os.dup2(write_end, 2)
    os.close(write_end)
    forwarder = threading.Thread(target=_pass_on, args=(read_end, saved), name="accel-stderr", daemon=True)
    forwarder.start()
    python_stderr = sys.stderr
    try:
        with open(saved, "w", buffering=1, encoding=python_stderr.encoding or "utf-8", errors="backslashreplace",
                  closefd=False) as own:
            if python_stderr is sys.__stderr__:
                sys.stderr = own
            try:
                yield
            finally:
                sys.stderr = python_stderr  # before `own` closes: Ray's threads print to sys.stderr too
    finally:
        os.dup2(saved, 2)  # the pipe's last write end closed: the thread reads the rest, then the end
        forwarder.join(timeout=5)
        os.close(saved)


def _pass_on(read_end: int, out: int) -> None:
    """Copies the pipe ``read_end`` to ``out`` a line at a time, without Ray's :data:`_RESTART_ALARM` line, until
    the pipe's end; reads on when ``out`` fails, so that no writer waits on a full pipe."""
    pending = b""
    with open(read_end, "rb", buffering=0) as pipe:
        for chunk in iter(lambda: pipe.read(1 << 16), b""):
            *lines, pending = (pending + chunk).split(b"\n")
            _write(out, b"".join(line + b"\n" for line in lines if not _RESTART_ALARM.search(line)))
    _write(out, pending)


def _write(out: int, data: bytes) -> None:
    try:
        if data:
            os.write(out, data)
    except OSError:
        pass  # stderr's reader gone: nothing to tell it


@reports_failures("batch")
def command(args: argparse.Namespace) -> int:
    """``accel batch``: returns the exit code."""
    model_path = Path(args.model)
    if not model_path.is_file():
        raise UsageError(f"MODEL {args.model!r}: no such file")
    out_path = writable_path("--output", args.output)
    given, rows, paths = sources(args.input, args.max_pixels)
    shapes, images = input_shapes(args.input_shape), image_inputs(args.image_input)
    onnx_model = "input_shapes" in converted_options(model_path)  # a model made for its inputs' shapes
    refuse_option(model_path, "--input-shape", "input_shapes", shapes)
    refuse_option(model_path, "--image-input", "image_inputs", images)
    from ..ray.files import INDEX, FilePredictor
    from ..ray.parquet import ParquetRows, pyarrow
    from ..ray.pipeline import import_ray, map_predictor

    # Our progress bar, not Ray Data's INFO lines about each run (the variable is read as Ray Data sets up its logs).
    os.environ.setdefault("RAY_DATA_LOG_LEVEL", "WARNING")
    try:
        ray = import_ray()
    except ImportError as e:
        print(f"accel batch: error: {e}", file=sys.stderr)
        return 1
    try:  # what writes the output: said now rather than after every row has run (Ray Data brings it)
        pyarrow()
    except ImportError as e:
        print(f"accel batch: error: {e}", file=sys.stderr)
        return 1
    model_bytes = model_path.read_bytes()  # shipped to the actors: no node but this one needs the file
    options = dict(device=args.device, input_shapes=shapes, int8=args.int8)
    images = check_here(model_bytes, onnx_model, given, options, images)
    began = time.perf_counter()
    started = not ray.is_initialized()
    if started:
        ray.init(address=args.address, include_dashboard=False, logging_level=logging.WARNING)
    partial = out_path.with_name(out_path.name + ".partial")
    try:
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        context.execution_options.preserve_order = True
        blocks = [np.arange(s, min(s + args.batch_size, rows), dtype=np.int64) for s in range(0, rows, args.batch_size)]
        ds = ray.data.from_numpy(blocks).rename_columns({"data": INDEX})
        kwargs = dict(model=model_bytes, sources=given, image_inputs=images, id_column=INDEX, **options)
        out = map_predictor(ds, FilePredictor, kwargs, device=args.device, concurrency=args.workers,
                            batch_size=args.batch_size)
        metadata = {"accel.model": model_path.name, "accel.device": args.device}
        named = {c: np.array(names, dtype=object) for c, names in paths.items()}
        with without_the_restart_alarm(), \
                ProgressBar(rows, sys.stderr, unit=" rows", enabled=not args.no_progress, lines=True) as progress, \
                ParquetRows(partial, metadata) as writer:
            for batch in out.iter_batches(batch_size=None, batch_format="numpy"):
                index = batch.pop(INDEX)
                columns = {INDEX: index, **{c: names[index] for c, names in named.items()}}
                writer.write({**columns, **batch})
                progress.update_to(writer.rows)
            progress.finish()
        os.replace(partial, out_path)
    except Exception as e:
        message = ray_failure(e)
        if message is None:
            raise
        print(f"accel batch: error: {message}", file=sys.stderr)
        return 1
    finally:
        if partial.exists():
            partial.unlink()
        if started:
            ray.shutdown()
    # The bar's own time, so that the rate printed is the one its last line shows (the actors' start is in it: the run
    # starts them); ray.init and ray.shutdown (a local Ray's start and stop, or joining and leaving a cluster), which
    # no row waited for, said apart.
    seconds = progress.seconds
    assert seconds is not None  # finished: every row was written
    rest = time.perf_counter() - began - seconds
    ray_time = f"; ray.init and ray.shutdown took {rest:.1f} s more" if started else ""
    print(f"{counted(rows, 'row')} of {model_path.name} on {args.device} in {seconds:.1f} s "
          f"({rows / seconds:.1f} rows/s{ray_time}): outputs written to {out_path}")
    return 0


def check_here(model: bytes, onnx_model: bool, given: Sequence[Tuple[Optional[str], Any]], options: Dict[str, Any],
               images: Optional[Dict[str, Dict[str, Any]]]) -> Optional[Dict[str, Dict[str, Any]]]:
    """Before starting Ray, when the device opens on this machine: the model loaded and its first row run here, so
    a model, input or row the actors would refuse fails now, with the message alone; pictures for a float input
    get :data:`~accel.commands.common.DEFAULT_PICTURES`. Returns the image inputs to load with."""
    import accel

    from ..errors import NotFoundError
    from ..ray.files import INDEX, FilePredictor

    try:
        device = accel.open(options["device"] if options["device"] != DEFAULT_DEVICE else "emu:cores=1")
    except NotFoundError:
        return images  # a board this machine does not have: the actors check on theirs
    with device:
        if onnx_model:
            plain = device.load(model, input_shapes=options["input_shapes"])
            images = pictures_default("batch", plain, pictured(plain, given), images) or None
    predictor = FilePredictor(model, given, image_inputs=images, **options)
    try:
        predictor({INDEX: np.zeros(1, np.int64)})
    finally:
        predictor.close()
    return images
