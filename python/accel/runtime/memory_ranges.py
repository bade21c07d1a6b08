"""Whether the memory jobs write meets memory that other tensors of the same jobs hold: decided by byte
ranges (address and extent), never by which Python object holds the memory. Two ``Device.wrap`` tensors of
one array, DeviceTensors made over one CoreBuffer, a NumPy view of a device tensor's memory: different
objects, one memory. ``Model.run``, ``run_async`` and ``run_batch`` check their outputs here before
anything is submitted (libaccel checks the same within one job, but cannot see the jobs of a batch together).

A range belongs to a job (its ``job``: an item of run_batch, 0 for a single run). An output range conflicts
with any other range it meets; an input range read while its job runs (a DeviceTensor) with every output
range it meets; an input range copied into device memory when its job is submitted (a NumPy array) only
with the outputs of other jobs, which may be running while it is copied (its own job writes after the copy).
"""
from __future__ import annotations

from typing import Any, Iterable, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from ..errors import InvalidArgumentError

__all__ = ["MemoryRange", "buffer_range", "array_range", "first_conflict", "check_disjoint"]


class MemoryRange(NamedTuple):
    """Bytes ``[start, end)`` of host-visible memory that a job writes or reads."""

    start: int
    end: int
    job: int
    writes: bool  # an output
    copied: bool  # an input copied when its job is submitted, not read while it runs
    what: str  # how a message names it: "output 'y'", "item 3's input 'x'"


def buffer_range(buffer: Any, nbytes: int, job: int, writes: bool, what: str) -> MemoryRange:
    """The first ``nbytes`` of a CoreBuffer (where a DeviceTensor of it lies), at least one byte: libaccel
    counts two buffers at one address as one memory whatever their sizes."""
    start = int(buffer.address)
    return MemoryRange(start, start + max(nbytes, 1), job, writes, False, what)


def array_range(array: np.ndarray, job: int, what: str) -> MemoryRange:
    """The bytes a NumPy input spans, from its lowest to its highest byte whatever its strides (empty for an
    array of no elements), read when its job is submitted."""
    start = end = int(array.__array_interface__["data"][0])
    if array.size:
        for n, stride in zip(array.shape, array.strides):
            if stride < 0:
                start += (n - 1) * stride
            else:
                end += (n - 1) * stride
        end += array.itemsize
    return MemoryRange(start, end, job, False, True, what)


def _conflict(a: MemoryRange, b: MemoryRange) -> bool:
    """Whether two ranges that meet may not: one is written, and the other is not an input its own job
    copied before it writes."""
    output, other = (a, b) if a.writes else (b, a)
    return output.writes and not (other.copied and other.job == output.job)


def first_conflict(ranges: Sequence[MemoryRange]) -> Optional[Tuple[MemoryRange, MemoryRange]]:
    """Two ranges that meet and may not (in the order given), or None.

    One pass in order of address: with no conflict found so far the outputs seen are disjoint, so only the
    last of them can meet the next range; among the inputs, the one reaching furthest of those read while
    their job runs, and of those copied the two reaching furthest for two different jobs, stand for all."""
    order = sorted((i for i in range(len(ranges)) if ranges[i].end > ranges[i].start), key=lambda i: ranges[i].start)
    last_output: Optional[int] = None
    read_in_run: Optional[int] = None  # an input read while its job runs, reaching furthest
    copied: List[int] = []  # inputs copied at submission: the furthest reaching, then the furthest of another job

    def pair(i: int, j: int) -> Tuple[MemoryRange, MemoryRange]:
        return (ranges[i], ranges[j]) if i < j else (ranges[j], ranges[i])

    for i in order:
        r = ranges[i]
        candidates = [] if last_output is None else [last_output]
        if r.writes:
            candidates += [j for j in (read_in_run, *copied) if j is not None]
        for j in candidates:
            if ranges[j].end > r.start and _conflict(ranges[j], r):
                return pair(i, j)
        if r.writes:
            if last_output is None or r.end > ranges[last_output].end:
                last_output = i
        elif not r.copied:
            if read_in_run is None or r.end > ranges[read_in_run].end:
                read_in_run = i
        else:
            copied = _furthest_of_two_jobs(ranges, [*copied, i])
    return None


def _furthest_of_two_jobs(ranges: Sequence[MemoryRange], indices: Iterable[int]) -> List[int]:
    """Of ``indices``, the range reaching furthest, then the one reaching furthest of another job (a copied
    input meets an output of its own job harmlessly, so one of another job must be kept as well)."""
    by_end = sorted(indices, key=lambda j: ranges[j].end, reverse=True)
    kept = by_end[:1]
    for j in by_end[1:]:
        if ranges[j].job != ranges[kept[0]].job:
            kept.append(j)
            break
    return kept


def check_disjoint(ranges: Sequence[MemoryRange], where: str = "") -> None:
    """Raises InvalidArgumentError naming two ranges that meet and may not (``where`` before the message,
    e.g. ``"run_batch: "``)."""
    found = first_conflict(ranges)
    if found is None:
        return
    a, b = found
    start, end = max(a.start, b.start), min(a.end, b.end)
    why = ("each output needs memory of its own" if a.writes and b.writes
           else "a job would write memory that is read meanwhile; give the output memory of its own")
    raise InvalidArgumentError(f"{where}{a.what} and {b.what} overlap in memory ({end - start} bytes from "
                               f"0x{start:x}): {why}")
