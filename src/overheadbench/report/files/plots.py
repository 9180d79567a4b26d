"""Plots (matplotlib, the optional ``plot`` extra): where noise and trends are easier seen than read.

* :func:`distributions`: every pair ratio of each test of one run, one box per test and place
  (an A/B run's head and base tree, each ``--overhead-env`` interpreter), with each process's
  median marked, so the between-process spread shows; each pair's budget marked on its row, and
  under a gate the level past which the head regresses against its base.
* :func:`trend`: each test's overhead and interval across stored runs, oldest first, its budget a
  dashed line in its colour.

Both read a reviewer's way (issue 59): a log axis where the ratios span more than
:data:`~overheadbench.report.page.svg.LOG_SPAN` times (a 400x pair beside 5% ones flattened every box),
and a row height that keeps a suite of 100 pairs readable (0.6 inches a row made it 5,460 pixels tall
with its title cut).
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Any

import numpy as np

from ...core.errors import StorageError
from ...core.tables import plain
from ...core.vocabulary import Role
from ...engine.process_ratio import pair_ratios
from ...pairs.results import OverheadResult
from ...store.runs import Run, Storage, read_run
from ..page.svg import LOG_SPAN

ROW_INCHES = 0.24
"""A row's height in a distributions plot (9-point labels)."""
MAX_ROWS_INCHES = 60.0
"""A plot's largest height: past it, the rows are thinner still."""


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


def _log(values: list[float]) -> bool:
    """Whether ratios spanning ``values`` read on a log axis."""
    positive = [value for value in values if value > 0 and math.isfinite(value)]
    return bool(positive) and max(positive) / min(positive) > LOG_SPAN


def _title(axes: Any, text: str) -> None:
    axes.set_title("\n".join(textwrap.wrap(text, 90)), fontsize=9, loc="left")


def distributions(name: str, run: Run, output: Path) -> None:
    plt = _pyplot()
    rows = plotted(run)
    ratios = [np.concatenate([pair_ratios(s.baseline_ns, s.framework_ns) for s in r.samples]) for _, r in rows]
    log = _log([float(value) for values in ratios for value in values])
    shown = [values if log else 100 * (values - 1) for values in ratios]
    height = min(MAX_ROWS_INCHES, 1.6 + ROW_INCHES * max(len(rows), 1))
    figure, axes = plt.subplots(figsize=(9, height))
    for row, ((_, result), values) in enumerate(zip(rows, shown, strict=True)):
        axes.boxplot(values, positions=[row], orientation="horizontal", widths=0.6, showfliers=False)
        medians = [float(np.median(pair_ratios(s.baseline_ns, s.framework_ns))) for s in result.samples]
        axes.scatter(
            [m if log else 100 * (m - 1) for m in medians],
            [row] * len(medians),
            s=10,
            color="tab:red",
            zorder=3,
            label="process medians" if row == 0 else None,
        )
    _marks(axes, rows, run, log)
    axes.set_yticks(range(len(rows)), [label for label, _ in rows], fontsize=8 if len(rows) < 40 else 7)
    axes.set_ylim(-0.7, len(rows) - 0.3)
    axes.invert_yaxis()
    if log:
        axes.set_xscale("log")
    axes.set_xlabel(
        "framework / baseline, per pair of blocks (log)" if log else "framework / baseline - 1, per pair of blocks (%)"
    )
    _title(axes, f"{plain(name)}: pair ratios (boxes), process medians (dots), budgets (|)")
    if rows:
        axes.legend(loc="lower right", fontsize=7)
    figure.tight_layout()
    figure.savefig(output)
    plt.close(figure)


def _marks(axes: Any, rows: list[tuple[str, OverheadResult]], run: Run, log: bool) -> None:
    """Each row's budget, and under a gate each head row's regression level (its base's ratio plus
    the threshold), as vertical ticks on the row."""
    gate = run.gate.pairs
    for row, (_, result) in enumerate(rows):
        if (limit := result.pair.budget.max_overhead) is not None:
            axes.scatter(
                [1 + limit if log else 100 * limit],
                [row],
                marker="|",
                s=160,
                color="tab:purple",
                zorder=4,
                label="budget" if row == 0 else None,
            )
        base = next((p.result for p in result.places if p.role is Role.BASE and p.result is not None), None)
        if gate is not None and base is not None and result in run.results:
            level = base.ratio * (1 + gate / 100)
            axes.scatter(
                [level if log else 100 * (level - 1)],
                [row],
                marker="|",
                s=160,
                color="tab:orange",
                zorder=4,
                label=f"gate: base + {gate:g}%" if row == 0 else None,
            )


def trend(runs: list[tuple[str, Run]], output: Path, title: str = "overhead across stored runs") -> None:
    """Each test's overhead and interval, one point per run (or per environment's merged runs), its
    budget (the newest run's) a dashed line in its colour."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(9, 4.8))
    tests = sorted({r.nodeid for _, run in runs for r in run.measured()})
    measured = [r for _, run in runs for r in run.measured()]
    log = _log([r.ratio for r in measured] + [1 + r.ci[1] for r in measured])
    for nodeid in tests:
        points = [(index, r) for index, (_, run) in enumerate(runs) for r in run.measured() if r.nodeid == nodeid]
        x = [index for index, _ in points]
        shift, scale = (1.0, 1.0) if log else (0.0, 100.0)
        y = np.array([scale * (shift + r.overhead) for _, r in points])
        low = np.array([scale * (shift + r.ci[0]) for _, r in points])
        high = np.array([scale * (shift + r.ci[1]) for _, r in points])
        drawn = axes.errorbar(x, y, yerr=[y - low, high - y], marker="o", capsize=3, label=_label(nodeid))
        if (limit := points[-1][1].pair.budget.max_overhead) is not None:
            axes.axhline(scale * (shift + limit), linestyle="--", linewidth=1, color=drawn[0].get_color())
    if log:
        axes.set_yscale("log")
    axes.set_xticks(range(len(runs)), [plain(name) for name, _ in runs], rotation=30, ha="right", fontsize=8)
    axes.set_ylabel("framework / baseline (log), with its interval" if log else "overhead (%) with its interval")
    _title(axes, f"{title}; dashed: each test's budget")
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
