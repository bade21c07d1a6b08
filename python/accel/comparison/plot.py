"""The cosine of each layer as a picture (matplotlib, an optional dependency: ``pip install accel[plot]``)."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._lazy_import import import_optional

if TYPE_CHECKING:
    from .report import Comparison

__all__ = ["plot_cosines", "require_matplotlib"]


def require_matplotlib() -> Any:
    """The matplotlib module; ImportError saying how to install it if it is missing."""
    return import_optional("matplotlib", "plotting a comparison needs matplotlib",
                           "pip install accel[plot] (or pip install matplotlib)")


def _pyplot() -> Any:
    require_matplotlib().use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    return plt


def plot_cosines(comparison: Comparison, path: Path) -> None:
    """Cosine per row against the row's index, the threshold as a dashed line, the first row below it marked
    and named; rows without a cosine (shapes that differ) are left out."""
    plt = _pyplot()
    points = [(i, r.cosine) for i, r in enumerate(comparison) if r.cosine is not None]
    # A quarter inch per tensor where they are named, up to a page's width (a deep model's points then get close).
    fig, ax = plt.subplots(figsize=(min(16.0, max(6.0, 0.25 * len(comparison))), 4.5))
    try:
        ax.plot([i for i, _ in points], [c for _, c in points], marker="o", markersize=3, label="cosine")
        ax.axhline(comparison.threshold, color="tab:red", linestyle="--", linewidth=1,
                   label=f"threshold {comparison.threshold:g}")
        first = comparison.first_below
        if first is not None and first.cosine is not None:
            i = next(n for n, r in enumerate(comparison) if r is first)
            ax.plot([i], [first.cosine], marker="o", color="tab:red", markersize=8, linestyle="none",
                    label=f"first below: {first.key or first.tensor} (#{i + 1})")
        ax.set_xlabel("tensor (graph order)")
        ax.set_ylabel("cosine similarity")
        ax.set_title(f"{comparison.a} vs {comparison.b}")
        if len(comparison) <= 40:
            ax.set_xticks(range(len(comparison)))
            ax.set_xticklabels([r.key or r.tensor for r in comparison], rotation=90, fontsize=6)
        ax.legend(loc="lower left", fontsize=8)
        fig.tight_layout()
        fig.savefig(str(path))
    finally:
        plt.close(fig)
