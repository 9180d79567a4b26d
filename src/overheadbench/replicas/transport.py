"""A transport test at the session's other places: its pairs' rounds taken in turn with the session's
own (:class:`Turns`), or the whole test run in rounds of fresh replicas (:func:`transport_rounds`).

**Turns.** While the session runs a transport test, one replica of every other place (the base tree, an
environment) runs it too, parked between rounds: at each round of the session's own run
(:func:`~overheadbench.core.turns.take_turn`) every place takes one round, in a random order, each while
the others wait, so no two places ever measure at once and each round of the base tree sits beside the
same round of the head. A replica's round is what it runs from one turn to its next (one window or
batch of streams of each side, and whatever the test does in between). When the session's run ends,
the replicas still running get their turns until they end too, and send their figures and rounds.
Ran as a whole test in a fresh replica per round instead, an SDK's stream pair A/B left a +10% head
undecided in half its sessions (±7..±26% on identical trees) and took 9.7x a plain session
(validation/STREAMS.md).

**Whole runs.** A figure outside a pair (a load row, a stream row) has no rounds of its own: a test
with such figures runs again, whole, once per round in a fresh replica of every place, the session's
own included, in a random order; its figures are paired by round.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from types import TracebackType
from typing import Any

from ..core.turns import turns
from ..engine.samples import PlaceFigures
from ..engine.settings import Settings
from .messages import Figured
from .moving import in_rounds, moved, one_pair, placed
from .pool import ReplicaPool

TransportRounds = tuple[list[list[Any]], list[PlaceFigures]]
"""A transport test's figures (JSON) per round at the session's own place, and at every other."""

OWN = -1
"""The session's own place in a round's order."""


class Turns:
    """The other places' replicas of one transport test, taking turns with the session's own run
    (a context manager: the replicas are released at its end, whatever happened)."""

    def __init__(
        self, pools: Sequence[ReplicaPool], places: Sequence[PlaceFigures], settings: Settings, rng: random.Random
    ) -> None:
        self.pools, self.places = list(pools), list(places)
        """The pools taking part (one each of the places not missing), and every place (missing or not)."""
        self.settings, self.rng = settings, rng
        self.figured: dict[int, Figured] = {}
        """What each place's replica sent when its run ended, by its index in :attr:`pools`."""
        self._after: list[int] = []
        """The places whose turn of the current round comes after the session's own."""
        self._stack = ExitStack()

    def __enter__(self) -> Turns:
        self._stack.enter_context(turns(self))
        for index, pool in enumerate(self.pools):  # each runs up to its first round (its set-up, not timed)
            self._ended(index, pool.turns(self.settings))
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._stack.close()

    def __call__(self) -> None:
        """The session's own round starts: the places drawn before it take theirs now, those after
        it at its next round (or at the end)."""
        self._give(self._after)
        order = [OWN, *self._running()]
        self.rng.shuffle(order)
        mine = order.index(OWN)
        self._give(order[:mine])
        self._after = order[mine + 1 :]

    def finish(self) -> list[PlaceFigures]:
        """The session's own run has ended: the replicas still running take their turns (in a random
        order each round) until they end, and are released; every place with its rounds (a missing
        one: as it was)."""
        self._stack.close()
        self._give(self._after)
        while running := self._running():
            self.rng.shuffle(running)
            self._give(running)
        for pool in self.pools:  # ended: free for the test's whole runs, if it has figures outside a pair
            pool.release()
        rounds = iter(self.figured[index].rounds for index in range(len(self.pools)))
        return [place if place.missing else _with_rounds(place, next(rounds)) for place in self.places]

    def _running(self) -> list[int]:
        return [index for index in range(len(self.pools)) if index not in self.figured]

    def _give(self, order: Sequence[int]) -> None:
        for index in order:
            if index not in self.figured:
                self._ended(index, self.pools[index].turn())

    def _ended(self, index: int, figured: Figured | None) -> None:
        if figured is not None:
            self.figured[index] = figured


def _with_rounds(place: PlaceFigures, rounds: list[Any]) -> PlaceFigures:
    return dataclasses.replace(place, rounds=tuple(rounds))


@contextmanager
def taking_turns(
    pools: Sequence[ReplicaPool], places: Sequence[PlaceFigures], nodeid: str, settings: Settings, rng: random.Random
) -> Iterator[Turns]:
    """One replica of every other place (``pools[1:]``, ``places``) moved to the test and taking
    turns with the session's own run (a place without the test is left out, marked missing; one
    where it does not collect fails the test with that place's error)."""
    with one_pair(pools):
        taking, present = placed(pools[1:], 1, nodeid)
        found = [dataclasses.replace(p, missing=not here) for p, here in zip(places, present, strict=True)]
        with Turns(taking, found, settings, rng) as taken:
            yield taken


def transport_rounds(
    settings: Settings,
    rng: random.Random,
    pools: Sequence[ReplicaPool],
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
