"""What a selftest check is and what it works with: how much work it does (``Settings``), what the checks
share (``Context``), what one check found (``Findings``), the check itself (``Check``), its outcome
(``CheckResult``) and the statuses it can end with."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

import accel
from accel.runtime.device_uri import parse_uri

PASS, FAIL, ERROR, SKIP = "PASS", "FAIL", "ERROR", "SKIP"
PACKAGE_DIR = Path(accel.__file__).resolve().parent
#: The model the emulator runs when no ``--model`` is given.
DEFAULT_MODEL = PACKAGE_DIR / "models" / "tiny_cnn.onnx"


@dataclass(frozen=True)
class Settings:
    """How much work each check does (``FULL`` by default, ``QUICK`` with ``--quick``), before
    :meth:`for_latency` fits it to the model's run time."""

    repeats: int  # determinism: reruns of the first input
    async_jobs: int
    threads: int
    runs_per_thread: int
    leak_runs: int
    rss_warmup: int
    rss_runs: int
    latency_runs: int
    check_timeout: float  # seconds a check may take before it is reported as hung
    budget: float = 15.0  # seconds of runs each count aims at, at most, once the run time is known

    def for_latency(self, run_seconds: float) -> Settings:
        """The settings for a model whose sync run takes ``run_seconds``: each count cut so that its runs take
        about ``budget`` seconds (never below a floor that still tests something), and the hang limit raised
        to many times what the slowest check then needs, so that a slow model is never reported as hung."""
        if not run_seconds > 0:
            return self
        fit = {name: max(floor, min(getattr(self, name), int(self.budget / run_seconds / per)))
               for name, (floor, per) in _SCALED.items()}
        # The most runs one check makes: the RSS check's warm-up and runs, or threads x runs_per_thread.
        most_runs = max(fit["rss_warmup"] + fit["rss_runs"], self.threads * fit["runs_per_thread"],
                        fit["leak_runs"] * 3 // 2, fit["latency_runs"] + 10, fit["async_jobs"] + 2)
        limit = max(self.check_timeout, 10.0 * most_runs * run_seconds)
        return replace(self, check_timeout=limit, **fit)


# The counts for_latency fits: (floor, runs per unit) (runs_per_thread runs on every thread).
_SCALED = {"repeats": (2, 2), "async_jobs": (4, 1), "runs_per_thread": (2, 4), "leak_runs": (8, 1.5),
           "rss_warmup": (5, 1), "rss_runs": (20, 1), "latency_runs": (10, 1)}

FULL = Settings(repeats=5, async_jobs=16, threads=4, runs_per_thread=25, leak_runs=200, rss_warmup=100,
                rss_runs=2000, latency_runs=500, check_timeout=120.0, budget=15.0)
QUICK = Settings(repeats=2, async_jobs=4, threads=2, runs_per_thread=5, leak_runs=30, rss_warmup=20,
                 rss_runs=300, latency_runs=50, check_timeout=120.0, budget=4.0)


class CheckFailed(Exception):
    """Raised by a check that cannot go on: the device or runtime did not do what accel promises."""


class Findings:
    """What one check found: a one-line summary, notes (information), problems (each one a FAIL) and
    data for the JSON report. ``problem`` may be called from several threads at once."""

    def __init__(self) -> None:
        self.summary = ""
        self.notes: List[str] = []
        self.problems: List[str] = []
        self.data: Dict[str, Any] = {}

    def note(self, text: str) -> None:
        """Adds a line of information to the report."""
        self.notes.append(text)

    def problem(self, text: str) -> None:
        """Records a problem: the check will FAIL."""
        self.problems.append(text)

    def expect(self, condition: bool, text: str) -> bool:
        """Records ``text`` as a problem unless ``condition`` holds; returns ``condition``."""
        if not condition:
            self.problem(text)
        return condition


def _scheme(uri: str) -> str:
    """The URI's scheme, or "" for a URI without one (the environment check then finds no driver for it)."""
    try:
        return parse_uri(uri).scheme
    except accel.InvalidArgumentError:
        return ""


class Context:
    """What the checks share: the arguments, and what earlier checks made (device, model, inputs and the
    reference outputs of the first sync run)."""

    def __init__(self, uri: str, model_path: Optional[Path], settings: Settings,
                 compare_model: Optional[Path] = None, compare_rules: Optional[str] = None) -> None:
        self.uri = uri
        self.scheme = _scheme(uri)
        self.model_path = model_path
        self.settings = settings
        self.device: Optional[accel.Device] = None
        self.model: Optional[accel.Model] = None
        self.inputs: Optional[List[np.ndarray]] = None
        self.reference: Optional[List[np.ndarray]] = None
        # --compare: the ONNX model the device's model was made from, and the emulator's int8 rules for it.
        self.compare_model = compare_model
        self.compare_rules = compare_rules
        # {input: n} of the inputs whose values are positions (accel.comparison.index_inputs), read once.
        self.index_limits: Optional[Dict[str, int]] = None
        # Seconds of one sync run, measured by sync_run after its first: the checks after it are fitted to it.
        self.run_seconds: Optional[float] = None


@dataclass(frozen=True)
class Check:
    """One check: ``run(context, findings)``; ``needs`` names the Context attributes it uses."""

    name: str
    run: Callable[[Context, Findings], None]
    needs: Tuple[str, ...]
    title: str


@dataclass
class CheckResult:
    """The outcome of one check, as the report shows it."""

    name: str
    status: str
    seconds: float
    summary: str = ""
    notes: List[str] = field(default_factory=list)
    problems: List[str] = field(default_factory=list)
    data: Dict[str, Any] = field(default_factory=dict)
