"""``Model.run_batch`` and ``Model.imap``: many runs of one model with a bounded number of jobs in flight.

Both submit each item as ``run_async`` does and keep a window of futures in submission order: once the
window is full, the oldest job is awaited before the next item is submitted, so results come back in item
order and the device always has the next jobs queued behind the running ones. Jobs of one model take about
the same time, so waiting on the oldest (rather than on whichever ends first) costs nothing in throughput.

Whatever ends a batch or a stream early (a job that fails, a bad item, the iterable raising, Ctrl-C, a
closed generator) first settles the window: jobs not started yet are cancelled (``Future.cancel``),
the started ones are awaited; so nothing is left running on the device and every buffer is freed
once the caller drops the results.

The window knows a model only through :class:`Submissions`: the checks and the submission of one item, which
the model hands over (Model.run_batch and Model.imap pass their own). So this module imports nothing of the model.
"""
from __future__ import annotations

import concurrent.futures
import operator
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Deque, Generator, Iterable, Iterator, List, Mapping, Optional, \
    Sequence, Tuple

import numpy as np

from .device_tensor import DeviceTensor
from ..errors import AccelError, InvalidArgumentError
from .memory_ranges import MemoryRange, check_disjoint

if TYPE_CHECKING:
    from .device import DeviceInfo
    from ..futures import Future

__all__ = ["Submissions", "optimal_jobs", "run_batch", "imap"]

# A job in the window: (its item's index, its future).
_Job = Tuple[int, "Future"]
# Outputs given for one item, checked: (their core buffers, the arrays run returns).
_Given = Tuple[List[Any], List[np.ndarray]]


@dataclass(frozen=True)
class Submissions:
    """What a window of submissions asks of a model, which the model hands over: the window calls these and
    nothing else of it. Each raises what ``Model.run`` raises for a bad argument.

    Attributes:
        info: the device's :class:`~accel.DeviceInfo` (its cores and ``max_inflight`` size the window).
        check_open: raises ClosedError once the device is closed.
        check_inputs: ``check_inputs(inputs)``: checks one item's inputs, allocating and copying nothing.
        input_ranges: ``input_ranges(inputs, job, prefix)``: the memory an item's inputs span, once checked
            (``job`` numbers the item, ``prefix`` goes before the input's name in messages).
        given_outputs: ``given_outputs(outputs)``: an item's given outputs checked: (core buffers, arrays).
        output_ranges: ``output_ranges(out_bufs, job, prefix)``: the memory a job writes into its output buffers.
        submit: ``submit(inputs, given, priority, timeout_us)``: submits one item (its outputs: ``given``, checked
            by ``given_outputs``, or fresh ones for None) and returns its Future.
    """

    info: DeviceInfo
    check_open: Callable[[], None]
    check_inputs: Callable[[Any], None]
    input_ranges: Callable[[Any, int, str], List[MemoryRange]]
    given_outputs: Callable[[Any], _Given]
    output_ranges: Callable[[Sequence[Any], int, str], List[MemoryRange]]
    submit: Callable[[Any, Optional[_Given], int, int], Future]


def optimal_jobs(info: DeviceInfo) -> int:
    """Jobs in flight that keep every core busy: two per core (one running, the next queued behind it,
    so a core never waits for the host to submit), at most the device's ``max_inflight``.

    It follows the device's performance hint through its cores, as OpenVINO's optimal_number_of_infer_requests
    follows its hint through its streams: ``emu`` (hint=latency, one core on every CPU) takes 2, one running and
    one queued; ``emu:hint=throughput`` (a core per CPU, whose max_inflight it raises to two per core) two per CPU.
    Measured on MobileNetV2 on a shared 2-CPU machine: 2 jobs per core ran 1.00-1.09x the runs/s of 1 per core (the
    host's submission is no longer in the way), so the throughput hint keeps the latency hint's two."""
    return max(1, min(2 * info.cores, info.max_inflight))


def window_size(value: Any, info: DeviceInfo, what: str) -> int:
    """A ``jobs`` / ``max_inflight`` argument checked: an int >= 1, lowered to the device's max_inflight
    (more could not be in flight at once anyway)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} must be an int >= 1 or None, not {type(value).__name__}")
    n = operator.index(value)
    if n < 1:
        raise InvalidArgumentError(f"{what} must be >= 1, got {n}")
    return min(n, info.max_inflight)


def at_item(where: str, index: int, error: BaseException) -> BaseException:
    """``error`` again, as the same class, with its message prefixed by ``"<where>: item <index>: "``
    (the error itself if its class cannot be remade from a message)."""
    return prefixed(error, f"{where}: item {index}: ")


def prefixed(error: BaseException, prefix: str, message: Optional[str] = None) -> BaseException:
    """``error`` again, as the same class, its message ``prefix + message`` (default its own message); the error
    itself if its class cannot be remade from a message."""
    try:
        if isinstance(error, AccelError):
            return type(error)(prefix + (error.message if message is None else message), error.status)
        if type(error).__module__ == "builtins" and len(error.args) <= 1:  # TypeError, ValueError ...
            return type(error)(prefix + (str(error) if message is None else message))
    except Exception:  # an exception class with a constructor of its own: keep the error as it is
        pass
    return error


# ---- run_batch -----------------------------------------------------------------------------------------

def run_batch(model: Submissions, items: Iterable[Any], outputs: Optional[Sequence[Any]], priority: int,
              timeout_us: int, max_inflight: Optional[int]) -> List[List[np.ndarray]]:
    """Model.run_batch with priority and timeout already checked."""
    info = model.info
    limit = info.max_inflight if max_inflight is None else window_size(max_inflight, info, "max_inflight")
    batch = _items(items)
    given = _check_batch(model, batch, outputs)
    results: List[List[np.ndarray]] = []
    window: Deque[_Job] = deque()
    try:
        for i, item in enumerate(batch):
            if len(window) >= limit:
                results.append(_result(window, "run_batch"))
            window.append((i, _submit(model, "run_batch", i, item, given[i], priority, timeout_us)))
        while window:
            results.append(_result(window, "run_batch"))
    except BaseException:
        settle(window)
        results.clear()  # a kept traceback (sys.last_traceback) must not keep their buffers alive
        raise
    return results


def _items(items: Any) -> Sequence[Any]:
    if isinstance(items, (np.ndarray, DeviceTensor, Mapping, str, bytes)):
        raise TypeError(f"run_batch: items must be a list of inputs (each as Model.run takes them), not "
                        f"a {type(items).__name__}; for one input, pass [inputs]")
    try:
        return items if isinstance(items, (list, tuple)) else list(items)
    except TypeError:
        raise TypeError(f"run_batch: items must be a list of inputs (each as Model.run takes them), not "
                        f"{type(items).__name__}") from None


def _check_batch(model: Submissions, batch: Sequence[Any], outputs: Optional[Sequence[Any]]) -> List[Optional[_Given]]:
    """Checks every item and its outputs before anything is submitted, and that no item's outputs share memory
    with another tensor of the batch; returns each item's checked outputs (None: fresh ones)."""
    model.check_open()
    n = len(batch)
    if outputs is None:
        outs: Sequence[Any] = [None] * n
    elif isinstance(outputs, (list, tuple)):
        if len(outputs) != n:
            raise InvalidArgumentError(f"run_batch: outputs has {len(outputs)} entries for {n} items "
                                       f"(one entry per item: its outputs as Model.run takes them, or None)")
        outs = outputs
    else:
        raise TypeError(f"run_batch: outputs must be None or a list with one entry per item, "
                        f"not {type(outputs).__name__}")
    given: List[Optional[_Given]] = []
    ranges: List[MemoryRange] = []  # of the memory every job reads and writes, when some outputs are given
    for i, (item, out) in enumerate(zip(batch, outs)):
        try:
            if outputs is None:
                model.check_inputs(item)
            else:
                ranges += model.input_ranges(item, i, f"item {i}'s ")
            checked = None if out is None else model.given_outputs(out)
        except Exception as e:
            raise at_item("run_batch", i, e) from None
        given.append(checked)
        if checked is not None:
            ranges += model.output_ranges(checked[0], i, f"item {i}'s ")
    # Jobs in flight at once must not write memory that another one reads or writes.
    check_disjoint(ranges, "run_batch: ")
    return given


# ---- imap ------------------------------------------------------------------------------------------------

def imap(model: Submissions, iterable: Iterable[Any], jobs: Optional[int], priority: int,
         timeout_us: int) -> Generator[List[np.ndarray], None, None]:
    """Model.imap with priority and timeout already checked: checks ``jobs``, then returns the stream."""
    info = model.info
    limit = optimal_jobs(info) if jobs is None else window_size(jobs, info, "jobs")
    model.check_open()
    return _stream(model, iter(iterable), limit, priority, timeout_us)


def _stream(model: Submissions, it: Iterator[Any], limit: int, priority: int,
            timeout_us: int) -> Generator[List[np.ndarray], None, None]:
    window: Deque[_Job] = deque()
    error: Optional[BaseException] = None  # what ends the stream once the window before it is yielded
    pulled = 0

    def fill() -> None:
        # Pulls items while there is a free slot: never more than `limit` ahead of the consumer.
        nonlocal error, pulled
        while error is None and len(window) < limit:
            try:
                item = next(it)
            except StopIteration:
                error = StopIteration()
                return
            except Exception as e:  # the iterable's own error: raised as it is, at its position
                error = e
                return
            index = pulled
            pulled += 1
            try:
                window.append((index, _submit(model, "imap", index, item, None, priority, timeout_us)))
            except Exception as e:  # a bad item: raised at its position, after the results before it
                error = e

    try:
        fill()
        while window:
            out = _result(window, "imap")
            fill()  # the next job is queued before the consumer gets this result
            yield out
        if error is not None and not isinstance(error, StopIteration):
            raise error
    finally:
        error = None
        settle(window)


# ---- shared ----------------------------------------------------------------------------------------------

def _submit(model: Submissions, where: str, index: int, item: Any, given: Optional[_Given], priority: int,
            timeout_us: int) -> Future:
    try:
        return model.submit(item, given, priority, timeout_us)
    except Exception as e:
        raise at_item(where, index, e) from None


def _result(window: Deque[_Job], where: str) -> List[np.ndarray]:
    """The outputs of the oldest job, which leaves the window only once it is over (an interrupted wait
    leaves it there for settle)."""
    index, fut = window[0]
    try:
        out = fut.result()
    except Exception as e:
        window.popleft()
        del fut  # the future holds e, whose traceback holds this frame: no cycle
        raise at_item(where, index, e) from e
    window.popleft()
    return out


def settle(window: Deque[_Job]) -> None:
    """Cancels the window's jobs that have not started and waits for the others; empties the window.

    Every release comes first (oldest first: the device starts them in that order), then the waits:
    waiting for each cancellation before the next release would give the device time to start the next
    job, and then each wait would last a whole job."""
    futures = [f for _, f in window]
    for f in futures:
        f._request_cancel()
    for f in futures:
        try:
            f.exception()
        except concurrent.futures.CancelledError:
            pass
    window.clear()
