"""Where a figure's series of stored runs moved: steps, and a drift that no step explains.

A series is one figure (a pair's overhead ratio, a transport figure) over runs of one machine in
commit order, each run its log value with its own standard error (from its interval). Runs of
different sessions also differ by the machine's state between sessions, which no run sees in
itself, so each run's variance is its own plus the between-session variance ``tau**2``. ``tau`` is
measured on the series: the spread of successive differences, less what the runs' own errors
explain, pooled with the project's measured between-session spread that the caller gives, as if it
were :data:`PRIOR_RUNS` more differences (a short series leans on it, a long one on itself): first
from all of them (the largest tenth left out) to weigh the search, and from their median to
winsorise (one far run cannot move it); then, once the steps are found, from the winsorised
differences within the segments (the largest tenth left out). That second one is the series'
spread everywhere: a session's interval, a comparison with a stored run and ``history`` read it alike.

Steps are found by binary segmentation, as Otava and asv search theirs: the split of a segment
whose two sides' weighted means differ most, in standard errors (``z``), is kept when ``|z|`` reaches
:data:`THRESHOLD`, and each side is searched again. A split falls only between runs of different
commits (runs of one commit are one measurement of it), with :data:`MIN_RUNS` on each side.

Why these choices, measured in ``validation/history.py`` (docs/history.md has the table):

- **Weighted means with each run's own interval**, not point values: a run measured in a busy
  session has a wide interval and counts less; E-divisive on point values cannot tell it apart.
- **Each value winsorised** against the running median of :data:`~.segments.MEDIAN_WINDOW` runs at
  :data:`~.segments.CLIP` of its standard deviations before the search: one busy session is not a step (a
  running median keeps a step's edge whole; it removes a one-run spike).
- **The threshold**: ``|z| >= 3.29`` is a two-sided 0.1% test of each split, so a series of ``n``
  runs without a change shows at most ``n - 3`` such tests' worth of false splits, fewer than one per
  1,000 runs (Bonferroni: the splits' statistics are correlated, which only lowers the rate).
- **A drift**: where a straight line explains the series better than its steps do (weighted
  squares, each step and the slope costing ``THRESHOLD**2``, so a step must explain more than a
  significant one would) and its slope is itself :data:`THRESHOLD` standard errors from zero, the
  series is a drift, reported with its total over the window: ten merges of +1% each are one drift
  of +10%, not a row of doubtful steps. Between steps, a stretch can hold a drift of its own.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ..core.vocabulary import Word
from .segments import CLIP, Runs, link_squares, split, splits, squares, winsorised
from .spread import MEDIAN_ABSOLUTE, PRIOR_RUNS, spread
from .stats import CONFIDENCE

THRESHOLD = 3.29
"""``|z|`` a split (or a drift's slope, or a link) must reach: a two-sided test at 0.1%
(see :mod:`overheadbench.engine.shifts`)."""
MIN_RUNS = 2
"""Runs each side of a step must hold: a step seen in the newest run alone is pending until the next run confirms it."""
DRIFT_MIN_RUNS = 6
DRIFT_MIN_COMMITS = 4
"""Runs, and commits among them, a stretch must hold to be read as a drift (over its commits)."""
LINK_PRIOR_SHARE = 0.5
"""The spread of a linked run's change beyond its own interval that a short series leans on, as a
share of the figure's between-session spread: a link is measured in one session, interleaved, and
its interval already carries the processes' spread; what is left is the session's own (0.25% for a
pair's 0.5%)."""
EXACT_VARIANCE = 1e-12
"""The variance a link of exact counts (standard error 0) is weighed with."""


class ShiftKind(Word):
    STEP = "step"
    DRIFT = "drift"
    PENDING = "pending"
    """The newest commit's runs differ from the segment before them, and too few to place a step:
    "pending one more run" (placed with :data:`MIN_RUNS` on each side, it took an unchanged commit
    before it with it, and the real step folded into the next)."""


@dataclass(frozen=True)
class Point:
    """One run's reading of the figure: its log value, that log's standard error, and its commit
    (runs of one commit are never split apart); a linked run (``--overhead-link``) also its change
    over the commit ``linked`` measured in its own session (``link``, of the log, with ``link_se``)."""

    log: float
    se: float
    commit: str
    link: float | None = None
    link_se: float = 0.0
    linked: str = ""


@dataclass(frozen=True)
class Shift:
    """A step between run ``start - 1`` and run ``start``, or a drift over runs ``start..end``:
    the change of the log value, its standard error, and ``z`` (the change in standard errors)."""

    kind: ShiftKind
    start: int
    end: int
    log_change: float
    log_se: float
    z: float
    level: float = 0.0
    """The log value after the change: the next segment's mean after a step, the line's end after a drift."""

    @property
    def change(self) -> float:
        """The change as a fraction (+0.09: 9% higher)."""
        return math.expm1(self.log_change)

    def interval(self, confidence: float = CONFIDENCE) -> tuple[float, float]:
        half = NormalDist().inv_cdf((1 + confidence) / 2) * self.log_se
        return math.expm1(self.log_change - half), math.expm1(self.log_change + half)


@dataclass(frozen=True)
class Series:
    """A series searched: its shifts, and its between-session spread (``tau``, of the log) read
    within its segments (:func:`find_shifts`), with that spread's degrees of freedom (infinite: the prior alone)."""

    shifts: tuple[Shift, ...]
    tau: float
    df: float = math.inf


def find_shifts(points: Sequence[Point], prior_sd: float, threshold: float = THRESHOLD) -> Series:
    """The steps and drifts of a series of runs in commit order (see the module), and its
    between-session spread: read first from every successive difference (the largest tenth left
    out) to weigh the search, then again from the differences within its segments, every one
    across a step left out. The one spread of a stored series: the session's own interval, a
    comparison with a stored run and ``history`` read it alike (:func:`~overheadbench.engine.changes.session_log_sd`);
    a retry library's two real steps (+26%, +55%) made the sessions' learned spread 31-33%,
    ``history``'s 0.88%, and every later interval ±600 points. A linked commit's step is read from its
    link too (:func:`splits`)."""
    y = np.array([p.log for p in points], float)
    own = np.array([p.se for p in points], float) ** 2
    cuts = [i for i in range(1, len(points)) if points[i].commit != points[i - 1].commit]
    linked = _links(points, cuts, LINK_PRIOR_SHARE * prior_sd)
    if len(points) < 2 * MIN_RUNS and not linked:  # too short for a step: every difference is within one segment
        return Series((), *spread(np.diff(y), own, prior_sd, trimmed=False))
    tau = spread(np.diff(y), own, prior_sd)[0]
    weights = 1.0 / (own + tau**2)
    reach = np.sqrt(own + spread(np.diff(y), own, prior_sd, robust=True)[0] ** 2)
    clipped = winsorised(y, reach)
    commits = np.searchsorted(np.array(cuts, int), np.arange(len(points)), side="right").astype(float)
    link, link_w = np.zeros(len(points)), np.zeros(len(points))
    for cut, (change, variance) in linked.items():
        link[cut], link_w[cut] = change, 1.0 / variance
    runs = Runs(clipped, weights, commits, link, link_w)
    searched = _search(runs, cuts, threshold)  # the newest runs unclipped: a lone far run is pending, not gone
    pended = _pending(dataclasses.replace(runs, y=y), cuts, searched, threshold)
    found = _levelled(pended, dataclasses.replace(runs, y=_within_segments(y, reach, pended)))
    shifts = sorted(found, key=lambda s: s.start)
    # the spread within segments: no difference across a step, none touching a run the search winsorised
    left_out = {shift.start for shift in shifts if shift.kind is not ShiftKind.DRIFT}
    far = clipped != y
    within = np.array(
        [y[i] - y[i - 1] for i in range(1, len(points)) if i not in left_out and not far[i - 1 : i + 1].any()]
    )
    return Series(tuple(shifts), *spread(within, own, prior_sd, trimmed=False))


def _within_segments(y: np.ndarray, sd: np.ndarray, shifts: list[Shift]) -> np.ndarray:
    """Each value winsorised against its own segment's median once the steps are found: what the
    levels and changes are read from. Why not the running median's: a short series straddles a step
    (two runs a side of +138% read +60%, the level after 184x for 229x)."""
    edges = sorted({0, y.size, *(s.start for s in shifts if s.kind is not ShiftKind.DRIFT)})
    within: np.ndarray = y.copy()
    for a, b in zip(edges, edges[1:], strict=False):
        middle = float(np.median(y[a:b]))
        within[a:b] = np.clip(y[a:b], middle - CLIP * sd[a:b], middle + CLIP * sd[a:b])
    return within


def _search(runs: Runs, cuts: list[int], threshold: float) -> list[Shift]:
    """The series' steps, or one drift where a line explains it better than its steps do (each
    step, like the line's slope, costs ``threshold**2`` of weighted squares: a step must explain
    more than a significant one would); then a drift inside each stretch between steps."""
    size = runs.y.size
    steps: list[Shift] = []
    _segment_steps(runs, 0, size, cuts, threshold, steps)
    edges = sorted({0, size, *(step.start for step in steps)})
    drift = _line_drift(runs, 0, size, threshold)
    if drift is not None:
        stepped = np.zeros(size)  # what each link reads under the steps, and under the line
        for step in _levelled(steps, runs):
            stepped[step.start] = step.log_change
        sloped = np.full(size, drift[0].log_change / max(float(runs.commit[-1] - runs.commit[0]), 1.0))
        steps_squares = squares(runs, edges) + link_squares(runs, stepped) + threshold**2 * len(steps)
        if drift[1] + link_squares(runs, sloped) + threshold**2 <= steps_squares:
            return [drift[0]]
    drifts = [_line_drift(runs, a, b, threshold) for a, b in zip(edges, edges[1:], strict=False)] if steps else []
    return steps + [found[0] for found in drifts if found is not None]


def _segment_steps(runs: Runs, start: int, end: int, cuts: list[int], threshold: float, found: list[Shift]) -> None:
    """Binary segmentation of runs ``start..end``: its best split kept where ``|z|`` reaches
    ``threshold``, and both sides searched again."""
    allowed = [k for k in cuts if start + _side(runs, k) <= k <= end - _side(runs, k)]
    if not allowed:
        return
    z = splits(runs, start, end, np.array(allowed))[2]
    best = int(np.argmax(np.abs(z)))
    if abs(z[best]) < threshold:
        return
    cut = allowed[best]
    found.append(Shift(ShiftKind.STEP, cut, cut, 0.0, 0.0, float(z[best])))  # levels read once all are found
    _segment_steps(runs, start, cut, cuts, threshold, found)
    _segment_steps(runs, cut, end, cuts, threshold, found)


def _side(runs: Runs, cut: int) -> int:
    """Runs each side of a split at ``cut`` must hold: :data:`MIN_RUNS`, one where the commit is
    linked (its link measured the step side by side: it needs no second run)."""
    return 1 if runs.link_w[cut] > 0 else MIN_RUNS


def _line_drift(runs: Runs, start: int, end: int, threshold: float) -> tuple[Shift, float] | None:
    """Runs ``start..end`` as a weighted straight line over their commits, where its slope reaches
    ``threshold`` standard errors: the drift over them, and the weighted squares left about the line."""
    x, y, w = runs.commit[start:end], runs.y[start:end], runs.w[start:end]
    if end - start < DRIFT_MIN_RUNS or len(set(x)) < DRIFT_MIN_COMMITS:
        return None
    mean_x, mean_y = float((w * x).sum() / w.sum()), float((w * y).sum() / w.sum())
    sxx = float((w * (x - mean_x) ** 2).sum())
    slope = float((w * (x - mean_x) * (y - mean_y)).sum()) / sxx
    slope_se = 1.0 / math.sqrt(sxx)
    if abs(slope) < threshold * slope_se:
        return None
    squares = float((w * (y - mean_y - slope * (x - mean_x)) ** 2).sum())
    span = float(x[-1] - x[0])
    end_level = mean_y + slope * (float(x[-1]) - mean_x)
    shift = Shift(ShiftKind.DRIFT, start, end - 1, slope * span, slope_se * span, slope / slope_se, end_level)
    return shift, squares


def _levelled(shifts: list[Shift], runs: Runs) -> list[Shift]:
    """Each step's change read between the segments on either side of it, as finally cut (and its link)."""
    edges = sorted({0, runs.y.size, *(s.start for s in shifts if s.kind is ShiftKind.STEP)})
    found = []
    for shift in shifts:
        if shift.kind is not ShiftKind.STEP:
            found.append(shift)
            continue
        at = edges.index(shift.start)
        start, end = edges[at - 1], edges[at + 1]
        change, se, z = split(runs, start, shift.start, end)
        after = slice(shift.start, end)
        level = float((runs.w[after] * runs.y[after]).sum() / runs.w[after].sum())
        found.append(Shift(ShiftKind.STEP, shift.start, shift.start, change, se, z, level))
    return found


def _pending(runs: Runs, cuts: list[int], shifts: list[Shift], threshold: float) -> list[Shift]:
    """The search's shifts, where the newest commit has fewer than :data:`MIN_RUNS` runs: a step
    that stood only on them dropped (its side without them is no step), and the newest commit's
    runs against their segment: "pending one more run" where they differ by ``threshold``."""
    size = runs.y.size
    if not cuts or size - cuts[-1] >= _side(runs, cuts[-1]) or any(s.kind is ShiftKind.DRIFT for s in shifts):
        return shifts
    newest = cuts[-1]
    steps = sorted(s.start for s in shifts)
    if steps and steps[-1] > newest - MIN_RUNS:
        before = steps[-2] if len(steps) > 1 else 0
        if abs(split(runs, before, steps[-1], newest)[2]) < threshold:
            dropped = steps.pop()
            shifts = [s for s in shifts if s.start != dropped]
    start = steps[-1] if steps else 0
    if newest - start < MIN_RUNS:
        return shifts
    change, se, z = split(runs, start, newest, size)
    if abs(z) < threshold:
        return shifts
    level = float((runs.w[newest:] * runs.y[newest:]).sum() / runs.w[newest:].sum())
    return [*shifts, Shift(ShiftKind.PENDING, newest, size - 1, change, se, z, level)]


def _links(points: Sequence[Point], cuts: list[int], prior_sd: float) -> dict[int, tuple[float, float]]:
    """Each linked commit's change over the commit before it in the series (the inverse-variance mean
    of its runs linked to that commit) and the variance it is weighed with, by its first run's index.

    That variance is at least the links' own spread across the series: the median of their sizes
    (which the few steps among them cannot move) pooled with ``prior_sd`` as :data:`PRIOR_RUNS` more
    links. Why: a quick session's link is read from 3 processes a tree (2 degrees of freedom), and
    its standard error ranged 0.3% to 6% over identical code; one of 0.3% read +5.9%."""
    found = {}
    for at, cut in enumerate(cuts):
        end = cuts[at + 1] if at + 1 < len(cuts) else len(points)
        before = points[cut - 1].commit
        changes = [(p.link, p.link_se) for p in points[cut:end] if p.link is not None and p.linked == before]
        if changes:
            weights = [1.0 / max(se**2, EXACT_VARIANCE) for _, se in changes]
            mean = sum(w * change for w, (change, _) in zip(weights, changes, strict=True)) / sum(weights)
            found[cut] = (mean, 1.0 / sum(weights))
    if not found:
        return found
    sizes = np.abs(np.array([change for change, _ in found.values()]))
    typical = float(np.median(sizes)) / MEDIAN_ABSOLUTE if sizes.size >= 2 else prior_sd
    floor = (sizes.size * typical**2 + PRIOR_RUNS * prior_sd**2) / (sizes.size + PRIOR_RUNS)
    return {cut: (change, max(variance, floor)) for cut, (change, variance) in found.items()}
