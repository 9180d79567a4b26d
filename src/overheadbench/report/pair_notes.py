"""What a pairs table's intervals rest on, as notes under it (terminal and markdown alike): their
confidence, the processes and block pairs behind them, the spread between processes measured, the
between-session term, and the clock each pair was read on (and where the other clock disagreed);
and which pairs stayed wider than the session's target for want of time."""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

from ..core.tables import plain
from ..engine.combining import SESSION_SD, SESSION_SHARE, Method
from ..engine.samples import Timer
from ..engine.stats import log_halfwidth
from ..pairs.results import OverheadResult


def interval_notes(results: Sequence[OverheadResult]) -> list[str]:
    """What the time intervals account for, as measured: their confidence, the processes and block
    pairs behind them, the spread between processes seen, the between-session prior, the clocks."""
    timed = [r for r in results if not r.mode.counted and r.measured]
    if not timed:
        return []
    confidences = sorted({f"{r.pair.confidence * 100:g}%" for r in timed})
    most = max(len(r.samples) for r in timed)
    pairs = sorted(len(s.baseline_ns) for r in timed for s in r.samples if s.baseline_ns)
    blocks = "" if not pairs else f" of {_span(pairs[0], pairs[-1], '{:,}')} block pairs each"
    notes = [f"intervals: {', '.join(confidences)} confidence, over {most} fresh process(es) per pair at most{blocks}"]
    spreads = sorted(r.between_sd for r in timed if math.isfinite(r.between_sd))
    terms = sorted(r.session_sd for r in timed if math.isfinite(r.session_sd))
    if most > 1 and spreads:
        between = (
            f"{_span(terms[0], terms[-1], '{:.1%}')} sd between sessions ({_session_source(timed)}: a busy "
            f"session's figure may sit that far from a quiet one's, docs/measurement.md)"
            if terms
            else f"{SESSION_SD:.1%} sd between sessions (this machine kind's, docs/measurement.md)"
        )
        notes[0] += (
            f"; each process weighed by its own precision and the spread between processes (measured: "
            f"{_span(spreads[0], spreads[-1], '{:.1%}')} sd), plus {between}"
        )
    elif most > 1:  # a run stored before the spread was recorded
        notes[0] += f", with the spread between sessions ({SESSION_SD:.1%} sd)"
    if disagreed := sum(r.disagree for r in timed):
        notes.append(
            f"{disagreed} of {len(timed)} pair(s) had processes that disagreed beyond their own precision "
            "(code layout, a busy machine): their spread is in the interval"
        )
    notes += clock_notes(timed)
    return notes


def _session_source(timed: Sequence[OverheadResult]) -> str:
    """Where each pair's between-session term came from: its stored runs here, or the prior."""
    prior = f"{SESSION_SHARE:g}x each pair's spread between processes, at least this machine kind's {SESSION_SD:.1%}"
    runs = sorted(r.session_runs for r in timed if r.session_runs)
    if not runs:
        return prior
    learned = f"learned from {_span(runs[0], runs[-1], '{:d}')} stored runs of this machine"
    if len(runs) == len(timed):
        return learned
    return f"{len(runs)} of {len(timed)} pair(s) {learned}; the rest {prior}"


def _span(low: float, high: float, shown: str) -> str:
    return shown.format(low) if low == high else f"{shown.format(low)}..{shown.format(high)}"


def clock_notes(timed: Sequence[OverheadResult]) -> list[str]:
    """Which clock the pairs were read on, and where the other one told another story."""
    on_cpu = [r for r in timed if r.timer == Timer.CPU]
    notes = []
    if on_cpu:
        rest = (
            "; the rest on the wall clock (they wait, or have concurrent callers)" if len(on_cpu) < len(timed) else ""
        )
        notes.append(
            f"clock: {len(on_cpu)} of {len(timed)} pair(s) never waited and were read on their thread's CPU time "
            f"(a busy machine's time slices do not bias it){rest}"
        )
    for r in timed:
        if r.widened:
            notes.append(
                f"{plain(r.nodeid)}: judged on every reading of its blocks, which disagreed: the {r.timer} clock's "
                f"estimate, and {r.widened} (a busy machine charges its neighbours' time slices to the longer block "
                "on the wall clock; blocks too short for the clocks mislead both)"
            )
    return notes


def wider_than(results: Sequence[OverheadResult], target: float) -> list[str]:
    """Pairs timed in replicas whose interval stayed wider than ``target`` (relative) where more
    processes could have narrowed it: the target missed for want of time must be said, not left to
    be noticed. A pair whose between-session term alone is as wide as the target is not named (no
    number of processes narrows what sessions add; the footer states that term)."""
    timed = [r for r in results if r.method == Method.BETWEEN_PROCESSES and r.ci[0] > -1 and r.ci[1] > -1]
    return [r.nodeid for r in timed if log_halfwidth(*r.ci) > target and _session_part(r) < target]


def _session_part(result: OverheadResult) -> float:
    """The half-width the between-session term alone gives the interval (normal scale)."""
    term = NormalDist().inv_cdf((1 + result.pair.confidence) / 2) * result.session_sd
    return term if math.isfinite(term) else 0.0
