"""How pairs are measured and judged in a session: a flat, typed, JSON-serialisable dataclass.

It is what :mod:`overheadbench.options` resolves from the command line and the ini file,
what a replica process receives for each pair, and what a stored run records; it imports
no pytest, so the engine does not either.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from ..core.vocabulary import (
    Counter as Counter,  # a setting, and what the counts record
    Word,
)


class Mode(Word):
    """What a pair is measured in."""

    TIME = "time"
    """Wall clock, replicated in fresh processes, with a confidence interval."""
    COUNT = "count"
    """Executed instructions (see :class:`Counter`) and allocations: exact counts."""

    @property
    def counted(self) -> bool:
        """Exact counts: one process is the whole answer, one caller, no interval and no time
        budget. What a report or a check asks of a mode; only this enum and the measuring
        strategy's factory (:mod:`overheadbench.pairs.strategy`) name a mode to test it."""
        return self is Mode.COUNT

    @property
    def unit(self) -> str:
        """What a budget's overhead is of, as the report prints it (``≤25% instr``)."""
        return " instr" if self.counted else ""


class Policy(Word):
    """What an inconclusive verdict does to its test."""

    FAIL = "fail"
    WARN = "warn"


@dataclass(frozen=True)
class Settings:
    """Units in the names: seconds, fractions."""

    time_budget_s: float = 2.0
    """Wall time one pair aims to take, all replica processes included: a process stops at its
    share once it has its minimum of block pairs (:data:`~overheadbench.engine.sampling.MIN_PAIRS`)."""
    max_time_s: float = 60.0
    """The pair's ceiling: how long its processes may sample to reach their minimum of block
    pairs (millisecond calls), and further rounds may go on while a gate's change is unknown."""
    target_halfwidth: float = 0.01
    """Stop early once the interval is this narrow, relative to the ratio (0.01: ±1% of
    framework / baseline; on the log scale, as the gate reads changes)."""
    confidence: float = 0.95
    processes: int = 10
    """Fresh replica processes a pair is measured in first; 1 = in this process only, no replicas.
    The estimate is their median, with Student's t on the log scale (see
    :mod:`overheadbench.engine.stats`); 10 rather than 6: the sd of 6 processes is itself so uncertain
    that t(5) widens the interval by half again, and one process in a bad layout moves it
    (validation/ab_gate.py intervals: the interval against the estimate's spread
    across fresh sessions, per pair). Fewer than 6 use the mean ± t (the quick profile's 3)."""
    max_processes: int = 16
    """At most this many processes per pair (or ``processes``, if more)."""
    extra_processes: int = 3
    """Processes added per further round while the interval is wider than the target (10 -> 13 -> 16)."""
    replica_timeout_s: float = 60.0
    """Longest a replica process may stay silent (starting, setting a test up, sampling)."""
    pair_timeout_s: float = 120.0
    """Longest a pair may stay silent (no block timed here, no replica's message, no profile's block)
    before it fails: a callable that hangs. A limit on silence, not length (:mod:`overheadbench.core.timeouts`)."""
    backend: str = "asyncio"
    gc_enabled: bool = False
    """Leave the garbage collector on while timing (off by default: it fires at random)."""
    inconclusive: Policy = Policy.FAIL
    """What an inconclusive verdict does to the test."""
    subtract_harness: bool = False
    """Subtract the harness's own per-call loop cost from both sides before the ratio."""
    min_block_s: float = 100e-6
    """Calibration target: a timed block lasts at least this long."""
    mode: Mode = Mode.TIME
    """The session's mode; a marker's ``mode=`` overrides it per test."""
    allocations: bool = True
    """In time mode, also count allocations per call (a short tracemalloc pass after timing)."""
    concurrency: int = 1
    """Callers of each side at once while it is timed (a pair's own: its marker or ``compare()``)."""
    counter: Counter = Counter.AUTO
    """Count mode's instruction counter (resolved from ``auto`` when the session starts)."""

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Settings:
        """Settings back from :meth:`to_json`; fields this version does not know are left out
        (a stored run records its settings for the reader, nothing is computed from them)."""
        known = {f.name: f for f in dataclasses.fields(cls)}
        values = {name: value for name, value in data.items() if name in known}
        if "inconclusive" in values:
            values["inconclusive"] = Policy(values["inconclusive"])
        if "mode" in values:
            values["mode"] = Mode(values["mode"])
        if "counter" in values:
            values["counter"] = Counter(values["counter"])
        return cls(**values)


def shown_default(name: str, value: Any) -> str:
    """A setting's default as an option takes it: ``60s``, ``0.95``, ``false``, ``asyncio``."""
    if isinstance(value, bool):
        return str(value).lower()
    if name.endswith("_s"):
        return f"{value:g}s"
    return f"{value:g}" if isinstance(value, float) else str(value)


QUICK_SHARE = 4
"""The quick profile's share of the default time per pair: a quarter (pyperf's ``--fast`` derives
its runs from the defaults alike), so the two cannot drift apart."""
QUICK_WIDER = 3
"""How much wider an interval the quick profile aims at (fewer processes cannot narrow it further)."""
QUICK: dict[str, Any] = {
    "processes": math.ceil(Settings.processes / QUICK_SHARE),
    "max_processes": math.ceil(Settings.processes / QUICK_SHARE),
    "time_budget_s": Settings.time_budget_s / QUICK_SHARE,
    "target_halfwidth": Settings.target_halfwidth * QUICK_WIDER,
    "inconclusive": Policy.WARN,
}
"""``--overhead-quick``: a CI profile, derived from the defaults: a quarter of the time per pair
and of the processes (3: the interval is the mean ± t, see measurement.md), three times the
interval's target width. Its intervals are too wide to settle close calls, so an inconclusive
verdict warns instead of failing; a pair clearly over budget still fails."""
QUICK_AGAINST: dict[str, Any] = {"processes": 6, "max_processes": 6}
"""The quick profile under ``--overhead-against`` or ``--overhead-env``: 6 processes per place. With 3 the change has
2-4 degrees of freedom (t up to 4.3) and one stray process makes its interval ±20%: a 10%
regression was left "unknown" in 3 of 8 sessions (validation/AB_GATE.md)."""
QUICK_LINKED: dict[str, Any] = {"processes": 6, "max_processes": 6}
"""The quick profile under ``--overhead-link``: processes per place. It had the plain quick profile's 3
(the link's change read from 2 degrees of freedom: its standard error ranged 0.3% to 6% over
identical code, and a history beside 2 busy loops missed a +4.5% step in 1 of 4 runs)."""


def quick_profile(quick: bool, places: bool, linked: bool) -> dict[str, Any]:
    """The quick profile's settings where ``quick`` is asked (else none): :data:`QUICK`, with
    :data:`QUICK_AGAINST` where the session measures other ``places``, :data:`QUICK_LINKED` where it is
    ``linked`` (its base tree found later, from the stored runs)."""
    if not quick:
        return {}
    return {**QUICK, **(QUICK_AGAINST if places else QUICK_LINKED if linked else {})}
