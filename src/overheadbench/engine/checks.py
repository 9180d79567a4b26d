"""The judged figure: one measured value, with its interval, against one limit, and its verdict.

A pair's budgets (``max``, ``max_abs``, ``max_alloc``, ``max_alloc_bytes``) and a transport
row's figures (a p95 ceiling, a req/s floor) are the same thing: a :class:`Check`. It is
judged by one rule, stored whole in a run (value, interval, limit, status and the sentence
that explains it), and every report reads it back: the budgets table, the CSV of checks, the
JSON. A check is only "pass" when the *whole* interval is on the right side of its limit and
only "fail" when the whole interval is on the wrong side; anything in between is
"inconclusive".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..core.jsonio import Fields, ShapeError
from ..core.units import format_bytes, format_count, format_factor, format_fraction, format_seconds
from ..core.vocabulary import Word
from .contention import CONTENDED_BELOW


class Status(Word):
    """A verdict: of one check, of a pair (its worst check) or of a transport figure."""

    PASS = "pass"
    """The whole interval is within every budget."""
    FAIL = "fail"
    """The whole interval of some budget's figure is over it."""
    INCONCLUSIVE = "inconclusive"
    """The interval contains the budget: this run cannot tell."""
    UNJUDGED = "unjudged"
    """Measured, but no budget could be judged (no limit, a time budget in count mode, no bytecode to count)."""
    UNMEASURED = "unmeasured"
    """Called once as a smoke test (no ``--overhead``)."""


class Overall(Word):
    """A measured test's one outcome: its budgets' verdict and every gate's finding, worst first
    (a budget broken, then a change regressed past the gate, then either undecided). Decided once,
    where the test is judged (:func:`overheadbench.engine.outcome.decide`), and carried on the result to
    the JSON's top level, the terminal table, the markdown, the CSV and ``report`` (``compare``
    judges two runs' change at its own ``--fail-above``, not a pair's outcome)."""

    FAIL = "fail"
    """A budget's whole interval is over it."""
    REGRESSED = "regressed"
    """A change against the base tree, an environment or the stored run is past the gate's threshold."""
    UNKNOWN = "unknown"
    """A gated change's interval contains the threshold (the gate could not tell)."""
    INCONCLUSIVE = "inconclusive"
    """A budget's interval contains its limit."""
    UNJUDGED = "unjudged"
    PASS = "pass"
    UNMEASURED = "unmeasured"

    @classmethod
    def of(cls, status: Status) -> Overall:
        """The outcome of a verdict alone (no gate; a stored run before schema 16)."""
        return cls(status.value)


OVERALL_ORDER = (
    Overall.FAIL,
    Overall.REGRESSED,
    Overall.UNKNOWN,
    Overall.INCONCLUSIVE,
    Overall.UNJUDGED,
    Overall.PASS,
    Overall.UNMEASURED,
)
"""Worst first: a test's outcome is the first of these that any of its verdicts or findings is."""


class Unit(Word):
    """How a check's numbers are printed (stored with the check, so a report of a stored run
    prints them as the session did)."""

    FRACTION = "fraction"
    SIGNED_FRACTION = "signed fraction"
    """A change: +12.0%, -3.0%."""
    SECONDS = "seconds"
    SIGNED_SECONDS = "signed seconds"
    COUNT = "count"
    SIGNED_COUNT = "signed count"
    SIGNED_BYTES = "signed bytes"
    RATE = "rate"
    """Per second: req/s, events/s."""
    TIMES = "times"
    """A ratio: 1.80x."""
    FACTOR = "factor"
    """An overhead (ratio - 1) shown as the factor it makes: 412x (a large one, or a budget written so)."""


def show(unit: Unit, value: float) -> str:
    """``value`` printed in ``unit`` ("n/a" when it is not finite)."""
    if not math.isfinite(value):
        return "n/a"
    if unit in (Unit.SECONDS, Unit.SIGNED_SECONDS):
        return format_seconds(value, signed=unit == Unit.SIGNED_SECONDS)
    if unit in (Unit.COUNT, Unit.SIGNED_COUNT):
        return format_count(value, signed=unit == Unit.SIGNED_COUNT)
    if unit == Unit.SIGNED_BYTES:
        return format_bytes(value, signed=True)
    if unit == Unit.RATE:
        return f"{value:,.0f}/s"
    if unit == Unit.TIMES:
        return f"{value:.2f}x"
    if unit == Unit.FACTOR:
        return format_factor(1 + value)
    return format_fraction(value, signed=unit == Unit.SIGNED_FRACTION)


NOT_MEASURED = "not measured (run pytest with --overhead)"


@dataclass(frozen=True)
class Check:
    """One budget against one measured figure: ``value`` with its interval ``low..high``."""

    name: str
    """The marker keyword: max, max_abs, max_alloc, max_alloc_bytes, p95, rps..."""
    what: str
    """What is measured, e.g. "overhead", "extra blocks kept per call", "h2c c=10: p95 latency"."""
    limit: float | None
    """None: shown and stored, not judged (a transport figure without a budget)."""
    value: float
    low: float
    high: float
    unit: Unit
    interval: str
    """What ``low..high`` is: "95% CI" (time), "range over 5 repeats" (counts), "a single reading"."""
    counted: bool
    """Exact counts or a single reading (their range is the repeats' spread), not an estimate with a
    confidence interval."""
    floor: bool = False
    """The limit is a floor (req/s, events/s): the figure must stay at or above it."""
    precision: str = ""
    """What the figure can tell at best, when that is coarser than its unit (kept memory blocks)."""
    unjudged: str = "it was not measured"
    """Why a figure that is not a number cannot be judged (a pair's instruction overhead: no bytecode)."""
    measured: bool = True
    """False: a smoke run without ``--overhead``."""
    limit_unit: Unit | None = None
    """How the limit prints, where not as the figure does: a budget of ``max=0.5`` stays
    ``50.0%`` beside a figure of ``172x``."""
    core_share: float | None = None
    """For an absolute figure read on the wall clock: the share of a core the judging process got
    when it was judged (:mod:`overheadbench.engine.contention`); None: not probed (a relative figure,
    a count, a pair read on CPU time)."""

    @property
    def contended(self) -> bool:
        """Broken while the machine was contended: an absolute wall-clock figure past its budget while
        the process got less than ``CONTENDED_BELOW`` of a core, which cannot be told from the code."""
        if self.core_share is None or self.core_share >= CONTENDED_BELOW:
            return False
        return self._status() == Status.FAIL

    def show(self, value: float) -> str:
        return show(self.unit, value)

    def show_limit(self) -> str:
        return show(self.limit_unit or self.unit, math.nan if self.limit is None else self.limit)

    @property
    def status(self) -> Status:
        """Pass, fail or inconclusive by the whole interval; inconclusive where a failure is the
        contended machine's as much as the code's (:attr:`contended`)."""
        return Status.INCONCLUSIVE if self.contended else self._status()

    def _status(self) -> Status:
        if not self.measured:
            return Status.UNMEASURED
        if self.limit is None or math.isnan(self.value):
            return Status.UNJUDGED
        worst, best = (self.low, self.high) if self.floor else (self.high, self.low)
        if (worst >= self.limit) if self.floor else (worst <= self.limit):
            return Status.PASS
        if (best < self.limit) if self.floor else (best > self.limit):
            return Status.FAIL
        return Status.INCONCLUSIVE

    @property
    def spread(self) -> str:
        """The interval as printed: ``95% CI 1.20 ms..1.40 ms``, or what a single or exact reading is."""
        if self.counted and self.show(self.low) == self.show(self.high):
            return self.interval.replace("range over", "the same on all")
        return f"{self.interval} {self.show(self.low)}..{self.show(self.high)}"

    @property
    def bounds(self) -> str:
        """The interval's ends alone, ``1.20 ms..1.40 ms`` (one figure where they are equal): for a
        terminal's table, whose note says what kind of interval they are."""
        low, high = self.show(self.low), self.show(self.high)
        return low if low == high else f"{low}..{high}"

    @property
    def bound(self) -> str:
        """The limit as printed: ``≤5.00 ms``, ``≥1,000/s`` (empty without one)."""
        return "" if self.limit is None else f"{'≥' if self.floor else '≤'}{self.show_limit()}"

    def sentence(self) -> str:
        status = self.status
        if status == Status.UNMEASURED:
            return NOT_MEASURED
        if self.limit is None:
            return f"{self.what} {self.show(self.value)} (no budget)"
        if status == Status.UNJUDGED:
            return f"{self.what} cannot be judged: {self.unjudged}"
        verbs = ("meets", "falls below") if self.floor else ("is within", "exceeds")
        verb = {Status.PASS: verbs[0], Status.FAIL: verbs[1], Status.INCONCLUSIVE: "straddles"}[status]
        spread = f"{self.spread}; {self.precision}" if self.precision else self.spread
        said = f"{self.what} {self.show(self.value)} ({spread}) {verb} {self.name} {self.show_limit()}"
        if self.contended:
            return (
                f"{self.what} {self.show(self.value)} ({spread}) {verbs[1]} {self.name} {self.show_limit()}, but this "
                f"process got {self.core_share:.0%} of a core as it was judged: on a contended machine an absolute "
                f"figure is the machine's as much as the code's (judge it on a quiet runner, or as a change)"
            )
        return said

    def to_json(self) -> dict[str, Any]:
        """The whole check, its status and sentence included (for readers of the file)."""
        return {
            "name": self.name,
            "what": self.what,
            "value": self.value,
            "ci": [self.low, self.high],
            "interval": self.interval,
            "limit": self.limit,
            "unit": self.unit,
            "limit_unit": self.limit_unit,
            "floor": self.floor,
            "counted": self.counted,
            "precision": self.precision,
            "unjudged": self.unjudged,
            "core_share": self.core_share,
            "status": self.status,
            "sentence": self.sentence(),
        }

    @classmethod
    def from_json(cls, data: Any, path: str = "check") -> Check:
        fields = Fields(data, path)
        ci = fields.numbers("ci")
        if len(ci) != 2:
            raise ShapeError(f"{path}.ci: expected [low, high], got {len(ci)} values")
        status = fields.choice("status", Status)
        return cls(
            name=fields.text("name"),
            what=fields.text("what"),
            limit=fields.maybe_number("limit"),
            value=fields.number("value"),
            low=ci[0],
            high=ci[1],
            unit=fields.choice("unit", Unit),
            limit_unit=fields.choice("limit_unit", Unit) if fields.data.get("limit_unit") else None,
            interval=fields.text("interval"),
            counted=fields.flag("counted"),
            floor=fields.flag("floor"),
            precision=fields.text("precision", optional=True) or "",
            unjudged=fields.text("unjudged", optional=True) or cls.unjudged,
            measured=status != Status.UNMEASURED,
            core_share=fields.maybe_number("core_share"),  # schema 16
        )
