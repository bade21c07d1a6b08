"""Outputs given to Model.run, run_async and run_batch are checked by the memory they span, not by which object
holds it: two Device.wrap tensors of one array, DeviceTensors made over one buffer, a wrap of a device tensor's
memory, an input over an output's bytes are refused before anything is submitted (InvalidArgumentError naming
both), whole or partial overlaps alike; distinct memory, adjacent too, is accepted and gives run's results.

The tests that wrap host memory open the emulator (which imports memory on every machine); those over device
buffers run on the device under test."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import accel
from accel.runtime.memory_ranges import MemoryRange, first_conflict
from conftest import rand
from test_wrap import ALIGN, aligned_empty

HEX = "0x[0-9a-f]+"


@pytest.fixture
def emu():
    with accel.open("emu:cores=2") as d:
        yield d


def at(dev, memory, offset, info):
    """A DeviceTensor of `info`'s shape and dtype over `memory` (aligned host bytes) from `offset`."""
    return dev.wrap(memory[offset:offset + info.nbytes], info.shape, info.dtype)


def address(memory, offset=0):
    return f"0x{memory.ctypes.data + offset:x}"


def submitted(dev):
    return dev.stats()["jobs_submitted"]


def refused(call, message, dev):
    """`call()` raises InvalidArgumentError with exactly `message` (a regex) and submits nothing."""
    before = submitted(dev)
    with pytest.raises(accel.InvalidArgumentError, match=f"^{message}$"):
        call()
    assert submitted(dev) == before


def one_memory_pairs(dev, info):
    """Ways to make two DeviceTensors of `info` over one memory (host memory kept alive by the tensors)."""
    memory = aligned_empty((info.nbytes,), np.uint8)
    yield at(dev, memory, 0, info), at(dev, memory, 0, info)  # two wraps of one array
    t = dev.empty(info.shape, info.dtype)
    yield t, dev.wrap(np.asarray(t))  # a wrap of a device tensor's memory
    yield t, accel.DeviceTensor(t.buffer, info.shape, info.dtype, None, dev)  # two tensors of one buffer


# ---- run_batch -------------------------------------------------------------------------------------------------

def test_run_batch_refuses_two_items_writing_one_memory(emu, cnn_path):
    model = emu.load(str(cnn_path))
    (o,) = model.outputs
    xs = [rand(model.inputs[0].shape, i) for i in range(3)]
    for a, b in one_memory_pairs(emu, o):
        message = (f"run_batch: item 0's output 'probabilities' and item 2's output 'probabilities' overlap in "
                   f"memory \\({o.nbytes} bytes from {HEX}\\): each output needs memory of its own")
        refused(lambda a=a, b=b: model.run_batch(xs, [[a], None, [b]]), message, emu)
        refused(lambda a=a, b=b: model.run_batch(xs, [{"probabilities": a}, None, b]), message, emu)
    t = emu.empty(o.shape, o.dtype)
    refused(lambda: model.run_batch(xs, [[t], None, [t]]), message, emu)  # the very same tensor, as before


def test_run_batch_refuses_partly_overlapping_outputs(emu, two_io_path):
    model = emu.load(str(two_io_path))
    conv, mm = model.outputs  # conv_out: 1024 bytes
    memory = aligned_empty((4096,), np.uint8)
    outs = [[at(emu, memory, 0, conv), at(emu, memory, 3072, mm)],
            [at(emu, memory, 512, conv), at(emu, memory, 3136, mm)]]
    items = [[rand(i.shape, k) for i in model.inputs] for k in range(2)]
    refused(lambda: model.run_batch(items, outs),
            f"run_batch: item 0's output 'conv_out' and item 1's output 'conv_out' overlap in memory \\(512 bytes "
            f"from {address(memory, 512)}\\): each output needs memory of its own", emu)
    outs[1] = {"mm_out": at(emu, memory, 1024 - ALIGN, mm), "conv_out": at(emu, memory, 1024, conv)}
    refused(lambda: model.run_batch(items, outs),
            f"run_batch: item 0's output 'conv_out' and item 1's output 'mm_out' overlap in memory "
            f"\\({mm.nbytes} bytes from {address(memory, 1024 - ALIGN)}\\): each output needs memory of its own", emu)


def test_run_batch_refuses_an_output_over_another_items_input(emu, tiny_path):
    model = emu.load(str(tiny_path))
    (i,), (o,) = model.inputs, model.outputs  # x: 64 bytes, y: 32 bytes
    memory = aligned_empty((i.nbytes,), np.uint8)
    read = at(emu, memory, 0, i)  # read while item 0 runs
    written = at(emu, memory, 0, o)
    other = rand(i.shape, 1)
    read_meanwhile = (f"overlap in memory \\(32 bytes from {address(memory)}\\): a job would write memory that is "
                      f"read meanwhile; give the output memory of its own")
    refused(lambda: model.run_batch([read, other], [None, [written]]),
            f"run_batch: item 0's input 'x' and item 1's output 'y' {read_meanwhile}", emu)
    refused(lambda: model.run_batch([read], [[written]]),
            f"run_batch: item 0's input 'x' and item 0's output 'y' {read_meanwhile}", emu)
    # A NumPy input is copied when its job is submitted: over another item's output it may be copied while that
    # item's job writes it.
    copied = memory.view(i.dtype).reshape(i.shape)
    refused(lambda: model.run_batch([other, copied], [[written], None]),
            f"run_batch: item 0's output 'y' and item 1's input 'x' {read_meanwhile}", emu)


def test_run_batch_takes_distinct_and_adjacent_memory(emu, two_io_path, tiny_path):
    model = emu.load(str(two_io_path))
    conv, mm = model.outputs
    memory = aligned_empty((4096,), np.uint8)
    outs = [[at(emu, memory, 0, conv), at(emu, memory, 2048, mm)],
            [at(emu, memory, 1024, conv), at(emu, memory, 2048 + ALIGN, mm)]]  # end to end
    items = [[rand(i.shape, k) for i in model.inputs] for k in range(2)]
    shared = emu.tensor(items[0][1])  # inputs may share memory: they are only read
    items[1][1] = items[0][1] = shared
    got = model.run_batch(items, outs)
    for item, result, given in zip(items, got, outs):
        for r, want, t in zip(result, model.run(item), given):
            np.testing.assert_array_equal(r, want)
            assert np.shares_memory(r, np.asarray(t))
    # An item's NumPy input over its own output: copied before its job writes, as run does.
    tiny = emu.load(str(tiny_path))
    (i,), (o,) = tiny.inputs, tiny.outputs
    host = aligned_empty((i.nbytes,), np.uint8)
    x = host.view(i.dtype).reshape(i.shape)
    x[...] = rand(i.shape, 3)
    want = tiny.run(x.copy())[0]
    (got,) = tiny.run_batch([x], [[at(emu, host, 0, o)]])
    np.testing.assert_array_equal(got[0], want)
    x[...] = rand(i.shape, 3)
    np.testing.assert_array_equal(tiny.run(x, [at(emu, host, 0, o)])[0], want)


# ---- run and run_async --------------------------------------------------------------------------------------

@pytest.mark.parametrize("api", ["run", "run_async"])
def test_one_job_refuses_partly_overlapping_outputs_and_inputs(emu, two_io_path, api):
    model = emu.load(str(two_io_path))
    (a, b), (conv, mm) = model.inputs, model.outputs  # a: 768 bytes, conv_out: 1024
    call = getattr(model, api)
    memory = aligned_empty((4096,), np.uint8)
    inputs = [rand(a.shape, 0), rand(b.shape, 1)]
    refused(lambda: call(inputs, [at(emu, memory, 0, conv), at(emu, memory, 960, mm)]),
            f"output 'conv_out' and output 'mm_out' overlap in memory \\(40 bytes from {address(memory, 960)}\\): "
            f"each output needs memory of its own", emu)
    wrapped_a = at(emu, memory, 0, a)
    np.asarray(wrapped_a)[...] = inputs[0]
    refused(lambda: call([wrapped_a, inputs[1]], {"conv_out": at(emu, memory, 512, conv),
                                                  "mm_out": at(emu, memory, 2048, mm)}),
            f"input 'a' and output 'conv_out' overlap in memory \\(256 bytes from {address(memory, 512)}\\): a job "
            f"would write memory that is read meanwhile; give the output memory of its own", emu)
    got = call([wrapped_a, inputs[1]], [at(emu, memory, 768, conv), at(emu, memory, 1792, mm)])  # adjacent
    got = got if api == "run" else got.result(timeout=30)
    for g, want in zip(got, model.run(inputs)):
        np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("timeout", [None, 30])  # the cores' fast path, and the Python path
def test_run_words_one_buffer_as_input_and_output_alike(dev, tiny, two_io, timeout):
    (i,), (o,) = tiny.inputs, tiny.outputs
    t = dev.empty(i.shape, i.dtype)
    view = accel.DeviceTensor(t.buffer, o.shape, o.dtype, None, dev)
    refused(lambda: tiny.run(t, [view], timeout=timeout),
            f"input 'x' and output 'y' overlap in memory \\({o.nbytes} bytes from {HEX}\\): a job would "
            f"write memory that is read meanwhile; give the output memory of its own", dev)
    conv, mm = two_io.outputs
    big = dev.empty(conv.shape, conv.dtype)
    outs = [big, accel.DeviceTensor(big.buffer, mm.shape, mm.dtype, None, dev)]
    inputs = [rand(x.shape, k) for k, x in enumerate(two_io.inputs)]
    refused(lambda: two_io.run(inputs, outs, timeout=timeout),
            f"output 'conv_out' and output 'mm_out' overlap in memory \\({mm.nbytes} bytes from {HEX}\\): each "
            f"output needs memory of its own", dev)


# ---- the check itself ------------------------------------------------------------------------------------------

def _conflicts(a, b):
    meet = max(a.start, b.start) < min(a.end, b.end)
    if not meet or not (a.writes or b.writes):
        return False
    read, other = (b, a) if a.writes else (a, b)
    return not (read.copied and read.job == other.job)


def test_first_conflict_finds_what_comparing_every_pair_finds():
    rng = np.random.default_rng(31)
    for trial in range(3000):
        n = int(rng.integers(1, 12))
        ranges = []
        for k in range(n):
            start = int(rng.integers(0, 60))
            writes = bool(rng.random() < 0.3)
            ranges.append(MemoryRange(start, start + int(rng.integers(0, 12)), int(rng.integers(0, 3)), writes,
                                      not writes and bool(rng.random() < 0.5), f"r{k}"))
        expected = [(a, b) for a, b in itertools.combinations(ranges, 2) if _conflicts(a, b)]
        found = first_conflict(ranges)
        if not expected:
            assert found is None, (trial, ranges)
        else:
            assert found is not None and found in expected, (trial, ranges, found)
