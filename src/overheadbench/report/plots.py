"""Plots (matplotlib, the optional ``plot`` extra): where noise and trends are easier seen than read.

* :func:`distributions`: every pair ratio of each test of one run, one box per test and place
  (an A/B run's head and base tree, each ``--overhead-env`` interpreter), with each process's
  median marked, so the between-process spread shows.
* :func:`trend`: each test's overhead and interval across stored runs, oldest first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..core.errors import StorageError
from ..core.tables import plain
from ..engine.stats import pair_ratios
from ..history.runs import Run, Storage, read_run
from ..pairs.results import OverheadResult


class PlotUnavailable(Exception):
    """matplotlib is not installed."""


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise PlotUnavailable("plots need matplotlib: pip install 'overheadbench[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plotted(run: Run) -> list[tuple[str, OverheadResult]]:
    """Each pair with samples, labelled, followed by the same pair at the session's other places
    (the base tree of ``--overhead-against``, each ``--overhead-env``): a plot of an A/B run drew
    the head alone, the one thing it could not be read without."""
    rows: list[tuple[str, OverheadResult]] = []
    for result in run.results:
        places = [(place, place.result) for place in result.places if place.result and place.result.samples]
        if result.samples:
            here = f" ({places[0][0].role.own_side(places[0][0].name)})" if places else ""
            rows.append((_label(result.nodeid) + here, result))
        for place, measured in places:
            rows.append((f"{_label(result.nodeid)} ({place.role.place_side(plain(place.name))})", measured))
    return rows


def distributions(name: str, run: Run, output: Path) -> None:
    plt = _pyplot()
    rows = plotted(run)
    figure, axes = plt.subplots(figsize=(9, 1.2 + 0.6 * max(len(rows), 1)))
    for row, (_, result) in enumerate(rows):
        per_process = [100 * (pair_ratios(s.baseline_ns, s.framework_ns) - 1) for s in result.samples]
        axes.boxplot(
            np.concatenate(per_process), positions=[row], orientation="horizontal", widths=0.5, showfliers=False
        )
        axes.scatter(
            [float(np.median(p)) for p in per_process],
            [row] * len(per_process),
            s=12,
            color="tab:red",
            zorder=3,
            label="process medians" if row == 0 else None,
        )
    axes.set_yticks(range(len(rows)), [label for label, _ in rows], fontsize=8)
    axes.set_xlabel("framework / baseline - 1, per pair of blocks (%)")
    axes.set_title(f"{plain(name)}: pair ratios (boxes) and process medians (dots)")
    if rows:
        axes.legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    figure.savefig(output)
    plt.close(figure)


def trend(runs: list[tuple[str, Run]], output: Path, title: str = "overhead across stored runs") -> None:
    """Each test's overhead and interval, one point per run (or per environment's merged runs)."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(9, 4.5))
    tests = sorted({r.nodeid for _, run in runs for r in run.measured()})
    for nodeid in tests:
        points = [(index, r) for index, (_, run) in enumerate(runs) for r in run.measured() if r.nodeid == nodeid]
        x = [index for index, _ in points]
        y = np.array([100 * r.overhead for _, r in points])
        low = np.array([100 * r.ci[0] for _, r in points])
        high = np.array([100 * r.ci[1] for _, r in points])
        axes.errorbar(x, y, yerr=[y - low, high - y], marker="o", capsize=3, label=_label(nodeid))
    axes.set_xticks(range(len(runs)), [plain(name) for name, _ in runs], rotation=30, ha="right", fontsize=8)
    axes.set_ylabel("overhead (%) with its interval")
    axes.set_title(title)
    axes.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(output)
    plt.close(figure)


def stored_trend(storage: Storage, output: Path) -> list[str]:
    """:func:`trend` of this machine's stored runs (else every machine's); each unreadable run is
    left out, as the gate's history does, and said (the warnings returned)."""
    paths = storage.runs() or storage.runs(every_machine=True)
    if not paths:
        raise StorageError(f"no stored run in {storage.folder}/ to plot a trend from")
    readable, warnings = [], []
    for path in paths:
        try:
            readable.append((path.name, read_run(path)))
        except StorageError as exc:
            warnings.append(f"{exc}; left out of the trend")
    if not readable:
        raise StorageError(f"no readable stored run in {storage.folder}/ to plot a trend from")
    trend(readable, output)
    return warnings


def _label(nodeid: str) -> str:
    """The test's name as a plot label (its own function's part, escaped: it may come from a file)."""
    return plain(nodeid.split("::")[-1])
