"""Linked runs, pending steps and runner fleets in a history (issue 69): steps read from links,
the newest commit's lone run, and levels of several fingerprints under one machine name."""

from __future__ import annotations

import math
import random

import pytest

from overheadbench.engine.readings import Reading, RunRow
from overheadbench.engine.shifts import Point, ShiftKind, find_shifts
from overheadbench.history.timeline import read_history

pytestmark = pytest.mark.unit

LINK_SE = 0.006
"""A linked session's standard error of a change (of the log): one session, interleaved."""


def busy_series(n: int, steps: dict[int, float], seed: int, level_sd: float = 0.04, linked: bool = True):
    """``n`` runs of one commit each whose levels move ``level_sd`` between sessions (a busy runner),
    each linked to the one before it (its change read at ``LINK_SE``) where ``linked``."""
    rng = random.Random(seed)
    truth, points = 0.0, []
    for i in range(n):
        step = math.log1p(steps.get(i, 0.0))
        truth += step
        link = step + rng.gauss(0, LINK_SE) if linked and i else None
        points.append(Point(truth + rng.gauss(0, level_sd), 0.005, f"c{i}", link, LINK_SE, f"c{i - 1}" if i else ""))
    return points


@pytest.mark.parametrize("seed", range(8))
def test_links_name_both_steps_of_a_busy_runner_at_their_commits(seed: int) -> None:
    """Levels moving ±4% a session hid steps of +9% and +4.5%; each run's link over the one before
    names them at their commits, and nothing else."""
    found = find_shifts(busy_series(24, {8: 0.09, 16: 0.045}, seed), 0.005)
    assert [(s.kind, s.start) for s in found.shifts] == [(ShiftKind.STEP, 8), (ShiftKind.STEP, 16)]
    assert all(shift.change > 0 for shift in found.shifts)


def test_unlinked_the_same_busy_levels_rarely_name_both_steps() -> None:
    """What the links buy: levels alone moving ±4% a session name both steps at their commits in few
    of the same series."""
    exact = [(ShiftKind.STEP, 8), (ShiftKind.STEP, 16)]
    found = [find_shifts(busy_series(24, {8: 0.09, 16: 0.045}, seed, linked=False), 0.005) for seed in range(8)]
    assert sum([(s.kind, s.start) for s in series.shifts] == exact for series in found) <= 2


def test_identical_linked_runs_show_at_most_one_false_change_point_per_1000_runs() -> None:
    """Each linked commit's step is a two-sided 0.1% test: 100 series of 40 identical runs, busy and
    quiet levels alike."""
    false = sum(
        len(find_shifts(busy_series(40, {}, seed, level_sd=level_sd), 0.005).shifts)
        for seed in range(50)
        for level_sd in (0.04, 0.005)
    )
    assert false <= 4  # 4,000 runs


def test_a_link_to_another_commit_than_the_one_before_is_not_read() -> None:
    """A run linked to a commit that is not its predecessor in the series (another branch's run, a
    run left out) says nothing of this step: the levels decide it."""
    points = busy_series(12, {6: 0.5}, seed=1, level_sd=0.001)
    points[6] = Point(points[6].log, 0.005, "c6", 0.0, LINK_SE, "elsewhere")  # a link claiming no change
    (step,) = find_shifts(points, 0.005).shifts
    assert step.start == 6 and step.change == pytest.approx(0.5, rel=0.05)


def test_a_step_in_the_newest_run_alone_is_pending_and_not_placed_earlier() -> None:
    """One run after a +11% step: it was placed on the unchanged commit before it; now it is pending."""
    rng = random.Random(3)
    points = [Point(rng.gauss(0, 0.004), 0.004, f"c{i}") for i in range(12)]
    points.append(Point(math.log(1.11) + rng.gauss(0, 0.004), 0.004, "c12"))
    (pending,) = find_shifts(points, 0.005).shifts
    assert pending.kind is ShiftKind.PENDING and pending.start == 12
    assert pending.interval()[0] < 0.11 < pending.interval()[1]
    points.append(Point(math.log(1.11) + rng.gauss(0, 0.004), 0.004, "c13"))  # the next run places it
    (step,) = find_shifts(points, 0.005).shifts
    assert step.kind is ShiftKind.STEP and step.start == 12


def test_a_linked_step_in_the_newest_run_is_placed() -> None:
    """A link is the step measured side by side: it needs no second run."""
    points = busy_series(12, {11: 0.09}, seed=5)
    (step,) = find_shifts(points, 0.005).shifts
    assert step.kind is ShiftKind.STEP and step.start == 11


def row(number: int, machine: str, log: float, link: float | None = None) -> RunRow:
    reading = Reading("t::a", "overhead (time)", log, 0.004, 0.005, None, link=link, link_se=LINK_SE)
    linked = f"c{number - 1}" if link is not None else ""
    return RunRow(
        f"{number:04d}_c{number}.json",
        number,
        machine,
        f"c{number}",
        f"2026-01-{number + 1:02d}",
        "main",
        False,
        (reading,),
        linked,
    )


def test_a_fleet_of_two_fingerprints_is_read_with_an_offset_each() -> None:
    """Two runners whose levels differ by 30%, alternating at random: unoffset, every switch was a
    step; offset per fingerprint, the one real step (+12% at run 10) is all there is."""
    rng = random.Random(7)
    rows = []
    for i in range(20):
        machine = rng.choice(("fast", "slow"))
        level = (math.log(1.3) if machine == "slow" else 0.0) + (math.log(1.12) if i >= 10 else 0.0)
        rows.append(row(i, machine, level + rng.gauss(0, 0.004)))
    history = read_history(rows, None)
    assert history.machines == 2
    assert [(p.shift.kind, p.after.commit) for p in history.change_points] == [(ShiftKind.STEP, "c10")]


def test_a_linked_fleet_needs_no_offset_for_its_steps() -> None:
    rng = random.Random(8)
    rows = []
    for i in range(20):
        machine = "fast" if i % 3 else "slow"
        step = math.log(1.09) if i in (7, 14) else 0.0
        level = (math.log(1.4) if machine == "slow" else 0.0) + math.log(1.09) * ((i >= 7) + (i >= 14))
        rows.append(row(i, machine, level + rng.gauss(0, 0.03), step + rng.gauss(0, LINK_SE) if i else None))
    history = read_history(rows, None)
    assert history.linked == 19
    assert [p.after.commit for p in history.change_points] == ["c7", "c14"]
