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

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ..core.vocabulary import Word
from .spread import MEDIAN_ABSOLUTE, PRIOR_RUNS, spread

THRESHOLD = 3.29
"""``|z|`` a split (or a drift's slope, or a link) must reach: a two-sided test at 0.1%
(see :mod:`overheadbench.engine.shifts`)."""
MIN_RUNS = 2
"""Runs each side of a step must hold: a step seen in the newest run alone is pending until the next run confirms it."""
DRIFT_MIN_RUNS = 6
DRIFT_MIN_COMMITS = 4
"""Runs, and commits among them, a stretch must hold to be read as a drift (over its commits)."""
CONFIDENCE = 0.95
MEDIAN_WINDOW = 5
CLIP = 3.0
"""A value farther than this many of its standard deviations from the running median is moved to that distance."""
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
    ``history``'s 0.88%, and every later interval ±600 points. Where runs are linked, the steps
    from their first linked commit on are read from the links (:func:`_linked`)."""
    y = np.array([p.log for p in points], float)
    own = np.array([p.se for p in points], float) ** 2
    cuts = [i for i in range(1, len(points)) if points[i].commit != points[i - 1].commit]
    found_links = _links(points, cuts)
    if len(points) < 2 * MIN_RUNS and not found_links:  # too short for a step: every difference is within one segment
        return Series((), *spread(np.diff(y), own, prior_sd, trimmed=False))
    tau = spread(np.diff(y), own, prior_sd)[0]
    weights = 1.0 / (own + tau**2)
    clipped = _winsorised(y, np.sqrt(own + spread(np.diff(y), own, prior_sd, robust=True)[0] ** 2))
    commits = np.searchsorted(np.array(cuts, int), np.arange(len(points)), side="right").astype(float)
    runs = _Runs(clipped, weights, commits)
    if found_links:
        found = _linked(runs, cuts, found_links, threshold, LINK_PRIOR_SHARE * prior_sd)
    else:
        searched = _search(runs, cuts, threshold)  # the newest runs unclipped: a lone far run is _pending, not gone
        found = _levelled(_pending(_Runs(y, weights, commits), cuts, searched, threshold), clipped, weights)
    shifts = sorted(found, key=lambda s: s.start)
    # the spread within segments: no difference across a step, none touching a run the search winsorised
    left_out = {shift.start for shift in shifts if shift.kind is not ShiftKind.DRIFT}
    far = clipped != y
    within = np.array(
        [y[i] - y[i - 1] for i in range(1, len(points)) if i not in left_out and not far[i - 1 : i + 1].any()]
    )
    return Series(tuple(shifts), *spread(within, own, prior_sd, trimmed=False))


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
    _segment_steps(runs, 0, size, cuts, threshold, steps)
    edges = sorted({0, size, *(step.start for step in steps)})
    drift = _line_drift(runs, 0, size, threshold)
    if drift is not None and drift[1] + threshold**2 <= _squares(runs, edges) + threshold**2 * len(steps):
        return [drift[0]]
    drifts = [_line_drift(runs, a, b, threshold) for a, b in zip(edges, edges[1:], strict=False)] if steps else []
    return steps + [found[0] for found in drifts if found is not None]


def _segment_steps(runs: _Runs, start: int, end: int, cuts: list[int], threshold: float, found: list[Shift]) -> None:
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
    _segment_steps(runs, start, cut, cuts, threshold, found)
    _segment_steps(runs, cut, end, cuts, threshold, found)


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


def _line_drift(runs: _Runs, start: int, end: int, threshold: float) -> tuple[Shift, float] | None:
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
    found = []
    for shift in shifts:
        if shift.kind is not ShiftKind.STEP:
            found.append(shift)
            continue
        at = edges.index(shift.start)
        before, after = slice(edges[at - 1], shift.start), slice(shift.start, edges[at + 1])
        mean_before = float((w[before] * y[before]).sum() / w[before].sum())
        mean_after = float((w[after] * y[after]).sum() / w[after].sum())
        se = math.sqrt(1.0 / float(w[before].sum()) + 1.0 / float(w[after].sum()))
        change = mean_after - mean_before
        found.append(Shift(ShiftKind.STEP, shift.start, shift.start, change, se, change / se, mean_after))
    return found


def _pending(runs: _Runs, cuts: list[int], shifts: list[Shift], threshold: float) -> list[Shift]:
    """The search's shifts, where the newest commit has fewer than :data:`MIN_RUNS` runs: a step
    that stood only on them dropped (its side without them is no step), and the newest commit's
    runs against their segment: "pending one more run" where they differ by ``threshold``."""
    size = runs.y.size
    if not cuts or size - cuts[-1] >= MIN_RUNS or any(s.kind is ShiftKind.DRIFT for s in shifts):
        return shifts
    newest = cuts[-1]
    steps = sorted(s.start for s in shifts)
    if steps and steps[-1] > newest - MIN_RUNS:
        before = steps[-2] if len(steps) > 1 else 0
        if abs(_between(runs, slice(before, steps[-1]), slice(steps[-1], newest))[2]) < threshold:
            dropped = steps.pop()
            shifts = [s for s in shifts if s.start != dropped]
    start = steps[-1] if steps else 0
    if newest - start < MIN_RUNS:
        return shifts
    change, se, z = _between(runs, slice(start, newest), slice(newest, size))
    if abs(z) < threshold:
        return shifts
    level = float((runs.w[newest:] * runs.y[newest:]).sum() / runs.w[newest:].sum())
    return [*shifts, Shift(ShiftKind.PENDING, newest, size - 1, change, se, z, level)]


def _between(runs: _Runs, before: slice, after: slice) -> tuple[float, float, float]:
    """The change of the weighted mean from runs ``before`` to runs ``after``, its standard error, and ``z``."""
    w_before, w_after = float(runs.w[before].sum()), float(runs.w[after].sum())
    mean_after = float((runs.w[after] * runs.y[after]).sum()) / w_after
    change = mean_after - float((runs.w[before] * runs.y[before]).sum()) / w_before
    se = math.sqrt(1.0 / w_before + 1.0 / w_after)
    return change, se, change / se


def _links(points: Sequence[Point], cuts: list[int]) -> dict[int, tuple[float, float]]:
    """Each commit's change over the commit before it in the series, from its runs linked to that
    commit (their inverse-variance mean, and its variance), by the index of its first run."""
    found = {}
    for at, cut in enumerate(cuts):
        end = cuts[at + 1] if at + 1 < len(cuts) else len(points)
        before = points[cut - 1].commit
        changes = [(p.link, p.link_se) for p in points[cut:end] if p.link is not None and p.linked == before]
        if changes:
            weights = [1.0 / max(se**2, EXACT_VARIANCE) for _, se in changes]
            mean = sum(w * change for w, (change, _) in zip(weights, changes, strict=True)) / sum(weights)
            found[cut] = (mean, 1.0 / sum(weights))
    return found


def _linked(
    runs: _Runs, cuts: list[int], links: dict[int, tuple[float, float]], threshold: float, prior_sd: float
) -> list[Shift]:
    """A series with linked runs: before its first linked commit, the level search's steps; from it
    on, each commit's step read from its link (a commit without one: its runs' levels against the
    commit's before it), beyond ``threshold`` standard errors; then a drift within each stretch
    _between the steps, read from the levels (a link's small bias would add up over a stretch).

    Why a link decides its commit alone: it is one runner's change, measured interleaved in one
    session, so the runner's load and CPU model cancel in it; the levels of separate sessions carry
    them (a busy runner moved each run ±4%, and two steps read as one drift of +13.5% over 30 runs).
    Each link's test is a two-sided 0.1% test like a split's, so the false-alarm rate stays one per
    1,000 commits; its standard error carries the links' own spread beyond their intervals
    (:func:`_link_sd`)."""
    first = min(links)
    found: list[Shift] = []
    _segment_steps(runs, 0, first, [k for k in cuts if k < first], threshold, found)
    found = _levelled(found, runs.y[:first], runs.w[:first])
    extra = _link_sd(links, prior_sd)
    ends = [*cuts[1:], runs.y.size]
    for at, cut in enumerate(cuts):
        if cut < first:
            continue
        if cut in links:
            change, variance = links[cut]
            se = math.sqrt(variance + extra**2)
        else:
            start = cuts[at - 1] if at else 0
            change, se, _ = _between(runs, slice(start, cut), slice(cut, ends[at]))
        if abs(change) >= threshold * se:
            found.append(Shift(ShiftKind.STEP, cut, cut, change, se, change / se))
    edges = sorted({0, runs.y.size, *(s.start for s in found)})
    found = [dataclasses.replace(s, level=_level(runs, s.start, edges)) for s in found]
    drifts = (_line_drift(runs, a, b, threshold) for a, b in zip(edges, edges[1:], strict=False))
    return found + [drift[0] for drift in drifts if drift is not None]


def _level(runs: _Runs, start: int, edges: list[int]) -> float:
    """The weighted mean of the stretch that starts at ``start``."""
    after = slice(start, edges[edges.index(start) + 1])
    return float((runs.w[after] * runs.y[after]).sum() / runs.w[after].sum())


def _link_sd(links: dict[int, tuple[float, float]], prior_sd: float) -> float:
    """How far links spread beyond their own intervals, from the series' links (the median's
    scale, which the steps among them cannot move), pooled with ``prior_sd`` as :func:`spread` pools."""
    values = np.array([change for change, _ in links.values()])
    own = np.array([variance for _, variance in links.values()])
    if values.size < 2:
        return prior_sd
    rms = float(np.median(np.abs(values))) / MEDIAN_ABSOLUTE
    sd2 = max(rms**2 - float(np.median(own)), 0.0)
    return math.sqrt((values.size * sd2 + PRIOR_RUNS * prior_sd**2) / (values.size + PRIOR_RUNS))
