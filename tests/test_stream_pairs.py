"""A stream pair's rounds until decided, on synthetic streams with an injected clock: deterministic.

The pair ran a fixed 12 rounds and its intervals were 50-100 points wide; it is now read at its
rounds, twice and four times as many, while a budget of the pair is inconclusive, each look at the
Bonferroni confidence over the looks, within the pair's ceiling."""

from __future__ import annotations

import math
import random

from overheadbench.engine.checks import Status
from overheadbench.engine.looks import look_counts, looks_confidence
from overheadbench.http.stream_stats import StreamStats
from overheadbench.transport.metrics import Measure, Metric
from overheadbench.transport.pairing import compared, schedule, stream_sides
from overheadbench.transport.stream_pairs import Rounds, StreamPlan, pair_limits, per_round
from overheadbench.transport.verdict import judge


def stream(total_s: float) -> StreamStats:
    return StreamStats(10, 100, 10, total_s / 10, total_s, total_s / 10, total_s / 10)


def streamed(plan: StreamPlan, total: dict[int, float], noise: float, seed: int = 1) -> Rounds:
    """The rounds the plan asks for, each side's streams about ``total[side]`` seconds long."""
    rng = random.Random(seed)
    rounds: Rounds = ([], [])
    for side in plan.sides(rounds):
        rounds[side].append([stream(total[side] * math.exp(rng.gauss(0, noise))) for _ in range(3)])
    return rounds


class Budgets:
    """The fixture's question, as the test judges it: every budget of the pair decided at a look."""

    def __init__(self, limits: dict[tuple[Metric, Measure], float]) -> None:
        self.limits = limits

    def __call__(self, rounds: Rounds, confidence: float) -> bool:
        baseline, framework = stream_sides(rounds)
        for (metric, measure), limit in self.limits.items():
            reading = compared("pair", metric, measure, baseline, framework, confidence)
            if judge("t.py::pair", reading, limit, confidence=confidence).verdict == Status.INCONCLUSIVE:
                return False
        return True


def plan(limits: dict[tuple[Metric, Measure], float], clock: list[float] | None = None) -> StreamPlan:
    ticks, rng = clock if clock is not None else [0.0], random.Random(3)
    return StreamPlan(12, bool(limits), 60.0, lambda: schedule(1, rng), Budgets(limits), clock=lambda: ticks[0])


def test_a_pair_without_a_budget_of_its_own_is_read_once_at_the_usual_confidence() -> None:
    made = plan({})
    rounds = streamed(made, {0: 0.1, 1: 0.11}, 0.3)
    assert len(rounds[0]) == len(rounds[1]) == 12
    assert made.looks == [12] and made.confidence == 0.95


def test_a_budget_the_first_look_decides_stops_there() -> None:
    made = plan({(Metric.TOTAL, Measure.CHANGE): 0.25})
    rounds = streamed(made, {0: 0.1, 1: 0.2}, 0.02)  # +100% against a 25% budget: a clear fail
    assert len(rounds[0]) == 12
    assert made.looks == [12, 24, 48] and made.confidence == looks_confidence(3)


def test_an_undecided_budget_looks_again_up_to_four_times_the_rounds() -> None:
    made = plan({(Metric.TOTAL, Measure.CHANGE): 0.10})
    rounds = streamed(made, {0: 0.1, 1: 0.11}, 0.3)  # +10% against a 10% budget, noisy: never decided
    assert len(rounds[0]) == len(rounds[1]) == 48


def test_the_rounds_stop_at_the_first_look_that_decides_every_budget() -> None:
    stops = set()
    for seed in range(12):  # same code, a wide spread, a budget near it: each stop where it should be
        made = plan({(Metric.TOTAL, Measure.CHANGE): 0.25, (Metric.TTFE, Measure.CHANGE): 0.25})
        rounds = streamed(made, {0: 0.1, 1: 0.1}, 0.35, seed=seed)
        stopped = len(rounds[0])
        stops.add(stopped)
        for look in made.looks:
            decided = made.decided(([*rounds[0][:look]], [*rounds[1][:look]]), made.confidence)
            if look < stopped:
                assert not decided, (seed, look)
            elif look == stopped:
                assert decided or look == made.looks[-1], (seed, look)
    assert len(stops) >= 2  # some stopped at a later look than others


def test_the_next_look_must_fit_the_ceiling() -> None:
    ticks = [0.0]
    made = plan({(Metric.TOTAL, Measure.CHANGE): 0.10}, ticks)
    rounds: Rounds = ([], [])
    for side in made.sides(rounds):
        ticks[0] += 1.5  # each side's round takes 1.5 s: the first look 36 s, the second would end at 72 s
        rounds[side].append([stream(0.1 * (1.1 if side else 1.0)) for _ in range(3)])
    assert len(rounds[0]) == 12


def test_the_looks_are_the_pairs_schedule() -> None:
    assert look_counts(12, 48) == [12, 24, 48]
    assert look_counts(6, 24) == [6, 12, 24]
    assert per_round(1, True) == 3 and per_round(8, True) == 8  # one at a time in turn; else one batch in flight
    assert per_round(8, False) == 1  # without --overhead: one stream, briefly


def test_only_the_pairs_budgets_on_stream_figures_keep_it_going() -> None:
    marker = {
        (Metric.TTFE, Measure.CHANGE): 0.5,
        (Metric.P95, Measure.CHANGE): 0.2,
        (Metric.TOTAL, Measure.FIGURE): 1.0,
    }
    call = {(Metric.TTFE, Measure.CHANGE): 0.3, (Metric.EVENTS_PER_S, Measure.ADDED): -5.0}
    assert pair_limits(call, marker) == {(Metric.TTFE, Measure.CHANGE): 0.3, (Metric.EVENTS_PER_S, Measure.ADDED): -5.0}
