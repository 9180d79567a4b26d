"""What a measured pair's result does to its test: its verdict, its changes (against the stored
run, at every other place of the session) and its own warnings, decided by the one rule
(:func:`overheadbench.engine.outcome.decide`): the harness's cost, count mode beside server
processes, counts that disagree with time, a budget that reads like a percentage, a budget or a
gate threshold the pair cannot resolve.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

from ..core.errors import (
    PRECISION,
    OverheadCountingWarning,
    OverheadHarnessWarning,
    OverheadMarkerWarning,
    OverheadPrecisionWarning,
)
from ..core.units import format_fraction, format_overhead
from ..engine.changes import Gate
from ..engine.checks import Status
from ..engine.counting import disagreement
from ..engine.outcome import Gated, Outcome, decide
from ..engine.settings import Counter, Policy
from .results import OverheadResult

HARNESS_WARN_SHARE = 0.10
"""The harness warning fires when concurrent callers' own machinery costs more than this share of
the baseline. One caller's harness (an empty callable through the loop) is what calling any
callable costs, timeit's loop included: the baseline's figure is what timeit reads for it (within
5%, validation/BUSY_RUNNER.md), so there is nothing to warn of."""
PERCENT_HINT_FROM = 10.0
"""A plain ``max`` from this up (1,000%) may be a percentage written as a number (``max=25``)..."""
IMPLAUSIBLE_BELOW = 10.0
"""... and is taken for one when the measured overhead is this many times below it, interval
included: a budget a hundred times the figure is no budget, a percentage the figure's size is
what was meant. A large budget that the figure bears out (``max=1500`` on a 413x pair) is one."""


class Judge(Protocol):
    """What judges a pair's changes: the gate at the session's other places
    (:class:`~overheadbench.pairs.across.PlaceGate`), or against the stored run
    (:class:`~overheadbench.pairs.across.StoredGate`)."""

    @property
    def gate(self) -> Gate: ...

    def gated(self, result: OverheadResult) -> list[Gated]:
        """The changes ``result`` carries that this gate judges."""
        ...

    def unresolved(self, nodeid: str, changes: Sequence[Gated]) -> OverheadPrecisionWarning | None:
        """A warning where the threshold is within what a change can detect here."""
        ...


def pair_outcome(
    result: OverheadResult,
    policy: Policy,
    subtract_harness: bool,
    judge: Judge | None = None,
    servers_elsewhere: Sequence[int] = (),
) -> Outcome:
    """A measured pair's outcome (:func:`decide`): its verdict; each change the ``judge`` judges,
    against the stored run or another place of the session (the base tree, each environment), of
    framework / baseline; and its own warnings: a harness that costs
    more than ``HARNESS_WARN_SHARE`` of the baseline, a count of this process while servers ran
    in other processes (``servers_elsewhere``: their process ids), counts that time disagrees with."""
    if not result.measured:
        return Outcome()
    changes = judge.gated(result) if judge is not None else []
    warned: list[Warning] = []
    if result.mode.counted and servers_elsewhere:
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
    if result.mode.counted and (why := disagreement(result.nodeid, result.ratio, result.time_ratio, counter)):
        warned.append(OverheadCountingWarning(why))
    if hint := percent_hint(result):
        warned.append(hint)
    if harness_dilutes(result, subtract_harness):
        warned.append(
            OverheadHarnessWarning(
                f"{result.nodeid}: releasing and gathering the {result.concurrency} concurrent callers costs "
                f"{result.harness_s * 1e9:.0f} ns/call, {result.harness_s / result.baseline_s:.0%} of the baseline's "
                f"time per call, which dilutes the overhead; put more work in each call or set "
                f"overhead_subtract_harness=true"
            )
        )
    if tight := too_tight(result) or (judge.unresolved(result.nodeid, changes) if judge is not None else None):
        warned.append(tight)
    told = f"{result.message}\n{result.explain.told()}" if result.explain is not None else result.message
    return decide(result.nodeid, [(result.verdict, told)], policy, changes, judge.gate if judge else None, warned)


def too_tight(result: OverheadResult) -> OverheadPrecisionWarning | None:
    """One warning where an inconclusive verdict's budget is narrower than the interval's half-width:
    even a zero overhead could not pass it (a gate's threshold is its judge's, :meth:`Judge.unresolved`)."""
    half = result.detectable / 2
    limit = result.pair.budget.max_overhead
    if result.verdict == Status.INCONCLUSIVE and limit is not None and 0 <= limit < half:
        return OverheadPrecisionWarning(
            f"{result.nodeid}: its budget ({format_fraction(limit)}) is tighter than what it can detect here "
            f"(±{format_fraction(half)}): its verdict will stay inconclusive; {PRECISION}"
        )
    return None


def harness_dilutes(result: OverheadResult, subtract_harness: bool) -> bool:
    """Whether the plugin's own machinery (concurrent callers' release and gathering) is a large
    share of the baseline's time per call, left in (see :data:`HARNESS_WARN_SHARE`)."""
    share = result.harness_s > HARNESS_WARN_SHARE * result.baseline_s
    return not result.mode.counted and result.concurrency > 1 and not subtract_harness and share


def percent_hint(result: OverheadResult) -> Warning | None:
    """``max=25`` where 25% was meant: said once the figure shows which reading is plausible
    (see :data:`IMPLAUSIBLE_BELOW`); never on a factor (``max="500x"``)."""
    limit, high = result.pair.budget.max_overhead, result.ci[1]
    if limit is None or result.pair.budget.max_factor or limit < PERCENT_HINT_FROM or not math.isfinite(high):
        return None
    if high * IMPLAUSIBLE_BELOW > limit:
        return None
    return OverheadMarkerWarning(
        f"{result.nodeid}: max={limit:g} allows {format_overhead(limit)} overhead, and the pair measured "
        f"{format_overhead(result.overhead)}: max is a fraction (0.25 = 25%); did you mean max={limit / 100:g}? "
        f"(A factor is written as a string: max='{1 + limit:g}x'.)"
    )
