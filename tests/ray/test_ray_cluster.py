"""accel.ray on a local Ray cluster (2 CPUs, started by conftest.py): map_model's outputs bit for bit those of
Model.run, every row exactly once and in order, an actor killed mid-run restarted with its batches retried, a bad
row named, boards as Ray resources, and ``accel batch`` on .npy rows and pictures, in this process and on a local
Ray of its own."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import ray

import accel
import accel.ray
from accel import cli
from accel.models import TINY_CNN
from accel.ray.parquet import read_columns
from accel.ray.pipeline import actors_that_fit

N = 96


def images(n, seed=0):
    return np.random.default_rng(seed).standard_normal((n, 3, 64, 64)).astype(np.float32)


def dataset(x):
    """A dataset of rows {"index": i, "image": x[i]}."""
    return ray.data.from_items([{"index": i, "image": x[i]} for i in range(len(x))])


def collect(ds):
    """{column: array} of every row the dataset gives, in the order it gives them."""
    batches = list(ds.iter_batches(batch_size=None, batch_format="numpy"))
    return {k: np.concatenate([b[k] for b in batches]) for k in batches[0]}


def local(x, path=TINY_CNN, column="image"):
    """The outputs of the model on every row, in this process: Model.run, a row (or a batch of the model) a run."""
    p = accel.ray.Predictor(path, device="emu:cores=1,threads=1")
    try:
        return p({column: x})
    finally:
        p.close()


def differing(got, want):
    count = int(np.count_nonzero(got != want))
    print(f"{count} of {want.size} output values differ from the local run")
    return count


def test_map_model_gives_each_row_once_bit_for_bit():
    x = images(N)
    out = collect(accel.ray.map_model(dataset(x), TINY_CNN, concurrency=2, batch_size=8))
    assert list(out["index"]) == list(range(N))  # each row once, in order
    assert differing(out["probabilities"], local(x)["probabilities"]) == 0
    assert np.array_equal(out["image"], x)  # the input column passes through


def test_a_model_with_a_batch_of_four(batch4_path):
    x = np.random.default_rng(3).standard_normal((N + 3, 16)).astype(np.float32)
    ds = ray.data.from_items([{"index": i, "x": x[i]} for i in range(len(x))])
    out = collect(accel.ray.map_model(ds, str(batch4_path), concurrency=2, batch_size=10))
    assert list(out["index"]) == list(range(len(x)))
    assert differing(out["y"], local(x, batch4_path, "x")["y"]) == 0


def test_the_default_pool_leaves_cpus_to_steps_before_it():
    # A step before the actors needs a CPU of its own: a fixed pool holding both CPUs would stall it for ever.
    x = images(32)

    def make(batch):
        return {"index": batch["id"], "image": x[batch["id"]]}

    ds = ray.data.range(32, override_num_blocks=4).map_batches(make, batch_size=8)
    done = {}
    worker = threading.Thread(target=lambda: done.update(collect(accel.ray.map_model(ds, TINY_CNN, batch_size=8))),
                              daemon=True)
    worker.start()
    worker.join(240)
    assert done, "map_model's default pool stalled a pipeline with a task step before it"
    assert list(done["index"]) == list(range(32))
    assert differing(done["probabilities"], local(x)["probabilities"]) == 0


def map_workers():
    """{pid: process title} of the Ray Data actors running a Predictor (their process titles say so, and what they
    are doing: ``.submit`` while they run a batch)."""
    found = {}
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    title = f.read().decode(errors="replace")
            except OSError:
                continue
            if title.startswith("ray::MapWorker(") and "Predictor" in title:
                found[int(pid)] = title
    return found


def wait_for(condition, seconds=120):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.1)
    return condition()


def test_an_actor_killed_mid_run_is_restarted_and_every_row_comes_once(slow_path):
    n = 480
    x = np.random.default_rng(1).standard_normal((n, 256, 256)).astype(np.float32)
    ds = ray.data.from_items([{"index": i, "x": x[i]} for i in range(n)])
    out = accel.ray.map_model(ds, str(slow_path), concurrency=2, batch_size=8)
    indices, results, killed, restarted = [], [], None, []
    for batch in out.iter_batches(batch_size=None, batch_format="numpy"):
        indices.extend(batch["index"].tolist())
        results.append(batch["y"])
        if killed is None:
            # Both actors up (the second may start after the first batch comes back), then one killed; the rows
            # wait here until Ray has started it again.
            assert wait_for(lambda: len(map_workers()) == 2), map_workers()
            pool = set(map_workers())
            killed = min(pool)
            os.kill(killed, signal.SIGKILL)
            assert wait_for(lambda pool=pool: set(map_workers()) - pool), "the killed actor was not restarted"
            restarted = sorted(set(map_workers()) - pool)
    print(f"killed actor pid {killed} after {len(results[0])} rows; restarted as {restarted}; {len(indices)} rows "
          f"came back")
    assert killed not in map_workers()
    assert indices == list(range(n))  # each row once, in order
    assert differing(np.concatenate(results), local(x, slow_path, "x")["y"]) == 0


def test_a_bad_row_fails_the_run_naming_the_row():
    x = images(12, seed=2)
    items = [{"path": f"frame{i:03d}.png", "image": x[i] if i != 9 else x[i][:, :10]} for i in range(12)]
    ds = accel.ray.map_model(ray.data.from_items(items), TINY_CNN, concurrency=1, batch_size=4, id_column="path")
    with pytest.raises(Exception) as raised:
        ds.take_all()
    assert "row path='frame009.png' (row 1 of its batch): column 'image' holds float32[3, 10, 64]" in str(raised.value)


def test_boards_are_ray_resources():
    total = ray.cluster_resources()
    assert actors_that_fit(ray, 1, None) == int(total["CPU"])
    assert actors_that_fit(ray, 1, {"board": 1}) == 1  # one board on the cluster: one actor
    with pytest.raises(ValueError, match=r"no node of the Ray cluster has the resource 'bpu' .*ray start "
                                         r"--resources='\{\"bpu\": 1\}'"):
        accel.ray.map_model(dataset(images(2)), "model.bin", device="bpu:0")
    # An actor that holds the board's resource: the pool is one actor, and the rows come as without it.
    x = images(16, seed=4)
    out = collect(accel.ray.map_model(dataset(x), TINY_CNN, resources={"board": 1}, batch_size=8))
    assert list(out["index"]) == list(range(16))
    assert differing(out["probabilities"], local(x)["probabilities"]) == 0


def write_pictures(folder, count):
    from PIL import Image

    folder.mkdir()
    for i in range(count):
        bgr = np.random.default_rng(i).integers(0, 256, (40 + i, 50, 3), dtype=np.uint8)
        Image.fromarray(bgr).save(folder / f"p{i:03d}.png")


def accel_batch(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_accel_batch_on_npy_rows(capsys, tmp_path):
    x = images(40, seed=5)
    np.save(tmp_path / "x.npy", x)
    code, out, err = accel_batch(capsys, "batch", TINY_CNN, "--input", tmp_path / "x.npy", "--output",
                                 tmp_path / "out.parquet", "--workers", 2, "--batch-size", 8)
    assert code == 0, err
    assert "40 rows of tiny_cnn.onnx on emu" in out
    assert re.search(r"^100%\|.*\| 40/40 \[", err, re.M), err  # the progress bar's last line (tqdm's), a line of
    # its own: stderr is not a terminal
    got = read_columns(tmp_path / "out.parquet")
    assert list(got) == ["index", "probabilities"]
    assert list(got["index"]) == list(range(40))
    assert differing(got["probabilities"], local(x)["probabilities"]) == 0


def test_accel_batch_on_pictures(capsys, tmp_path):
    from accel.image import read_image, to_frame

    write_pictures(tmp_path / "pics", 12)
    code, _, err = accel_batch(capsys, "batch", TINY_CNN, "--input", tmp_path / "pics", "--output",
                               tmp_path / "out.parquet", "--image-input", "image=bgr,to=rgb,scale=0.5")
    assert code == 0, err
    got = read_columns(tmp_path / "out.parquet")
    assert list(got) == ["index", "path", "probabilities"]
    assert list(got["path"]) == [f"p{i:03d}.png" for i in range(12)]
    with accel.open("emu:cores=1") as dev:
        model = dev.load(TINY_CNN, image_inputs={"image": {"format": "bgr", "to": "rgb", "scale": [0.5]}})
        want = np.stack([model.run(to_frame(read_image(tmp_path / "pics" / p, (64, 64)), "bgr"))[0][0]
                         for p in got["path"]])
    assert differing(got["probabilities"], want) == 0


def test_accel_batch_names_a_picture_it_cannot_read(capsys, tmp_path):
    write_pictures(tmp_path / "pics", 10)
    (tmp_path / "pics" / "p007.png").write_bytes(b"broken")
    code, _, err = accel_batch(capsys, "batch", TINY_CNN, "--input", tmp_path / "pics", "--output",
                               tmp_path / "out.parquet", "--no-progress")
    assert code == 1
    assert f"accel batch: error: row 7: cannot read {str(tmp_path / 'pics' / 'p007.png')!r} as a picture" in err, err
    assert not (tmp_path / "out.parquet").exists() and not list(tmp_path.glob("*.partial"))


def test_accel_batch_joins_a_cluster_by_address_and_starts_its_own(tmp_path):
    x = images(24, seed=6)
    np.save(tmp_path / "x.npy", x)
    want = local(x)["probabilities"]
    address = ray.get_runtime_context().gcs_address
    for extra, name in ((["--address", address], "joined"), ([], "own")):
        out = tmp_path / f"{name}.parquet"
        run = subprocess.run([sys.executable, "-m", "accel.cli", "batch", str(TINY_CNN), "--input",
                              str(tmp_path / "x.npy"), "--output", str(out), "--workers", "1", *extra],
                             capture_output=True, text=True, timeout=300, env={**os.environ, "RAY_ADDRESS": ""})
        assert run.returncode == 0, run.stderr[-3000:]
        got = read_columns(out)
        assert list(got["index"]) == list(range(24))
        assert differing(got["probabilities"], want) == 0
        # One rate: the one the progress bar ends on (ray.init and ray.shutdown, which the command calls, said apart).
        said = re.search(r"^24 rows of tiny_cnn\.onnx on emu in [0-9.]+ s \(([0-9.]+) rows/s(.*)\): outputs",
                         run.stdout, re.M)
        bar = re.findall(r"^100%\|.*\| 24/24 \[.*,\s+([0-9.]+) rows/s\]$", run.stderr, re.M)
        assert said and bar, (run.stdout, run.stderr[-3000:])
        assert float(said.group(1)) == pytest.approx(float(bar[-1]), abs=0.06), (run.stdout, bar)
        assert re.fullmatch(r"; ray\.init and ray\.shutdown took [0-9.]+ s more", said.group(2)), run.stdout
        # Ray's false alarm at ERROR level about its actors' constructor arguments (commands/batch.py) is not shown.
        assert "has constructor arguments in the object store" not in run.stderr, run.stderr[-3000:]


def test_accel_batch_survives_an_actor_killed_mid_run(tmp_path):
    # The actors get the model as bytes, in Ray's object store: a restarted actor must still find them.
    n = 1600
    x = images(n, seed=7)
    np.save(tmp_path / "x.npy", x)
    command = [sys.executable, "-m", "accel.cli", "batch", str(TINY_CNN), "--input", str(tmp_path / "x.npy"),
               "--output", str(tmp_path / "out.parquet"), "--workers", "2", "--batch-size", "16",
               "--address", ray.get_runtime_context().gcs_address]
    run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    killed = None
    deadline = time.monotonic() + 240
    while run.poll() is None and killed is None and time.monotonic() < deadline:
        busy = [pid for pid, title in map_workers().items() if "FilePredictor" in title and ".submit" in title]
        if busy:
            time.sleep(0.5)  # into the run
            os.kill(busy[0], signal.SIGKILL)
            killed = busy[0]
        time.sleep(0.1)
    output, _ = run.communicate(timeout=240)
    assert killed is not None, "no actor was seen running"
    assert run.returncode == 0, output[-3000:]
    got = read_columns(tmp_path / "out.parquet")
    print(f"killed actor pid {killed}; {len(got['index'])} rows written")
    assert list(got["index"]) == list(range(n))
    assert differing(got["probabilities"], local(x)["probabilities"]) == 0
