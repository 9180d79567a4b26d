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

from ..samples import Figure, Kind

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


@dataclass(frozen=True)
class WallClock:
    """The time-mode instrument: blocks return elapsed nanoseconds from ``clock``."""

    clock: Clock = time.perf_counter_ns
    figures: tuple[Figure, ...] = field(default=(), init=False)
    subtract_harness: bool = field(default=False, init=False)

    def block(self, fn: Callable[[], Any], kind: Kind) -> SyncBlock | AsyncBlock:
        return sync_block(fn, self.clock) if kind == Kind.SYNC else async_block(fn, self.clock)
