"""Timed blocks, in integer nanoseconds from ``time.perf_counter_ns`` (and, for one caller on the
real clock, the thread's CPU time beside it).

The loop is as bare as a hand-written one (a ``for`` over a pre-built ``range``), so the
harness adds nothing a user's own loop would not; its cost is measured separately with an
empty callable and reported beside the baseline.

Why a second clock: on a busy machine the wall clock charges a block for the time slices the
scheduler gives its neighbours, and a long block collects more of them than a short one (a
128-call baseline block against a 4 ms framework block read 537x beside four busy loops where it
reads 193x alone; the thread's CPU time read 188x). A block that never waits is read on its
thread's CPU time, which those slices do not touch; one that waits (a socket, another thread) on
the wall clock, since its CPU time leaves the wait out. The thread's voluntary context switches
tell which (:func:`overheadbench.engine.calibration.choose_timer`).
"""

from __future__ import annotations

import resource
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..core.vocabulary import Figure
from ..engine.samples import Clock, Kind, Timing
from .callers import Crew, crew_block, tasks_block

SyncBlock = Callable[[int], int]
AsyncBlock = Callable[[int], Awaitable[int]]
RUSAGE_THREAD: int | None = getattr(resource, "RUSAGE_THREAD", None)
"""Linux's per-thread usage; elsewhere no second clock is read (the wall clock alone)."""
PRIMED_BELOW = 8
"""A block of fewer calls (a millisecond framework call) is primed by one untimed call first: a
lone call right after the other side's block runs with that side's caches, and a busy machine's
neighbours evict them in between (a 1 ms workflow call read +40% beside four busy loops, +10% in
a loop of its own). Longer blocks are their own warm-up, as in timeit's loop."""


def waits() -> int:
    """The calling thread's voluntary context switches so far: each is a wait (I/O, a lock, a sleep)."""
    assert RUSAGE_THREAD is not None
    return resource.getrusage(RUSAGE_THREAD).ru_nvcsw


@dataclass(frozen=True)
class Stopwatch:
    """Both clocks around a block, and its waits: the wall clock's window holds the CPU clock's."""

    wall: Clock = time.perf_counter_ns
    cpu: Clock = time.thread_time_ns

    def start(self) -> tuple[int, int, int]:
        before = waits()
        return before, self.wall(), self.cpu()

    def stop(self, started: tuple[int, int, int]) -> Timing:
        cpu, wall = self.cpu(), self.wall()
        before, wall_from, cpu_from = started
        return Timing(wall - wall_from, cpu - cpu_from, waits() - before)


def stopwatch_block(fn: Callable[[], Any], kind: Kind, watch: Stopwatch) -> SyncBlock | AsyncBlock:
    """A one-caller block read on both clocks (a :class:`Timing`)."""
    if kind == Kind.SYNC:

        def block(n: int) -> int:
            calls = range(n)
            if n < PRIMED_BELOW:
                fn()
            started = watch.start()
            for _ in calls:
                fn()
            return watch.stop(started)

        return block

    async def async_block(n: int) -> int:
        calls = range(n)
        if n < PRIMED_BELOW:
            await fn()
        started = watch.start()
        for _ in calls:
            await fn()
        return watch.stop(started)

    return async_block


def sync_block(fn: Callable[[], Any], clock: Clock = time.perf_counter_ns) -> SyncBlock:
    """A block that calls ``fn`` ``n`` times and returns the elapsed nanoseconds."""

    def block(n: int) -> int:
        calls = range(n)
        if n < PRIMED_BELOW:
            fn()
        start = clock()
        for _ in calls:
            fn()
        return clock() - start

    return block


def async_block(fn: Callable[[], Awaitable[Any]], clock: Clock = time.perf_counter_ns) -> AsyncBlock:
    """A block that awaits ``fn()`` ``n`` times inside the running loop (never a loop per call)."""

    async def block(n: int) -> int:
        calls = range(n)
        if n < PRIMED_BELOW:
            await fn()
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
    ``concurrency`` above one, from that many callers at once (:mod:`.callers`). One caller on
    the real clock (``perf_counter_ns``, where the thread's waits can be read) also reads the
    thread's CPU time: its blocks return a :class:`~overheadbench.engine.samples.Timing`."""

    clock: Clock = time.perf_counter_ns
    concurrency: int = 1
    figures: tuple[Figure, ...] = field(default=(), init=False)
    subtract_harness: bool = field(default=False, init=False)
    paced: bool = field(default=False, init=False)
    _crew: Crew | None = field(default=None, init=False, repr=False)

    def block(self, fn: Callable[[], Any], kind: Kind) -> SyncBlock | AsyncBlock:
        if self.concurrency == 1 and self.clock is time.perf_counter_ns and RUSAGE_THREAD is not None:
            return stopwatch_block(fn, kind, Stopwatch(self.clock))
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
