"""A pair's ratio as a measurement to compare: one run's against another's, or one place's
against another's in the same session (:mod:`overheadbench.engine.changes`).

The figure compared is the pair's ratio (framework / baseline), so the change is relative to
the framework path: new ratio / old ratio - 1, in percent; a 230% pair and a 20% pair are
gated alike. Its standard error comes from each side's processes (sampling and layout), pooled
as the pair's own interval pools them (:func:`~overheadbench.engine.stats.pool`); two places
measured in one session, interleaved, share the session's state, so no between-session term is
added (:mod:`overheadbench.history.pair_changes` adds it between stored runs), and their
processes pair up by round: each round runs one process of every place back to back, so the
change's error is read from the rounds' differences, where what the machine did during a round
(a neighbour's burst on a shared runner) falls on both sides and cancels. Count mode compares
exact counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from ..core.vocabulary import Role, Side
from ..engine.changes import (
    Change,
    LogEstimate,
    change,
    exact_change,
    interval_estimate,
    session_log_sd,
)
from ..engine.combining import PROCESS_SD, SessionRule, session_term
from ..engine.counted_samples import CountSamples
from ..engine.counting import probe_interval
from ..engine.process_logs import logs_of, process_logs, ratio_log_se
from ..engine.process_ratio import median_interval, pair_ratios
from ..engine.samples import ReplicaSamples, Timer
from ..engine.settings import Mode
from ..engine.stats import CONFIDENCE, pool

PROBES_APART_SD = PROCESS_SD
"""What one process's timing of a pair may sit from another's by layout alone (sd of the log ratio),
the one-process prior: the session's probe runs in the pytest process, the other place's in a fresh
replica (identical trees' probes read up to 11% apart)."""


class Compared(Protocol):
    """What a comparison reads of a result (:class:`~overheadbench.pairs.results.OverheadResult` has it)."""

    @property
    def nodeid(self) -> str: ...

    @property
    def mode(self) -> Mode: ...

    @property
    def concurrency(self) -> int: ...

    @property
    def ratio(self) -> float: ...

    @property
    def measured(self) -> bool: ...

    @property
    def samples(self) -> list[ReplicaSamples]: ...

    @property
    def probe(self) -> ReplicaSamples | None: ...

    @property
    def counts(self) -> CountSamples | None: ...

    @property
    def timer(self) -> Timer: ...


@dataclass(frozen=True)
class Figure:
    """Which figure of a pair a stored result must be to tell this one's spread between sessions:
    the test, its mode, its callers and its clock (a strawberry query's wall-clock ratio read
    10,600-14,300x where its CPU ratio read 6,000-7,700x: one history of both is no one's)."""

    nodeid: str
    mode: Mode
    concurrency: int
    timer: Timer

    @classmethod
    def of(cls, result: Compared) -> Figure:
        return cls(result.nodeid, result.mode, result.concurrency, result.timer)

    def names(self, result: Compared) -> bool:
        return Figure.of(result) == self


class PerCall(Protocol):
    """What a per-call comparison reads of a result: its processes and its figures per call."""

    @property
    def samples(self) -> list[ReplicaSamples]: ...

    @property
    def baseline_s(self) -> float: ...

    @property
    def framework_s(self) -> float: ...


def process_ratios(samples: Sequence[ReplicaSamples]) -> list[float]:
    """Each process's median pair ratio."""
    return [float(np.median(pair_ratios(*s.estimated_pairs()))) for s in samples if s.baseline_ns]


def per_call_logs(samples: Sequence[ReplicaSamples], side: Side) -> tuple[np.ndarray, np.ndarray]:
    """Each process's log median time per call of one side, and its own variance (from its interval)."""

    def per_call(sample: ReplicaSamples) -> tuple[float, float, float] | None:
        baseline, framework = sample.estimated_pairs()
        blocks, calls = (
            (baseline, sample.calls_per_block) if side == Side.BASELINE else (framework, sample.framework_calls)
        )
        return median_interval(np.asarray(blocks, float) / calls, CONFIDENCE) if blocks and calls > 0 else None

    return logs_of(samples, per_call)


def per_call_change(what: str, old: PerCall, new: PerCall, side: Side) -> Change | None:
    """One side's time per call at two places of one session, round by round (as
    :func:`rounds_change` reads a ratio): centred on the two results' figures, its error from
    the rounds' paired differences. None where the rounds do not pair up (a process lost)."""
    old_logs, old_variances = per_call_logs(old.samples, side)
    new_logs, new_variances = per_call_logs(new.samples, side)
    values = (old.baseline_s, new.baseline_s) if side == Side.BASELINE else (old.framework_s, new.framework_s)
    differences = new_logs - old_logs if old_logs.size == new_logs.size else np.array([])
    if differences.size < 2 or not np.all(np.isfinite(differences)) or not all(v > 0 for v in values):
        return None
    pooled = pool(differences, old_variances + new_variances)
    return Change(what, values[0], values[1], pooled.se, pooled.df)


def session_sd(history: Iterable[Compared], like: Figure, process_sd: float) -> tuple[float, float]:
    """The pair's between-session standard deviation of its log ratio on this machine, and its
    degrees of freedom: learned from ``history`` (the stored results of the figure ``like`` names),
    else the prior (:func:`~overheadbench.engine.combining.session_term`). The one rule for a session's
    own interval and for a comparison with a stored run."""
    return session_log_sd([reading(r) for r in history if r.measured and like.names(r)], session_term(process_sd))


def between_sessions(
    history: Sequence[Compared], nodeid: str, mode: Mode, concurrency: int
) -> Callable[[Timer], SessionRule]:
    """The pair's between-session rule for the clock it will be read on: :func:`session_sd` of
    ``history`` (this machine's stored results) for the figure, given the processes' spread."""

    def on(timer: Timer) -> SessionRule:
        figure = Figure(nodeid, mode, concurrency, timer)
        return lambda process_sd: session_sd(history, figure, process_sd)

    return on


def reading(result: Compared) -> LogEstimate:
    """A run's ratio for a pair, with the standard error of its log pooled from its processes."""
    return _measured(result.samples, result.ratio)


def _measured(samples: Sequence[ReplicaSamples], ratio: float) -> LogEstimate:
    """``ratio`` with its log standard error as the pair's own interval reads it."""
    return LogEstimate(ratio, *ratio_log_se(samples))


def rounds_change(
    what: str,
    old: Sequence[ReplicaSamples],
    new: Sequence[ReplicaSamples],
    ratios: tuple[float, float],
    confidence: float = CONFIDENCE,
) -> Change:
    """The change from ``old`` to ``new`` processes measured round by round in one session (the
    ``i``-th of each side in the same round): centred on the two ``ratios`` (old, new), its error
    pooled from the rounds' log differences."""
    old_logs, old_variances = process_logs(old)
    new_logs, new_variances = process_logs(new)
    if old_logs.size != new_logs.size or old_logs.size < 2:
        found = change(what, _measured(old, ratios[0]), _measured(new, ratios[1]))
        return Change(what, ratios[0], ratios[1], found.se, found.df, confidence=confidence)
    differences = new_logs - old_logs
    if not np.all(np.isfinite(differences)):
        return Change(what, ratios[0], ratios[1], math.inf, 1, confidence=confidence)
    pooled = pool(differences, old_variances + new_variances)
    return Change(what, ratios[0], ratios[1], pooled.se, pooled.df, confidence=confidence)


def paired_change(old: Compared, new: Compared, confidence: float = CONFIDENCE) -> Change:
    """Two places measured in one session, interleaved by round: no between-session term. Count
    mode's exact change carries what the places' time probes read (:func:`timed_change`)."""
    if new.mode.counted:
        counted = exact_change(new.nodeid, old.ratio, new.ratio)
        return replace(counted, timed=timed_change(old, new, new.nodeid))
    return rounds_change(new.nodeid, old.samples, new.samples, (old.ratio, new.ratio), confidence)


def timed_change(old: Compared, new: Compared, what: str) -> tuple[float, float] | None:
    """Count mode's check between two places: the interval (percent) of the change that timing the
    same calls at both reads (each place's probe, its within-process interval, and the processes'
    layouts apart, :data:`PROBES_APART_SD`); None where either has no probe. A head adding C work per
    call (``json.dumps`` of a 100-key dict) read "+0.1% exact, same" in bytecode, where time read +7..12%."""
    if old.probe is None or new.probe is None:
        return None
    probes = [interval_estimate(*probe_interval(probe, CONFIDENCE)) for probe in (old.probe, new.probe)]
    return change(what, probes[0], probes[1], (PROBES_APART_SD, math.inf)).interval


def place_change(role: Role, own: Compared, other: Compared, confidence: float = CONFIDENCE) -> Change | None:
    """The change a place's measurement shows, in its role's direction: the session's own tree
    over a base tree (a pull request's head over its base), or an environment over the
    session's own; None where either side was not measured. ``confidence``: of the interval
    the gate reads (higher where the gate looked more than once, :class:`~overheadbench.pairs.across.Looks`)."""
    if not (own.measured and other.measured):
        return None
    return paired_change(*role.old_new(own, other), confidence)
