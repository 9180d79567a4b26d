"""Wall-clock blocks with several callers at once: threads for plain callables, tasks of the
running event loop for ``async def`` ones.

A block of ``n`` calls gives each of ``concurrency`` callers its share (the first ``n % c``
one call more) and times from their release to the last one's end, so the block's time per
call is the wall time per call *under that load*: a lock every caller takes, a shared counter,
a rate limiter's bookkeeping show up as they do in production. The threads are started once
per pair (a :class:`Crew`) and wait on a barrier between blocks, so thread start-up is never
timed; the barrier's own release is, and the harness probe (an empty callable through the same
crew) measures it. Under the GIL threads interleave, they do not run Python in parallel; on a
free-threaded build they do (docs/concurrency.md).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from ..engine.samples import Clock

JOIN_TIMEOUT_S = 5.0


def shares(n: int, callers: int) -> list[int]:
    """``n`` calls split over ``callers`` as evenly as they go."""
    return [n // callers + (index < n % callers) for index in range(callers)]


class Crew:
    """``size`` threads that run a callable's calls together when released."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._start = threading.Barrier(size + 1)
        self._finish = threading.Barrier(size + 1)
        self._job: tuple[Callable[[], Any], list[int]] | None = None
        self._errors: list[BaseException] = []
        self._threads = [
            threading.Thread(target=self._work, args=(index,), name=f"overheadbench-caller-{index}", daemon=True)
            for index in range(size)
        ]
        for thread in self._threads:
            thread.start()

    def _work(self, index: int) -> None:
        while True:
            self._start.wait()
            job = self._job
            if job is None:
                return
            fn, counts = job
            try:
                for _ in range(counts[index]):
                    fn()
            except BaseException as exc:  # reported by run(), in the measuring thread
                self._errors.append(exc)
            self._finish.wait()

    def run(self, fn: Callable[[], Any], n: int, clock: Clock) -> int:
        """Nanoseconds from releasing the crew to its last caller's end, ``n`` calls of ``fn`` in all."""
        self._job = (fn, shares(n, self.size))
        self._errors.clear()
        start = clock()
        self._start.wait()
        self._finish.wait()
        elapsed = clock() - start
        if self._errors:
            raise self._errors[0]
        return elapsed

    def close(self) -> None:
        """Release the threads for the last time and let them end."""
        self._job = None
        try:
            self._start.wait(timeout=JOIN_TIMEOUT_S)
        except threading.BrokenBarrierError:
            pass
        for thread in self._threads:
            thread.join(JOIN_TIMEOUT_S)


def crew_block(crew: Crew, fn: Callable[[], Any], clock: Clock = time.perf_counter_ns) -> Callable[[int], int]:
    """A sync block run by ``crew``'s threads."""
    return lambda n: crew.run(fn, n, clock)


def tasks_block(
    fn: Callable[[], Awaitable[Any]], callers: int, clock: Clock = time.perf_counter_ns
) -> Callable[[int], Awaitable[int]]:
    """An async block: ``callers`` tasks of the running loop share its ``n`` awaits of ``fn()``."""

    async def caller(count: int) -> None:
        for _ in range(count):
            await fn()

    async def block(n: int) -> int:
        counts = shares(n, callers)
        start = clock()
        async with anyio.create_task_group() as group:
            for count in counts:
                group.start_soon(caller, count)
        return clock() - start

    return block
