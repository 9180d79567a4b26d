"""The project's own overhead benchmarks: run with `pytest --overhead benchmarks/`.

A first, small suite: a retry wrapper and a metrics wrapper around a fast handler, sync
and async. It shows the marker, the fixture and the report on code shaped like an agent
framework's middleware.
"""

from __future__ import annotations

import os
import time

import pytest


class FastAgent:
    """Does a little real work per message, like a cheap routing or parsing step."""

    def handle(self, message: dict) -> dict:
        return {"reply": message["text"].upper(), "tokens": len(message["text"].split())}

    async def process(self, message: dict) -> dict:
        return self.handle(message)


class RetryMiddleware:
    """Retries a handler on ConnectionError; on the success path it only adds the loop."""

    def __init__(self, agent: FastAgent, attempts: int = 3) -> None:
        self.agent, self.attempts = agent, attempts

    def handle(self, message: dict) -> dict:
        for attempt in range(self.attempts):
            try:
                return self.agent.handle(message)
            except ConnectionError:
                if attempt == self.attempts - 1:
                    raise
        raise AssertionError("unreachable")

    async def process(self, message: dict) -> dict:
        for attempt in range(self.attempts):
            try:
                return await self.agent.process(message)
            except ConnectionError:
                if attempt == self.attempts - 1:
                    raise
        raise AssertionError("unreachable")


class MetricsMiddleware:
    """Counts calls and accumulates time spent: two clock reads and a dict update per call.

    ``OVERHEADBENCH_EXAMPLE_SLOWDOWN=N`` adds N loop iterations of extra work per call: a
    deliberately slowed framework path, to see a regression caught (docs/baselines.md).
    """

    def __init__(self, agent: FastAgent) -> None:
        self.agent = agent
        self.counters = {"calls": 0, "seconds": 0.0}
        self.extra_work = range(int(os.environ.get("OVERHEADBENCH_EXAMPLE_SLOWDOWN", "0")))

    def handle(self, message: dict) -> dict:
        start = time.perf_counter()
        for _ in self.extra_work:
            pass
        try:
            return self.agent.handle(message)
        finally:
            self.counters["calls"] += 1
            self.counters["seconds"] += time.perf_counter() - start


MESSAGE = {"text": "route this message to the billing agent please"}


@pytest.mark.overhead(max=0.50, max_abs="1us", group="middleware")
def test_retry_overhead(overhead):
    agent, wrapped = FastAgent(), RetryMiddleware(FastAgent())
    result = overhead.compare(baseline=lambda: agent.handle(MESSAGE), framework=lambda: wrapped.handle(MESSAGE))
    assert wrapped.handle(MESSAGE) == agent.handle(MESSAGE)
    assert result.kind == "sync"


@pytest.mark.overhead(max=1.0, max_abs="2us", group="middleware")
def test_metrics_overhead(overhead):
    agent, wrapped = FastAgent(), MetricsMiddleware(FastAgent())
    overhead.compare(baseline=lambda: agent.handle(MESSAGE), framework=lambda: wrapped.handle(MESSAGE))
    assert wrapped.counters["calls"] >= 1


@pytest.mark.overhead(max=0.50, max_abs="1us", group="middleware")
def test_retry_overhead_async(overhead):
    agent, wrapped = FastAgent(), RetryMiddleware(FastAgent())

    async def baseline():
        return await agent.process(MESSAGE)

    async def framework():
        return await wrapped.process(MESSAGE)

    overhead.compare(baseline, framework)
