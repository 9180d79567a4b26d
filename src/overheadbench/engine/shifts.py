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
- **Each value winsorised** against the running median of :data:`MEDIAN_WINDOW` runs at
  :data:`CLIP` of its standard deviations before the search: one busy session is not a step (a
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

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ..core.vocabulary import Word

THRESHOLD = 3.29
"""``|z|`` a split (or a drift's slope) must reach: a two-sided test at 0.1% (see the module)."""
MIN_RUNS = 2
"""Runs each side of a step must hold: a step seen in the newest run alone is named once the next run confirms it."""
DRIFT_MIN_RUNS = 6
DRIFT_MIN_COMMITS = 4
"""Runs, and commits among them, a stretch must hold to be read as a drift (over its commits)."""
MEDIAN_WINDOW = 5
CLIP = 3.0
"""A value farther than this many of its standard deviations from the running median is moved to that distance."""
CONFIDENCE = 0.95
PRIOR_RUNS = 4
"""How many differences the project's measured between-session spread counts as, beside a series' own."""
MEDIAN_ABSOLUTE = NormalDist().inv_cdf(0.75)
"""A standard normal's median absolute value (0.6745): a robust spread's scale."""
KEPT_DIFFERENCES = 0.9
"""The share of successive differences, the smallest, that the between-session spread is read
from before the steps are known: a step makes one large difference, which the largest tenth (at
least one) leaves out. Once the search has taken the steps out, every difference within a segment counts."""


class ShiftKind(Word):
    STEP = "step"
    DRIFT = "drift"


@dataclass(frozen=True)
class Point:
    """One run's reading of the figure: its log value, that log's standard error, and its commit
    (runs of one commit are never split apart)."""

    log: float
    se: float
    commit: str


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
    ``history``'s 0.88%, and every later interval ±600 points."""
    y = np.array([p.log for p in points], float)
    own = np.array([p.se for p in points], float) ** 2
    if len(points) < 2 * MIN_RUNS:  # too short for a step: every difference is within the one segment
        return Series((), *spread(np.diff(y), own, prior_sd, trimmed=False))
    tau = spread(np.diff(y), own, prior_sd)[0]
    weights = 1.0 / (own + tau**2)
    clipped = _winsorised(y, np.sqrt(own + spread(np.diff(y), own, prior_sd, robust=True)[0] ** 2))
    cuts = [i for i in range(1, len(points)) if points[i].commit != points[i - 1].commit]
    commits = np.searchsorted(np.array(cuts, int), np.arange(len(points)), side="right").astype(float)
    shifts = sorted(
        _levelled(_search(_Runs(clipped, weights, commits), cuts, threshold), clipped, weights), key=lambda s: s.start
    )
    # the spread within segments: no difference across a step, none touching a run the search winsorised
    left_out = {shift.start for shift in shifts if shift.kind is ShiftKind.STEP}
    far = clipped != y
    within = np.array(
        [y[i] - y[i - 1] for i in range(1, len(points)) if i not in left_out and not far[i - 1 : i + 1].any()]
    )
    return Series(tuple(shifts), *spread(within, own, prior_sd, trimmed=False))


def between_sd(y: np.ndarray, own: np.ndarray, prior_sd: float) -> float:
    """The between-session sd of a series' log values from all its successive differences (:func:`spread`)."""
    return spread(np.diff(y), own, prior_sd)[0]


def spread(
    differences: np.ndarray, own: np.ndarray, prior_sd: float, robust: bool = False, trimmed: bool = True
) -> tuple[float, float]:
    """The between-session sd of a series from its successive log ``differences`` (the smallest
    :data:`KEPT_DIFFERENCES` of them, or all where not ``trimmed``; each holds two runs' variance),
    less the runs' ``own`` variance, pooled with ``prior_sd`` as if it were :data:`PRIOR_RUNS` more differences (a short
    series leans on the project's measured spread, a long one on its own; a NaN prior: none), and
    its degrees of freedom, the differences kept; fewer than two differences: the prior, taken as known.
    ``robust``: from the differences' median instead, which one run far from the rest (two large
    differences of six: a pipeline read 32x in one session of ten, 550-640x in the rest) cannot move:
    the scale values are winsorised at, before the steps are known."""
    if differences.size < 2:
        return prior_sd, math.inf
    ordered = np.sort(np.abs(differences))
    kept = max(1, math.floor(KEPT_DIFFERENCES * ordered.size)) if trimmed else ordered.size
    if robust:
        rms = float(np.median(ordered)) / MEDIAN_ABSOLUTE
    else:
        rms = math.sqrt(float(np.mean(ordered[:kept] ** 2))) / _trimmed_rms(kept / ordered.size)
    own_sd2 = max(rms**2 / 2 - float(np.median(own)), 0.0)
    if not math.isfinite(prior_sd):
        return math.sqrt(own_sd2), float(kept)
    return math.sqrt((kept * own_sd2 + PRIOR_RUNS * prior_sd**2) / (kept + PRIOR_RUNS)), float(kept)


def _trimmed_rms(share: float) -> float:
    """The root mean square of a standard normal's smallest ``share`` in absolute value."""
    if share >= 1.0:
        return 1.0
    q = NormalDist().inv_cdf((1 + share) / 2)
    return math.sqrt(1 - 2 * q * NormalDist().pdf(q) / share)


def _winsorised(y: np.ndarray, sd: np.ndarray) -> np.ndarray:
    half = MEDIAN_WINDOW // 2
    edges = [i for i in range(y.size) if i < half or i >= y.size - half]  # windows cut short by an end
    medians = np.empty(y.size)
    if y.size >= MEDIAN_WINDOW:  # every whole window at once (a thousand runs of fifty pairs: 1.3 s one by one)
        medians[half : y.size - half] = np.median(np.lib.stride_tricks.sliding_window_view(y, MEDIAN_WINDOW), axis=1)
    for i in edges:
        medians[i] = np.median(y[max(0, i - half) : i + half + 1])
    clipped: np.ndarray = np.clip(y, medians - CLIP * sd, medians + CLIP * sd)
    return clipped


@dataclass(frozen=True)
class _Runs:
    """A series as searched: its (winsorised) log values, their weights, each run's commit ordinal."""

    y: np.ndarray
    w: np.ndarray
    commit: np.ndarray
    """The ordinal of each run's commit (runs of one commit share it): a drift's x axis."""


def _search(runs: _Runs, cuts: list[int], threshold: float) -> list[Shift]:
    """The series' steps, or one drift where a line explains it better than its steps do (each
    step, like the line's slope, costs ``threshold**2`` of weighted squares: a step must explain
    more than a significant one would); then a drift inside each stretch between steps."""
    size = runs.y.size
    steps: list[Shift] = []
    _steps(runs, 0, size, cuts, threshold, steps)
    edges = sorted({0, size, *(step.start for step in steps)})
    drift = _drift(runs, 0, size, threshold)
    if drift is not None and drift[1] + threshold**2 <= _squares(runs, edges) + threshold**2 * len(steps):
        return [drift[0]]
    drifts = [_drift(runs, a, b, threshold) for a, b in zip(edges, edges[1:], strict=False)] if steps else []
    return steps + [found[0] for found in drifts if found is not None]


def _steps(runs: _Runs, start: int, end: int, cuts: list[int], threshold: float, found: list[Shift]) -> None:
    """Binary segmentation of runs ``start..end``: its best split kept where ``|z|`` reaches
    ``threshold``, and both sides searched again."""
    allowed = [k for k in cuts if start + MIN_RUNS <= k <= end - MIN_RUNS]
    if not allowed:
        return
    z = _splits(runs.y[start:end], runs.w[start:end], np.array(allowed) - start)
    best = int(np.argmax(np.abs(z)))
    if abs(z[best]) < threshold:
        return
    cut = allowed[best]
    found.append(Shift(ShiftKind.STEP, cut, cut, 0.0, 0.0, float(z[best])))  # levels read once all are found
    _steps(runs, start, cut, cuts, threshold, found)
    _steps(runs, cut, end, cuts, threshold, found)


def _squares(runs: _Runs, edges: list[int]) -> float:
    """The weighted squares left about each stretch's weighted mean, the stretches cut at ``edges``."""
    total = 0.0
    for a, b in zip(edges, edges[1:], strict=False):
        y, w = runs.y[a:b], runs.w[a:b]
        total += float((w * (y - float((w * y).sum() / w.sum())) ** 2).sum())
    return total


def _splits(y: np.ndarray, w: np.ndarray, at: np.ndarray) -> np.ndarray:
    """For each split ``at`` of a segment, ``z`` of the difference of the two sides' weighted means."""
    cw, cwy = np.cumsum(w), np.cumsum(w * y)
    left_w, left_wy = cw[at - 1], cwy[at - 1]
    right_w, right_wy = cw[-1] - left_w, cwy[-1] - left_wy
    z: np.ndarray = (right_wy / right_w - left_wy / left_w) / np.sqrt(1.0 / left_w + 1.0 / right_w)
    return z


def _drift(runs: _Runs, start: int, end: int, threshold: float) -> tuple[Shift, float] | None:
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


def _levelled(shifts: list[Shift], y: np.ndarray, w: np.ndarray) -> list[Shift]:
    """Each step's change read between the segments on either side of it, as finally cut."""
    edges = sorted({0, y.size, *(s.start for s in shifts if s.kind is ShiftKind.STEP)})
    levelled = []
    for shift in shifts:
        if shift.kind is ShiftKind.DRIFT:
            levelled.append(shift)
            continue
        at = edges.index(shift.start)
        before, after = slice(edges[at - 1], shift.start), slice(shift.start, edges[at + 1])
        mean_before = float((w[before] * y[before]).sum() / w[before].sum())
        mean_after = float((w[after] * y[after]).sum() / w[after].sum())
        se = math.sqrt(1.0 / float(w[before].sum()) + 1.0 / float(w[after].sum()))
        change = mean_after - mean_before
        levelled.append(Shift(ShiftKind.STEP, shift.start, shift.start, change, se, change / se, mean_after))
    return levelled
