"""A transport test at the session's other places: its stream pairs' rounds taken in turn with the
session's own (:class:`Turns`), and the whole test run in rounds of fresh replicas for its other figures
(:func:`transport_rounds`).

**Turns.** When the session's run of a transport test reaches its first round of a stream pair
(:func:`~overheadbench.core.turns.take_turn`), one replica of every other place (the base tree, an
environment) is moved to the test and runs it too, parked between rounds: at each round of the session's
own run every place takes one round, in a random order, each while the others wait, so no two places
ever measure at once and each round of the base tree sits beside the same round of the head. A replica's
round is what it runs from one turn to its next (one batch of streams of each side, and whatever the test
does in between). When the session's run ends, the replicas still running get their turns until they end
too, and send their figures and rounds. Ran as a whole test in a fresh replica per round instead, an SDK's
stream pair A/B left a +10% head undecided in half its sessions (±7..±26% on identical trees) and took
9.7x a plain session (validation/STREAMS.md).

**Whole runs.** A figure outside a stream pair (a load pair, a load or stream row) runs, whole, once per
round in a fresh replica of every place, the session's own included, in a random order; its figures are
paired by round. A load pair is not taken in turns: its framework side's own server runs in one process
per place, and a gateway's p99 read +10.1% ±2.9% on identical trees where each place's proxy process
stayed as it started (validation/STREAMS.md); fresh processes each round carry that spread.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from types import TracebackType
from typing import Any, Protocol

from ..core.turns import At, turns
from ..engine.sampling import PlaceFigures
from ..engine.settings import Settings
from .messages import Figured, Go, Look, Looked, Take, Turn
from .moving import Pool, in_rounds, moved, one_pair, placed


class TurnPool(Pool, Protocol):
    """What a transport test at a place asks of its pool (:class:`~.pool.ReplicaPool`)."""

    def tell(self, order: Go | Take | Looked) -> Turn | Look | Figured: ...

    def figures(self, index: int, settings: Settings) -> list[Any]: ...


TransportRounds = tuple[list[list[Any]], list[PlaceFigures]]
"""A transport test's figures (JSON) per round at the session's own place, and at every other."""

OWN = -1
"""The session's own place in a round's order."""
Waiting = Turn | Look | Figured
"""Where a replica taking turns waits: at a round, at a look, or ended (its figures)."""
Question = Callable[[At, list[tuple[PlaceFigures, list[Any]]]], bool]
"""The gate's question at a pair's look: ``(the session's pair at its look, each place's rounds)`` ->
whether a change there is unknown at the threshold and could be decided
(:func:`~overheadbench.transport.across.unknown_changes`)."""


class Turns:
    """The other places' replicas of one transport test, taking turns with the session's own run
    (a context manager: the replicas are released at its end, whatever happened); the
    :class:`~overheadbench.core.turns.Taker` of the session's own run."""

    def __init__(
        self,
        pools: Sequence[TurnPool],
        places: Sequence[PlaceFigures],
        nodeid: str,
        settings: Settings,
        rng: random.Random,
        question: Question | None = None,
    ) -> None:
        self.candidates, self.places = list(pools), list(places)
        """Every other place's pool, and every other place (marked missing where it lacks the test)."""
        self.nodeid, self.settings, self.rng, self.question = nodeid, settings, rng, question
        self.pools: list[TurnPool] = []
        """The pools taking part, once the first round started: one each of the places not missing."""
        self.present: list[PlaceFigures] = []
        """The places taking part, as :attr:`pools` lists them."""
        self.waiting: list[Waiting] = []
        """Where each pool's replica waits."""
        self._after: list[int] = []
        """The places whose turn of the current round comes after the session's own."""
        self.started = False
        self._stack = ExitStack()

    @property
    def asks(self) -> bool:
        return self.question is not None

    def __enter__(self) -> Turns:
        self._stack.enter_context(turns(self))
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._stack.close()

    def _start(self) -> None:
        """At the session's first round of a pair: one replica of every other place moved to the test
        (a place without it left out) and run up to its own first round. A test without such pairs
        never starts one."""
        self.started = True
        taking, present = placed(self.candidates, 1, self.nodeid)
        self.places = [dataclasses.replace(p, missing=not here) for p, here in zip(self.places, present, strict=True)]
        self.pools, self.present = taking, [place for place in self.places if not place.missing]
        go = Go(1, self.settings, turns=True, looks=self.asks)
        self.waiting = [pool.tell(go) for pool in self.pools]

    def turn(self) -> None:
        """The session's own round starts: the places drawn before it take theirs now, those after
        it at its next round (or look, or the end)."""
        if not self.started:
            self._start()
        self._give(self._after)
        order = [OWN, *self._running()]
        self.rng.shuffle(order)
        mine = order.index(OWN)
        self._give(order[:mine])
        self._after = order[mine + 1 :]

    def look(self, at: At, wanted: bool, affordable: bool) -> bool:
        """The session's pair is ``at`` a look: so is every place's, once its round is taken; the
        pair goes on, everywhere, where the next look is affordable and its budgets (``wanted``) or the
        gate's question at a place asks for it."""
        self._give(self._after)
        self._after = []
        there = [index for index in self._running() if _at_look(self.waiting[index], at.row)]
        asked = [
            (self.present[index], waiting.rounds) for index in there if isinstance(waiting := self.waiting[index], Look)
        ]
        more = affordable and (wanted or (self.question is not None and self.question(at, asked)))
        for index in there:
            self.waiting[index] = self.pools[index].tell(Looked(more))
        return more

    def finish(self) -> list[PlaceFigures]:
        """The session's own run has ended: the replicas still running take their turns (in a random
        order each round) until they end, and are released; every place with its rounds (a missing
        one: as it was)."""
        self._stack.close()
        if not self.started:  # the test had no stream pair: no replica took turns
            return self.places
        self._give(self._after)
        while running := self._running():
            self.rng.shuffle(running)
            self._give(running)
        for pool in self.pools:  # ended: free for the test's whole runs, if it has figures outside a pair
            pool.release()
        ended = iter(self.waiting)
        return [place if place.missing else _with_rounds(place, _figured(next(ended))) for place in self.places]

    def _running(self) -> list[int]:
        return [index for index, waiting in enumerate(self.waiting) if not isinstance(waiting, Figured)]

    def _give(self, order: Sequence[int]) -> None:
        """A round of each of these places' replicas; one at a look the session's own run did not
        reach (its tree's test differs) is told its pair ends there."""
        for index in order:
            pool = self.pools[index]
            while isinstance(self.waiting[index], Look):
                self.waiting[index] = pool.tell(Looked(False))
            if isinstance(self.waiting[index], Turn):
                self.waiting[index] = pool.tell(Take())


def _at_look(waiting: Waiting, row: str) -> bool:
    return isinstance(waiting, Look) and waiting.row == row


def _figured(waiting: Waiting) -> list[Any]:
    return waiting.rounds if isinstance(waiting, Figured) else []


def _with_rounds(place: PlaceFigures, rounds: list[Any]) -> PlaceFigures:
    return dataclasses.replace(place, rounds=tuple(rounds))


@contextmanager
def taking_turns(
    pools: Sequence[TurnPool],
    places: Sequence[PlaceFigures],
    nodeid: str,
    settings: Settings,
    rng: random.Random,
    question: Question | None,
) -> Iterator[Turns]:
    """Every other place (``pools[1:]``, ``places``) taking turns with the session's run of a test, once
    its first stream pair's round starts; its replicas released at the end, whatever happened."""
    with one_pair(pools), Turns(pools[1:], places, nodeid, settings, rng, question) as taken:
        yield taken


def transport_rounds(
    settings: Settings,
    rng: random.Random,
    pools: Sequence[TurnPool],
    places: Sequence[PlaceFigures],
    nodeid: str,
    rounds: int,
) -> TransportRounds:
    """A transport test at every place, the session's own included: ``rounds`` rounds, each
    running the test once in one replica of every place, in a random order (the test's own run in
    this process is its verdict's; these are the comparison's, paired by round). A place without
    the test is left out; one where it does not collect fails the test with that place's error."""
    with one_pair(pools):
        taking, present = moved(pools, rounds, nodeid)
        found = [dataclasses.replace(p, missing=not here) for p, here in zip(places, present, strict=True)]
        figures: list[list[list[Any]]] = [[] for _ in taking]
        in_rounds(rng, taking, figures, rounds, lambda pool, index: pool.figures(index, settings))
        taken = iter(figures[1:])
        others = [p if p.missing else _with_rounds(p, next(taken)) for p in found]
        return figures[0], others
