"""run_async: concurrent.futures.Future semantics, asyncio, 64 jobs in flight, callbacks and their order,
priorities, cancellation, timeouts, and dropped futures leaking nothing."""
from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import threading
import time
import weakref

import numpy as np
import pytest

import accel
from conftest import make_slow, ort_run, rand, settle


@pytest.fixture(scope="module")
def medium_path(tmp_path_factory):
    """A ~5 ms model: 2 chained 512x512 MatMuls."""
    import onnx

    p = tmp_path_factory.mktemp("async") / "medium.onnx"
    onnx.save(make_slow(depth=2), str(p))
    return p


def test_future_result_matches_sync(tiny):
    xs = [rand((1, 16), i) for i in range(5)]
    futs = [tiny.run_async(x) for x in xs]
    for f, x in zip(futs, xs):
        assert isinstance(f, concurrent.futures.Future)
        assert np.array_equal(f.result(timeout=10)[0], tiny.run(x)[0])


def test_submission_does_not_block(dev, slow):
    x = rand((512, 512), 1)
    slow.run(x)  # warm
    t0 = time.perf_counter()
    slow.run(x)
    one = time.perf_counter() - t0
    t0 = time.perf_counter()
    f = slow.run_async(x)
    submit = time.perf_counter() - t0
    assert not f.done()
    assert submit < one / 4, (submit, one)
    f.result(timeout=30)


def test_await_in_asyncio(tiny, tiny_path):
    xs = [rand((1, 16), i) for i in range(8)]

    async def main():
        one = await tiny.run_async(xs[0])
        many = await asyncio.gather(*(tiny.run_async(x) for x in xs))
        return one, many

    one, many = asyncio.run(main())
    np.testing.assert_allclose(one[0], ort_run(tiny_path, {"x": xs[0]})[0], rtol=1e-5, atol=1e-5)
    for (y,), x in zip(many, xs):
        np.testing.assert_allclose(y, ort_run(tiny_path, {"x": x})[0], rtol=1e-5, atol=1e-5)


def test_await_does_not_block_the_event_loop(slow):
    x = rand((512, 512), 2)
    ticks = []

    async def ticker(stop):
        while not stop.is_set():
            ticks.append(time.perf_counter())
            await asyncio.sleep(0.002)

    async def main():
        stop = asyncio.Event()
        t = asyncio.ensure_future(ticker(stop))
        await asyncio.sleep(0)
        await slow.run_async(x)
        await slow.run_async(x)
        stop.set()
        await t

    asyncio.run(main())
    assert len(ticks) >= 10, len(ticks)


def test_await_raises_the_job_error(slow):
    async def main():
        await slow.run_async(rand((512, 512), 3), timeout=1e-4)

    with pytest.raises(accel.TimeoutError) as e:
        asyncio.run(main())
    assert e.value.status == 8


def test_64_jobs_in_flight(tiny_path, medium_path):
    with accel.open("emu:cores=2,max_inflight=64") as d:
        m = d.load(str(medium_path))
        xs = [rand((512, 512), i) for i in range(64)]
        m.run(xs[0])
        s0 = d.stats()
        futs = [m.run_async(x) for x in xs]
        pending = sum(not f.done() for f in futs)
        assert pending >= 32, pending  # they really are in flight together
        results = [f.result(timeout=60)[0] for f in futs]
        # a future completes in the job's completion callback, just before the device counts the job
        # as completed: let the counters settle
        s1 = settle(d)
        assert s1["jobs_submitted"] - s0["jobs_submitted"] == 64
        assert s1["jobs_completed"] - s0["jobs_completed"] == 64
        for x, y in zip(xs[:4], results[:4]):
            assert np.array_equal(y, m.run(x)[0])


@pytest.mark.emulator
def test_default_max_inflight_is_16(dev):
    assert dev.info.max_inflight == 16


def test_4x_max_inflight_jobs(dev, tiny):
    """The submission past max_inflight waits for a free slot; all 4 x max_inflight complete."""
    xs = [rand((1, 16), i) for i in range(4 * dev.info.max_inflight)]
    futs = [tiny.run_async(x) for x in xs]
    _done, not_done = concurrent.futures.wait(futs, timeout=30)
    assert not not_done
    for f, x in zip(futs, xs):
        assert np.array_equal(f.result()[0], tiny.run(x)[0])


def test_done_callbacks_called_once_with_the_future(tiny):
    calls = []
    lock = threading.Lock()
    futs = [tiny.run_async(rand((1, 16), i)) for i in range(16)]
    for f in futs:
        f.add_done_callback(lambda fut: (lock.acquire(), calls.append(fut), lock.release()))
    concurrent.futures.wait(futs, timeout=10)
    deadline = time.monotonic() + 5
    while len(calls) < 16 and time.monotonic() < deadline:
        time.sleep(0.005)
    assert sorted(map(id, calls)) == sorted(map(id, futs))


def test_callback_on_done_future_runs_immediately(tiny):
    f = tiny.run_async(rand((1, 16), 1))
    f.result(timeout=10)
    seen = []
    f.add_done_callback(seen.append)
    assert seen == [f]


def test_callbacks_in_completion_order_on_one_core(tiny_path, slow_path):
    """Callbacks attached before their jobs end run on accel's callback thread in completion order (one
    attached to a future already done runs at once on the caller's thread, as concurrent.futures has
    it, and may so overtake callbacks still queued: those are told apart by their thread)."""
    with accel.open("emu:cores=1") as d:
        m = d.load(str(tiny_path))
        ran = []  # (job index, ran on the callback thread)
        futs = []
        slow = d.load(str(slow_path))
        blockers = [slow.run_async(rand((512, 512), i)) for i in range(6)]  # most callbacks attach in time
        for i in range(32):
            f = m.run_async(rand((1, 16), i))
            f.add_done_callback(lambda fut, i=i: ran.append((i, threading.current_thread().name)))
            futs.append(f)
        concurrent.futures.wait(futs + blockers, timeout=10)
        deadline = time.monotonic() + 5
        while len(ran) < 32 and time.monotonic() < deadline:
            time.sleep(0.005)
        assert sorted(i for i, _ in ran) == list(range(32))
        queued = [i for i, thread in ran if thread == "accel-callbacks"]
        assert queued == sorted(queued) and queued, ran
        assert all(thread in ("accel-callbacks", threading.main_thread().name) for _, thread in ran), ran


def test_priority_runs_first(slow_path, tiny_path):
    with accel.open("emu:cores=1") as d:
        slow, tiny = d.load(str(slow_path)), d.load(str(tiny_path))
        order = []
        blocker = slow.run_async(rand((512, 512), 1))  # occupies the only core
        deadline = time.monotonic() + 10
        while not blocker.running() and time.monotonic() < deadline:
            time.sleep(0.001)
        futs = []
        for i in range(6):
            prio = 200 if i % 2 else 0
            f = tiny.run_async(rand((1, 16), i), priority=prio)
            f.add_done_callback(lambda fut, p=prio: order.append(p))
            futs.append(f)
        blocker.result(timeout=30)
        concurrent.futures.wait(futs, timeout=10)
        deadline = time.monotonic() + 5
        while len(order) < 6 and time.monotonic() < deadline:
            time.sleep(0.005)
        assert order == [200, 200, 200, 0, 0, 0]


def test_callback_exception_does_not_break_others(tiny):
    seen = []

    def bad(fut):
        raise RuntimeError("callback failure (expected by the test)")

    f1 = tiny.run_async(rand((1, 16), 1))
    f1.add_done_callback(bad)
    f2 = tiny.run_async(rand((1, 16), 2))
    f2.add_done_callback(seen.append)
    f1.result(timeout=10)
    f2.result(timeout=10)
    deadline = time.monotonic() + 5
    while not seen and time.monotonic() < deadline:
        time.sleep(0.005)
    assert seen == [f2]
    assert tiny.run(rand((1, 16), 3))[0].shape == (1, 8)


def test_result_timeout_then_result(slow):
    # Queued behind runs of the slow model: a 1 ms wait cannot see it done, however late the waiting thread runs.
    ahead = [slow.run_async(rand((512, 512), 40 + i)) for i in range(6)]
    f = slow.run_async(rand((512, 512), 4))
    with pytest.raises(concurrent.futures.TimeoutError):
        f.result(timeout=0.001)
    assert f.result(timeout=60)[0].shape == (512, 512)
    for a in ahead:
        a.result(timeout=60)


def test_job_timeout_sets_exception(slow):
    f = slow.run_async(rand((512, 512), 5), timeout=1e-4)
    e = f.exception(timeout=30)
    assert type(e) is accel.TimeoutError and e.status == 8
    with pytest.raises(accel.TimeoutError):
        f.result()


def test_as_completed_and_wait(tiny):
    futs = [tiny.run_async(rand((1, 16), i)) for i in range(10)]
    got = list(concurrent.futures.as_completed(futs, timeout=10))
    assert set(map(id, got)) == set(map(id, futs))


def _fill_one_core(d, slow, n):
    return [slow.run_async(rand((512, 512), 100 + i)) for i in range(n)]


def test_cancel_a_queued_job(slow_path):
    with accel.open("emu:cores=1") as d:
        slow = d.load(str(slow_path))
        slow.run(rand((512, 512), 0))
        gc.collect()
        base = d.stats()
        running = _fill_one_core(d, slow, 2)
        queued = slow.run_async(rand((512, 512), 9))
        deadline = time.monotonic() + 10
        while not running[0].running() and time.monotonic() < deadline:
            time.sleep(0.001)
        assert running[0].running() and not queued.running()
        assert running[0].cancel() is False  # a running job cannot be cancelled; it completes
        assert queued.cancel() is True
        assert queued.cancelled() and queued.done()
        with pytest.raises(concurrent.futures.CancelledError):
            queued.result(timeout=1)
        for f in running:
            assert f.result(timeout=30)[0].shape == (512, 512)
        del running, queued, f
        s = settle(d, base)
        assert s["jobs_completed"] == s["jobs_submitted"]
        assert s["live_buffers"] == base["live_buffers"]
        assert s["bytes_in_use"] == base["bytes_in_use"]
        # the cancelled job never ran: the device is still correct afterwards
        x = rand((512, 512), 10)
        assert np.array_equal(slow.run(x)[0], slow.run(x)[0])


def test_cancel_a_finished_job_is_refused(tiny):
    f = tiny.run_async(rand((1, 16), 1))
    f.result(timeout=10)
    assert f.cancel() is False
    assert not f.cancelled()


def test_dropped_futures_leak_nothing(dev1, tiny_path):
    dev, tiny = dev1, dev1.load(str(tiny_path))
    x = rand((1, 16), 1)
    tiny.run(x)
    gc.collect()
    base = dev.stats()
    refs = []
    for _i in range(300):
        f = tiny.run_async(x)
        refs.append(weakref.ref(f))
        del f
    s = settle(dev, base, timeout=10)
    assert s["jobs_submitted"] - base["jobs_submitted"] == 300
    assert s["jobs_completed"] == s["jobs_submitted"]
    assert s["live_buffers"] == base["live_buffers"]
    assert s["bytes_in_use"] == base["bytes_in_use"]
    gc.collect()
    assert sum(r() is not None for r in refs) == 0


def test_dropped_futures_with_numpy_inputs_leak_nothing(dev1, two_io_path):
    dev, two_io = dev1, dev1.load(str(two_io_path))
    a, b = rand((1, 3, 8, 8), 1), rand((2, 8), 2)
    two_io.run([a, b])
    gc.collect()
    base = dev.stats()
    for _ in range(200):
        two_io.run_async({"a": a, "b": b})
    s = settle(dev, base, timeout=10)
    assert s["jobs_completed"] == s["jobs_submitted"]
    assert s["live_buffers"] == base["live_buffers"]
    assert s["bytes_in_use"] == base["bytes_in_use"]


def test_dropped_slow_futures_leak_nothing(dev, slow):
    x = rand((512, 512), 1)
    # warm up both cores at once: one workspace per job of the model running at the same time is kept
    pair = [slow.run_async(x) for _ in range(2)]
    for f in pair:
        f.result(timeout=30)
    del pair, f
    gc.collect()
    base = dev.stats()
    for _ in range(6):
        slow.run_async(x)  # dropped while queued or running
    s = settle(dev, base, timeout=30)
    assert s["jobs_completed"] == s["jobs_submitted"]
    assert s["live_buffers"] == base["live_buffers"]
    assert s["bytes_in_use"] == base["bytes_in_use"]


def test_future_from_thread_pool_style_usage(tiny):
    """Futures mix with executor futures in concurrent.futures.wait."""
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        futs = [tiny.run_async(rand((1, 16), i)) for i in range(4)]
        futs += [pool.submit(lambda: 1) for _ in range(4)]
        done, not_done = concurrent.futures.wait(futs, timeout=10)
    assert not not_done and len(done) == 8


def test_callback_chain_submits_from_a_callback(tiny):
    """A done-callback may submit the next job (it runs on accel's callback thread): no deadlock."""
    done = threading.Event()
    results = []

    def step(fut):
        results.append(fut.result()[0].copy())
        if len(results) < 20:
            tiny.run_async(rand((1, 16), len(results))).add_done_callback(step)
        else:
            done.set()

    tiny.run_async(rand((1, 16), 0)).add_done_callback(step)
    assert done.wait(10)
    for i, y in enumerate(results):
        assert np.array_equal(y, tiny.run(rand((1, 16), i))[0])


def test_a_callback_may_submit_and_wait_on_a_full_device(tiny_path, slow_path):
    """Done-callbacks run on accel's callback thread, not on the device's completion thread: with
    max_inflight=1 a callback's submission waits for the slot its own job has given back, and it may
    wait for the result."""
    with accel.open("emu:cores=1,max_inflight=1") as d:
        m = d.load(str(tiny_path))
        slow = d.load(str(slow_path))
        seen = []
        ev = threading.Event()

        def cb(fut):
            try:
                seen.append(m.run_async(rand((1, 16), 1)).result(10)[0].copy())
            except BaseException as e:  # noqa: BLE001
                seen.append(e)
            ev.set()

        f = slow.run_async(rand((512, 512), 0))  # slow: the callback is attached long before it ends
        f.add_done_callback(cb)
        assert not f.done()
        assert ev.wait(20)
        assert len(seen) == 1 and isinstance(seen[0], np.ndarray), seen
        assert np.array_equal(seen[0], m.run(rand((1, 16), 1))[0])


def test_inflight_counts_run_async_jobs_until_their_callback_ran(dev, slow):
    # accel.futures.inflight() is the core's count of jobs with a completion callback: a slow job
    # counts while it runs, and wait_inflight() returns once its callback (which completes the
    # future) has returned.
    from accel import futures

    assert futures.wait_inflight(10)
    f = slow.run_async(rand((512, 512), 3))
    assert futures.inflight() == 1
    assert not futures.wait_inflight(0)
    assert futures.wait_inflight(30)
    assert futures.inflight() == 0
    assert f.done()
