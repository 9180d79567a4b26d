"""A transport test at every place of the session (the base tree of ``--overhead-against``, each
``--overhead-env``): each figure's change against the session's own, paired by round.

A stream pair's figures are compared round by round: the session's own run of the test and one
replica of every other place run it at once, each place's round taking its turn while the others wait
(:mod:`overheadbench.core.turns`, :class:`~overheadbench.replicas.transport.Turns`), so whatever the machine
does during a round falls on the adjacent rounds of every place. A round's value is its streams' figure
(a pair change's as its ratio, framework / baseline, which is gated; each side's own figure, shown only).
Any other figure (a load pair's, a load row, a stream row, a recorded one) comes from the test run again
in rounds, each running it whole in a fresh replica of every place, in a random order
(:func:`~overheadbench.replicas.transport.transport_rounds`).

A figure's change is the trimmed mean over rounds of log(place / own), with Yuen's Student t interval
from its spread over rounds: no between-session term. "Worse" is the figure's own direction (lower req/s, higher
latency or CPU).

A pair's change between places trusts that the places ran alike, which paired rounds cannot check: how one
place's processes sit on the cores holds for a whole test. Its [baseline] side is the control (both trees
share the bare path): where that side's own change excludes zero, the pair's interval widens by as much
(:func:`_controlled`).
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from ..core.turns import At
from ..core.vocabulary import Role
from ..engine.changes import Change, Gate
from ..engine.findings import Finding
from ..engine.sampling import PlaceFigures
from ..engine.stats import CONFIDENCE, trimmed_mean
from .metrics import BY_SERVER, COMPARED, SIDES, SPECS, Measure, Metric, RoundValues, side_row
from .results import FigurePlace, FigureResult, comparable, compared_values

PLACE_ROUNDS = 8
"""Rounds of a transport test at every place (5 in the quick profile): the change's interval
has one degree of freedom fewer than its rounds."""
QUICK_PLACE_ROUNDS = 5


PlacedRounds = tuple[Sequence[RoundValues], Sequence[PlaceFigures]]
"""The session's own rounds and every other place's (each place's :attr:`~PlaceFigures.rounds`)."""
_Key = tuple[str, str, str]
Question = Callable[[At, list[tuple[PlaceFigures, list[Any]]]], bool]
"""The gate's question at a pair's look (:func:`unknown_changes`)."""


def pair_sides(paired: Sequence[RoundValues]) -> set[str]:
    """The rows of the pairs' sides (their own figures, beside the pairs' changes)."""
    return {values[0] for round_values in paired for values in round_values if values[2] == Measure.FIGURE}


def unpaired(figures: Sequence[FigureResult], paired: Sequence[RoundValues]) -> bool:
    """Whether the test has a comparable figure outside its pairs' rounds (a load or stream row; a
    pair's side's CPU by server is its side's breakdown, compared with the side)."""
    rows = {values[0] for round_values in paired for values in round_values}
    return any(comparable(f) and f.row.partition(BY_SERVER)[0] not in rows for f in figures)


def whole_rounds(own: Sequence[list[Any]], places: Sequence[PlaceFigures]) -> PlacedRounds:
    """A test run whole in rounds at every place (each round its figures' JSON), as rounds of values."""

    def values(rounds: Sequence[list[Any]]) -> list[RoundValues]:
        found = [[FigureResult.from_json(data) for data in figures] for figures in rounds]
        return [
            [[f.row, str(f.metric), str(f.measure), compared_values(f)[0]] for f in r if comparable(f)] for r in found
        ]

    return values(own), [dataclasses.replace(place, rounds=tuple(values(place.rounds))) for place in places]


def with_places(
    figures: Sequence[FigureResult],
    *sources: PlacedRounds,
    levels: Mapping[str, float] | None = None,
    sides: Collection[str] = (),
) -> list[FigureResult]:
    """``figures`` (the test's own run, judged) with each comparable figure's change at every place
    that ran the test, from the first of ``sources`` with two paired rounds of it (the turns, then
    the whole runs); a row read at looks at its looks' level (``levels``, by row); a pair's side
    (``sides``, by row) not gated (:attr:`~.results.FigurePlace.gated`)."""
    read = [(_by_round(own), [(place, _by_round(place.rounds)) for place in places]) for own, places in sources]
    names = list(dict.fromkeys(p.name for _, places in sources for p in places if not p.missing))
    count = sum(comparable(figure) for figure in figures)
    placed = []
    for figure in figures:
        key = (figure.row, str(figure.metric), str(figure.measure))
        confidence = _each((levels or {}).get(figure.row, CONFIDENCE), count)
        changes = []
        for name in names:
            for own, places in read:
                found = [(place, values) for place, values in places if place.name == name and not place.missing]
                if not comparable(figure) or not found or key not in own or key not in found[0][1]:
                    continue
                place, values = found[0]
                what = f"{figure.nodeid}: {figure.row} {figure.metric}"
                change = _paired(what, figure.metric, own[key], values[key], place.role, confidence)
                if change is not None:
                    changes.append(FigurePlace(place.name, place.role, change, figure.row not in sides))
                    break
        placed.append(FigureResult(figure.nodeid, figure.reading, figure.check, tuple(changes)))
    return _controlled(placed)


def _controlled(figures: list[FigureResult]) -> list[FigureResult]:
    """Each pair's gated change at a place widened by how far its [baseline] side's change there lies
    beyond zero (:attr:`~.results.FigurePlace.control`). On identical trees, one place's client and server
    once ran a whole one-at-a-time test a third slower than the other's; the ratio cancelled most of it,
    but not all: with a +10% head the baseline side read +65% (its interval +38..+97%) and the ratio a
    wrong "improved", -22.1% ±21.2%. The sides need not move alike, so the bare side's shift bounds what
    the places' difference can do to the ratio; the bare path is the trees' shared one, so its own
    change is the places', not the code's (a head that changes it is only made less certain)."""
    controls = {
        (f.nodeid, f.row, f.metric): {p.name: p.change for p in f.places}
        for f in figures
        if f.measure == Measure.FIGURE
    }
    widened = []
    for figure in figures:
        control = controls.get((figure.nodeid, side_row(figure.row, SIDES[0]), figure.metric), {})
        places = tuple(_widened(place, control.get(place.name)) for place in figure.places)
        widened.append(dataclasses.replace(figure, places=places))
    return widened


def _widened(place: FigurePlace, control: Change | None) -> FigurePlace:
    """``place``'s change with its interval's half-width grown by the log distance from zero of the
    ``control``'s interval (none where that interval holds zero)."""
    if control is None or control.exact or not place.gated:
        return place
    low, high = (math.log1p(end / 100) for end in control.interval)
    beyond = max(low, -high, 0.0)
    if beyond == 0:
        return place
    low, high = (math.log1p(end / 100) for end in dataclasses.replace(place.change, se=0.01).interval)
    quantile = (high - low) / 2 / 0.01  # the interval's half-width per unit of se, at its df and confidence
    change = dataclasses.replace(place.change, se=place.change.se + beyond / quantile)
    return dataclasses.replace(place, change=change, control=control.percent)


def unknown_changes(gate: Gate) -> Question:
    """The gate's question at a pair's look (:class:`~overheadbench.replicas.transport.Turns`): whether
    any of its figures' change at a place is unknown at the threshold, at the looks' confidence shared
    among the pair's figures, and could still be decided by its last look (:func:`_could_decide`)."""

    def unknown(at: At, places: list[tuple[PlaceFigures, list[Any]]]) -> bool:
        mine = _by_round(at.rounds)
        level = _each(at.confidence, len(mine))
        for place, rounds in places:
            theirs = _by_round(rounds)
            for key, values in mine.items():
                metric = Metric(key[1])
                if metric not in COMPARED or key not in theirs:
                    continue
                change = _paired(f"{at.row} {metric}", metric, values, theirs[key], place.role, level)
                if change is not None and gate.finding(change) == Finding.UNKNOWN:
                    if _could_decide(change, gate, len(values), at.last):
                        return True
        return False

    return unknown


def _could_decide(change: Change, gate: Gate, rounds: int, last: int) -> bool:
    """Whether a change unknown after ``rounds`` could be decided after ``last``: its interval narrowed as
    that many rounds would narrow it, its centre where it is. Going on where even that interval holds
    the threshold only costs time (stopping for futility: it can end the looks without a finding, never
    make one), as identical trees' 8-in-flight ratios (±9..±18% at 48 rounds) did at every look. From the
    first look the rounds always go on: twelve rounds' spread (trimmed, at 99.8%) read identical trees
    ±22..±92% where their 48 rounds read ±3..±10%, so it cannot yet say what more rounds would give."""
    if rounds * 2 < last:
        return True
    narrowed = dataclasses.replace(change, se=change.se * math.sqrt(rounds / max(last, rounds)), df=last - 1)
    return gate.finding(narrowed) != Finding.UNKNOWN


def _each(confidence: float, figures: int) -> float:
    """Each figure's level: ``confidence`` shared among a test's ``figures`` (Bonferroni: a test with 16
    figures, each gated at 95%, had a false alarm in 2 of 10 sessions on identical trees)."""
    return 1 - (1 - confidence) / max(1, figures)


def _by_round(rounds: Sequence[RoundValues]) -> dict[_Key, list[float]]:
    """Each figure's value per round (NaN in a round that lacks it)."""
    values: dict[_Key, list[float]] = {}
    for index, found in enumerate(rounds):
        for row, metric, measure, value in found:
            values.setdefault((row, metric, measure), [math.nan] * len(rounds))[index] = value
    return values


def _paired(
    what: str, metric: Metric, own: list[float], other: list[float], role: Role, confidence: float
) -> Change | None:
    """A figure's change between the session's own place and another, paired by round: the
    session's own over a base tree, or an environment over the session's own; the trimmed mean of
    the rounds' log ratios (:func:`~overheadbench.engine.stats.trimmed_mean`), its interval at ``confidence``."""
    pairs = [(a, b) for a, b in zip(own, other, strict=False) if a > 0 and b > 0]  # NaN compares False
    if len(pairs) < 2:
        return None
    old, new = zip(*(role.old_new(a, b) for a, b in pairs), strict=True)
    centre, se, df = trimmed_mean([math.log(n / o) for o, n in zip(old, new, strict=True)])
    base = math.exp(statistics.fmean(math.log(o) for o in old))
    moved = base * math.exp(centre)
    return Change(what, base, moved, se, df, higher_is_worse=not SPECS[metric].floor, confidence=confidence)
