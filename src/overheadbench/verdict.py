"""Judging a measured pair: its figures, each budget's check, the verdict, and what the
verdict does to the test.

A check is only "pass" when the *whole* interval is within its limit and only "fail" when
the whole interval is over it; anything in between is "inconclusive", which is what makes
the same code give the same verdict run after run. In time mode the interval is the
confidence interval; in count mode it is the range over the repeated counts (a single
value for deterministic code). The verdict is the worst of the checks.

What the verdict does to the test (:func:`outcome`) is decided here too: a failure, an
inconclusive verdict failing or warning (``overhead_inconclusive``), the harness warning,
and the regression gate (``--overhead-compare-fail``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .changes import REGRESSED_MARK, Change, Finding, Gate
from .checks import Check, Status
from .counting import disagreement, kept_resolution
from .errors import (
    OverheadChangeWarning,
    OverheadCountingWarning,
    OverheadHarnessWarning,
    OverheadInconclusiveWarning,
)
from .figures import SPECS, FigureResult
from .pair import Budget, Pair
from .results import OverheadResult
from .samples import CountSamples, Figure, Kind, ReplicaSamples, Side
from .settings import Counter, Mode, Policy, Settings
from .stats import Method, combine, replica_ratio
from .units import format_bytes, format_count, format_fraction, format_seconds

HARNESS_WARN_SHARE = 0.10
"""The harness warning fires when the measuring loop costs more than this share of the baseline."""


@dataclass(frozen=True)
class Verdict:
    status: Status
    message: str


def judge(checks: Sequence[Check], figures: str) -> Verdict:
    """The worst judged check's status, and a message naming that check, its interval and the figures."""
    judged = [check for check in checks if check.status != Status.UNJUDGED]
    if not judged:
        reason = (
            checks[0].sentence()
            if checks
            else "no budget of this test applies in count mode (max_abs is a time budget)"
        )
        return Verdict(Status.UNJUDGED, f"{reason}: {figures}")
    statuses = [check.status for check in judged]
    status = next(s for s in (Status.FAIL, Status.INCONCLUSIVE, Status.PASS) if s in statuses)
    worst = next(check for check in judged if check.status == status)
    message = f"{worst.sentence()}: {figures}"
    if status == Status.INCONCLUSIVE and not worst.counted:
        message += (
            "; the interval contains the budget, so this run cannot tell. Give the pair more "
            "time (overhead_time_budget), more processes (overhead_processes), or set "
            "overhead_inconclusive=warn"
        )
    elif status == Status.INCONCLUSIVE:
        message += (
            "; the counts differ from repeat to repeat (the code is not deterministic: caches, "
            "time-dependent branches) and their range contains the budget"
        )
    return Verdict(status, message)


def judge_time(
    overhead: float, ci: tuple[float, float], baseline_s: float, pair: Pair, counts: CountSamples | None = None
) -> Verdict:
    """Judge a timed overhead (a fraction, with its interval at the pair's confidence) against
    the time budgets, and the allocations counted after timing (``counts``) against theirs.
    The absolute overhead is the relative one times the baseline's time per call, so both
    are judged on the same paired estimate."""
    low, high = ci
    figures = (
        f"baseline {format_seconds(baseline_s)}/call, framework {format_seconds(baseline_s * (1 + overhead))}"
        f"/call ({format_seconds(overhead * baseline_s, signed=True)})" + allocation_figures(counts)
    )
    interval = f"{pair.confidence * 100:g}% CI"
    checks = []
    budget = pair.budget
    if budget.max_overhead is not None:
        checks.append(
            Check("max", "overhead", budget.max_overhead, overhead, low, high, format_fraction, interval, counted=False)
        )
    if budget.max_abs_s is not None:
        checks.append(
            Check("max_abs", "overhead", budget.max_abs_s, overhead * baseline_s, low * baseline_s,
                  high * baseline_s, _signed_seconds, interval, counted=False)
        )  # fmt: skip
    return judge(checks + allocation_checks(counts, budget), figures)


INSTRUCTION_WORDS = {Counter.CALLGRIND: "machine instructions", Counter.BYTECODE: "bytecode instructions"}
"""What a count-mode message calls its counts (see :class:`~overheadbench.samples.Counter`)."""


def judge_counts(pair: Pair, counts: CountSamples) -> Verdict:
    """Judge a pair measured in count mode: its instruction overhead and allocations, on
    their range over the repeats."""
    base, framework = (counts.median(side, Figure.INSTRUCTIONS) for side in (Side.BASELINE, Side.FRAMEWORK))
    figures = (
        f"baseline {format_count(base)} {INSTRUCTION_WORDS[counts.counter]}/call, framework "
        f"{format_count(framework)}/call "
        f"({format_count(framework - base, signed=True)})" + allocation_figures(counts)
    )
    checks = []
    if pair.budget.max_overhead is not None:
        ratio, low, high = counts.ratio(Figure.INSTRUCTIONS) if base >= 1 else (math.nan,) * 3
        checks.append(
            Check("max", "instruction overhead", pair.budget.max_overhead, ratio - 1, low - 1, high - 1,
                  format_fraction, _repeats(counts, Figure.INSTRUCTIONS), counted=True)
        )  # fmt: skip
    return judge(checks + allocation_checks(counts, pair.budget), figures)


def summarise(
    pair: Pair,
    kind: Kind,
    replicas: list[ReplicaSamples],
    settings: Settings,
    wall_s: float,
    counts: CountSamples | None = None,
) -> OverheadResult:
    """Estimate, interval, per-call figures and verdict for a pair measured in time mode
    (``counts``: its allocations, from the pass after timing, if any)."""
    calls = replicas[0].calls_per_block
    harness_ns = float(np.median([r.harness_ns_per_call for r in replicas]))
    offset_ns = harness_ns * calls if settings.subtract_harness else 0.0
    estimate = combine(
        [replica_ratio(r.baseline_ns, r.framework_ns, offset_ns, pair.confidence) for r in replicas], pair.confidence
    )
    per_call_ns = [float(np.median(r.baseline_ns)) - offset_ns for r in replicas]
    baseline_s = max(float(np.median(per_call_ns)), 1.0) / calls / 1e9
    verdict = judge_time(estimate.overhead, estimate.overhead_ci, baseline_s, pair, counts)
    return OverheadResult(
        pair=pair,
        kind=kind,
        ratio=estimate.ratio,
        ci=estimate.overhead_ci,
        method=estimate.method,
        baseline_s=baseline_s,
        framework_s=baseline_s * estimate.ratio,
        harness_s=harness_ns / 1e9,
        harness_subtracted=settings.subtract_harness,
        verdict=verdict.status,
        message=verdict.message,
        calls_per_block=calls,
        wall_s=wall_s,
        samples=replicas,
        counts=counts,
    )


def halfwidth(pair: Pair, replicas: list[ReplicaSamples], settings: Settings) -> float:
    """Half the width of the interval so far, relative to the ratio (the replicas' stopping rule
    reads it): ±1% reads alike on a 20% pair and a 230% one, as the gate's changes do."""
    low, high = summarise(pair, Kind.SYNC, replicas, settings, 0.0).ci
    if low <= -1 or not math.isfinite(low) or not math.isfinite(high):
        return math.inf
    return (math.log1p(high) - math.log1p(low)) / 2


def summarise_counts(pair: Pair, kind: Kind, counts: CountSamples, wall_s: float) -> OverheadResult:
    """The instruction overhead, its range over the repeats, and the verdict, for a pair
    measured in count mode."""
    has_bytecode = counts.median(Side.BASELINE, Figure.INSTRUCTIONS) >= 1
    ratio, low, high = counts.ratio(Figure.INSTRUCTIONS) if has_bytecode else (math.nan,) * 3
    verdict = judge_counts(pair, counts)
    return OverheadResult(
        pair=pair,
        kind=kind,
        ratio=ratio,
        ci=(low - 1, high - 1),
        method=Method.COUNTED,
        verdict=verdict.status,
        message=verdict.message,
        calls_per_block=counts.calls_per_block,
        wall_s=wall_s,
        counts=counts,
    )


def allocation_figures(counts: CountSamples | None) -> str:
    """``; peak memory 96 B -> 352 B, blocks kept 0 -> 1 per call`` (empty without counts)."""
    if counts is None or not counts.has(Figure.PEAK_BYTES):
        return ""
    peak = [format_bytes(counts.median(side, Figure.PEAK_BYTES)) for side in (Side.BASELINE, Side.FRAMEWORK)]
    kept = [format_count(counts.median(side, Figure.KEPT_BLOCKS)) for side in (Side.BASELINE, Side.FRAMEWORK)]
    precision = _kept_precision(counts)
    return f"; peak memory {peak[0]} -> {peak[1]}, blocks kept {kept[0]} -> {kept[1]} per call ({precision})"


def _kept_precision(counts: CountSamples) -> str:
    """What a kept-blocks figure can tell: ``resolution 0.031/call over blocks of 4,096 calls``."""
    calls = counts.allocation_calls
    return f"resolution {format_count(kept_resolution(calls))}/call over blocks of {calls:,} call{'s' * (calls != 1)}"


def allocation_checks(counts: CountSamples | None, budget: Budget) -> list[Check]:
    """The allocation budgets (both modes): extra blocks kept, extra peak bytes, per call."""
    if counts is None or not counts.has(Figure.PEAK_BYTES):
        return []
    checks = []
    if budget.max_alloc is not None:
        checks.append(
            Check(
                "max_alloc",
                "extra memory blocks kept per call",
                budget.max_alloc,
                *counts.difference(Figure.KEPT_BLOCKS),
                _signed_count,
                _repeats(counts, Figure.KEPT_BLOCKS),
                counted=True,
                precision=_kept_precision(counts),
            )
        )
    if budget.max_alloc_bytes is not None:
        checks.append(
            Check(
                "max_alloc_bytes",
                "extra peak memory per call",
                budget.max_alloc_bytes,
                *counts.difference(Figure.PEAK_BYTES),
                _signed_bytes,
                _repeats(counts, Figure.PEAK_BYTES),
                counted=True,
            )
        )
    return checks


def _repeats(counts: CountSamples, figure: Figure) -> str:
    return f"range over {counts.repeats(figure)} repeats"


def _signed_seconds(seconds: float) -> str:
    return format_seconds(seconds, signed=True)


def _signed_count(count: float) -> str:
    return format_count(count, signed=True)


def _signed_bytes(size: float) -> str:
    return format_bytes(size, signed=True)


@dataclass(frozen=True)
class Outcome:
    """What a judged pair does to its test: fail with ``failure``, and/or issue ``warnings``."""

    failure: str | None = None
    warnings: tuple[Warning, ...] = ()


def outcome(
    result: OverheadResult,
    policy: Policy,
    subtract_harness: bool,
    change: Change | None = None,
    gate: Gate | None = None,
    servers_elsewhere: Sequence[int] = (),
) -> Outcome:
    """The test's outcome: a failed verdict fails; an inconclusive one fails or warns by
    ``policy``; the change against the stored run or the base tree (``change``) is judged by
    ``gate`` (:func:`gate_effect`); a harness that costs more than ``HARNESS_WARN_SHARE`` of the
    baseline warns; a count of this process while servers ran in other processes
    (``servers_elsewhere``: their process ids) warns."""
    if not result.measured:
        return Outcome()
    warned: list[Warning] = []
    failures: list[str] = []
    _verdict_effect(result.verdict, result.message, result.nodeid, policy, failures, warned)
    if change is not None and gate is not None:
        shown = (format_fraction(change.old - 1), format_fraction(change.new - 1))
        story = f"overhead {change.describe(shown)} (the change: of framework / baseline)"
        gate_effect(result.nodeid, "the framework path", story, change, gate, failures, warned)
    if result.mode == Mode.COUNT and servers_elsewhere:
        warned.append(
            OverheadCountingWarning(
                f"{result.nodeid}: count mode counted this process only, while server process(es) "
                f"{', '.join(map(str, servers_elsewhere))} served requests: what the server does for each call "
                f"is not in the counts ({format_fraction(result.overhead, signed=True)} counts the client's side). "
                f"Measure the server's side in time mode, or serve the app in the test's event loop "
                f"(overheadbench.http.serve_in_process) with an async pair"
            )
        )
    counter = result.counts.counter if result.counts is not None else Counter.BYTECODE
    if result.mode == Mode.COUNT and (why := disagreement(result.nodeid, result.ratio, result.time_ratio, counter)):
        warned.append(OverheadCountingWarning(why))
    if result.mode == Mode.TIME and not subtract_harness and result.harness_s > HARNESS_WARN_SHARE * result.baseline_s:
        warned.append(
            OverheadHarnessWarning(
                f"{result.nodeid}: the measuring loop itself costs {result.harness_s * 1e9:.0f} ns/call, "
                f"{result.harness_s / result.baseline_s:.0%} of the baseline's time per call, which dilutes "
                f"the overhead; batch more work per call or set overhead_subtract_harness=true"
            )
        )
    return Outcome("\n".join(failures) or None, tuple(warned))


def gate_effect(
    nodeid: str, what: str, story: str, change: Change, gate: Gate, failures: list[str], warned: list[Warning]
) -> None:
    """The gate, one rule for every change: regressed by more than the threshold (the low end of
    the interval, in the figure's bad direction) fails; an interval containing the threshold
    ("unknown") warns or fails by ``gate.unknown`` (or is only shown); same, improved, or no
    threshold: nothing."""
    if gate.threshold is None:
        return
    finding = change.finding(gate.threshold)
    limit = f"{gate.flag}={gate.threshold:g}%"
    if finding == Finding.REGRESSED:
        failures.append(f"{nodeid}: {what}{REGRESSED_MARK}{gate.reference}: {story}, more than {limit}")
    elif finding == Finding.UNKNOWN and gate.unknown is not None:
        message = (
            f"{nodeid}: cannot tell whether {what} changed by more than {limit} against {gate.reference}: {story}; "
            f"the interval contains the threshold (more processes or time per pair narrow it)"
        )
        if gate.unknown == Policy.FAIL:
            failures.append(message)
        else:
            warned.append(OverheadChangeWarning(message))


def _verdict_effect(
    status: Status, message: str, nodeid: str, policy: Policy, failures: list[str], warned: list[Warning]
) -> None:
    """A failed verdict fails; an inconclusive one fails or warns by ``policy``."""
    if status == Status.FAIL:
        failures.append(message)
    elif status == Status.INCONCLUSIVE and policy == Policy.FAIL:
        failures.append(f"inconclusive: {message}")
    elif status == Status.INCONCLUSIVE:
        warned.append(OverheadInconclusiveWarning(f"{nodeid}: inconclusive: {message}"))


def figures_outcome(
    figures: Sequence[FigureResult],
    policy: Policy,
    changes: Sequence[tuple[FigureResult, Change]] = (),
    gate: Gate | None = None,
) -> Outcome:
    """A transport test's outcome, by the pairs' rules: a failed figure fails the test, an
    inconclusive one fails or warns by ``policy``, and each figure's change against the stored
    run is judged by ``gate``, in percent of the figure (:func:`gate_effect`)."""
    failures: list[str] = []
    warned: list[Warning] = []
    for figure in figures:
        _verdict_effect(figure.verdict, figure.message, figure.nodeid, policy, failures, warned)
    for figure, change in changes:
        if gate is not None:
            spec = SPECS[figure.metric]
            story = f"{spec.what} {change.describe((spec.show(change.old), spec.show(change.new)))}"
            gate_effect(figure.nodeid, f"{figure.row} {spec.what}", story, change, gate, failures, warned)
    return Outcome("\n".join(failures) or None, tuple(warned))
