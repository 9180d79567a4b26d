"""Judging a measured pair: its figures, each budget's check, and the verdict.

A check is only "pass" when the *whole* interval is within its limit and only "fail" when
the whole interval is over it; anything in between is "inconclusive", which is what makes
the same code give the same verdict run after run. In time mode the interval is the
confidence interval; in count mode it is the range over the repeated counts (a single
value for deterministic code). The verdict is the worst of the checks.

What the verdict does to the test is :mod:`overheadbench.pairs.outcome`'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..core.units import format_count, format_seconds
from ..core.vocabulary import Figure, Side
from ..engine.checks import Check, Status, Unit
from ..engine.combining import Method
from ..engine.counted_samples import CountSamples
from ..engine.counting import probe_ratio
from ..engine.samples import Kind, ReplicaSamples, Timer
from ..engine.sampling import PlaceSamples
from ..engine.settings import Settings
from .estimating import Between, estimate, harness_ns, judged_interval, other_clock
from .memory import allocation_checks, allocation_figures, repeats_said
from .pair import Budget, Pair
from .results import OverheadResult, PlaceResult


@dataclass(frozen=True)
class Verdict:
    status: Status
    message: str
    checks: tuple[Check, ...] = ()
    """Every budget judged, the worst one's sentence in ``message``."""


def judge(checks: Sequence[Check], figures: str) -> Verdict:
    """The worst judged check's status, and a message naming that check, its interval and the figures."""
    judged = [check for check in checks if check.status != Status.UNJUDGED]
    if not judged:
        reason = (
            checks[0].sentence()
            if checks
            else "no budget of this test applies in count mode (max_abs is a time budget)"
        )
        return Verdict(Status.UNJUDGED, f"{reason}: {figures}", tuple(checks))
    statuses = [check.status for check in judged]
    status = next(s for s in (Status.FAIL, Status.INCONCLUSIVE, Status.PASS) if s in statuses)
    worst = next(check for check in judged if check.status == status)
    message = f"{worst.sentence()}: {figures}"
    if status == Status.INCONCLUSIVE and not worst.contended:  # a contended check's sentence says why itself
        message += (
            "; the counts differ from repeat to repeat (the code is not deterministic: caches, "
            "time-dependent branches) and their range contains the budget"
            if worst.counted
            else "; the interval contains the budget, so this run cannot tell. Give the pair more "
            "time (overhead_time_budget) or more processes (overhead_processes)"
        )
    return Verdict(status, message, tuple(checks))


def overhead_units(overhead: float, budget: Budget) -> tuple[Unit, Unit]:
    """The ``max`` check's units: its figure and interval as a factor where the figure is large
    or the budget was written as one, else a percentage; its limit as the budget reads
    (:meth:`~overheadbench.pairs.pair.Budget.describe`)."""
    limit = budget.max_overhead if budget.max_overhead is not None else math.nan
    figure = Unit.FACTOR if budget.as_factor(overhead) else Unit.FRACTION
    return figure, Unit.FACTOR if budget.as_factor(limit) else Unit.FRACTION


def judge_time(
    overhead: float,
    ci: tuple[float, float],
    baseline_s: float,
    pair: Pair,
    counts: CountSamples | None = None,
    core_share: float | None = None,
) -> Verdict:
    """Judge a timed overhead (a fraction, with its interval at the pair's confidence) against
    the time budgets, and the allocations counted after timing (``counts``) against theirs.
    The absolute overhead is the relative one times the baseline's time per call, so both
    are judged on the same paired estimate; ``core_share`` (a pair read on the wall clock: the
    judging process's share of a core) makes a ``max_abs`` broken on a contended machine inconclusive."""
    low, high = ci
    figures = (
        f"baseline {format_seconds(baseline_s)}/call, framework {format_seconds(baseline_s * (1 + overhead))}"
        f"/call ({format_seconds(overhead * baseline_s, signed=True)})" + allocation_figures(counts)
    )
    interval = f"{pair.confidence * 100:g}% CI"
    checks = []
    budget = pair.budget
    if budget.max_overhead is not None:
        unit, shown = overhead_units(overhead, budget)
        limit = budget.max_overhead
        checks.append(Check("max", "overhead", limit, overhead, low, high, unit, interval, False, limit_unit=shown))
    if budget.max_abs_s is not None:
        checks.append(
            Check(
                "max_abs",
                "absolute overhead per call",
                budget.max_abs_s,
                overhead * baseline_s,
                low * baseline_s,
                high * baseline_s,
                Unit.SIGNED_SECONDS,
                interval,
                counted=False,
                core_share=core_share,
            )
        )
    return judge(checks + allocation_checks(counts, budget), figures)


def instruction_ratio(counts: CountSamples) -> tuple[float, float, float]:
    """framework / baseline in instructions, and its range over the repeats (NaN when the
    baseline executes no bytecode to compare with)."""
    has_bytecode = counts.median(Side.BASELINE, Figure.INSTRUCTIONS) >= 1
    return counts.ratio(Figure.INSTRUCTIONS) if has_bytecode else (math.nan,) * 3


def judge_counts(pair: Pair, counts: CountSamples, ratios: tuple[float, float, float]) -> Verdict:
    """Judge a pair measured in count mode: its instruction overhead (``ratios``:
    :func:`instruction_ratio`) and allocations, on their range over the repeats."""
    base, framework = (counts.median(side, Figure.INSTRUCTIONS) for side in (Side.BASELINE, Side.FRAMEWORK))
    figures = (
        f"baseline {format_count(base)} {counts.counter.instructions}/call, framework "
        f"{format_count(framework)}/call "
        f"({format_count(framework - base, signed=True)})" + allocation_figures(counts)
    )
    checks = []
    if pair.budget.max_overhead is not None:
        ratio, low, high = ratios
        unit, limit_unit = overhead_units(ratio - 1, pair.budget)
        checks.append(
            Check(
                "max",
                "instruction overhead",
                pair.budget.max_overhead,
                ratio - 1,
                low - 1,
                high - 1,
                unit,
                repeats_said(counts, Figure.INSTRUCTIONS),
                counted=True,
                unjudged="the baseline executes no Python bytecode to compare with",
                limit_unit=limit_unit,
            )
        )
    return judge(checks + allocation_checks(counts, pair.budget), figures)


def summarise(
    pair: Pair,
    kind: Kind,
    replicas: list[ReplicaSamples],
    settings: Settings,
    wall_s: float,
    counts: CountSamples | None = None,
    start_s: float = 0.0,
    probe: Callable[[], float] | None = None,
    between: Between | None = None,
) -> OverheadResult:
    """Estimate, interval, per-call figures and verdict for a pair measured in time mode
    (``counts``: its allocations, from the pass after timing, if any; ``start_s``: of
    ``wall_s``, its new replicas' start-up; ``probe``: how much of a core this process gets,
    asked where a ``max_abs`` is judged on the wall clock, None where the pair's clock was injected;
    ``between``: the pair's spread between sessions, learned from this machine's stored runs)."""
    calls = max(r.calls_per_block for r in replicas)
    loop_ns = harness_ns(replicas)
    kept_ns = 0.0 if settings.subtract_harness else loop_ns
    found = estimate(pair, replicas, settings, between=between)
    judged = judged_interval(pair, replicas, settings, found)
    per_call_ns = [float(np.median(r.baseline_ns)) / r.calls_per_block - loop_ns + kept_ns for r in replicas]
    baseline_s = max(float(np.median(per_call_ns)), 1.0 / calls) / 1e9
    on_the_wall = probe is not None and replicas[0].timer == Timer.WALL and pair.budget.max_abs_s is not None
    share = probe() if probe is not None and on_the_wall else None
    verdict = judge_time(found.overhead, (judged.low - 1, judged.high - 1), baseline_s, pair, counts, share)
    message = verdict.message + (f" (judged on every reading: {judged.widened})" if judged.widened else "")
    return OverheadResult(
        pair=pair,
        kind=kind,
        ratio=found.ratio,
        ci=(judged.low - 1, judged.high - 1),
        widened=judged.widened,
        method=found.method,
        baseline_s=baseline_s,
        framework_s=baseline_s * found.ratio,
        harness_s=loop_ns / 1e9,
        harness_subtracted=settings.subtract_harness,
        verdict=verdict.status,
        message=message,
        checks=list(verdict.checks),
        calls_per_block=calls,
        wall_s=wall_s,
        samples=replicas,
        counts=counts,
        start_s=start_s,
        between_sd=found.between_sd,
        session_sd=found.session_sd if found.method == Method.BETWEEN_PROCESSES else math.nan,
        session_runs=found.session_runs,
        disagree=found.disagree,
        other_ratio=other_clock(pair, replicas, settings),
    )


def summarise_counts(pair: Pair, kind: Kind, counts: CountSamples, wall_s: float) -> OverheadResult:
    """The instruction overhead, its range over the repeats, and the verdict, for a pair
    measured in count mode."""
    ratio, low, high = instruction_ratio(counts)
    verdict = judge_counts(pair, counts, (ratio, low, high))
    return OverheadResult(
        pair=pair,
        kind=kind,
        ratio=ratio,
        ci=(low - 1, high - 1),
        method=Method.COUNTED,
        verdict=verdict.status,
        message=verdict.message,
        checks=list(verdict.checks),
        calls_per_block=counts.calls_per_block,
        wall_s=wall_s,
        counts=counts,
    )


def measure_places(pair: Pair, kind: Kind, places: Sequence[PlaceSamples], settings: Settings) -> list[PlaceResult]:
    """Each other place's measurement of the pair, judged by the same budgets as the session's
    own (its change against it is the gate's, :meth:`~overheadbench.pairs.across.PlaceGate.changed`)."""
    measured = []
    for place in places:
        if place.counts is None and not place.samples:
            note = place.note or place.role.lacking()
            measured.append(PlaceResult(place.name, place.role, note=note))
            continue
        if place.counts is not None:
            other = summarise_counts(pair, kind, place.counts, 0.0)
            if place.samples:  # the place's time probe, beside its counts
                other = replace(other, probe=place.samples[0], time_ratio=probe_ratio(place.samples[0]))
        else:
            other = summarise(pair, kind, list(place.samples), settings, 0.0)
        measured.append(PlaceResult(place.name, place.role, other))
    return measured
