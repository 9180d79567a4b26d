"""A transport figure's verdict: pass only when the whole interval is on the right side of the
limit, the pairs' rule. An absolute figure's interval is widened by how far the figure moves
between sessions on this machine (:func:`judge`): within one session the interval is narrow, and a
budget near the figure would pass in one session and fail in the next.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from statistics import NormalDist

from .metrics import DEFAULT_ERRORS, FigureKey, Limits, Measure, Metric, session_prior
from .results import FigureResult, Reading, check_of


def across_sessions(reading: Reading, session_sd: float, confidence: float) -> Reading:
    """The reading with its interval widened by its between-session spread ``session_sd``: the
    session's own half-width and ``z * session_sd`` added in quadrature, on the log scale of the
    figure (a pair's change: of its ratio; an added cost: relative to its size), so the interval
    covers where the figure lands in another session on this machine, not only this session's
    sampling error."""
    value, measure = reading.value, reading.measure
    if session_sd <= 0 or not math.isfinite(value):
        return reading
    wide = NormalDist().inv_cdf((1 + confidence) / 2) * session_sd
    if measure == Measure.ADDED:
        extra = wide * abs(value)
        low = value - math.hypot(value - reading.low, extra)
        high = value + math.hypot(reading.high - value, extra)
    else:
        shift = 1.0 if measure == Measure.CHANGE else 0.0
        centre, bottom, top = value + shift, reading.low + shift, reading.high + shift
        if centre <= 0:
            return reading
        below = math.log(centre / bottom) if bottom > 0 else 0.0
        above = math.log(top / centre) if top > 0 else 0.0
        low = centre * math.exp(-math.hypot(below, wide)) - shift
        high = centre * math.exp(math.hypot(above, wide)) - shift
    interval = f"{reading.interval or 'a single reading'}, widened by {session_sd:.0%} between sessions"
    return dataclasses.replace(reading, low=low, high=high, interval=interval)


def judge(
    nodeid: str,
    reading: Reading,
    limit: float | None,
    measured: bool = True,
    *,
    session_sd: float | None = None,
    confidence: float = 0.95,
    core_share: float | None = None,
) -> FigureResult:
    """The reading against its limit, by the pairs' rule (the whole interval decides). A figure
    with a limit, and every transport pair's change, is judged across sessions
    (:func:`across_sessions`, by ``session_sd``, learned from this machine's stored runs, else
    :func:`session_prior`): a verdict this session gives must be the one the next session gives,
    and a change's interval covers where it lands in another session, as an in-process pair's does.
    Not measured (a smoke run without ``--overhead``),
    only failed requests are judged: a count, exact however brief the run, and a load that is
    all errors is a broken test. ``core_share``: the judging process's share of a core, which makes
    an absolute wall-clock figure past its limit on a contended machine inconclusive."""
    judged = reading
    if limit is not None or reading.measure == Measure.CHANGE:  # a pair's change always, as a pair's interval
        sd = session_prior(reading.metric, reading.measure) if session_sd is None else session_sd
        judged = across_sessions(reading, sd, confidence)
    return FigureResult(
        nodeid, reading, check_of(judged, limit, measured or reading.metric == Metric.ERRORS, core_share)
    )


def judged(
    nodeid: str,
    readings: Sequence[tuple[Reading, Limits]],
    marker: Limits,
    measuring: bool,
    confidence: float,
    core_share: float | None,
    session_sd: Callable[[FigureKey], float | None] | None,
) -> list[FigureResult]:
    """Every recorded figure of a test against its limit: the call's, else the ``marker``'s (failed
    requests: at most ``DEFAULT_ERRORS`` unless a limit is given); ``session_sd`` says how far a
    figure moves between sessions here, learned from stored runs (None: its prior); ``core_share``
    how much of a core the test got when judged."""
    results = []
    for reading, own in readings:
        key = (reading.metric, reading.measure)
        limit = own.get(key, marker.get(key))
        if limit is None and reading.metric == Metric.ERRORS:
            limit = DEFAULT_ERRORS
        sd = session_sd((nodeid, reading.row, *key)) if session_sd else None
        found = judge(nodeid, reading, limit, measuring, session_sd=sd, confidence=confidence, core_share=core_share)
        results.append(found)
    return results
