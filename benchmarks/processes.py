"""The benchmarks' measuring processes: each runtime configuration in a child process of its own, loaded once,
answering time budgets one at a time, so that only one measures while the others wait idle on their stdin
(neither runtime's idle threads take the other's CPUs)."""
from __future__ import annotations

import json
import subprocess
import sys
from typing import Callable, List


def serve(measure: Callable[[float], float]) -> int:
    """The child's loop: after "ready", answers each budget (a line of seconds) with one measurement."""
    print("ready", flush=True)
    for line in sys.stdin:
        print(json.dumps(measure(float(line))), flush=True)
    return 0


class Child:
    """A child process started with `argv` (after the interpreter) that serves measurements; `name` for errors."""

    def __init__(self, name: str, argv: List[str]) -> None:
        self.name = name
        self.proc = subprocess.Popen([sys.executable, *argv], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)

    def wait_ready(self) -> None:
        line = self.proc.stdout.readline()  # type: ignore[union-attr]
        if line.strip() != "ready":
            raise RuntimeError(f"{self.name}: the child failed to start (exit code {self.proc.wait()})")

    def measure(self, seconds: float) -> float:
        self.proc.stdin.write(f"{seconds}\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]
        line = self.proc.stdout.readline()  # type: ignore[union-attr]
        if not line:
            raise RuntimeError(f"{self.name}: the child ended (exit code {self.proc.wait()})")
        return float(json.loads(line))

    def close(self) -> None:
        self.proc.stdin.close()  # type: ignore[union-attr]
        self.proc.wait()
