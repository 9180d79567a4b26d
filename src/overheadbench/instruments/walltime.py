"""Wall-clock blocks, in integer nanoseconds from ``time.perf_counter_ns``.

The loop is as bare as a hand-written one (a ``for`` over a pre-built ``range``), so the
harness adds nothing a user's own loop would not; its cost is measured separately with an
empty callable and reported beside the baseline.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..engine.samples import Figure, Kind
from .callers import Crew, crew_block, tasks_block

Clock = Callable[[], int]
SyncBlock = Callable[[int], int]
AsyncBlock = Callable[[int], Awaitable[int]]


def sync_block(fn: Callable[[], Any], clock: Clock = time.perf_counter_ns) -> SyncBlock:
    """A block that calls ``fn`` ``n`` times and returns the elapsed nanoseconds."""

    def block(n: int) -> int:
        calls = range(n)
        start = clock()
        for _ in calls:
            fn()
        return clock() - start

    return block


def async_block(fn: Callable[[], Awaitable[Any]], clock: Clock = time.perf_counter_ns) -> AsyncBlock:
    """A block that awaits ``fn()`` ``n`` times inside the running loop (never a loop per call)."""

    async def block(n: int) -> int:
        calls = range(n)
        start = clock()
        for _ in calls:
            await fn()
        return clock() - start

    return block


def empty_sync() -> None:
    """The harness probe: what the loop itself costs per call."""


async def empty_async() -> None:
    """The async harness probe: a coroutine call and await, nothing else."""


@dataclass
class WallClock:
    """The time-mode instrument: blocks return elapsed nanoseconds from ``clock``; with
    ``concurrency`` above one, from that many callers at once (:mod:`.callers`)."""

    clock: Clock = time.perf_counter_ns
    concurrency: int = 1
    figures: tuple[Figure, ...] = field(default=(), init=False)
    subtract_harness: bool = field(default=False, init=False)
    _crew: Crew | None = field(default=None, init=False, repr=False)

    def block(self, fn: Callable[[], Any], kind: Kind) -> SyncBlock | AsyncBlock:
        if self.concurrency == 1:
            return sync_block(fn, self.clock) if kind == Kind.SYNC else async_block(fn, self.clock)
        if kind == Kind.ASYNC:
            return tasks_block(fn, self.concurrency, self.clock)
        if self._crew is None:
            self._crew = Crew(self.concurrency)  # one crew for every side of the pair
        return crew_block(self._crew, fn, self.clock)

    def close(self) -> None:
        if self._crew is not None:
            self._crew.close()
            self._crew = None
