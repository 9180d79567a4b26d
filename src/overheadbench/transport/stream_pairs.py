"""A stream pair measured until its budgets are decided.

Each round runs each side once, in a random order (:func:`~.pairing.schedule`): ``PAIR_STREAMS``
streams one after another, or at ``concurrency`` N one batch of N streams in flight at once; the
round's figure of a side is the median over its streams of time to first event, events/s and total
(each stream's own, so 8 in flight still read per stream).

A pair ran a fixed 12 rounds (about 3 s here) and its intervals were 50-100 points wide: with a
budget 1.5x the figure, the same code read pass in one session and inconclusive in the next. Now it
is read at its rounds, twice and four times as many (the pairs' looks,
:func:`~overheadbench.engine.looks.look_counts`), going on while a budget of the pair (a ``max``
or ``max_abs`` of a stream figure) is inconclusive at its limit, and while the next look fits in the
pair's ceiling (``max_time_s``, 60 s). Looking again while undecided is optional stopping, so every
look reads its intervals at the Bonferroni confidence over the looks
(:func:`~overheadbench.engine.looks.looks_confidence`); a pair without such a budget asks no
question and is read once, at the usual confidence. Under ``--overhead-against`` with a threshold, the
gate asks too: every place's rounds go on while a change there is unknown at it and the last look could
decide it, all places stopping at the same look (:mod:`overheadbench.core.turns`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..core.errors import OverheadUsageError
from ..core.timeouts import progressed
from ..core.turns import At, asking, looked, take_turn
from ..engine.looks import look_counts, looks_confidence
from ..http.stream_stats import StreamSide, StreamStats
from .metrics import STREAM_FIGURES, Limits, Measure

T = TypeVar("T")
PAIR_STREAMS = 3
"""Streams of each side per round of a one-at-a-time stream pair (their median is the round's figure)."""
MOST_LOOKS = 4
"""The last look reads this many times the first look's rounds."""

Rounds = tuple[list[list[StreamStats]], list[list[StreamStats]]]
"""Each side's rounds (baseline, framework), each round its streams."""


@dataclass
class StreamPlan:
    """When a stream pair's rounds stop: its looks, the confidence they are read at, and whether
    its budgets are decided (``decided``: the fixture's reading of them, at a confidence)."""

    rounds: int
    """The first look's rounds."""
    budgeted: bool
    """The pair has a budget of its own on a stream figure (:func:`pair_limits`): a question to answer."""
    ceiling_s: float
    order: Callable[[], Iterable[int]]
    """One round's sides, in the order they run (:meth:`round` takes this place's turn first)."""
    decided: Callable[[Rounds, float], bool]
    row: str = ""
    values: Callable[[Rounds], list[Any]] = lambda rounds: []
    """Its rounds as other places compare them (:func:`~.pairing.pair_rounds`), asked at a look."""
    warmup: bool = False
    """Stream one round of each side first, unread: a side's first streams open its connections
    (at 8 in flight a base tree's first round read 108 ms where the rest read 36-45)."""
    clock: Callable[[], float] = time.monotonic
    looks: list[int] = field(init=False)
    confidence: float = field(init=False)

    def __post_init__(self) -> None:
        asked = self.budgeted or asking()  # taking turns with a gate: the places' question is asked too
        self.looks = look_counts(self.rounds, MOST_LOOKS * self.rounds) if asked else [self.rounds]
        self.confidence = looks_confidence(len(self.looks))

    def round(self) -> Iterable[int]:
        """One round's sides, once this place's turn has come (:func:`~overheadbench.core.turns.take_turn`:
        under ``--overhead-against`` the base tree's same round runs beside it, not at once)."""
        take_turn()
        return self.order()

    def sides(self, rounds: Rounds) -> Iterator[int]:
        """The sides to stream next, a round at a time (the caller appends each side's round to
        ``rounds`` before asking again), until a look finds every question answered (its budgets;
        taking turns, the gate's at every place: :func:`~overheadbench.core.turns.looked`), the last
        look, or a look the ceiling cannot hold."""
        started = self.clock()
        for index, look in enumerate(self.looks):
            while len(rounds[0]) < look:
                yield from self.round()
            if index + 1 == len(self.looks):
                return
            affordable = (self.clock() - started) * self.looks[index + 1] / look <= self.ceiling_s
            wanted = self.budgeted and not self.decided(rounds, self.confidence)
            if not looked(At(self.row, self.values(rounds), self.confidence, self.looks[-1]), wanted, affordable):
                return


def openers_of(
    nodeid: str, call: str, make: Callable[[StreamSide], T], sides: tuple[StreamSide, StreamSide]
) -> list[T]:
    """Each side's opener (``make``: :func:`~overheadbench.http.streaming.stream_opener` or its sync
    twin), checked before anything streams: a misshapen side names the test and the call."""
    try:
        return [make(side) for side in sides]
    except ValueError as exc:
        raise OverheadUsageError(f"{nodeid}: transport.{call}(): {exc}") from None


def per_round(concurrency: int, measuring: bool) -> int:
    """Streams of each side in a round: one batch of ``concurrency`` at once, or ``PAIR_STREAMS`` in
    turn; one without ``--overhead``."""
    if not measuring:
        return 1
    return concurrency if concurrency > 1 else PAIR_STREAMS


async def astreamed(
    plan: StreamPlan, openers: Sequence[Callable[[], Awaitable[StreamStats]]], count: int, concurrency: int
) -> Rounds:
    """The pair's rounds of async streams, ``count`` of a side a round (at once where ``concurrency`` > 1)."""

    async def one(side: int) -> list[StreamStats]:
        opened = [openers[side]() for _ in range(count)]
        if concurrency > 1:
            return list(await asyncio.gather(*opened))
        return [await each for each in opened]

    rounds: Rounds = ([], [])
    for side in plan.round() if plan.warmup else ():
        await one(side)
    for side in plan.sides(rounds):
        rounds[side].append(await one(side))
        progressed()  # a round done: a replica says it is still working
    return rounds


def streamed(plan: StreamPlan, openers: Sequence[Callable[[], StreamStats]], count: int, concurrency: int) -> Rounds:
    """:func:`astreamed` for sync streams (at once: each in its own thread)."""
    rounds: Rounds = ([], [])
    with ThreadPoolExecutor(max(concurrency, 1)) as threads:

        def one(side: int) -> list[StreamStats]:
            if concurrency > 1:
                started = [threads.submit(openers[side]) for _ in range(count)]
                return [each.result() for each in started]
            return [openers[side]() for _ in range(count)]

        for side in plan.round() if plan.warmup else ():
            one(side)
        for side in plan.sides(rounds):
            rounds[side].append(one(side))
            progressed()
    return rounds


def pair_limits(limits: Limits, marker: Limits) -> Limits:
    """The budgets a stream pair's looks answer: this call's and the marker's on a stream figure's
    change or added cost (the call's own first)."""
    pair = (Measure.CHANGE, Measure.ADDED)
    return {
        (metric, measure): limit
        for source in (marker, limits)
        for (metric, measure), limit in source.items()
        if metric in STREAM_FIGURES and measure in pair
    }
