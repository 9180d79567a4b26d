"""Pass, fail or inconclusive: the interval against the budget, and the sentence that says why.

A verdict is only "pass" when the *whole* interval is within every budget and only "fail"
when the whole interval is over one; anything in between is "inconclusive", which is
what makes the same code give the same verdict run after run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .durations import format_fraction, format_seconds
from .marker import Budget

PASS = "pass"
FAIL = "fail"
INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class Verdict:
    status: str
    message: str


@dataclass(frozen=True)
class _Check:
    name: str
    limit: float
    value: float
    low: float
    high: float
    show: Callable[[float], str]

    @property
    def status(self) -> str:
        if self.high <= self.limit:
            return PASS
        if self.low > self.limit:
            return FAIL
        return INCONCLUSIVE

    def sentence(self, confidence: float) -> str:
        verb = {PASS: "is within", FAIL: "exceeds", INCONCLUSIVE: "straddles"}[self.status]
        return (
            f"overhead {self.show(self.value)} ({confidence * 100:g}% CI "
            f"{self.show(self.low)}..{self.show(self.high)}) {verb} {self.name} {self.show(self.limit)}"
        )


def _relative(value: float) -> str:
    return format_fraction(value)


def _absolute(value: float) -> str:
    return format_seconds(value, signed=True)


def judge(
    overhead: float,
    overhead_ci: tuple[float, float],
    baseline_s: float,
    budget: Budget,
    confidence: float,
) -> Verdict:
    """Judge a measured overhead (fraction, with its interval) against ``budget``.

    The absolute overhead and its interval are the relative ones times the baseline's
    time per call, so both budgets are judged on the same paired estimate.
    """
    checks = []
    if budget.max_overhead is not None:
        checks.append(_Check("max", budget.max_overhead, overhead, *overhead_ci, _relative))
    if budget.max_abs_s is not None:
        low, high = overhead_ci
        checks.append(_Check("max_abs", budget.max_abs_s, overhead * baseline_s,
                             low * baseline_s, high * baseline_s, _absolute))
    statuses = [check.status for check in checks]
    status = FAIL if FAIL in statuses else INCONCLUSIVE if INCONCLUSIVE in statuses else PASS
    worst = next(check for check in checks if check.status == status)
    figures = (
        f"baseline {format_seconds(baseline_s)}/call, framework "
        f"{format_seconds(baseline_s * (1 + overhead))}/call ({format_seconds(overhead * baseline_s, signed=True)})"
    )
    message = f"{worst.sentence(confidence)}: {figures}"
    if status == INCONCLUSIVE:
        message += (
            "; the interval contains the budget, so this run cannot tell. Give the pair more "
            "time (overhead_time_budget), more processes (overhead_processes), or set "
            "overhead_inconclusive=warn"
        )
    return Verdict(status, message)
