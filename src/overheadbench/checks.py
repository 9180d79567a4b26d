"""A verdict's words and its unit: one measured figure, with its interval, against one limit.

A check is only "pass" when the *whole* interval is on the right side of its limit and only
"fail" when the whole interval is on the wrong side; anything in between is "inconclusive".
Pairs (:mod:`overheadbench.verdict`) and transport figures (:mod:`overheadbench.figures`)
are judged by the same checks.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from .vocabulary import Word


class Status(Word):
    """A pair's verdict."""

    PASS = "pass"
    """The whole interval is within every budget."""
    FAIL = "fail"
    """The whole interval of some budget's figure is over it."""
    INCONCLUSIVE = "inconclusive"
    """The interval contains the budget: this run cannot tell."""
    UNJUDGED = "unjudged"
    """Measured, but no budget could be judged (a time budget in count mode, no bytecode to count)."""
    UNMEASURED = "unmeasured"
    """Called once as a smoke test (no ``--overhead``)."""


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
    counted: bool
    """Exact counts (their range is the repeats' spread), not an estimate with a confidence interval."""
    floor: bool = False
    """The limit is a floor (req/s, events/s): the figure must stay at or above it."""
    precision: str = ""
    """What the figure can tell at best, when that is coarser than its unit (kept memory blocks)."""

    @property
    def status(self) -> Status:
        if math.isnan(self.value):
            return Status.UNJUDGED
        worst, best = (self.low, self.high) if self.floor else (self.high, self.low)
        if (worst >= self.limit) if self.floor else (worst <= self.limit):
            return Status.PASS
        if (best < self.limit) if self.floor else (best > self.limit):
            return Status.FAIL
        return Status.INCONCLUSIVE

    def sentence(self) -> str:
        if self.status == Status.UNJUDGED:
            return f"{self.what} cannot be judged: the baseline executes no Python bytecode to compare with"
        verbs = ("meets", "falls below") if self.floor else ("is within", "exceeds")
        verb = {Status.PASS: verbs[0], Status.FAIL: verbs[1], Status.INCONCLUSIVE: "straddles"}[self.status]
        spread = f"{self.interval} {self.show(self.low)}..{self.show(self.high)}"
        if self.counted and self.show(self.low) == self.show(self.high):
            spread = self.interval.replace("range over", "the same on all")
        if self.precision:
            spread = f"{spread}; {self.precision}"
        return f"{self.what} {self.show(self.value)} ({spread}) {verb} {self.name} {self.show(self.limit)}"
