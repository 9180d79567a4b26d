"""A transport test at every place of the session (the base tree of ``--overhead-against``, each
``--overhead-env``): each figure's change against the session's own, paired by round.

The test runs in rounds, each running it once in one replica of every place, the session's own
included, in a random order (:func:`~overheadbench.replicas.places.transport_rounds`): as a
transport pair interleaves its two targets' windows, whatever the machine does during a round
falls on every place alike. A figure's change is the mean over rounds of log(place / own), with
a Student t interval from its spread over rounds: no between-session term. "Worse" is the
figure's own direction (lower req/s, higher latency or CPU); a transport pair's change is
compared as its ratio (framework / baseline).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from ..core.vocabulary import Role
from ..engine.changes import Change
from ..engine.samples import PlaceFigures
from ..engine.stats import CONFIDENCE
from .metrics import SPECS, FigureKey
from .results import FigurePlace, FigureResult, comparable, compared_values

PLACE_ROUNDS = 8
"""Rounds of a transport test at every place (5 in the quick profile): the change's interval
has one degree of freedom fewer than its rounds."""
QUICK_PLACE_ROUNDS = 5


def with_places(
    figures: Sequence[FigureResult], own: list[list[Any]], places: Sequence[PlaceFigures]
) -> list[FigureResult]:
    """``figures`` (the test's own run, judged) with each comparable figure's change at every
    place that ran the test, from the rounds' figures (each a list of figures' JSON)."""
    own_values = _by_round(own)
    found = [(place, _by_round(list(place.rounds))) for place in places if not place.missing]
    confidence = 1 - (1 - CONFIDENCE) / max(1, sum(comparable(figure) for figure in figures))
    placed = []
    for figure in figures:
        changes = []
        for place, values in found:
            own_rounds, their_rounds = own_values.get(figure.key, []), values.get(figure.key, [])
            change = _paired(figure, own_rounds, their_rounds, place.role, confidence)
            if change is not None:
                changes.append(FigurePlace(place.name, place.role, change))
        placed.append(FigureResult(figure.nodeid, figure.reading, figure.check, tuple(changes)))
    return placed


def _by_round(rounds: list[list[Any]]) -> dict[FigureKey, list[float]]:
    """Each comparable figure's value per round (NaN in a round that lacks it)."""
    values: dict[FigureKey, list[float]] = {}
    for index, figures in enumerate(rounds):
        for figure in (FigureResult.from_json(data) for data in figures):
            if comparable(figure):
                values.setdefault(figure.key, [math.nan] * len(rounds))[index] = compared_values(figure)[0]
    return values


def _paired(figure: FigureResult, own: list[float], other: list[float], role: Role, confidence: float) -> Change | None:
    """The figure's change between the session's own place and another, paired by round: the
    session's own over a base tree, or an environment over the session's own; its interval at
    ``confidence`` (Bonferroni over the test's figures: a test with 16 figures, each gated at
    95%, had a false alarm in 2 of 10 sessions on identical trees)."""
    pairs = [(a, b) for a, b in zip(own, other, strict=False) if a > 0 and b > 0]  # NaN compares False
    if len(pairs) < 2 or not comparable(figure):
        return None
    old, new = zip(*(role.old_new(a, b) for a, b in pairs), strict=True)
    logs = [math.log(n / o) for o, n in zip(old, new, strict=True)]
    base = math.exp(statistics.fmean(math.log(o) for o in old))
    se = statistics.stdev(logs) / math.sqrt(len(logs))
    what = f"{figure.nodeid}: {figure.row} {figure.metric}"
    floor = SPECS[figure.metric].floor
    moved = base * math.exp(statistics.fmean(logs))
    return Change(what, base, moved, se, len(logs) - 1, higher_is_worse=not floor, confidence=confidence)
