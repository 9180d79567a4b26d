"""Pass, fail or inconclusive: each budget's check, and the sentence that says why.

A check is only "pass" when the *whole* interval is within its limit and only "fail" when
the whole interval is over it; anything in between is "inconclusive", which is what makes
the same code give the same verdict run after run. In time mode the interval is the
confidence interval; in count mode it is the range over the repeated counts (a single
value for deterministic code). The verdict is the worst of the checks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .counting import INSTRUCTIONS, KEPT_BLOCKS, PEAK_BYTES, CountSamples
from .durations import format_fraction, format_seconds
from .marker import Budget
from .sampling import BASELINE, FRAMEWORK
from .sizes import format_bytes, format_count

PASS = "pass"
FAIL = "fail"
INCONCLUSIVE = "inconclusive"
UNJUDGED = "unjudged"
"""Measured, but no budget applies in this mode (a time budget in count mode)."""


@dataclass(frozen=True)
class Verdict:
    status: str
    message: str


@dataclass(frozen=True)
class Check:
    """One budget against one measured figure: ``value`` with its interval ``low..high``."""

    name: str
    """The marker keyword: max, max_abs, max_alloc, max_alloc_bytes."""
    what: str
    """What is measured, e.g. "overhead" or "extra blocks kept per call"."""
    limit: float
    value: float
    low: float
    high: float
    show: Callable[[float], str]
    interval: str
    """What ``low..high`` is: "95% CI" (time) or "range over 5 repeats" (counts)."""

    @property
    def counted(self) -> bool:
        return not self.interval.endswith("CI")

    @property
    def status(self) -> str:
        if self.high <= self.limit:
            return PASS
        if self.low > self.limit:
            return FAIL
        return INCONCLUSIVE

    def sentence(self) -> str:
        if math.isnan(self.value):
            return f"{self.what} cannot be judged: the baseline executes no Python bytecode to compare with"
        verb = {PASS: "is within", FAIL: "exceeds", INCONCLUSIVE: "straddles"}[self.status]
        spread = f"{self.interval} {self.show(self.low)}..{self.show(self.high)}"
        if self.counted and self.show(self.low) == self.show(self.high):
            spread = self.interval.replace("range over", "the same on all")
        return f"{self.what} {self.show(self.value)} ({spread}) {verb} {self.name} {self.show(self.limit)}"


def judge(checks: Sequence[Check], figures: str) -> Verdict:
    """The worst check's status, and a message naming that check, its interval and the figures."""
    if not checks:
        return Verdict(UNJUDGED, f"no budget of this test applies in count mode (max_abs is a time budget): {figures}")
    statuses = [check.status for check in checks]
    status = FAIL if FAIL in statuses else INCONCLUSIVE if INCONCLUSIVE in statuses else PASS
    worst = next(check for check in checks if check.status == status)
    message = f"{worst.sentence()}: {figures}"
    if status == INCONCLUSIVE and not worst.counted:
        message += (
            "; the interval contains the budget, so this run cannot tell. Give the pair more "
            "time (overhead_time_budget), more processes (overhead_processes), or set "
            "overhead_inconclusive=warn"
        )
    elif status == INCONCLUSIVE:
        message += (
            "; the counts differ from repeat to repeat (the code is not deterministic: caches, "
            "time-dependent branches) and their range contains the budget"
        )
    return Verdict(status, message)


def judge_time(
    overhead: float,
    overhead_ci: tuple[float, float],
    baseline_s: float,
    budget: Budget,
    confidence: float,
    counts: CountSamples | None = None,
) -> Verdict:
    """Judge a timed overhead (a fraction, with its interval) against the time budgets, and
    the allocations counted after timing (``counts``) against the allocation budgets."""
    figures = (
        f"baseline {format_seconds(baseline_s)}/call, framework {format_seconds(baseline_s * (1 + overhead))}"
        f"/call ({format_seconds(overhead * baseline_s, signed=True)})" + allocation_figures(counts)
    )
    return judge(
        time_checks(overhead, overhead_ci, baseline_s, budget, f"{confidence * 100:g}% CI")
        + allocation_checks(counts, budget),
        figures,
    )


def judge_counts(counts: CountSamples, budget: Budget) -> Verdict:
    """Judge a pair measured in count mode: its instruction overhead and allocations, on
    their range over the repeats."""
    base, framework = counts.median(BASELINE, INSTRUCTIONS), counts.median(FRAMEWORK, INSTRUCTIONS)
    figures = (
        f"baseline {format_count(base)} instructions/call, framework {format_count(framework)}/call "
        f"({format_count(framework - base, signed=True)})" + allocation_figures(counts)
    )
    return judge(instruction_checks(counts, budget) + allocation_checks(counts, budget), figures)


def allocation_figures(counts: CountSamples | None) -> str:
    """``; peak memory 96 B -> 352 B, blocks kept 0 -> 1 per call`` (empty without counts)."""
    if counts is None or not counts.has(PEAK_BYTES):
        return ""
    peak = [format_bytes(counts.median(side, PEAK_BYTES)) for side in (BASELINE, FRAMEWORK)]
    kept = [format_count(counts.median(side, KEPT_BLOCKS)) for side in (BASELINE, FRAMEWORK)]
    return f"; peak memory {peak[0]} -> {peak[1]}, blocks kept {kept[0]} -> {kept[1]} per call"


def time_checks(
    overhead: float, overhead_ci: tuple[float, float], baseline_s: float, budget: Budget, interval: str
) -> list[Check]:
    """The time budgets: the relative overhead, and the absolute one (relative times the
    baseline's time per call, so both are judged on the same paired estimate)."""
    checks = []
    if budget.max_overhead is not None:
        checks.append(Check("max", "overhead", budget.max_overhead, overhead, *overhead_ci, format_fraction, interval))
    if budget.max_abs_s is not None:
        low, high = overhead_ci
        checks.append(
            Check(
                "max_abs",
                "overhead",
                budget.max_abs_s,
                overhead * baseline_s,
                low * baseline_s,
                high * baseline_s,
                lambda s: format_seconds(s, signed=True),
                interval,
            )
        )
    return checks


def instruction_checks(counts: CountSamples, budget: Budget) -> list[Check]:
    """Count mode's relative budget: extra instructions per call as a fraction of the baseline's."""
    if budget.max_overhead is None:
        return []
    interval = repeats(counts)
    if counts.median(BASELINE, INSTRUCTIONS) < 1:
        return [
            Check(
                "max",
                "instruction overhead",
                budget.max_overhead,
                math.nan,
                math.nan,
                math.nan,
                format_fraction,
                interval,
            )
        ]
    ratio, low, high = counts.ratio(INSTRUCTIONS)
    return [
        Check(
            "max", "instruction overhead", budget.max_overhead, ratio - 1, low - 1, high - 1, format_fraction, interval
        )
    ]


def repeats(counts: CountSamples) -> str:
    return f"range over {len(next(iter(counts.baseline.values())))} repeats"


def allocation_checks(counts: CountSamples | None, budget: Budget) -> list[Check]:
    """The allocation budgets (both modes): extra blocks kept, extra peak bytes, per call."""
    checks = []
    if counts is not None and budget.max_alloc is not None:
        checks.append(
            Check(
                "max_alloc",
                "extra memory blocks kept per call",
                budget.max_alloc,
                *counts.difference(KEPT_BLOCKS),
                lambda n: format_count(n, signed=True),
                repeats(counts),
            )
        )
    if counts is not None and budget.max_alloc_bytes is not None:
        checks.append(
            Check(
                "max_alloc_bytes",
                "extra peak memory per call",
                budget.max_alloc_bytes,
                *counts.difference(PEAK_BYTES),
                lambda b: format_bytes(b, signed=True),
                repeats(counts),
            )
        )
    return checks
