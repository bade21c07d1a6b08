"""What the benchmarks time with: a run's median latency over a time budget."""
from __future__ import annotations

import statistics
import time
from typing import Callable, List


def median_latency(run: Callable[[], object], seconds: float) -> float:
    """The median of as many timed runs as fit `seconds` (at least 3)."""
    times: List[float] = []
    end = time.perf_counter() + seconds
    while len(times) < 3 or time.perf_counter() < end:
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)
