"""The cosine of each layer as a picture (matplotlib, an optional dependency: ``pip install accel[plot]``)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

from .._lazy_import import import_optional

__all__ = ["plot_cosines", "require_matplotlib"]


def require_matplotlib() -> Any:
    """The matplotlib module; ImportError saying how to install it if it is missing."""
    return import_optional("matplotlib", "plotting a comparison needs matplotlib",
                           "pip install accel[plot] (or pip install matplotlib)")


def _pyplot() -> Any:
    require_matplotlib().use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    return plt


def plot_cosines(labels: Sequence[str], cosines: Sequence[Optional[float]], threshold: float, first: Optional[int],
                 title: str, path: Path) -> None:
    """Cosine per row (``labels`` and ``cosines`` in graph order) against the row's number, counted from 1 as the
    table's # column counts, the threshold as a dashed line, the first row below it (index ``first``) marked and
    named; rows without a cosine (shapes that differ) are left out (Comparison.plot)."""
    plt = _pyplot()
    points = [(n, c) for n, c in enumerate(cosines, 1) if c is not None]
    # A quarter inch per tensor where they are named, up to a page's width (a deep model's points then get close).
    fig, ax = plt.subplots(figsize=(min(16.0, max(6.0, 0.25 * len(labels))), 4.5))
    try:
        ax.plot([i for i, _ in points], [c for _, c in points], marker="o", markersize=3, label="cosine")
        ax.axhline(threshold, color="tab:red", linestyle="--", linewidth=1, label=f"threshold {threshold:g}")
        if first is not None:
            ax.plot([first + 1], [cosines[first]], marker="o", color="tab:red", markersize=8, linestyle="none",
                    label=f"first below: {labels[first]} (#{first + 1})")
        ax.set_xlabel("tensor (# as in the table: graph order)")
        ax.set_ylabel("cosine similarity")
        ax.set_title(title)
        if len(labels) <= 40:
            ax.set_xticks(range(1, len(labels) + 1))
            ax.set_xticklabels(list(labels), rotation=90, fontsize=6)
        ax.legend(loc="lower left", fontsize=8)
        fig.tight_layout()
        fig.savefig(str(path))
    finally:
        plt.close(fig)
