"""What real programs do to a library, each case in a child process with a time limit (a hang fails the
test instead of the run), on the front-end under test (the child inherits ACCEL_FRONTEND): fork(),
done-callbacks that block, a flood of Ctrl-C, files that are not what they seem, sizes past any device.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import accel
from conftest import DEVICE_URI

CHILD_LIMIT = 60  # seconds: every case ends far sooner, or hangs


def run_child(body: str, *, env=None, limit=CHILD_LIMIT) -> subprocess.CompletedProcess:
    """Runs `body` in a fresh interpreter; fails on a timeout, a crash or a nonzero exit."""
    script = "import os, sys, time, json, numpy as np, accel\n" + textwrap.dedent(body)
    full_env = dict(os.environ, **(env or {}))
    try:
        r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=limit,
                           env=full_env)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the child hung for {limit} s; its output: {e.stdout!r} {e.stderr!r}")
    assert "Fatal Python error" not in r.stderr and "Segmentation" not in r.stderr, r.stderr[-3000:]
    assert r.returncode == 0, (r.returncode, r.stdout[-2000:], r.stderr[-3000:])
    return r


def last_json(r: subprocess.CompletedProcess):
    """The child's last line, a JSON object (printed for `pytest -s`: the figures of the closing notes)."""
    out = json.loads(r.stdout.strip().splitlines()[-1])
    print(f"\n[{accel.frontend}] {out}")
    return out


# ---------------------------------------------------------------------------------------------------
# fork
# ---------------------------------------------------------------------------------------------------

def test_inherited_handles_refuse_use_in_a_forked_child(tiny_path, slow_path):
    """Before: the child's Model.run never returned and Future.result(timeout) raised an empty
    TimeoutError. Now every use of an inherited handle raises ClosedError naming fork(), at once; a
    device the child opens works; the parent goes on unharmed."""
    r = run_child(f"""
        dev = accel.open("emu:cores=1")
        tiny = dev.load({str(tiny_path)!r})
        slow = dev.load({str(slow_path)!r})
        x = np.ones((1, 16), np.float32)
        t = dev.tensor(x)
        pending = [slow.run_async(np.ones((512, 512), np.float32)) for _ in range(4)]
        pid = os.fork()
        if pid == 0:
            out = {{}}
            calls = {{"run": lambda: tiny.run([x]), "run_async": lambda: tiny.run_async([x]).result(5),
                      "future": lambda: pending[-1].result(5), "empty": lambda: dev.empty((4,)),
                      "tensor": lambda: dev.tensor(x), "load": lambda: dev.load({str(tiny_path)!r}),
                      "run_tensor": lambda: tiny.run([t])}}
            for name, call in calls.items():
                t0 = time.monotonic()
                try:
                    call()
                    out[name] = "worked"
                except accel.ClosedError as e:
                    out[name] = ("ClosedError", "before fork()" in str(e), time.monotonic() - t0)
            with accel.open("emu") as mine:
                y = mine.load({str(tiny_path)!r}).run([x])[0]
            out["own_device"] = y.tolist()
            print(json.dumps(out), flush=True)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        assert status == 0, status
        assert all(f.result(30)[0].shape == (512, 512) for f in pending)
        print(json.dumps({{"parent": tiny.run([x])[0].tolist()}}), flush=True)
    """)
    lines = [json.loads(line) for line in r.stdout.strip().splitlines()]
    print(f"\n[{accel.frontend}] {lines}")
    child, parent = lines[0], lines[1]
    for name in ("run", "run_async", "future", "empty", "tensor", "load", "run_tensor"):
        kind, names_fork, seconds = child[name]
        assert kind == "ClosedError" and names_fork and seconds < 1.0, (name, child[name])
    assert child["own_device"] == parent["parent"]


def test_a_forked_child_exits_without_waiting_for_the_parents_jobs(slow_path):
    """Before: a child that never touched accel took 15 s to exit when the parent had jobs in flight (the
    exit drain waited for jobs that were not its own)."""
    r = run_child(f"""
        dev = accel.open("emu:cores=1")
        slow = dev.load({str(slow_path)!r})
        futs = [slow.run_async(np.ones((512, 512), np.float32)) for _ in range(8)]
        t0 = time.monotonic()
        pid = os.fork()
        if pid == 0:
            sys.exit(0)  # the normal exit path: atexit hooks, the core's drain, finalization
        os.waitpid(pid, 0)
        child_seconds = time.monotonic() - t0
        for f in futs:
            f.result(60)
        print(json.dumps({{"child_seconds": child_seconds, "inflight": accel.futures.inflight()}}))
    """)
    out = last_json(r)
    assert out["child_seconds"] < 3.0, out
    assert out["inflight"] == 0


def test_a_fork_pool_works_with_devices_opened_in_the_workers(tiny_path):
    """A multiprocessing 'fork' pool, the parent holding an open device with a model loaded: workers that
    open their own device compute what the parent does; a worker that uses the parent's model gets the
    ClosedError, not a hang."""
    r = run_child(f"""
        import multiprocessing as mp
        dev = accel.open("emu")
        tiny = dev.load({str(tiny_path)!r})
        x = np.arange(16, dtype=np.float32).reshape(1, 16)
        expected = tiny.run([x])[0].tolist()

        def own(i):
            with accel.open("emu") as d:
                return d.load({str(tiny_path)!r}).run([x])[0].tolist()

        def inherited(i):
            try:
                tiny.run([x])
                return "worked"
            except accel.ClosedError as e:
                return type(e).__name__

        with mp.get_context("fork").Pool(2) as pool:
            owns = pool.map(own, range(4))
            inherits = pool.map(inherited, range(4))
        print(json.dumps({{"own_ok": all(o == expected for o in owns), "inherited": inherits}}))
    """)
    out = last_json(r)
    assert out["own_ok"] and out["inherited"] == ["ClosedError"] * 4, out


def test_a_lock_held_by_another_thread_at_the_fork_is_free_in_the_child(tiny_path):
    """The compile cache's and the callback thread's locks are the child's own: a fork() while another
    thread of the parent holds one does not hang the child's next load or callback."""
    r = run_child(f"""
        import threading
        from accel import compile_cache
        from accel.runtime import _callbacks
        held, release = threading.Event(), threading.Event()

        def holder():
            with compile_cache._lock, _callbacks._lock:
                held.set()
                release.wait()

        threading.Thread(target=holder, daemon=True).start()
        held.wait()
        pid = os.fork()
        if pid == 0:
            with accel.open("emu") as dev:
                m = dev.load({str(tiny_path)!r})
                done = threading.Event()
                m.run_async(np.ones((1, 16), np.float32)).add_done_callback(lambda f: done.set())
                ok = done.wait(10)
            print(json.dumps({{"child": ok}}), flush=True)
            os._exit(0)
        release.set()
        _, status = os.waitpid(pid, 0)
        print(json.dumps({{"status": status}}))
    """)
    lines = [json.loads(line) for line in r.stdout.strip().splitlines()]
    print(f"\n[{accel.frontend}] {lines}")
    assert lines == [{"child": True}, {"status": 0}], lines


# ---------------------------------------------------------------------------------------------------
# done-callbacks
# ---------------------------------------------------------------------------------------------------

def test_a_done_callback_may_wait_for_another_future_of_the_same_device(tiny_path, slow_path):
    """Before: the callback ran on the device's completion thread, which the other future needed."""
    r = run_child(f"""
        import threading
        dev = accel.open("emu:cores=1")
        tiny, slow = dev.load({str(tiny_path)!r}), dev.load({str(slow_path)!r})
        got, done = [], threading.Event()
        second = None

        def cb(f):
            got.append(second.result(20)[0].shape)
            done.set()

        first = slow.run_async(np.ones((512, 512), np.float32))
        second = tiny.run_async(np.ones((1, 16), np.float32))
        first.add_done_callback(cb)
        print(json.dumps({{"done": done.wait(30), "got": got}}))
    """)
    out = last_json(r)
    assert out == {"done": True, "got": [[1, 8]]}, out


def test_a_done_callback_that_never_returns_does_not_stop_the_exit(slow_path):
    """Before: on the pybind11 front-end the interpreter crashed at exit (segmentation fault or abort in
    Py_FinalizeEx) when a done-callback was still running."""
    t0 = time.monotonic()
    r = run_child(f"""
        import threading
        dev = accel.open("emu:cores=1")
        slow = dev.load({str(slow_path)!r})
        entered = threading.Event()

        def forever(f):
            entered.set()
            threading.Event().wait()

        slow.run_async(np.ones((512, 512), np.float32)).add_done_callback(forever)
        assert entered.wait(30)
        later = [slow.run_async(np.ones((512, 512), np.float32)) for _ in range(2)]
        print("exiting", flush=True)
    """)
    assert "exiting" in r.stdout
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    seconds = time.monotonic() - t0
    print(f"\n[{accel.frontend}] exit with a callback that never returns: code 0 after {seconds:.1f} s")
    assert seconds < 40


# What a callback that never returns does, and where it is registered: a Future's done-callback (run on
# accel's callback thread) or a completion callback of the core itself (run on the driver's completion
# thread, inside the run core's hook). "blocks" waits in C with the GIL released; "loops" keeps running
# Python, dropping and taking the GIL, so the interpreter ends its thread inside the take at exit.
NEVER_RETURNING = {
    "blocks": "threading.Event().wait()",
    "loops": "while True: time.sleep(0.001)",
}
REGISTER = {
    "done-callback": """
        slow.run_async(np.ones((512, 512), np.float32)).add_done_callback(lambda f: forever())
    """,
    "completion-callback": """
        core_model, core_device = slow._core, slow._core_device
        ins = [core_device.alloc(spec[5]) for spec in core_model.inputs()]
        outs = [core_device.alloc(spec[5]) for spec in core_model.outputs()]
        job = core_model.submit(ins, outs, lambda status, message, timing: forever())
    """,
}


@pytest.mark.parametrize("frontend", ["pybind", "cffi"])
@pytest.mark.parametrize("where", list(REGISTER))
@pytest.mark.parametrize("how", list(NEVER_RETURNING))
def test_a_callback_that_never_returns_cannot_hang_the_exit(slow_path, frontend, where, how):
    """Before: a completion callback that never returned held the exit for two of the drain's waits
    (5 s each) as a job on the device, then, on the pybind11 front-end, one that kept running Python
    crashed finalization (Fatal Python error: the GIL given up on a thread CPython ended). Now the exit
    drain, the run core's for both front-ends, waits for a running callback only as long as its wait
    for hooks (1 s), and exits 0 on each front-end (the Future's done-callbacks get accel's callback
    thread's 5 s)."""
    t0 = time.monotonic()
    r = run_child(f"""
        import threading
        dev = accel.open("emu:cores=1")
        slow = dev.load({str(slow_path)!r})
        entered = threading.Event()

        def forever():
            entered.set()
            {NEVER_RETURNING[how]}
        {textwrap.indent(textwrap.dedent(REGISTER[where]), " " * 8).strip()}
        assert entered.wait(30)
        later = [slow.run_async(np.ones((512, 512), np.float32)) for _ in range(2)]
        print("exiting", accel.frontend, flush=True)
    """, env={"ACCEL_FRONTEND": frontend}, limit=40)
    seconds = time.monotonic() - t0
    assert f"exiting {frontend}" in r.stdout
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    print(f"\n[{frontend}] exit with a {where} that {how} forever: code 0 after {seconds:.1f} s")
    limit = 20 if where == "done-callback" else 10
    assert seconds < limit, f"the exit took {seconds:.1f} s"


# ---------------------------------------------------------------------------------------------------
# Ctrl-C at any instant
# ---------------------------------------------------------------------------------------------------

def test_a_flood_of_sigint_leaks_nothing_and_keeps_the_counts(tiny_path):
    """SIGINT every few hundred microseconds while the main thread loads, allocates, copies and runs:
    whatever each KeyboardInterrupt cut short, once the models are dropped the device holds no buffer
    and no byte, and the in-flight count is back at zero (before: 96 MB leaked per interrupted load on
    cffi, and inflight() went negative on both front-ends). The handler raises KeyboardInterrupt only
    inside an operation, once per arming, so the harness's own bookkeeping is never cut short."""
    r = run_child(f"""
        import gc, threading, signal
        dev = accel.open("emu:cores=2")
        empty = dev.stats()
        model_bytes = open({str(tiny_path)!r}, "rb").read()
        tiny = dev.load(model_bytes)
        x = np.ones((1, 16), np.float32)
        armed = [False]

        def handler(signum, frame):
            if armed[0]:
                armed[0] = False
                raise KeyboardInterrupt

        signal.signal(signal.SIGINT, handler)
        stop = threading.Event()

        def flood():
            rng = np.random.default_rng(1)
            while not stop.is_set():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(float(rng.uniform(50e-6, 600e-6)))

        ops = [lambda: tiny.run([x]), lambda: tiny.run_async([x]).result(5), lambda: dev.load(model_bytes),
               lambda: dev.empty((1 << 16,)), lambda: dev.tensor(x), lambda: [tiny.run_async([x]) for _ in range(4)]]
        interrupted = completed = 0
        flooder = threading.Thread(target=flood, daemon=True)
        flooder.start()
        t_end = time.monotonic() + 6
        while time.monotonic() < t_end:
            for op in ops:
                try:
                    armed[0] = True
                    op()
                    armed[0] = False
                    completed += 1
                except KeyboardInterrupt:
                    interrupted += 1
        stop.set()
        flooder.join()
        assert accel.futures.wait_inflight(30)
        inflight = accel.futures.inflight()
        del tiny, ops
        for _ in range(3):
            gc.collect()
        time.sleep(0.2)
        gc.collect()
        after = dev.stats()
        print(json.dumps({{"interrupted": interrupted, "completed": completed, "inflight": inflight,
                           "live": [empty["live_buffers"], after["live_buffers"]],
                           "bytes": [empty["bytes_in_use"], after["bytes_in_use"]]}}))
    """, limit=120)
    out = last_json(r)
    assert out["interrupted"] > 50 and out["completed"] > 50, out
    assert out["inflight"] == 0, out
    assert out["live"][0] == out["live"][1] and out["bytes"][0] == out["bytes"][1], out


# ---------------------------------------------------------------------------------------------------
# files that are not what they seem
# ---------------------------------------------------------------------------------------------------

def _emu_driver() -> Path:
    return Path(accel.__file__).parent / "lib" / "accel-drivers" / "libaccel_driver_emu.so"


def test_a_fifo_named_like_a_driver_is_skipped(tmp_path):
    """Before: accel.backends() blocked forever in dlopen on it."""
    folder = tmp_path / "drivers"
    folder.mkdir()
    os.symlink(_emu_driver(), folder / "libaccel_driver_emu.so")
    os.mkfifo(folder / "libaccel_driver_fifo.so")
    (folder / "libaccel_driver_dir.so").mkdir()
    r = run_child("""
        print(json.dumps({"backends": accel.backends()}), flush=True)
        try:
            accel.open("fifo")
        except accel.AccelError as e:
            print(json.dumps({"error": str(e)}))
    """, env={"ACCEL_DRIVER_PATH": str(folder)}, limit=30)
    lines = [json.loads(line) for line in r.stdout.strip().splitlines()]
    print(f"\n[{accel.frontend}] {lines}")
    assert lines[0]["backends"] == ["emu"]
    assert "skipped" in lines[1]["error"] and "a FIFO" in lines[1]["error"], lines[1]
    info = subprocess.run([sys.executable, "-c", "import accel.cli; accel.cli.main()", "info", "--json"],
                          capture_output=True, text=True, timeout=30,
                          env=dict(os.environ, ACCEL_DRIVER_PATH=str(folder)))
    files = json.loads(info.stdout)["driver_files"]
    assert any("libaccel_driver_fifo.so (not used: " in f and "it is a FIFO, not a regular file" in f
               for f in files), files
    assert any("libaccel_driver_dir.so (not used: " in f and "it is a directory" in f for f in files), files


def test_the_compile_cache_trusts_no_entry(tmp_path, tiny_path, slow_path):
    """Before: a FIFO in the cache blocked dev.load, and an entry replaced by another valid model was loaded
    without a word. Now only regular files are read, and an entry whose recorded key or digest does not
    match is compiled again and rewritten."""
    cache = tmp_path / "cache"
    r = run_child(f"""
        from accel import compile_cache
        tiny_bytes = open({str(tiny_path)!r}, "rb").read()
        slow_bytes = open({str(slow_path)!r}, "rb").read()
        folder = compile_cache.cache_dir()
        dev = accel.open("emu")
        x = np.ones((1, 16), np.float32)
        expected = dev.load(tiny_bytes).run([x])[0].tolist()
        dev.load(slow_bytes)
        tiny_key = compile_cache.cache_key(tiny_bytes, None)
        slow_key = compile_cache.cache_key(slow_bytes, None)
        entry = folder / (tiny_key + ".entry")
        out = {{}}

        def load_tiny():
            compile_cache.clear_memory_cache()
            return dev.load(tiny_bytes).run([x])[0].tolist() == expected

        # another valid model's entry in its place
        entry.write_bytes((folder / (slow_key + ".entry")).read_bytes())
        out["swapped"] = load_tiny()
        out["rewritten"] = compile_cache._read_disk(tiny_key) is not None
        # the same .accm with a flipped byte
        data = bytearray(entry.read_bytes()); data[-7] ^= 0x40; entry.write_bytes(bytes(data))
        out["corrupted"] = load_tiny()
        # truncated
        entry.write_bytes(entry.read_bytes()[:100])
        out["truncated"] = load_tiny()
        # a FIFO
        entry.unlink(); os.mkfifo(entry)
        t0 = time.monotonic()
        out["fifo"] = load_tiny()
        out["fifo_seconds"] = time.monotonic() - t0
        print(json.dumps(out))
    """, env={"ACCEL_CACHE_DIR": str(cache)})
    out = last_json(r)
    assert out["swapped"] and out["rewritten"] and out["corrupted"] and out["truncated"] and out["fifo"], out
    assert out["fifo_seconds"] < 10, out


# ---------------------------------------------------------------------------------------------------
# sizes and limits
# ---------------------------------------------------------------------------------------------------

def test_a_shape_past_any_device_is_a_shape_error():
    """Before: pybind11's signature dump on one front-end, OverflowError on the other. Now the same class
    and message on both; a size the pool cannot hold is the device's OutOfMemoryError."""
    r = run_child(f"""
        dev = accel.open({DEVICE_URI!r})
        out = {{}}
        for name, shape in (("past", (2**32, 2**32)), ("pool", (2**20, 2**20))):
            try:
                dev.empty(shape, np.float32)
            except accel.AccelError as e:
                out[name] = [type(e).__name__, str(e)]
        print(json.dumps(out))
    """)
    out = last_json(r)
    assert out["past"] == ["ShapeError", "shape (4294967296, 4294967296) of float32 is 73786976294838206464 bytes, "
                                         "more than a device can address (at most 2**63 - 1)"], out
    assert out["pool"][0] == "OutOfMemoryError", out  # each device words it


def _expanded(n: int) -> bytes:
    """y = Expand(0.0, [n]) + x: folding computes n floats (a ConstantOfShape would not: _splat_weight below)."""
    from onnx import TensorProto, helper, numpy_helper

    g = helper.make_graph(
        [helper.make_node("Expand", ["zero", "s"], ["c"]), helper.make_node("Add", ["c", "x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([n], np.int64), "s"),
         numpy_helper.from_array(np.zeros(1, np.float32), "zero")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def _splat_weight(dims) -> bytes:
    """y = x @ ConstantOfShape(dims, 0.5): a weight made by ConstantOfShape, as some exporters write a large one."""
    from onnx import TensorProto, helper, numpy_helper

    g = helper.make_graph(
        [helper.make_node("ConstantOfShape", ["s"], ["w"], value=numpy_helper.from_array(np.array([0.5], np.float32))),
         helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, dims[0]])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(dims, np.int64), "s")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_constant_folding_has_a_budget(tmp_path):
    """Before: a 174-byte ONNX whose folding makes a 4 GB tensor took 20 s and 7.7 GB to compile. Now it is
    refused within seconds and without the memory, naming the node and the size; the limit is an option."""
    path = tmp_path / "huge.onnx"
    path.write_bytes(_expanded(1 << 30))
    small = tmp_path / "small.onnx"
    small.write_bytes(_expanded(1 << 10))  # 4 KiB folded
    r = run_child(f"""
        from accel import compiler

        def peak_rss_kib():  # VmHWM, not ru_maxrss: Linux carries pytest's peak across fork and exec into that
            return int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0])

        limits = {{}}
        for limit in (4096, 4095):
            try:
                compiler.compile_model({str(small)!r}, fold_limit=limit)
                limits[limit] = "compiled"
            except compiler.CompileError as e:
                limits[limit] = str(e)
        t0 = time.monotonic()
        try:
            compiler.compile_model({str(path)!r})
            message = None
        except compiler.CompileError as e:
            message = str(e)
        seconds = time.monotonic() - t0
        try:
            accel.open("emu").load({str(path)!r})
            load_error = None
        except accel.AccelError as e:
            load_error = type(e).__name__
        print(json.dumps({{"message": message, "seconds": seconds, "load_error": load_error, "limits": limits,
                           "max_rss_mb": peak_rss_kib() / 1024}}))
    """)
    out = last_json(r)
    assert out["message"] and "Expand" in out["message"] and "4294967296 bytes" in out["message"], out
    assert "fold_limit" in out["message"]
    assert out["seconds"] < 5 and out["max_rss_mb"] < 1024, out
    assert out["load_error"] == "UnsupportedError", out
    assert out["limits"]["4096"] == "compiled", out
    assert "past the constant-folding limit of 4095 bytes" in out["limits"]["4095"], out


def test_a_weight_made_by_constant_of_shape_is_not_held_to_the_fold_limit(tmp_path):
    """A ConstantOfShape weight (a 411 MB fc weight, in an exporter's VGG19) folds to one value broadcast, without
    the memory: it compiles under a fold limit far below its size, and computes what onnxruntime computes. Past what
    one ONNX file can hold as a weight (2 GiB) it is refused at once, naming the node and the size."""
    import onnxruntime as ort

    weight = _splat_weight([64, 128])  # 32 KiB
    x = np.random.default_rng(0).standard_normal((2, 64)).astype(np.float32)
    (y,) = accel.open("emu").load(accel.compiler.compile_model(weight, fold_limit=4096)).run(x)
    want = ort.InferenceSession(weight, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(np.asarray(y), want, rtol=1e-6, atol=1e-6)
    t0 = time.monotonic()
    with pytest.raises(accel.compiler.CompileError, match=r"'w' \(shape \[65536, 16384\]\), past the largest "
                                                          r"constant accel stores \(2147483648 bytes"):
        accel.compiler.compile_model(_splat_weight([1 << 16, 1 << 14]))  # 4 GiB
    assert time.monotonic() - t0 < 5


def test_host_memory_running_out_in_the_compiler_is_out_of_memory(tmp_path):
    """Before: a MemoryError while folding came out as ModelFormatError, a bad model file."""
    path = tmp_path / "small.onnx"
    path.write_bytes(_expanded(4))
    r = run_child(f"""
        from accel.compiler import folding

        def no_memory(*args, **kwargs):
            raise MemoryError()

        folding._evaluator = lambda: no_memory  # the host runs out of memory while folding
        try:
            accel.open("emu").load({str(path)!r})
            out = None
        except accel.AccelError as e:
            out = [type(e).__name__, str(e)]
        print(json.dumps(out))
    """, env={"ACCEL_CACHE_DIR": str(tmp_path / "cache")})
    out = last_json(r)
    assert out[0] == "OutOfMemoryError" and "out of host memory" in out[1], out


# ---------------------------------------------------------------------------------------------------
# messages
# ---------------------------------------------------------------------------------------------------

def test_the_driver_path_hint_and_compiler_shapes_read_plainly():
    """Before: NotFoundError's hint said ACCEL_DRIVER_PATH adds folders (it replaces the default one), and
    a Reshape message printed [np.int64(-2), np.int64(8)]."""
    r = run_child("""
        from onnx import TensorProto, helper, numpy_helper
        from accel import compiler
        out = {}
        try:
            accel.open("nosuchscheme")
        except accel.NotFoundError as e:
            out["hint"] = str(e)
        g = helper.make_graph([helper.make_node("Reshape", ["x", "s"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.array([-2, 8], np.int64), "s")])
        try:
            compiler.compile_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]))
        except compiler.CompileError as e:
            out["reshape"] = str(e)
        print(json.dumps(out))
    """)
    out = last_json(r)
    assert "replaces the default folder" in out["hint"], out
    assert "[-2, 8]" in out["reshape"] and "np.int64" not in out["reshape"], out


def test_device_load_takes_the_fold_limit_its_error_names(tmp_path, monkeypatch):
    """The folding limit's error names Device.load's fold_limit, and Device.load passes it to the compiler: the same
    model refused under 4095 bytes loads under 4096, and is then in the compile cache, which any limit takes (the
    limit decides only whether a model compiles, not what it compiles to)."""
    monkeypatch.setenv("ACCEL_CACHE_DIR", str(tmp_path / "cache"))
    accel.compile_cache.clear_memory_cache()
    small = tmp_path / "small.onnx"
    small.write_bytes(_expanded(1 << 10))  # 4 KiB folded
    with accel.open("emu") as dev:
        with pytest.raises(accel.UnsupportedError, match=r"past the constant-folding limit of 4095 bytes \(raise it: "
                                                         r"Device.load's fold_limit"):
            dev.load(str(small), fold_limit=4095)
        (y,) = dev.load(str(small), fold_limit=4096).run(np.ones(1, np.float32))
        assert y.shape == (1024,) and np.all(y == 1)
        dev.load(str(small), fold_limit=16)  # compiled already
        with pytest.raises(TypeError, match="fold_limit must be a number of bytes"):
            dev.load(str(small), fold_limit=-1)
        with pytest.raises(accel.InvalidArgumentError, match=r"fold_limit applies to .* models only; .* already "
                                                             r"compiled"):
            dev.load(accel.compiler.compile_model(str(small)), fold_limit=1 << 20)
