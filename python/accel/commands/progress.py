"""The command line's one progress bar: tqdm's, the bar users know from other tools (accel bench, accel batch, and
the time so far of a compile: :func:`while_running`).

tqdm redraws its line in place at most 10 times a second. Two things are added here: the bar reads 100% only once
:meth:`ProgressBar.finish` says the work is over (a count or a time that reaches its total first shows as 99%), so
that 100% means done; and on a stream that is not a terminal (a log file, CI's output), with ``lines=True``, tqdm's
line is printed as a line of its own at each tenth of the work instead of redrawn, so that a log reads as ten
lines rather than one line of carriage returns.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Iterator, Optional, TextIO, Union

from tqdm import tqdm

__all__ = ["ProgressBar", "while_running"]

Number = Union[int, float]


class ProgressBar:
    """tqdm's bar of ``total`` (a count, or seconds) on ``stream``, labelled ``desc``; silent unless ``enabled``.
    ``leave``: the bar stays on its line when closed (else the line is cleared). ``lines``: on a stream that is not
    a terminal, print a line at each tenth instead of redrawing. ``bar_format``: tqdm's, for a bar whose count
    reads badly (seconds). :attr:`seconds`: once finished, the time it ran, from which the last rate it shows (the
    average since it started) is computed, for a command's own figures to agree with it."""

    def __init__(self, total: Number, stream: TextIO, *, desc: Optional[str] = None, unit: str = "it",
                 enabled: bool = True, leave: bool = True, lines: bool = False,
                 bar_format: Optional[str] = None) -> None:
        self.total = total
        self._stream = stream
        self._as_lines = enabled and lines and not stream.isatty()
        self._desc, self._unit, self._format = desc, unit, bar_format
        self._tenths = 0  # the tenths a line has been printed for (lines mode)
        self._start = time.perf_counter()
        #: Seconds from the bar's start to finish() (None until then).
        self.seconds: Optional[float] = None
        self._bar = tqdm(total=total, desc=desc, unit=unit, file=stream, disable=not enabled or self._as_lines,
                         leave=leave, mininterval=0.1, bar_format=bar_format, dynamic_ncols=True)

    def update_to(self, n: Number) -> None:
        """The work has reached ``n`` of ``total``: redrawn (or a line printed) if it is time to. Below total it
        shows as at most 99%: only finish() shows 100%."""
        if n >= self.total:
            return
        shown = min(n, self.total * 0.99)
        if isinstance(self.total, int):
            shown = int(shown)
        if self._as_lines:
            tenths = int(10 * shown // self.total)
            if tenths > self._tenths:
                self._tenths = tenths
                self._print_line(shown, time.perf_counter() - self._start)
        elif not self._bar.disable and shown > self._bar.n:
            self._bar.update(shown - self._bar.n)

    def finish(self) -> None:
        """The work is over: the bar at 100%, drawn once."""
        self.seconds = time.perf_counter() - self._start
        if self._as_lines:
            self._tenths = 10
            self._print_line(self.total, self.seconds)
        elif not self._bar.disable:
            self._bar.n = self.total
            self._bar.refresh()

    def close(self) -> None:
        self._bar.close()

    def _print_line(self, n: Number, seconds: float) -> None:
        line = tqdm.format_meter(n, self.total, seconds, prefix=self._desc or "",
                                 unit=self._unit, bar_format=self._format)
        print(line, file=self._stream, flush=True)

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def while_running(desc: str, stream: TextIO, enabled: bool = True) -> Iterator[None]:
    """tqdm's bar without a total while one long step runs (a compile, which reports no progress of its own): the
    time so far, redrawn every half second from a thread of its own and cleared when the step ends. Only on a
    terminal (and if ``enabled``): a log gets nothing."""
    if not enabled or not stream.isatty():
        yield
        return
    bar = tqdm(total=None, desc=desc, file=stream, leave=False, bar_format="{desc}: {elapsed}")
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(0.5):
            bar.refresh()

    ticker = threading.Thread(target=tick, name="accel-progress", daemon=True)
    ticker.start()
    try:
        yield
    finally:
        stop.set()
        ticker.join()
        bar.close()
