"""Verdicts against budgets, and durations: plain functions, synthetic figures."""

from __future__ import annotations

import time
from random import Random

import pytest

from overheadbench.core.jsonio import Fields
from overheadbench.core.units import (
    DurationError,
    SizeError,
    format_bytes,
    format_count,
    format_overhead,
    format_overheads,
    format_seconds,
    parse_duration,
    parse_overhead_budget,
    parse_size,
)
from overheadbench.engine.checks import Check, Status
from overheadbench.engine.contention import core_share
from overheadbench.engine.samples import Kind
from overheadbench.engine.settings import Policy
from overheadbench.pairs.measuring import MeasuredPair
from overheadbench.pairs.outcome import pair_outcome as outcome
from overheadbench.pairs.pair import Budget, Pair
from overheadbench.pairs.results import OverheadResult
from overheadbench.pairs.strategy import strategy_for
from overheadbench.pairs.verdict import judge_time

PASS, FAIL, INCONCLUSIVE = Status.PASS, Status.FAIL, Status.INCONCLUSIVE


def pair(budget: Budget, confidence: float = 0.95) -> Pair:
    return Pair("t.py::test_tiny", budget, confidence=confidence)


@pytest.mark.parametrize(
    ("ci", "expected"),
    [
        ((0.10, 0.20), PASS),
        ((0.10, 0.25), PASS),
        ((0.26, 0.30), FAIL),
        ((0.24, 0.26), INCONCLUSIVE),
    ],
)
def test_relative_verdict_needs_the_whole_interval_on_one_side(ci: tuple[float, float], expected: str) -> None:
    verdict = judge_time(sum(ci) / 2, ci, 1e-6, pair(Budget(max_overhead=0.25), 0.95))
    assert verdict.status == expected


def test_fail_message_names_every_figure() -> None:
    verdict = judge_time(0.312, (0.298, 0.325), 673e-9, pair(Budget(max_overhead=0.25), 0.95))
    assert verdict.message == (
        "overhead 31.2% (95% CI 29.8%..32.5%) exceeds max 25.0%: baseline 673 ns/call, framework 883 ns/call (+210 ns)"
    )


def test_absolute_budget_is_judged_on_the_same_interval() -> None:
    # 10% of 20 µs = 2 µs extra per call; interval 1.8..2.2 µs against 2.5 µs -> pass
    assert judge_time(0.10, (0.09, 0.11), 20e-6, pair(Budget(max_abs_s=2.5e-6), 0.95)).status == PASS
    verdict = judge_time(0.10, (0.09, 0.11), 20e-6, pair(Budget(max_overhead=0.5, max_abs_s=1e-6), 0.9))
    assert verdict.status == FAIL
    assert verdict.message.startswith(
        "absolute overhead per call +2.00 µs (90% CI +1.80 µs..+2.20 µs) exceeds max_abs +1.00 µs"
    )


def test_any_failing_budget_fails_and_inconclusive_outranks_pass() -> None:
    both = Budget(max_overhead=0.25, max_abs_s=1e-6)
    assert judge_time(0.2, (0.19, 0.30), 1e-6, pair(both, 0.95)).status == INCONCLUSIVE
    assert judge_time(0.2, (0.19, 0.21), 10e-6, pair(both, 0.95)).status == FAIL


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("2us", 2e-6),
        ("1.5ms", 1.5e-3),
        ("250 ns", 250e-9),
        ("0.5s", 0.5),
        ("0.002", 0.002),
        (3, 3.0),
        (1e-6, 1e-6),
        ("2µs", 2e-6),
        ("1e-3s", 1e-3),
    ],
)
def test_durations_parse(text: object, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["fast", "2 minutes", "-1ms", "", True, None, float("nan"), "1.5 ms ms"])
def test_bad_durations_say_what_is_accepted(text: object) -> None:
    with pytest.raises(DurationError, match="is not a duration"):
        parse_duration(text)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (673e-9, "673 ns"),
        (1e-6, "1.00 µs"),
        (999.6e-9, "1.00 µs"),
        (12.34e-3, "12.3 ms"),
        (2.5, "2.50 s"),
    ],
)
def test_durations_format_with_three_figures(seconds: float, text: str) -> None:
    assert format_seconds(seconds) == text


def test_concurrent_callers_machinery_over_a_tenth_of_the_baseline_warns_and_one_callers_call_does_not() -> None:
    """One caller's harness is the call of an empty callable, which timeit pays too: the baseline's
    figure is timeit's. Concurrent callers' release and gathering is the plugin's own cost."""
    import dataclasses

    from overheadbench.core.errors import OverheadHarnessWarning
    from overheadbench.engine.samples import ReplicaSamples
    from overheadbench.engine.sampling import InProcess, Sampled
    from overheadbench.engine.settings import Settings

    samples = ReplicaSamples(100, [10_000] * 40, [11_000] * 40, harness_ns_per_call=30.0)

    def measured(measured_pair: Pair, settings: Settings) -> OverheadResult:
        run = MeasuredPair(
            measured_pair, measured_pair.applied_to(settings), InProcess(), time.perf_counter_ns, Random(), None
        )
        strategy = strategy_for(run, elsewhere=None, places=None)
        strategy.sampled = Sampled([samples])
        return strategy.result(Kind.SYNC, 0.0)

    result = measured(pair(Budget(max_overhead=0.5)), Settings(processes=1))
    assert result.harness_s == pytest.approx(30e-9)
    assert outcome(result, Policy.FAIL, subtract_harness=False).warnings == ()
    crew = dataclasses.replace(pair(Budget(max_overhead=0.5)), concurrency=4)
    (warning,) = outcome(measured(crew, Settings(processes=1)), Policy.FAIL, subtract_harness=False).warnings
    assert isinstance(warning, OverheadHarnessWarning)
    assert str(warning).startswith(
        "t.py::test_tiny: releasing and gathering the 4 concurrent callers costs 30 ns/call, 30%"
    )
    subtracted = measured(pair(Budget(max_overhead=0.5)), Settings(processes=1, subtract_harness=True))
    assert subtracted.overhead == pytest.approx(1000 / 7000)
    assert subtracted.baseline_s == pytest.approx(70e-9)
    assert outcome(subtracted, Policy.FAIL, subtract_harness=True).warnings == ()


@pytest.mark.parametrize(
    ("text", "size"),
    [
        (512, 512.0),
        ("2KiB", 2048.0),
        ("1.5 MB", 1.5e6),
        ("100b", 100.0),
        ("-1KiB", -1024.0),
        ("3 gib", 3 * 1024**3),
    ],
)
def test_sizes_parse(text: object, size: float) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["big", "2 KB please", "", True, None, float("inf"), "1.5 parsecs"])
def test_bad_sizes_say_what_is_accepted(text: object) -> None:
    with pytest.raises(SizeError, match="is not a size"):
        parse_size(text)


@pytest.mark.parametrize(
    ("value", "signed", "bytes_text", "count_text"),
    [
        (0, False, "0 B", "0"),
        (11.5, True, "+11.5 B", "+11.5"),
        (1536, False, "1.50 KiB", "1,536"),
        (-2048, True, "-2 KiB", "-2,048"),
        (0.0625, False, "0.06 B", "0.062"),
    ],
)
def test_bytes_and_counts_print_readably(value: float, signed: bool, bytes_text: str, count_text: str) -> None:
    assert format_bytes(value, signed=signed) == bytes_text
    assert format_count(value, signed=signed) == count_text


@pytest.mark.parametrize(
    ("written", "budget"),
    [
        (0.25, (0.25, False)),
        (-0.5, (-0.5, False)),
        (1500, (1500.0, False)),
        ("500x", (499.0, True)),
        ("2.5 X", (1.5, True)),
        ("1x", (0.0, True)),
    ],
)
def test_overhead_budgets_are_fractions_or_factors(written: object, budget: tuple[float, bool]) -> None:
    assert parse_overhead_budget(written) == budget


@pytest.mark.parametrize(
    ("overhead", "text"),
    [(0.312, "31.2%"), (8.9, "890.0%"), (9.0, "10x"), (9.4, "10.4x"), (411.6, "413x"), (1005, "1,006x")],
)
def test_overheads_read_as_percent_below_ten_times_and_as_factors_from_there(overhead: float, text: str) -> None:
    assert format_overhead(overhead) == text


def test_overheads_side_by_side_share_one_unit() -> None:
    assert format_overheads(8.5, 9.5) == ("9.5x", "10.5x")
    assert format_overheads(0.2, 0.3) == ("20.0%", "30.0%")


def test_a_budget_keeps_the_form_it_was_written_in() -> None:
    factor = Budget(max_overhead=4.0, max_factor=True)
    assert factor.describe() == "≤5x" and Budget(max_overhead=0.25).describe() == "≤25%"
    assert Budget(max_overhead=1500).describe() == "≤1,501x"
    stored = factor.to_json()
    assert stored["max"] == 4.0 and Budget.from_json(Fields(stored, "budget")) == factor
    del stored["max_factor"]  # a run stored before budgets could be factors
    assert Budget.from_json(Fields(stored, "budget")) == Budget(max_overhead=4.0)


@pytest.mark.parametrize(
    ("given", "minimum", "text", "expected"),
    [
        (1000, None, True, 1000.0),
        ("1,000", 0, True, 1000.0),
        ("1_000", 0, True, 1000.0),
        ("1e3", None, True, 1000.0),
        (-2.5, None, False, -2.5),
    ],
)
def test_one_number_parser_reads_what_users_write(
    given: object, minimum: float | None, text: bool, expected: float
) -> None:
    from overheadbench.core.numbers import parse_number

    assert parse_number(given, minimum=minimum, text=text) == expected


@pytest.mark.parametrize(
    ("given", "minimum", "text", "message"),
    [
        (True, None, True, "True is not a number"),
        ("12", None, False, "'12' is not a number"),
        ("twelve", None, True, "'twelve' is not a number"),
        (float("inf"), None, True, "inf is not a finite number"),
        (-1, 0, True, "-1 is not a number >= 0"),
        ("nan", 0, True, "'nan' is not a number >= 0"),
    ],
)
def test_one_number_parser_says_what_it_was_given(
    given: object, minimum: float | None, text: bool, message: str
) -> None:
    from overheadbench.core.numbers import parse_number

    with pytest.raises(ValueError, match=f"^{message}$"):
        parse_number(given, minimum=minimum, text=text)


def test_a_range_is_checked_in_one_wording_for_options_and_markers() -> None:
    from overheadbench.core.numbers import check_fraction, check_processes

    for bad in (0, 33, 2.5, True):
        with pytest.raises(
            ValueError, match=r"^must be a whole number from 1 to 32 \(1 = measured in this process only\)$"
        ):
            check_processes(bad)
    for bad in (0, 1, 95, True):
        with pytest.raises(ValueError, match=r"^must be a number between 0 and 1 \(e\.g\. 0\.95\)$"):
            check_fraction(bad)
    assert check_processes(32) == 32 and check_fraction(0.95) == 0.95


def test_an_absolute_wall_clock_budget_broken_on_a_contended_machine_is_inconclusive_and_says_why() -> None:
    """Beside four busy loops the benchmark suite failed 21 absolute budgets whose code had not changed."""
    pair = Pair("t.py::test_http", Budget(max_overhead=1.0, max_abs_s=40e-6))
    ci = (0.41, 0.44)  # +42 µs on a 100 µs baseline, the whole interval past 40 µs
    quiet, busy = (judge_time(0.42, ci, 100e-6, pair, core_share=share) for share in (0.97, 0.41))
    assert quiet.status == Status.FAIL
    assert busy.status == Status.INCONCLUSIVE
    (absolute,) = [check for check in busy.checks if check.name == "max_abs"]
    assert "exceeds max_abs +40.0 µs, but this process got 41% of a core as it was judged" in absolute.sentence()
    assert Check.from_json(absolute.to_json()) == absolute  # the share is stored: a report reads it alike
    within = judge_time(0.10, (0.08, 0.12), 100e-6, pair, core_share=0.41)
    assert within.status == Status.PASS  # contention never passes what broke, nor fails what held
    assert judge_time(0.42, ci, 100e-6, pair).status == Status.FAIL  # not probed (a pair read on CPU time)


def test_a_probe_reads_a_share_of_one_core() -> None:
    assert 0.0 < core_share(0.005) <= 1.0
