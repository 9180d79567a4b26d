"""The one change model (deterministic): its interval, what it means at a threshold, the
between-session spread net of each run's own error, and the pairs' and figures' use of it."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from overheadbench.core.vocabulary import Side
from overheadbench.engine.changes import Change, LogEstimate, change, exact_change, interval_estimate, session_log_sd
from overheadbench.engine.findings import Finding
from overheadbench.engine.samples import ReplicaSamples
from overheadbench.history.figure_changes import compare_figure
from overheadbench.pairs.across import Looks
from overheadbench.pairs.comparing import per_call_change, rounds_change
from overheadbench.transport.metrics import SPECS, Metric
from overheadbench.transport.results import FigureResult, Reading
from overheadbench.transport.verdict import judge

RPS_PRIOR = SPECS[Metric.RPS].session_sd


def around(percent: float, half: float, higher_is_worse: bool = True) -> Change:
    """A change of ``percent`` whose 95% interval on the log scale is about ±``half`` percent."""
    se = math.log1p(half / 100) / 1.959964
    return Change("t.py::test_x", 1.0, 1 + percent / 100, se, higher_is_worse=higher_is_worse)


@pytest.mark.parametrize(
    ("percent", "half", "expected"),
    [
        (12.0, 2.0, Finding.REGRESSED),  # the whole interval above +5%
        (-12.0, 2.0, Finding.IMPROVED),
        (0.5, 2.0, Finding.SAME),  # the whole interval inside ±5%
        (5.0, 2.0, Finding.UNKNOWN),  # straddles +5%
        (-5.0, 2.0, Finding.UNKNOWN),
        (0.0, 8.0, Finding.UNKNOWN),  # too wide to tell either way
    ],
)
def test_a_change_means_regressed_improved_same_or_unknown_at_the_threshold(
    percent: float, half: float, expected: Finding
) -> None:
    assert around(percent, half).finding(5) == expected


def test_a_floor_figure_is_worse_when_it_falls() -> None:
    fell = around(-12.0, 2.0, higher_is_worse=False)  # req/s down 12%
    assert fell.finding(5) == Finding.REGRESSED and fell.worse[0] > 5
    assert around(12.0, 2.0, higher_is_worse=False).finding(5) == Finding.IMPROVED


def test_the_interval_is_on_the_log_scale_and_symmetric_there() -> None:
    moved = around(10.0, 3.0)
    low, high = moved.interval
    assert math.log1p(high / 100) - math.log(1.10) == pytest.approx(math.log(1.10) - math.log1p(low / 100))
    assert moved.significant and moved.evidence == f"{low:+.1f}..{high:+.1f}%"


def test_exact_counts_have_no_width() -> None:
    counted = exact_change("t.py::test_x", 1.30, 1.31)
    assert counted.interval == (counted.percent, counted.percent) and counted.significant
    assert counted.evidence == "exact" and counted.finding(0.5) == Finding.REGRESSED
    assert not exact_change("t.py::test_x", 1.3, 1.3).significant


def test_two_sides_of_one_session_need_no_session_term_and_two_sessions_add_twice_its_variance() -> None:
    old, new = LogEstimate(1.5, 0.01, 5), LogEstimate(1.6, 0.01, 5)
    same_session = change("x", old, new)
    assert same_session.se == pytest.approx(math.sqrt(2) * 0.01)
    across = change("x", old, new, (0.02, math.inf))
    assert across.se == pytest.approx(math.sqrt(2 * 0.01**2 + 2 * 0.02**2))
    assert math.isfinite(same_session.df) and same_session.df == pytest.approx(10)


def test_the_between_session_spread_is_net_of_each_runs_own_error() -> None:
    """Figures used to learn the raw spread of their stored values and then add each run's own
    error again; now the own error is subtracted once."""
    values = [1.0, 1.1, 0.9, 1.05, 0.95, 1.02]
    exact, _ = session_log_sd([LogEstimate(v, 0.0) for v in values], prior=math.nan)
    noisy, df = session_log_sd([LogEstimate(v, 0.05) for v in values], prior=math.nan)
    assert 0 <= noisy < exact and math.isfinite(df)
    assert session_log_sd([LogEstimate(v, 0.05) for v in values[:2]], prior=0.10) == (0.10, math.inf)  # the prior


def test_a_real_step_in_the_stored_runs_never_widens_the_spread() -> None:
    """After two real regressions the sessions learned 8.8-9.8% where ``history`` read 0.88%."""
    rng = __import__("random").Random(3)
    flat = [LogEstimate(1.0 * math.exp(rng.gauss(0, 0.01)), 0.003) for _ in range(14)]
    stepped = [
        LogEstimate(r.value * (1.18 if i >= 5 else 1.0) * (1.26 if i >= 10 else 1.0), r.log_se)
        for i, r in enumerate(flat)
    ]
    assert session_log_sd(stepped, 0.005)[0] == pytest.approx(session_log_sd(flat, 0.005)[0], rel=0.25)
    assert session_log_sd(stepped, 0.005)[0] < 0.02


def test_an_interval_reads_as_the_standard_error_of_its_log() -> None:
    assert interval_estimate(100.0, 90.0, 110.0).log_se == pytest.approx(
        (math.log(110) - math.log(90)) / (2 * 1.959964), rel=1e-5
    )


def figure(value: float, low: float, high: float, metric: Metric = Metric.RPS) -> FigureResult:
    return judge("t.py::test_load", Reading("h1 c=1", metric, value, low, high, "95% CI"), None)


def test_figures_use_the_same_model_in_their_own_direction() -> None:
    dropped = compare_figure(figure(1000, 990, 1010), figure(250, 246, 254))
    assert dropped is not None and not dropped.higher_is_worse and dropped.finding(5) == Finding.REGRESSED
    assert dropped.se == pytest.approx(
        math.sqrt(2 * RPS_PRIOR**2 + (math.log(1010 / 990) / 3.919928) ** 2 + (math.log(254 / 246) / 3.919928) ** 2),
        rel=1e-3,
    )
    slower = compare_figure(figure(10, 9.9, 10.1, Metric.P50), figure(2, 1.98, 2.02, Metric.P50))
    assert slower is not None and slower.higher_is_worse and slower.finding(5) == Finding.IMPROVED


def test_the_gate_looks_at_its_first_count_then_twice_and_four_times_it_at_a_level_shared_by_looks_and_pairs() -> None:
    looks = Looks(threshold=2.0, pairs=4)
    assert looks.counts(10, 32) == [10, 20, 32] and looks.counts(6, 24) == [6, 12, 24]
    assert looks.counts(10, 10) == [10]
    assert looks.confidence(10, 32) == pytest.approx(1 - 0.05 / 12)
    assert Looks(2.0).confidence(10, 10) == pytest.approx(0.95)


def test_looking_again_while_unknown_keeps_false_alarms_within_the_bound() -> None:
    """A change sitting right at the 2% threshold (the worst case), read round by round with the
    gate's looks: "regressed" (a false alarm) in at most 2.5% of trials (the bound), while reading
    "unknown" at the first look as often as not."""
    rng = np.random.default_rng(3)
    looks = Looks(threshold=2.0)
    confidence = looks.confidence(10, 32)
    alarms = first_unknown = 0
    trials = 400
    for _ in range(trials):
        layout = rng.normal(0, 0.02, size=(2, 32))  # each process's own layout, base and head
        base = [ReplicaSamples(1, [1000], [round(1000 * 1.5 * math.exp(v))]) for v in layout[0]]
        head = [ReplicaSamples(1, [1000], [round(1000 * 1.5 * 1.02 * math.exp(v))]) for v in layout[1]]
        for index, count in enumerate(looks.counts(10, 32)):
            ratios = (1.5 * math.exp(np.median(layout[0][:count])), 1.5 * 1.02 * math.exp(np.median(layout[1][:count])))
            found = rounds_change("t.py::x", base[:count], head[:count], ratios, confidence).finding(2.0)
            first_unknown += index == 0 and found == Finding.UNKNOWN
            if found != Finding.UNKNOWN:
                alarms += found == Finding.REGRESSED
                break
    assert alarms / trials <= 0.025 + 2 * math.sqrt(0.025 * 0.975 / trials)
    assert first_unknown / trials > 0.5


@dataclass
class Sides:
    """What a per-call comparison reads of a result."""

    samples: list[ReplicaSamples]
    baseline_s: float
    framework_s: float


def test_each_sides_time_per_call_changes_with_an_interval_paired_by_round() -> None:
    """An unchanged bare path read +57.8%, +23.9% and -31.9% as bare numbers (per-process times
    bimodal by layout); paired by round, with an interval, it reads what it is."""
    rng = np.random.default_rng(3)
    old, new = [], []
    for _ in range(10):
        layout = rng.choice([6.7e3, 10.6e3])  # ns per call, bimodal, the same in both trees' round
        base = [round(layout * 10 * math.exp(rng.normal(0, 0.01))) for _ in range(30)]
        frame = [round(layout * 30 * math.exp(rng.normal(0, 0.01))) for _ in range(30)]
        old.append(ReplicaSamples(10, base, frame))
        new.append(
            ReplicaSamples(
                10, [round(b * math.exp(rng.normal(0, 0.01))) for b in base], [round(f * 1.1) for f in frame]
            )
        )
    before, after = Sides(old, 8.6e-6, 25.8e-6), Sides(new, 8.6e-6, 28.4e-6)
    bare = per_call_change("t", before, after, Side.BASELINE)
    framework = per_call_change("t", before, after, Side.FRAMEWORK)
    assert bare is not None and framework is not None
    low, high = bare.interval
    assert low < 0 < high and high - low < 5  # unchanged, and said to be, within a few percent
    low, high = framework.interval
    assert low > 0 and low < 10 < high  # the framework path's +10%, told from zero
    assert per_call_change("t", before, Sides(new[:9], 8.6e-6, 28.4e-6), Side.BASELINE) is None  # rounds unpaired
