"""Threads: 8 threads sharing one model give results bit-identical to sequential runs; the GIL is released
while a run waits; loads and tensors from many threads at once."""
from __future__ import annotations

import threading
import time

import numpy as np

import accel
from conftest import rand

THREADS = 8
RUNS = 25


def _inputs():
    return [[np.random.default_rng(1000 * t + i).random((1, 3, 64, 64), dtype=np.float32)
             for i in range(RUNS)] for t in range(THREADS)]


def _run_threads(fn):
    errors, barrier = [], threading.Barrier(THREADS)

    def body(t):
        try:
            barrier.wait(timeout=10)
            fn(t)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=body, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    assert not any(th.is_alive() for th in threads)
    assert not errors, errors


def test_8_threads_bit_identical_to_sequential(cnn):
    xs = _inputs()
    sequential = [[cnn.run(x)[0].copy() for x in row] for row in xs]
    got = [[None] * RUNS for _ in range(THREADS)]

    def fn(t):
        for i, x in enumerate(xs[t]):
            got[t][i] = cnn.run(x)[0]

    _run_threads(fn)
    for t in range(THREADS):
        for i in range(RUNS):
            assert np.array_equal(got[t][i], sequential[t][i]), (t, i)


def test_8_threads_device_tensors_and_preallocated_outputs(dev, cnn):
    xs = _inputs()
    sequential = [[cnn.run(x)[0].copy() for x in row] for row in xs]
    got = [[None] * RUNS for _ in range(THREADS)]

    def fn(t):
        inp = dev.empty((1, 3, 64, 64), np.float32)
        out = dev.empty((1, 10), np.float32)
        for i, x in enumerate(xs[t]):
            np.asarray(inp)[...] = x
            cnn.run(inp, outputs=[out])
            got[t][i] = np.asarray(out).copy()

    _run_threads(fn)
    for t in range(THREADS):
        for i in range(RUNS):
            assert np.array_equal(got[t][i], sequential[t][i]), (t, i)


def test_8_threads_async(cnn):
    xs = _inputs()
    sequential = [[cnn.run(x)[0].copy() for x in row] for row in xs]
    got = [None] * THREADS

    def fn(t):
        futs = [cnn.run_async(x) for x in xs[t]]
        got[t] = [f.result(timeout=60)[0] for f in futs]

    _run_threads(fn)
    for t in range(THREADS):
        for i in range(RUNS):
            assert np.array_equal(got[t][i], sequential[t][i]), (t, i)


def _spin_while(action):
    """Counts loop iterations of another Python thread while `action` runs."""
    count = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1

    th = threading.Thread(target=spin)
    th.start()
    try:
        time.sleep(0.01)
        c0 = count[0]
        t0 = time.perf_counter()
        action()
        elapsed = time.perf_counter() - t0
        c1 = count[0]
    finally:
        stop.set()
        th.join()
    return c1 - c0, elapsed


def test_gil_released_during_run(slow):
    x = rand((512, 512), 1)
    slow.run(x)
    # calibrate: how far the spinner gets in the same time when the main thread just sleeps
    free, t_free = _spin_while(lambda: time.sleep(0.1))
    n, elapsed = _spin_while(lambda: (slow.run(x), slow.run(x)))
    assert elapsed > 0.04
    # with the GIL held during the waits, the spinner would barely move (it would get the GIL only
    # at the runs' Python-level boundaries); released, it runs at a good fraction of its free speed
    assert n / elapsed > 0.2 * free / t_free, (n, elapsed, free, t_free)


def test_gil_released_during_async_wait(slow):
    x = rand((512, 512), 2)
    slow.run(x)
    free, t_free = _spin_while(lambda: time.sleep(0.1))
    n, elapsed = _spin_while(lambda: slow.run_async(x).result(timeout=30))
    assert n / elapsed > 0.2 * free / t_free, (n, elapsed, free, t_free)


def test_concurrent_loads_of_the_same_model(dev, tiny_path):
    x = rand((1, 16), 3)
    models = [None] * THREADS

    def fn(t):
        models[t] = dev.load(str(tiny_path))

    _run_threads(fn)
    ref = models[0].run(x)[0]
    for m in models:
        assert np.array_equal(m.run(x)[0], ref)


def test_threads_allocating_and_freeing(dev):
    def fn(t):
        for i in range(200):
            a = dev.empty((t + 1, 64), np.float32)
            np.asarray(a)[...] = t
            assert float(np.asarray(a).sum()) == t * (t + 1) * 64
            b = dev.tensor(np.full((i % 7 + 1,), t, np.int32))
            assert np.all(np.asarray(b) == t)

    import gc

    gc.collect()
    base = dev.stats()["live_buffers"]
    _run_threads(fn)
    gc.collect()
    assert dev.stats()["live_buffers"] == base


def test_threads_on_separate_devices(tiny_path):
    x = rand((1, 16), 4)
    with accel.open("emu:cores=1") as d:
        ref = d.load(str(tiny_path)).run(x)[0].copy()
    results = [None] * THREADS

    def fn(t):
        with accel.open("emu:cores=1,pool=16M") as d:
            m = d.load(str(tiny_path))
            results[t] = [m.run(x)[0].copy() for _ in range(20)]

    _run_threads(fn)
    for r in results:
        for y in r:
            assert np.array_equal(y, ref)


def test_close_while_threads_run(tiny_path):
    """close() from the main thread while 4 threads run: each thread's next call raises ClosedError,
    nothing else goes wrong, and the arrays they got stay valid."""
    d = accel.open("emu:cores=2")
    m = d.load(str(tiny_path))
    x = rand((1, 16), 5)
    ref = m.run(x)[0].copy()
    outcome = [None] * 4
    kept = [[] for _ in range(4)]
    started = threading.Barrier(5)

    def body(t):
        started.wait(timeout=10)
        try:
            while True:
                y = m.run(x)[0] if t % 2 else m.run_async(x).result(timeout=10)[0]
                if len(kept[t]) < 50:
                    kept[t].append(y)
        except accel.ClosedError as e:
            outcome[t] = e
        except BaseException as e:  # noqa: BLE001
            outcome[t] = e

    threads = [threading.Thread(target=body, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    started.wait(timeout=10)
    time.sleep(0.05)
    d.close()
    for th in threads:
        th.join(timeout=30)
    assert not any(th.is_alive() for th in threads)
    assert all(type(o) is accel.ClosedError for o in outcome), outcome
    for ys in kept:
        assert ys and all(np.array_equal(y, ref) for y in ys)
