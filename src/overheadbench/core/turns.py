"""Turns: a transport pair's rounds taken in turn with the same test's rounds at the session's other places.

Under ``--overhead-against`` (or ``--overhead-env``) a transport pair's change between places is
read round by round. A round is one window or batch of streams of each side of the pair; each
place's round is taken while every other place waits (:func:`take_turn`, called where a round
starts), so whatever the machine does falls on adjacent rounds of both trees, and the change is the
paired rounds' mean (:mod:`overheadbench.transport.across`). Ran as a whole test in a fresh replica
per round, a stream pair's A/B left a +10% head undecided in half its sessions and took ten times a
plain session (validation/STREAMS.md).

Who takes the turns is registered here by the session (the controller hands the other places' replicas
theirs, :class:`~overheadbench.replicas.turns.Turns`; a replica asks its controller for its own,
:class:`~overheadbench.replicas.replica.ReplicaPlugin`): the transport fixture only says where a
round starts. Without a taker a round starts at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

_TAKERS: list[Callable[[], None]] = []


@contextmanager
def turns(taker: Callable[[], None]) -> Iterator[None]:
    """Call ``taker`` where each round starts within the block: it returns when this place's round may run."""
    _TAKERS.append(taker)
    try:
        yield
    finally:
        _TAKERS.remove(taker)


def take_turn() -> None:
    """A transport pair's round starts here: wait for this place's turn (at once where nobody takes turns)."""
    for taker in list(_TAKERS):
        taker()
