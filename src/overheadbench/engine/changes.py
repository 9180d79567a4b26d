"""One model of a change between two measurements of the same figure, for every comparison.

A pair's overhead (as its ratio framework / baseline), a req/s or a latency: each is compared
as a ratio ``new / old`` on a log scale, where a 230% pair and a 20% pair, a req/s and a p99,
all move alike. The change is ``new / old - 1`` in percent, with a Student t interval on the
log ratio from its standard error, which is each side's own (sampling and layout: its
``se``) plus, when the two were measured in different sessions, twice the between-session
variance of the figure on this machine (:func:`session_log_sd`). Two sides measured in one
session, interleaved (``--overhead-against``), need no session term: whatever the machine did,
it did to both.

The threshold is in percent of the figure and reads the figure's bad direction (higher is
worse for an overhead or a latency, lower for a req/s):

* **regressed**: the interval's low end (in the bad direction) is above the threshold;
* **improved**: its high end is below minus the threshold;
* **same**: the whole interval is inside ±threshold;
* **unknown**: it contains the threshold (or its negative): this session cannot tell.

A figure measured on one side only has no change at all: a pair the base tree lacks is
reported as new (:func:`overheadbench.pairs.verdict.measure_places`), one a stored run lacks is left out; neither fails.

Count mode compares exact counts: the interval has no width.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from ..core.jsonio import Fields
from .findings import Finding, detectable, finding_of
from .settings import Policy
from .shifts import Point, find_shifts
from .spread import SessionTerm
from .stats import CONFIDENCE
from .student import t_quantile

REGRESSED_MARK = " regressed against "
"""How a gate's failure reads (:func:`overheadbench.engine.outcome.gate_effect`): GitHub annotations
title such a failure "regressed"."""
MIN_HISTORY = 3
"""Stored runs of a figure on this machine needed to learn its own between-session spread."""


@dataclass(frozen=True)
class Change:
    """One figure in both measurements. ``old`` and ``new`` are positive values of the figure
    (a pair's ratio, framework / baseline); ``se`` is the standard error of ``log(new / old)``
    and ``df`` its degrees of freedom; ``higher_is_worse``: the figure's bad direction."""

    what: str
    old: float
    new: float
    se: float = 0.0
    df: float = math.inf
    exact: bool = False
    """Both are exact counts: any difference is a real change."""
    higher_is_worse: bool = True
    confidence: float = CONFIDENCE
    """Of the interval the gate reads: higher where one test's many figures are gated together
    (a family of them holds ``CONFIDENCE`` as a whole, :mod:`overheadbench.transport.across`)."""
    between: SessionTerm | None = None
    """The two sides come from separate sessions (not paired), and the interval carries this
    spread between them; None: one session, interleaved."""
    timed: tuple[float, float] | None = None
    """Exact counts' check (percent): the interval of the change that timing the same calls at both
    places read. Where time decides the gate (regressed or improved past the threshold, its whole
    interval) and the counts decide otherwise (the counts "same": C code or waiting, which the counter
    does not see), the change is unknown, never "same" (:meth:`finding`; schema 20). Time that cannot
    tell leaves the counts' finding: the session's probe runs in the pytest process, the other
    place's in a fresh replica, and identical trees' probes read up to 11% apart."""

    def to_json(self) -> dict[str, Any]:
        between = dataclasses.asdict(self.between) if self.between else None
        return {
            "old": self.old,
            "new": self.new,
            "se": self.se,
            "df": self.df if math.isfinite(self.df) else None,
            "exact": self.exact,
            "higher_is_worse": self.higher_is_worse,
            "confidence": self.confidence,
            "between": between,
            "timed": list(self.timed) if self.timed is not None else None,
        }

    @classmethod
    def from_json(cls, data: Any, path: str, what: str) -> Change:
        """A change back from :meth:`to_json` (of ``what``: its test), every field checked."""
        fields = Fields(data, path)
        df = fields.maybe_number("df")
        between = fields.obj("between", optional=True)
        return cls(
            what,
            fields.ratio("old"),
            fields.ratio("new"),
            fields.number("se"),
            math.inf if df is None else df,
            fields.flag("exact"),
            fields.flag("higher_is_worse"),
            fields.maybe_number("confidence") or CONFIDENCE,
            SessionTerm(between.number("sd"), int(between.number("runs")), between.text("clocks")) if between else None,
            _timed(fields),
        )

    @property
    def percent(self) -> float:
        return 100 * (self.new / self.old - 1)

    @property
    def interval(self) -> tuple[float, float]:
        """The change's two-sided interval at its ``confidence``, in percent."""
        if self.exact:
            return self.percent, self.percent
        level = (1 + self.confidence) / 2
        quantile = t_quantile(level, max(1, round(self.df))) if math.isfinite(self.df) else NormalDist().inv_cdf(level)
        centre, half = math.log(self.new / self.old), quantile * self.se
        return 100 * (math.exp(centre - half) - 1), 100 * (math.exp(centre + half) - 1)

    @property
    def worse(self) -> tuple[float, float]:
        """The interval in the figure's bad direction (positive = worse)."""
        low, high = self.interval
        return (low, high) if self.higher_is_worse else (-high, -low)

    @property
    def significant(self) -> bool:
        if self.exact:
            return self.new != self.old
        low, high = self.interval
        return not low <= 0 <= high

    def finding(self, threshold: float) -> Finding:
        """Regressed, improved, same or unknown at ``threshold`` percent (see the module); unknown
        where timing the same calls disagrees with exact counts (:attr:`timed`)."""
        found = finding_of(self.worse, threshold)
        if self.timed is not None:
            low, high = self.timed if self.higher_is_worse else (-self.timed[1], -self.timed[0])
            timed = finding_of((low, high), threshold)
            if timed in (Finding.REGRESSED, Finding.IMPROVED) and timed != found:
                return Finding.UNKNOWN  # time decides the gate, the counts otherwise: they cannot see the change
        return found

    @property
    def evidence(self) -> str:
        """The interval as printed, or "exact" for counts."""
        if self.exact:
            return "exact" if self.timed is None else f"exact; timed {self.timed[0]:+.1f}..{self.timed[1]:+.1f}%"
        low, high = self.interval
        level = "" if math.isclose(self.confidence, CONFIDENCE) else f" at {self.confidence:.2%}"
        return f"{low:+.1f}..{high:+.1f}%{level}"

    @property
    def detectable(self) -> float:
        """The smallest change (percent) this comparison could tell from zero: its interval's
        half-width, on the log scale it is computed on (0 for exact counts)."""
        if self.exact:
            return 0.0
        low, high = self.interval
        return detectable(low / 100, high / 100)

    def moved(self) -> str:
        """The change as a table shows it: ``+12.3%``, or ``~ +0.4%`` when not significant."""
        return f"{'' if self.significant else '~ '}{self.percent:+.1f}%"

    def describe(self, show: Sequence[str] = ()) -> str:
        """e.g. ``72.0% -> 79.4% (+4.3%, 95% CI +2.1..+6.5%)``; ``show``: how to print old and new."""
        old, new = show or (f"{self.old:g}", f"{self.new:g}")
        if self.exact:
            timed = (
                ""
                if self.timed is None
                else f"; timing the same calls read {self.timed[0]:+.1f}..{self.timed[1]:+.1f}%"
            )
            return f"{old} -> {new} ({self.moved()}, exact counts{timed})"
        low, high = self.interval
        return f"{old} -> {new} ({self.moved()}, {100 * self.confidence:.4g}% CI {low:+.1f}..{high:+.1f}%)"


def _timed(fields: Fields) -> tuple[float, float] | None:
    if fields.data.get("timed") is None:
        return None
    low, high = fields.interval("timed")
    return low, high


@dataclass(frozen=True)
class LogEstimate:
    """One side's value of a figure and the standard error of its logarithm (with its degrees
    of freedom): what a :class:`Change` is made of."""

    value: float
    log_se: float
    df: float = math.inf


def interval_estimate(value: float, low: float, high: float) -> LogEstimate:
    """A value with its 95% interval, read as a standard error of the log (normal)."""
    if low <= 0 or high <= 0 or low >= high:
        return LogEstimate(value, 0.0)
    return LogEstimate(value, (math.log(high) - math.log(low)) / (2 * NormalDist().inv_cdf((1 + CONFIDENCE) / 2)))


def session_log_sd(history: Sequence[LogEstimate], prior: float) -> tuple[float, float]:
    """A figure's between-session standard deviation (of its log) on this machine, and its
    degrees of freedom, from its stored values in the order they were stored: learned once there
    are ``MIN_HISTORY`` of them, as ``history`` reads a series (the spread of successive values within
    its segments, every step between them left out, :func:`~overheadbench.engine.shifts.find_shifts`);
    else ``prior`` (infinite degrees of freedom)."""
    past = [r for r in history if r.value > 0 and math.isfinite(r.value) and math.isfinite(r.log_se)]
    if len(past) < MIN_HISTORY:
        return prior, math.inf
    series = find_shifts([Point(math.log(r.value), r.log_se, str(index)) for index, r in enumerate(past)], prior)
    return series.tau, series.df


def change(
    what: str,
    old: LogEstimate,
    new: LogEstimate,
    session: tuple[float, float] | None = None,
    higher_is_worse: bool = True,
) -> Change:
    """The change from ``old`` to ``new``: each side's own error, plus twice the between-session
    variance ``session`` (sd, df) when they were measured in different sessions; Welch's degrees
    of freedom."""
    parts = [(old.log_se**2, old.df), (new.log_se**2, new.df)]
    between = None
    if session is not None:
        parts.append((2 * session[0] ** 2, session[1]))
        between = SessionTerm(session[0], int(session[1]) + 1 if math.isfinite(session[1]) else 0)
    variance = sum(v for v, _ in parts)
    denominator = sum(v**2 / df for v, df in parts if math.isfinite(df) and v > 0)
    df = variance**2 / denominator if denominator > 0 else math.inf
    return Change(what, old.value, new.value, math.sqrt(variance), df, higher_is_worse=higher_is_worse, between=between)


def exact_change(what: str, old: float, new: float) -> Change:
    """Two exact counts (count mode)."""
    return Change(what, old, new, exact=True)


@dataclass(frozen=True)
class Gate:
    """How changes are judged in this session: against what, at which threshold (percent; None:
    shown, not gated) and what an unknown one does."""

    reference: str
    threshold: float | None = None
    unknown: Policy | None = Policy.WARN
    """None: an unknown change is only shown (transport figures: a figure has many, each with a
    wide interval, and a warning for each would drown the session's own)."""

    def finding(self, change: Change) -> Finding | None:
        """The change at this gate's threshold (None: no threshold, shown only)."""
        return None if self.threshold is None else change.finding(self.threshold)

    def fails(self, change: Change) -> bool:
        """The one regression check, the plugin's and ``overheadbench compare``'s alike (the shape
        of pytest-benchmark's ``RegressionCheck.fails``): regressed by more than the threshold, or
        unknown where the policy says an unknown fails."""
        finding = self.finding(change)
        return finding == Finding.REGRESSED or (finding == Finding.UNKNOWN and self.unknown == Policy.FAIL)

    def warns(self, change: Change) -> bool:
        """Unknown, where the policy says an unknown warns."""
        return self.finding(change) == Finding.UNKNOWN and self.unknown == Policy.WARN


@dataclass(frozen=True)
class StoredChange:
    """A pair's or a transport figure's change against a stored run of this machine: separate sessions, not paired (the
    interval carries the spread between them, :attr:`~overheadbench.engine.changes.Change.between`)."""

    run: str
    """The stored run's file name."""
    change: Change

    def to_json(self) -> dict[str, Any]:
        return {"run": self.run, "change": self.change.to_json()}

    @classmethod
    def from_json(cls, data: Any, path: str, what: str) -> StoredChange:
        fields = Fields(data, path)
        change = fields.obj("change")
        assert change is not None
        return cls(fields.text("run"), Change.from_json(change.data, change.path, what))
