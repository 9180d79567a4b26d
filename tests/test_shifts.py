"""Steps and drifts in a series of runs (:mod:`overheadbench.engine.shifts`), on series drawn
from a seeded generator: what the search finds, where, and what it leaves alone."""

from __future__ import annotations

import math
import random

import pytest

from overheadbench.engine.shifts import MIN_RUNS, Point, ShiftKind, find_shifts
from overheadbench.engine.spread import between_sd

TAU, SE = 0.01, 0.008
"""A series' between-session sd and each run's own standard error (of the log)."""


def series(
    n: int, steps: dict[int, float] | None = None, drift: float = 0.0, seed: int = 1, commits=None
) -> list[Point]:
    """``n`` runs, the level moving by ``steps[i]`` (a fraction) at run ``i`` and by ``drift`` each run."""
    steps = steps or {}
    rng = random.Random(seed)
    level, points = 0.0, []
    for i in range(n):
        level += math.log1p(steps.get(i, 0.0)) + (drift if i else 0.0)
        commit = commits[i] if commits else f"c{i}"
        points.append(Point(level + rng.gauss(0, TAU) + rng.gauss(0, SE), SE, commit))
    return points


def test_two_steps_are_found_at_their_runs_with_their_size() -> None:
    found = find_shifts(series(30, {10: 0.09, 20: 0.045}, seed=4), 0.005)
    steps = [shift for shift in found.shifts if shift.kind is ShiftKind.STEP]
    assert [shift.start for shift in steps] == [10, 20]
    for shift, size in zip(steps, (0.09, 0.045), strict=True):
        low, high = shift.interval()
        assert low < size < high and shift.z > 3.29


@pytest.mark.parametrize("seed", range(5))
def test_a_series_that_does_not_move_has_no_change_point(seed: int) -> None:
    assert find_shifts(series(40, seed=seed), 0.005).shifts == ()


def test_one_busy_session_is_not_a_step() -> None:
    """A run 8 of its standard deviations off (a session beside busy loops) is clipped to the
    running median's reach: neither a step up nor one back down."""
    points = series(30, seed=2)
    points[15] = Point(points[15].log + 8 * math.hypot(TAU, SE), SE, points[15].commit)
    assert find_shifts(points, 0.005).shifts == ()


def test_a_slow_drift_is_one_drift_with_its_total_not_a_row_of_steps() -> None:
    found = find_shifts(series(20, drift=math.log1p(0.005), seed=3), 0.002)
    (drift,) = found.shifts
    assert drift.kind is ShiftKind.DRIFT and (drift.start, drift.end) == (0, 19)
    low, high = drift.interval()
    assert low < 19 * 0.005 * 1.01 < high  # +0.5% a run over 19 steps between the first and last run


def test_a_step_falls_only_between_commits_and_needs_runs_on_both_sides() -> None:
    """Runs of one commit are one measurement of it: a step never splits them; and a step in the
    newest run alone waits for the next run to confirm it."""
    commits = ["a", "a", "b", "b", "c", "c", "c", "d", "d", "d"]
    found = find_shifts(series(10, {4: 0.2}, commits=commits), 0.005)
    assert [shift.start for shift in found.shifts] == [4]  # the first run of commit c
    assert find_shifts(series(10, {4: 0.2}, commits=["a"] * 10), 0.005).shifts == ()  # one commit: no step
    (pending,) = find_shifts(series(12, {11: 0.3}), 0.005).shifts  # shown as pending, never placed
    assert pending.kind is ShiftKind.PENDING and pending.start == 11
    assert [s.start for s in find_shifts(series(12, {12 - MIN_RUNS: 0.3}), 0.005).shifts] == [12 - MIN_RUNS]


def test_the_between_session_spread_is_read_past_the_steps_and_leans_on_the_prior_in_short_series() -> None:
    import numpy as np

    flat = np.array([p.log for p in series(200, seed=5)])
    stepped = np.array([p.log for p in series(200, {50: 0.5, 100: 0.5, 150: 0.5}, seed=5)])
    own = np.full(200, SE**2)
    assert between_sd(flat, own, 0.0) == pytest.approx(TAU, rel=0.25)
    assert between_sd(stepped, own, 0.0) == pytest.approx(between_sd(flat, own, 0.0), rel=0.1)
    assert between_sd(flat, own, 0.05) == pytest.approx(TAU, rel=0.5)  # 180 differences outweigh the prior
    assert between_sd(flat[:6], own[:6], 0.05) > 0.03  # four differences do not


def test_a_series_too_short_to_split_has_none() -> None:
    assert find_shifts(series(3, {2: 1.0}), 0.005).shifts == ()


def test_steps_of_both_signs_in_one_series_are_each_found_with_their_sign() -> None:
    found = find_shifts(series(36, {12: -0.08, 24: 0.06}, seed=6), 0.005)
    steps = [shift for shift in found.shifts if shift.kind is ShiftKind.STEP]  # its newest run is 3.9 sd high: pending
    assert [(shift.start, shift.change < 0) for shift in steps] == [(12, True), (24, False)]


def test_a_short_series_reads_a_large_step_whole() -> None:
    """Two runs a side of a +138% step (tenacity 8.2.2 -> 9.0.0): the running median straddled it, and
    the step read +60% with the level after at 184x for 229x; each segment's own median keeps it whole."""
    points = [Point(math.log(ratio), 0.01, f"c{i}") for i, ratio in enumerate((96.0, 96.7, 234.2, 223.5))]
    (step,) = find_shifts(points, 0.005).shifts
    assert step.start == 2 and step.change == pytest.approx(229 / 96.35 - 1, rel=0.02)
