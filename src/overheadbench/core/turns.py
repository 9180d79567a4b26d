"""Turns: a stream pair's rounds taken in turn with the same test's rounds at the session's other places.

Under ``--overhead-against`` (or ``--overhead-env``) a stream pair's change between places is read
round by round. A round is one batch of streams of each side of the pair; each place's round is taken
while every other place waits (:func:`take_turn`, called where a round starts), so whatever the machine
does falls on adjacent rounds of both trees, and the change is the paired rounds' trimmed mean
(:mod:`overheadbench.transport.across`). Ran as a whole test in a fresh replica
per round, a stream pair's A/B left a +10% head undecided in half its sessions and took ten times a
plain session (validation/STREAMS.md).

A stream pair taking turns is read at looks (:class:`~overheadbench.transport.stream_pairs.StreamPlan`),
and every place must stop at the same look: at each, the pair asks :func:`looked`, and the session
decides for all (its own budgets, and the gate's question at every place: going on while a change is
unknown at the threshold).

Who takes the turns is registered here by the session (the controller hands the other places' replicas
theirs, :class:`~overheadbench.replicas.transport.Turns`; a replica asks its controller for its own,
:class:`~overheadbench.replicas.replica.ReplicaPlugin`): the transport fixture only says where a
round starts and where it looks. Without a taker a round starts at once and a look is the pair's own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class At:
    """A pair at a look: its row, its rounds' values so far (:data:`~overheadbench.transport.metrics.RoundValues`
    each), the confidence its looks read at, and the rounds of its last look."""

    row: str
    rounds: list[Any]
    confidence: float
    last: int


class Taker(Protocol):
    """Who decides when this place's rounds run and whether a pair's rounds go on."""

    @property
    def asks(self) -> bool:
        """Whether a pair's looks are asked at all (a gate's threshold, or the controller, answers them)."""
        ...

    def turn(self) -> None:
        """Return when this place's round may run."""
        ...

    def look(self, at: At, wanted: bool, affordable: bool) -> bool:
        """Whether the pair ``at`` its look goes on to its next: ``wanted`` its own budgets' answer,
        ``affordable`` whether the next look fits its ceiling."""
        ...


_TAKERS: list[Taker] = []


@contextmanager
def turns(taker: Taker) -> Iterator[None]:
    """``taker`` decides this place's rounds and looks within the block."""
    _TAKERS.append(taker)
    try:
        yield
    finally:
        _TAKERS.remove(taker)


def take_turn() -> None:
    """A transport pair's round starts here: wait for this place's turn (at once where nobody takes turns)."""
    for taker in list(_TAKERS):
        taker.turn()


def asking() -> bool:
    """Whether a pair's looks are asked of a taker (then every pair looks, so every place looks alike)."""
    return any(taker.asks for taker in _TAKERS)


def looked(at: At, wanted: bool, affordable: bool) -> bool:
    """At a pair's look: whether it goes on (:meth:`Taker.look`; with no taker, ``wanted and affordable``)."""
    for taker in list(_TAKERS):
        if taker.asks:
            return taker.look(at, wanted, affordable)
    return wanted and affordable
