"""The estimator and intervals on synthetic samples: deterministic, no timing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from overheadbench.engine.combining import SESSION_SD, Method, combine, prior_session, session_term
from overheadbench.engine.process_ratio import median_interval, median_ranks, pair_ratios
from overheadbench.engine.stats import HUBER_K, huber_centre, weighted_median, welch_df
from overheadbench.engine.student import t_quantile


@pytest.mark.parametrize(
    ("p", "df", "expected"),
    [
        (0.975, 1, 12.7062),
        (0.975, 2, 4.3027),
        (0.975, 3, 3.1824),
        (0.975, 9, 2.2622),
        (0.95, 5, 2.0150),
        (0.995, 4, 4.6041),
        (0.025, 3, -3.1824),
    ],
)
def test_t_quantile_matches_tables(p: float, df: int, expected: float) -> None:
    assert t_quantile(p, df) == pytest.approx(expected, abs=2e-4)


def test_pair_ratios_subtract_offset_and_never_divide_by_zero() -> None:
    ratios = pair_ratios([1000, 2000, 5], [1300, 2600, 5], offset_ns=10)
    assert ratios[:2] == pytest.approx([1290 / 990, 2590 / 1990])
    assert ratios[2] == 1.0


def test_median_interval_covers_the_true_median_at_the_stated_rate() -> None:
    rng = np.random.default_rng(7)
    trials, covered = 2000, 0
    for _ in range(trials):
        values = rng.lognormal(mean=0.2, sigma=0.3, size=60)
        _, low, high = median_interval(values, 0.95)
        covered += low <= np.exp(0.2) <= high
    assert 0.93 <= covered / trials <= 0.985


def test_median_interval_of_few_values_is_their_range() -> None:
    median, low, high = median_interval(np.array([3.0, 1.0, 2.0]), 0.95)
    assert (median, low, high) == (2.0, 1.0, 3.0)


@pytest.mark.parametrize(
    ("n", "expected"), [(5, None), (6, (0, 5)), (9, (1, 7)), (10, (1, 8)), (13, (2, 10)), (20, (5, 14))]
)
def test_median_ranks_are_the_exact_binomial_ones(n: int, expected) -> None:
    # e.g. n = 9: P(B <= 1) = 10/512 = 0.0195 <= 0.025 < P(B <= 2) = 46/512, so x(2)..x(8)
    assert median_ranks(n, 0.95) == expected


def test_exact_and_approximate_ranks_meet_at_the_switch() -> None:
    exact = median_ranks(1000, 0.95)
    approximate = median_ranks(1001, 0.95)
    assert abs(exact[0] - approximate[0]) <= 1 and abs(exact[1] + 1 - approximate[1]) <= 1


def test_one_replica_keeps_its_within_process_interval() -> None:
    estimate = combine([(1.2, 1.19, 1.21)], 0.95)
    assert (estimate.ratio, estimate.low, estimate.high, estimate.method) == (1.2, 1.19, 1.21, Method.WITHIN_PROCESS)


def test_few_replicas_give_a_t_interval_over_their_medians() -> None:
    medians = [1.22, 1.24, 1.23, 1.25]
    estimate = combine([(m, m - 0.001, m + 0.001) for m in medians], 0.95)
    half = 3.1824 * np.std(medians, ddof=1) / 2
    assert estimate.method == Method.BETWEEN_PROCESSES
    assert estimate.ratio == pytest.approx(1.235)
    assert (estimate.low, estimate.high) == pytest.approx((1.235 - half, 1.235 + half), abs=1e-4)
    assert estimate.overhead == pytest.approx(0.235)


def test_enough_replicas_give_a_robust_centre_and_t_on_the_log_scale() -> None:
    medians = [1.22, 1.23, 1.40, 1.24, 1.25, 1.21, 1.26, 1.23, 1.10]  # two from the heavy tail
    estimate = combine([(m, m, m) for m in medians], 0.95)
    assert estimate.method == Method.BETWEEN_PROCESSES
    body = [m for m in medians if 1.2 < m < 1.3]
    assert estimate.ratio == pytest.approx(np.mean(body), abs=0.001)  # the tail does not move it
    assert abs(np.mean(medians) - estimate.ratio) > 0.003  # what a plain mean would have reported
    logs = np.log(medians)
    centre = estimate.ratio
    half = 2.3060 * 1.0252 * np.std(logs, ddof=1) / 3  # t(8), Huber's standard error over the spread seen
    assert (estimate.low, estimate.high) == pytest.approx((centre * np.exp(-half), centre * np.exp(half)), rel=1e-4)
    quiet = combine([(m, m, m) for m in body], 0.95)
    assert quiet.high - quiet.low < (estimate.high - estimate.low) / 2  # the tail widens it, never hides


def test_huber_centre_is_the_weighted_mean_until_a_value_lies_far_out() -> None:
    values = np.array([1.0, 2.0, 3.0])
    assert huber_centre(values, np.array([1.0, 1.0, 1.0])) == pytest.approx(2.0)
    assert huber_centre(values, np.array([0.25, 0.25, 1.0])) == pytest.approx(2.5)  # all within K sd
    far = np.array([0.0, 0.1, -0.1, 0.05, -0.05, 100.0])  # unit variances: the last is 100 sd out
    centre = huber_centre(far, np.ones(6))
    # the far value counts as if it lay HUBER_K from the centre: centre = (sum of the rest + centre + K) / 6
    assert centre == pytest.approx(HUBER_K / 5, rel=1e-6)


def test_between_process_interval_covers_a_layout_effect_the_within_interval_misses() -> None:
    """Synthetic replicas whose true ratio shifts per process (as code layout does here)."""
    rng = np.random.default_rng(11)
    trials, covered_between, covered_within = 400, 0, 0
    for _ in range(trials):
        replicas = []
        for _ in range(9):
            shift = rng.normal(0, 0.01)
            ratios = 1.25 + shift + rng.normal(0, 0.005, size=300)
            replicas.append(median_interval(ratios, 0.95))
        between = combine(replicas, 0.95)
        within = combine(replicas[:1], 0.95)
        covered_between += between.low <= 1.25 <= between.high
        covered_within += within.low <= 1.25 <= within.high
    assert covered_between / trials >= 0.92
    assert covered_within / trials < 0.5


def test_a_between_session_shift_no_process_sees_is_covered_once_its_sd_is_added() -> None:
    """Sessions whose every process shares one shift (the machine's state, the session's block
    sizes): the processes' spread cannot see it; adding its sd to the standard error covers it."""
    rng = np.random.default_rng(5)
    trials, covered_alone, covered_with = 400, 0, 0
    for _ in range(trials):
        session_shift = rng.normal(0, 0.005)
        medians = 100 * np.exp(session_shift + rng.normal(0, 0.003, size=10))
        alone = combine([(m, m, m) for m in medians], 0.95)
        with_session = combine([(m, m, m) for m in medians], 0.95, session=prior_session)
        covered_alone += alone.low <= 100 <= alone.high
        covered_with += with_session.low <= 100 <= with_session.high
    assert covered_alone / trials < 0.75
    assert covered_with / trials >= 0.93


def test_a_session_whose_processes_spread_widely_carries_as_wide_a_term_between_sessions() -> None:
    """A busy machine: processes 3% apart, sessions 3% apart. With the quiet machine's 0.5% alone an
    agent SDK's intervals were ±3% while its estimates spread 7-14% between sessions."""
    rng = np.random.default_rng(7)
    trials, covered, quiet_term = 400, 0, 0
    for _ in range(trials):
        medians = 100 * np.exp(rng.normal(0, 0.03) + rng.normal(0, 0.03, size=10))
        covered += (
            (found := combine([(m, m, m) for m in medians], 0.95, session=prior_session)).low <= 100 <= found.high
        )
        half = math.log(found.high / found.ratio)
        quiet_term += half > 0.03  # wider than the processes' spread: the session term is in it
    assert covered / trials >= 0.90 and quiet_term == trials
    assert session_term(0.0) == SESSION_SD and session_term(0.02) == pytest.approx(0.025)
    assert session_term(math.nan) == SESSION_SD


def test_three_processes_that_happen_to_agree_still_carry_the_between_session_spread() -> None:
    """Three processes of the quick profile read 22.50..22.54% where the default profile read
    22.0..23.3%: they agreed with each other, not with the next session."""
    medians = [1.2250, 1.2252, 1.2254]
    alone = combine([(m, m, m) for m in medians], 0.95)
    assert alone.high - alone.low < 0.002
    estimate = combine([(m, m, m) for m in medians], 0.95, session=prior_session)  # their spread is tiny: the floor
    assert (estimate.high - estimate.low) / 2 == pytest.approx(
        4.3027 * math.hypot(0.0002 / math.sqrt(3), 1.2252 * 0.005), rel=1e-3
    )


def test_a_process_whose_blocks_were_preempted_counts_little_instead_of_moving_the_estimate() -> None:
    """Ten processes of 30 pairs; in one, ten blocks read 10x (a busy runner's time slices): its
    median moves and its own interval is wide, so it weighs little."""
    rng = np.random.default_rng(7)
    replicas = []
    for index in range(10):
        ratios = 100 * np.exp(rng.normal(0, 0.02, size=30))
        if index == 0:
            ratios[:14] *= 10
        replicas.append(median_interval(ratios, 0.95))
    hit = combine(replicas, 0.95)
    clean = combine(replicas[1:], 0.95)
    assert hit.ratio == pytest.approx(clean.ratio, rel=0.01)
    assert hit.high / hit.low < 1.5 * (clean.high / clean.low)
    assert not clean.disagree


def test_processes_that_disagree_beyond_their_own_precision_say_so_and_the_spread_is_in_the_interval() -> None:
    medians = [1.20, 1.21, 1.19, 1.26, 1.14, 1.22, 1.18, 1.25, 1.15, 1.20]
    narrow = combine([(m, m * 0.999, m * 1.001) for m in medians], 0.95)
    assert narrow.disagree and narrow.between_sd > 0.02
    assert narrow.low < 1.19 and narrow.high > 1.21  # the spread between them, not their own ±0.1%
    loose = combine([(m, m * 0.8, m * 1.25) for m in medians], 0.95)
    assert not loose.disagree and loose.between_sd == pytest.approx(0.0)


def test_the_weighted_median_is_the_value_below_which_half_the_weight_lies() -> None:
    values = np.array([1.0, 2.0, 3.0, 10.0])
    assert weighted_median(values, np.array([1.0, 1.0, 1.0, 1.0])) == pytest.approx(2.5)
    assert weighted_median(values, np.array([1.0, 1.0, 1.0, 0.01])) == pytest.approx(2.0)
    assert weighted_median(values, np.array([0.01, 1.0, 1.0, 5.0])) == pytest.approx(10.0)


def test_a_term_learned_from_few_stored_runs_widens_by_its_own_degrees_of_freedom() -> None:
    """The prior is a rule (infinite df: the processes' df, as before); a term learned from three
    stored runs has two, and Welch's degrees of freedom widen the interval by more than its size."""
    medians = [1.10 * (1 + 0.002 * k) for k in range(-5, 5)]
    replicas = [(m, m * 0.999, m * 1.001) for m in medians]
    prior = combine(replicas, 0.95, session=lambda sd: (0.09, math.inf))
    learned = combine(replicas, 0.95, session=lambda sd: (0.09, 2.0))
    assert prior.session_runs == 0 and learned.session_runs == 3 and learned.session_sd == prior.session_sd == 0.09
    assert math.log(learned.high / learned.low) > 1.5 * math.log(prior.high / prior.low)  # t(2) = 4.30, against 2.26
    assert welch_df((0.01, 9.0), (0.0, math.inf)) == 9  # a known term adds no degrees of freedom
    assert welch_df((1e-6, 9.0), (0.0081, 2.0)) == 2  # the learned term dominates: its df
