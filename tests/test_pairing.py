"""A transport pair's schedule, paired comparison and budgets, on synthetic windows: deterministic.

The pair's claim is that the machine's drift during a session falls on both sides: these tests
drift the synthetic machine by a factor per round and check that the comparison does not see it,
while a real difference between the sides comes out whole, with an interval from the rounds."""

from __future__ import annotations

import math
import random

import pytest

from overheadbench.core.errors import MarkerError
from overheadbench.engine.checks import Status, Unit
from overheadbench.engine.student import t_quantile
from overheadbench.history.figure_changes import compare_figure
from overheadbench.http.load import LatencyStats, Throughput
from overheadbench.report.transport import figure_shown, render_figures
from overheadbench.transport.limits import parse_limits
from overheadbench.transport.metrics import Measure, Metric
from overheadbench.transport.pairing import SideFigures, compared, load_figures, schedule
from overheadbench.transport.results import FigureResult, Reading
from overheadbench.transport.verdict import judge


def test_each_round_runs_both_sides_once_in_a_random_order() -> None:
    order = list(schedule(200, random.Random(7)))
    rounds = [tuple(order[i : i + 2]) for i in range(0, len(order), 2)]
    assert all(sorted(r) == [0, 1] for r in rounds)
    firsts = sum(r[0] for r in rounds)
    assert 70 < firsts < 130  # each side first about as often: a drift within a round falls on both
    assert list(schedule(5, random.Random(1))) == list(schedule(5, random.Random(1)))


def side(values: list[float], metric: Metric = Metric.P50) -> SideFigures:
    return SideFigures([{metric: v} for v in values], {metric: sum(values) / len(values)})


def test_a_drift_shared_by_both_sides_cancels_and_a_real_difference_comes_out_whole() -> None:
    drift = [1.0, 1.3, 0.8, 2.0, 1.1, 0.9]  # the machine's mood, round by round: up to 2.5x
    baseline = side([0.001 * d for d in drift])
    framework = side([0.0012 * d for d in drift])
    change = compared("b vs a", Metric.P50, Measure.CHANGE, baseline, framework, 0.95)
    assert change.value == pytest.approx(0.2) and change.low == pytest.approx(0.2) and change.high == pytest.approx(0.2)
    assert change.measure == Measure.CHANGE and "paired over 6 rounds" in change.interval
    added = compared("b vs a", Metric.P50, Measure.ADDED, baseline, framework, 0.95)
    assert added.value == pytest.approx(0.0002 * sum(drift) / 6)  # pooled sides: their difference


def test_the_interval_is_students_t_over_the_rounds_centred_on_the_pooled_figures() -> None:
    ratios = [1.10, 1.30, 1.20, 1.25, 1.15]
    baseline = side([1.0] * 5)
    framework = side(ratios)
    change = compared("b vs a", Metric.P50, Measure.CHANGE, baseline, framework, 0.95)
    logs = [math.log(r) for r in ratios]
    mean = sum(logs) / 5
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / 4)
    half = t_quantile(0.975, 4) * sd / math.sqrt(5)
    centre = math.log(sum(ratios) / 5)  # the pooled figures' ratio, not the rounds' mean
    assert change.value == pytest.approx(math.exp(centre) - 1)
    assert change.low == pytest.approx(math.exp(centre - half) - 1)
    assert change.high == pytest.approx(math.exp(centre + half) - 1)
    assert change.samples == pytest.approx(tuple(r - 1 for r in ratios))
    one = compared("b vs a", Metric.P50, Measure.CHANGE, side([1.0]), side([1.5]), 0.95)
    assert one.low == one.high == pytest.approx(0.5) and one.interval == ""  # one round: no interval of its own


def window(requests: int, duration_s: float, latency_ms: float, cpu_s: float) -> Throughput:
    latencies = [int(latency_ms * 1e6)] * requests
    return Throughput(
        1,
        requests,
        0,
        duration_s,
        LatencyStats.from_ns(latencies),
        cpu_s,
        "",
        server_cpu_s_per_request=2 * cpu_s,
        server_cpu_by_server=(("a", cpu_s), ("b", cpu_s)),
        window_rates=(requests / duration_s,),
        latency_ns=tuple(latencies),
    )


def test_a_sides_windows_pool_into_one_run_weighted_by_their_requests() -> None:
    pooled = Throughput.pooled([window(100, 0.25, 1.0, 1e-4), window(300, 0.25, 2.0, 3e-4)])
    assert pooled.requests == 400 and pooled.duration_s == 0.5 and pooled.requests_per_s == 800
    assert pooled.window_rates == (400, 1200)
    assert pooled.client_cpu_s_per_request == pytest.approx((100 * 1e-4 + 300 * 3e-4) / 400)
    assert dict(pooled.server_cpu_by_server)["b"] == pytest.approx(2.5e-4)
    figures = load_figures(pooled)
    assert figures[Metric.RPS] == 800 and figures[Metric.P50] == pytest.approx(0.002)


def test_pair_budgets_name_their_figures_and_a_floor_is_stored_as_its_lowest_change() -> None:
    limits = parse_limits({"max": {"p95": 0.25, "rps": "0.2"}, "max_abs": {"p50": "1ms"}, "p95": "5ms"}, "t")
    assert limits == {
        (Metric.P95, Measure.CHANGE): 0.25,
        (Metric.RPS, Measure.CHANGE): -0.2,
        (Metric.P50, Measure.ADDED): 0.001,
        (Metric.P95, Measure.FIGURE): 0.005,
    }
    with pytest.raises(MarkerError, match=r"t: max=0.25: a transport pair's budgets name their figures, e.g. max="):
        parse_limits({"max": 0.25}, "t")
    with pytest.raises(MarkerError, match=r"t: max_abs\['errors'\]: a transport pair compares p50, p95"):
        parse_limits({"max_abs": {"errors": 1}}, "t")
    with pytest.raises(MarkerError, match=r"t: max_abs\['p95'\]='soon': "):
        parse_limits({"max_abs": {"p95": "soon"}}, "t")


def change_figure(
    value: float, low: float, high: float, metric: Metric = Metric.RPS, limit: float | None = -0.2
) -> FigureResult:
    """A pair's change judged on its own interval (the between-session widening is test_figures')."""
    reading = Reading(
        "h2c vs http1 c=10", metric, value, low, high, "95% CI, paired over 12 rounds", measure=Measure.CHANGE
    )
    return judge("t.py::test_pair", reading, limit, session_sd=0.0)


def test_a_pair_change_is_judged_signed_in_its_figures_direction_and_shown_as_a_change() -> None:
    fewer = change_figure(-0.10, -0.15, -0.05)
    assert fewer.verdict == Status.PASS and fewer.check.unit == Unit.SIGNED_FRACTION
    assert fewer.message == (
        "h2c vs http1 c=10: req/s change -10.0% (95% CI, paired over 12 rounds -15.0%..-5.0%) meets max[rps] -20.0%"
    )
    assert change_figure(-0.30, -0.35, -0.25).verdict == Status.FAIL
    slower = change_figure(0.3, 0.26, 0.34, Metric.P95, 0.25)
    assert slower.verdict == Status.FAIL and "exceeds max[p95] +25.0%" in slower.message
    added = judge(
        "t.py::x",
        Reading("g vs u", Metric.P50, 0.002, 0.0018, 0.0022, "95% CI", measure=Measure.ADDED),
        0.001,
        session_sd=0.0,
    )
    assert added.verdict == Status.FAIL and "p50 latency added +2.00 ms" in added.message
    assert "exceeds max_abs[p50] +1.00 ms" in added.message
    again = FigureResult.from_json(fewer.to_json())
    assert again.measure == Measure.CHANGE and again.key == fewer.key and again.check == fewer.check
    lines = "\n".join(render_figures([fewer, added]))
    assert "h2c vs http1 c=10 (change)" in lines and "g vs u (added)" in lines and "-10.0%" in lines


def test_stored_pair_changes_are_compared_as_ratios_and_added_costs_only_by_their_budget() -> None:
    before, after = change_figure(-0.10, -0.12, -0.08), change_figure(-0.40, -0.42, -0.38)
    moved = compare_figure(before, after)
    assert moved is not None and moved.old == pytest.approx(0.9) and moved.new == pytest.approx(0.6)
    assert not moved.higher_is_worse and moved.percent == pytest.approx(-100 / 3)
    shown = figure_shown(after, moved)
    assert shown.figure == "h2c vs http1 c=10 req/s ratio" and (shown.old, shown.new) == ("0.90x", "0.60x")
    added = judge("t::x", Reading("g vs u", Metric.P50, 0.002, 0.0018, 0.0022, "95% CI", measure=Measure.ADDED), None)
    assert compare_figure(added, added) is None


def test_a_pairs_change_carries_its_spread_between_sessions_budget_or_not() -> None:
    """A stream pair's change moved up to 23% between sessions (validation/STREAMS.md) while its
    interval held the rounds' own error: an unbudgeted change now carries the term a budgeted one is
    judged with, as an in-process pair's interval does, and says what it detects across sessions."""
    reading = Reading(
        "sdk vs raw", Metric.TOTAL, 1.5, 1.4, 1.6, "95% CI, paired over 12 rounds", measure=Measure.CHANGE
    )
    shown = judge("t.py::x", reading, None)  # the stream prior
    assert shown.verdict == Status.UNJUDGED
    assert shown.check.low < 1.4 and shown.check.high > 1.6
    learned = judge("t.py::x", reading, None, session_sd=0.0)  # a history that moves nothing
    assert (learned.check.low, learned.check.high) == pytest.approx((1.4, 1.6))
    assert shown.detects > learned.detects == pytest.approx(100 * (math.sqrt(2.6 / 2.4) - 1))
    figure = Reading("sdk alone", Metric.TOTAL, 0.1, 0.09, 0.11, "95% CI of the median of 21 streams")
    assert math.isnan(judge("t.py::x", figure, None).detects)  # a figure's own interval: not a change's
    unwidened = judge("t.py::x", figure, None)
    assert (unwidened.check.low, unwidened.check.high) == (0.09, 0.11)
