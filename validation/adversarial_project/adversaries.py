"""The adversarial pairs (issue 68): shapes that fool a timing harness, each with a budget its true
overhead is far from, so that a pass or a fail whose interval misses the truth is a wrong verdict.

Each entry builds fresh callables (a replica process builds its own, so a slow start is slow again
in every process); ``validation/adversarial.py`` reads the truth of each from a long interleaved
reference outside pytest, in fresh processes.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

PAYLOAD = {f"key{i}": i for i in range(8)}


def work() -> str:
    """About 2 µs of real work here."""
    return json.dumps(PAYLOAD)


def spin(ns: int) -> None:
    until = time.perf_counter_ns() + ns
    while time.perf_counter_ns() < until:
        pass


@dataclass(frozen=True)
class Adversary:
    build: Callable[[], tuple[Callable[[], Any], Callable[[], Any]]]
    budget: float
    is_async: bool = False


def slow_start(slow_calls: int) -> Callable[[], tuple[Callable[[], Any], Callable[[], Any]]]:
    """The baseline's first calls spin 15 µs (a cache or a pool filling), then cost ~60 ns; the
    framework does three times the baseline's warm work."""

    def build() -> tuple[Callable[[], Any], Callable[[], Any]]:
        calls = [0]
        table = {"a": 1}

        def warm() -> Any:
            calls[0] += 1
            return table.get("a")

        def baseline() -> Any:
            if calls[0] < slow_calls:
                spin(15_000)
            return warm()

        def framework() -> Any:
            warm()
            warm()
            return warm()

        return baseline, framework

    return build


def bimodal() -> tuple[Callable[[], Any], Callable[[], Any]]:
    """A third of the calls do ten times the work, at random; the framework adds a fifth."""
    rng = random.Random(1)

    def baseline() -> Any:
        return [work() for _ in range(10 if rng.random() < 0.33 else 1)]

    def framework() -> Any:
        spin(800)
        return [work() for _ in range(10 if rng.random() < 0.33 else 1)]

    return baseline, framework


def pausing() -> tuple[Callable[[], Any], Callable[[], Any]]:
    """Every 500th call of each side pauses 300 µs (a collection, a flush); the framework does twice the work."""
    counts = [0, 0]

    def side(index: int, repeat: int) -> Callable[[], Any]:
        def call() -> Any:
            counts[index] += 1
            if counts[index] % 500 == 0:
                spin(300_000)
            return [work() for _ in range(repeat)]

        return call

    return side(0, 1), side(1, 2)


def thread_pool() -> tuple[Callable[[], Any], Callable[[], Any]]:
    """The framework hands the same work to a thread pool and waits for it."""
    pool = ThreadPoolExecutor(max_workers=1)
    return work, lambda: pool.submit(work).result()


def sleeping() -> tuple[Callable[[], Any], Callable[[], Any]]:
    """Async: the framework yields to the loop (``asyncio.sleep(0)``) before the work."""

    async def baseline() -> Any:
        return work()

    async def framework() -> Any:
        await asyncio.sleep(0)
        return work()

    return baseline, framework


def growing() -> tuple[Callable[[], Any], Callable[[], Any]]:
    """The framework's cost grows with its calls (a history it scans) until its history is full."""
    history: list[int] = []

    def framework() -> Any:
        if len(history) < 3000:
            history.append(len(history))
        return work(), -1 in history

    return work, framework


def tiny() -> tuple[Callable[[], Any], Callable[[], Any]]:
    """A ~60 ns baseline; the framework adds a layer of one call and a dict look-up."""
    table = {"a": 1}

    def baseline() -> Any:
        return table.get("a")

    def layer() -> Any:
        table.get("b")
        return table.get("a")

    return baseline, lambda: layer()


ADVERSARIES: dict[str, Adversary] = {
    **{f"slow_start_{k}": Adversary(slow_start(k), 0.05) for k in (10, 50, 100, 300, 1000)},
    "bimodal": Adversary(bimodal, 0.5),
    "pausing": Adversary(pausing, 0.3),
    "thread_pool": Adversary(thread_pool, 0.5),
    "sleeping": Adversary(sleeping, 0.05, is_async=True),
    "growing": Adversary(growing, 0.05),
    "tiny": Adversary(tiny, 0.05),
}
"""name -> the pair and its ``max`` budget."""
