"""Transport figures without a network: limits, intervals, verdicts, JSON, changes, tables.
Synthetic readings and samples only, so every assertion is deterministic."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from overheadbench.core.errors import MarkerError
from overheadbench.engine.changes import Gate
from overheadbench.engine.checks import Status
from overheadbench.engine.figure_intervals import mean_interval, quantile_interval, ratio_interval
from overheadbench.engine.findings import Finding
from overheadbench.engine.settings import Policy
from overheadbench.engine.shifts import Point, find_shifts
from overheadbench.history.figure_changes import compare_figure, compare_figures
from overheadbench.report.shown import render_changes
from overheadbench.report.transport import figure_shown, markdown_figures, render_figures
from overheadbench.store.runs import Run
from overheadbench.transport.limits import limits_from_marker, parse_limits
from overheadbench.transport.metrics import SPECS, Measure, Metric
from overheadbench.transport.outcome import figures_outcome
from overheadbench.transport.results import FigureResult, Reading
from overheadbench.transport.verdict import judge

RPS_PRIOR = SPECS[Metric.RPS].session_sd


def test_limits_parse_durations_and_numbers_and_name_the_test_and_keyword_when_wrong() -> None:
    limits = parse_limits({"p95": "5ms", "rps": "1,000", "ttfe": 0.02, "scaling": 1, "errors": 0, "p99": None}, "t")
    assert limits == {
        (metric, Measure.FIGURE): limit
        for metric, limit in (
            (Metric.P95, 0.005),
            (Metric.RPS, 1000.0),
            (Metric.TTFE, 0.02),
            (Metric.SCALING, 1.0),
            (Metric.ERRORS, 0),
        )
    }
    with pytest.raises(MarkerError, match=r"t.py::test_x: @pytest.mark.transport: p95='fast': .*fast"):
        limits_from_marker((), {"p95": "fast"}, "t.py::test_x")
    with pytest.raises(MarkerError, match=r"unknown budget\(s\) rpm; it accepts p50, p95"):
        limits_from_marker((), {"rpm": 100}, "t.py::test_x")
    with pytest.raises(MarkerError, match="rps=-5: -5 is not a number >= 0"):
        parse_limits({"rps": -5}, "t")
    with pytest.raises(MarkerError, match="keyword arguments only"):
        limits_from_marker(("5ms",), {}, "t.py::test_x")


def reading(metric: Metric, value: float, low: float, high: float, interval: str = "95% CI") -> Reading:
    return Reading("h2c c=100", metric, value, low, high, interval)


@pytest.mark.parametrize(
    "metric, low, high, limit, status",
    [
        (Metric.P95, 0.004, 0.0045, 0.005, Status.PASS),  # a ceiling: the whole interval under it
        (Metric.P95, 0.0051, 0.006, 0.005, Status.FAIL),
        (Metric.P95, 0.0045, 0.0055, 0.005, Status.INCONCLUSIVE),
        (Metric.RPS, 1100, 1300, 1000, Status.PASS),  # a floor: the whole interval over it
        (Metric.RPS, 700, 900, 1000, Status.FAIL),
        (Metric.RPS, 900, 1100, 1000, Status.INCONCLUSIVE),
        (Metric.SCALING, 1.0, 1.2, 1.0, Status.PASS),  # exactly at a floor meets it
    ],
)
def test_a_figure_is_judged_by_its_whole_interval_in_its_own_direction(
    metric: Metric, low: float, high: float, limit: float, status: Status
) -> None:
    judged = judge("t::x", reading(metric, (low + high) / 2, low, high), limit, session_sd=0.0)
    assert judged.verdict == status
    assert judged.message.startswith("h2c c=100: ")
    if status == Status.INCONCLUSIVE:
        assert "measure longer" in judged.message


def test_a_budgeted_figure_is_judged_across_sessions_each_on_its_own_scale() -> None:
    """A p95 of 4.6 ms ± 2% against 5 ms passes within the session, but p95 moves ~10% between
    sessions here: judged across sessions it is inconclusive, so no session passes it and the
    next fails it. A learned spread replaces the prior. A pair's change is widened on its ratio's
    log scale by the pair's (smaller) prior; an added cost relative to its size."""
    z = 1.959964
    near = reading(Metric.P95, 0.0046, 0.0045, 0.0047)
    assert judge("t::x", near, 0.005, session_sd=0.0).verdict == Status.PASS
    widened = judge("t::x", near, 0.005)
    sd = SPECS[Metric.P95].session_sd
    assert widened.verdict == Status.INCONCLUSIVE and f"widened by {sd:.0%} between sessions" in widened.message
    assert widened.check.high == pytest.approx(0.0046 * math.exp(math.hypot(math.log(0.0047 / 0.0046), z * sd)))
    assert widened.reading == near  # the session's own interval is kept beside the judged one
    assert judge("t::x", near, 0.005, session_sd=0.01).verdict == Status.PASS  # this machine's own runs: 1%
    assert judge("t::x", reading(Metric.P95, 0.002, 0.0019, 0.0021), 0.005).verdict == Status.PASS  # far from it
    single = judge("t::x", Reading("r", Metric.SERVER_CPU, 8e-4, 8e-4, 8e-4, ""), 3e-4)
    cpu_sd = SPECS[Metric.SERVER_CPU].session_sd
    assert single.verdict == Status.FAIL and single.check.low == pytest.approx(8e-4 * math.exp(-z * cpu_sd))
    change = Reading("b vs a", Metric.P95, 0.24, 0.24, 0.24, "95% CI, paired over 12 rounds", measure=Measure.CHANGE)
    pair_sd = SPECS[Metric.P95].pair_sd
    judged = judge("t::x", change, 0.7)
    assert judged.check.high == pytest.approx(1.24 * math.exp(z * pair_sd) - 1, rel=1e-6)
    assert judged.check.low == pytest.approx(1.24 * math.exp(-z * pair_sd) - 1, rel=1e-6)
    assert judged.verdict == Status.PASS
    added = Reading("b vs a", Metric.P50, 0.002, 0.002, 0.002, "95% CI", measure=Measure.ADDED)
    assert judge("t::x", added, 0.01).check.high == pytest.approx(0.002 * (1 + z * SPECS[Metric.P50].session_sd))
    assert judge("t::x", near, None).check.high == 0.0047  # no budget: the figure as measured


def test_single_readings_unbudgeted_and_unmeasured_figures() -> None:
    cpu = judge("t::x", Reading("r", Metric.SERVER_CPU, 0.0004, 0.0004, 0.0004, ""), 0.0003, session_sd=0.0)
    assert (
        cpu.verdict == Status.FAIL
        and "(a single reading)" in cpu.message
        and "exceeds server_cpu 300 µs" in cpu.message
    )
    assert judge("t::x", reading(Metric.P50, 1, 1, 1), None).verdict == Status.UNJUDGED
    assert judge("t::x", reading(Metric.P50, 1, 1, 1), 2, measured=False).verdict == Status.UNMEASURED


def test_quantile_interval_brackets_the_quantile_with_order_statistics() -> None:
    values = np.arange(1000, dtype=float)  # the p95 of 0..999 is 949.05
    value, low, high = quantile_interval(values, 0.95, 0.95)
    assert value == pytest.approx(949.05)
    # Binomial(1000, 0.95): sd 6.9, so ranks about 950 -/+ 13.5
    assert 934 <= low <= 937 and 963 <= high <= 965
    assert quantile_interval([5.0], 0.5, 0.95) == (5.0, 5.0, 5.0)
    with pytest.raises(ValueError):
        quantile_interval([], 0.5, 0.95)


def test_mean_and_ratio_intervals() -> None:
    mean, low, high = mean_interval([10.0, 12.0, 11.0, 9.0, 13.0], 0.95)
    assert mean == 11 and (low, high) == pytest.approx((11 - 1.9632, 11 + 1.9632), abs=1e-3)  # t(4) 2.776 * 1.58/sqrt5
    assert mean_interval([7.0], 0.95) == (7.0, 7.0, 7.0)
    ratio, low, high = ratio_interval([200.0, 210.0, 190.0], [100.0, 105.0, 95.0], 0.95)
    assert ratio == pytest.approx(2.0) and low < 2.0 < high
    assert math.isnan(ratio_interval([1.0], [], 0.95)[0])


def figure(
    value: float, metric: Metric = Metric.RPS, low: float | None = None, high: float | None = None
) -> FigureResult:
    samples = (value,) if math.isfinite(value) else ()  # an unmeasured figure has no samples
    read = Reading("h2c c=100", metric, value, low or value * 0.98, high or value * 1.02, "95% CI", samples)
    return judge("t.py::test_load", read, None)


def test_figures_go_to_json_and_back_in_a_run_and_old_runs_load_without_them() -> None:
    judged = judge("t.py::x", Reading("r|1", Metric.TTFE, 0.002, 0.0018, 0.0025, "95% CI", (0.002, 0.0021)), 0.01)
    single = judge("t.py::x", Reading("r|1", Metric.SERVER_CPU, 3e-4, 3e-4, 3e-4, "", note="one reading"), 1e-3)
    run = Run(figures=[judged, figure(math.nan), single])
    back = Run.from_json(json.loads(json.dumps(run.to_json(), allow_nan=True)))
    assert back.figures[0] == judged and back.figures[2] == single  # a single reading stays one
    assert math.isnan(back.figures[1].reading.value)
    old = run.to_json()
    old["schema_version"] = 3
    del old["figures"]
    assert Run.from_json(old).figures == []


def test_a_change_is_worse_in_the_figures_own_direction_and_gated_on_its_interval() -> None:
    slower = compare_figure(figure(1000.0), figure(250.0))  # req/s fell 75%: worse, beyond the sessions' spread
    assert slower is not None and slower.percent == pytest.approx(-75)
    assert slower.worse[0] > 0 and slower.finding(5) == Finding.REGRESSED and slower.finding(80) != Finding.REGRESSED
    assert compare_figure(figure(1.0, Metric.P95), figure(1.2, Metric.P95)).finding(5) == Finding.UNKNOWN  # 25% sd
    later = compare_figure(figure(0.010, Metric.P95), figure(0.002, Metric.P95))  # p95 fell fivefold: better
    assert later is not None and later.worse[1] < 0 and later.finding(0) == Finding.IMPROVED
    assert "~" not in slower.describe() and "-75.0%" in slower.describe()
    same = compare_figure(figure(1000.0), figure(1010.0))
    assert same is not None and not same.significant and "~ +1.0%" in same.describe()
    assert compare_figure(figure(0.0, Metric.ERRORS), figure(3.0, Metric.ERRORS)) is None  # counts are not ratios


def test_the_session_spread_is_learned_from_history_or_taken_from_the_prior() -> None:
    """Three stored values of the figure on this machine: their series' spread (as ``history`` reads it),
    less their own error; two: the prior."""
    two = compare_figure(figure(1000.0), figure(1000.0), [figure(1000.0), figure(1100.0)])
    own = math.log(1.02 / 0.98) / (2 * 1.959964)
    assert two is not None and two.se == pytest.approx(math.sqrt(2 * own**2 + 2 * RPS_PRIOR**2))
    learned = compare_figure(figure(1000.0), figure(1000.0), [figure(1000.0), figure(1100.0), figure(1210.0)])
    series = find_shifts([Point(math.log(v), own, str(v)) for v in (1000, 1100, 1210)], RPS_PRIOR)
    assert learned is not None and learned.se == pytest.approx(math.sqrt(2 * own**2 + 2 * series.tau**2), rel=1e-3)
    assert series.tau != RPS_PRIOR and math.isfinite(series.df)
    changes = compare_figures([figure(5.0)], [figure(6.0), figure(7.0, Metric.P50)])
    assert [f.key for f, _ in changes] == [figure(1.0).key]


def test_figures_outcome_fails_warns_and_gates() -> None:
    failed = judge("t::x", reading(Metric.RPS, 500, 450, 550), 1000)
    unsure = judge("t::x", reading(Metric.RPS, 1000, 900, 1100), 1000)
    assert figures_outcome("t.py::test_load", [failed], Policy.FAIL).failure == failed.message
    assert figures_outcome("t.py::test_load", [unsure], Policy.FAIL).failure.startswith("inconclusive: ")
    warned = figures_outcome("t.py::test_load", [unsure], Policy.WARN)
    assert warned.failure is None and "inconclusive" in str(warned.warnings[0])
    change = compare_figure(figure(1000.0), figure(250.0))
    assert change is not None
    fell = figure(250.0)
    gate = Gate("0001_ref.json", 5, None)
    gated = figures_outcome("t.py::test_load", [], Policy.FAIL, [(fell, change)], gate)
    assert "regressed against 0001_ref.json" in (gated.failure or "") and "--overhead-fail-above=5%" in (
        gated.failure or ""
    )
    assert figures_outcome("t.py::test_load", [], Policy.FAIL, [(fell, change)], Gate("0001_ref.json")).failure is None
    unsure = compare_figure(figure(1000.0), figure(900.0))
    assert unsure is not None
    shown = figures_outcome(
        "t.py::test_load", [], Policy.FAIL, [(figure(900.0), unsure)], gate
    )  # unknown: shown in the table, and counted in one warning for the test (never passed in silence)
    (counted,) = shown.warnings
    assert shown.failure is None and "the gate cannot tell 1 of its 1 transport figures' changes" in str(counted)


def test_the_tables_show_rows_side_by_side_and_each_budget_with_its_verdict() -> None:
    figures = [
        judge("t.py::test_load", Reading("h2c c=100", Metric.RPS, 3000, 2900, 3100, "95% CI"), 600),
        judge("t.py::test_load", Reading("h2c c=100", Metric.P95, 0.03, 0.029, 0.031, "95% CI"), None),
        judge("t.py::test_load", Reading("h2c c=100", Metric.ERRORS, 0, 0, 0, ""), 0),
        judge("t.py::test_sse", Reading("a|b", Metric.TTFE, 0.002, 0.0019, 0.0021, "95% CI"), 0.01),
    ]
    lines = render_figures(figures)
    assert lines[0] == "load:" and "streams:" in lines and "budgets:" in lines
    assert lines[3] == "t.py"  # the file once, the test once, then its rows with their figures side by side
    assert lines[4] == "  test_load"
    assert lines[5].startswith("    h2c c=100  ") and "3,000/s" in lines[5] and "30.0 ms" in lines[5]
    budgets = lines[lines.index("budgets:") :]
    assert budgets[1].split()[:3] == ["test", "/", "figure"]
    assert any(re.search(r"3,000/s +[\d,]+/s\.\.[\d,]+/s +≥600/s +pass", line) for line in budgets)
    assert not any("95% CI" in line for line in budgets)  # the interval's ends: the note says how each is made
    assert not any(" errors " in line for line in budgets)  # a passing count stays in the load table
    markdown = markdown_figures(figures)
    assert "## Transport\n" in markdown and "## Streams" in markdown and "a\\|b" in markdown


def test_a_long_row_label_stands_under_its_test_and_the_tables_fit_the_terminal() -> None:
    """A transport pair's rows are named ``gateway vs upstream c=10 [framework] · app (http1)``: as a
    column of their own they made the load table 159 characters wide, its budgets 142."""
    row = "gateway vs upstream c=10 [framework] · a_rather_long_package.gateway_app:application (http1)"
    figures = [
        judge(f"benchmarks/test_transport.py::test_gateway[c={c}]", Reading(f"{row} {c}", metric, v, v, v, "95% CI"), b)
        for c in (1, 10)
        for metric, v, b in ((Metric.RPS, 1500.0, 400.0), (Metric.P95, 0.004, 0.005), (Metric.CLIENT_CPU, 1e-4, None))
    ]
    lines = render_figures(figures, width=120)
    assert max(map(len, lines)) <= 120
    load = lines[: lines.index("budgets:")]
    assert "  test_gateway" in load and "    [c=10]" in load  # the test, then each row under it
    assert any(line.strip() == f"{row} 10" for line in load)  # too long for the room: a line of its own
    change = compare_figure(figure(1000.0), figure(700.0))
    assert change is not None
    table = render_changes([figure_shown(figure(700.0), change)], "0001_ref.json")
    assert table[0].startswith("separate sessions, not paired")  # a stored run: the interval carries their spread
    header = next(line for line in table if line.startswith("test "))
    assert header.split() == [
        *("test", "figure", "old", "(0001_ref.json)", "new", "change", "95%", "CI", "between", "sessions", "detects")
    ]
    low, high = change.interval  # what it can see: the interval's half-width, on its log scale
    assert change.detectable == pytest.approx(100 * (((100 + high) / (100 + low)) ** 0.5 - 1))
    assert any(f"±{change.detectable:.1f}%" in line and "-30.0%" in line for line in table)
    assert any("h2c c=100 req/s" in line and "1,000/s" in line and "-30.0%" in line for line in table)
