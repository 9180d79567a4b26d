"""Middleware overhead: each decorator alone, a minimal stack and a full stack, sync and async.

Every pair times the bare agent (baseline) against the agent wrapped in middleware
(framework). Budgets are absolute (``max_abs``: what a maintainer can promise per call,
whatever the agent costs) and, for the stacks, relative too; ``work="500ms"`` puts the
absolute overhead beside a typical LLM call in the report's impact column.

``OVERHEADBENCH_EXAMPLE_SLOWDOWN=N`` slows the metrics middleware by N loop iterations per
call (sync and async; ``OVERHEADBENCH_EXAMPLE_ASYNC_SLOWDOWN`` sets the async side's own): a
deliberate regression, for trying ``--overhead-fail-above`` (docs/baselines.md) and for
validation/ab_gate.py, which edits these two lines in a head tree.
"""

from __future__ import annotations

import os

import pytest
from framework import Batching, CircuitBreaker, EchoAgent, FlakyAgent, Metrics, RateLimiter, Retry, Timeout, stack

MESSAGE = {"text": "route this message to the billing agent please"}
SLOWDOWN = range(int(os.environ.get("OVERHEADBENCH_EXAMPLE_SLOWDOWN", "0")))
ASYNC_SLOWDOWN = range(int(os.environ.get("OVERHEADBENCH_EXAMPLE_ASYNC_SLOWDOWN", len(SLOWDOWN))))


class SlowedMetrics(Metrics):
    def handle(self, message):
        for _ in SLOWDOWN:
            pass
        return super().handle(message)

    async def process(self, message):
        for _ in ASYNC_SLOWDOWN:
            pass
        return await super().process(message)


MIDDLEWARE = {
    # name: (how to wrap an agent, budget per call)
    "retry": (lambda agent: Retry(agent), "2us"),
    "metrics": (lambda agent: SlowedMetrics(agent), "2us"),
    "circuit_breaker": (lambda agent: CircuitBreaker(agent), "2us"),
    "rate_limiter": (lambda agent: RateLimiter(agent, rate=1e12, burst=10**12), "2us"),
    "timeout": (lambda agent: Timeout(agent, seconds=30), "50us"),
    "batching": (lambda agent: Batching(agent, size=8), "3us"),
}


FULL_STACK = (
    Metrics,
    Retry,
    CircuitBreaker,
    lambda a: RateLimiter(a, rate=1e12, burst=10**12),
    lambda a: Timeout(a, seconds=30),
)
"""The five layers of the full stack, innermost first."""


def pair(overhead, framework_agent, baseline_agent, kind: str):
    if kind == "sync":
        return overhead.compare(lambda: baseline_agent.handle(MESSAGE), lambda: framework_agent.handle(MESSAGE))

    async def baseline():
        return await baseline_agent.process(MESSAGE)

    async def framework():
        return await framework_agent.process(MESSAGE)

    return overhead.compare(baseline, framework)


ALONE = [
    pytest.param(
        name,
        kind,
        id=f"{name}-{kind}",
        marks=pytest.mark.overhead(max_abs=budget, work="500ms", group=f"middleware alone ({kind})"),
    )
    for name, (_, budget) in MIDDLEWARE.items()
    for kind in ("sync", "async")
]


@pytest.mark.parametrize(("name", "kind"), ALONE)
def test_each_middleware_alone(overhead, name: str, kind: str):
    """Each middleware alone may add at most a few µs per call (2 µs; the async timeout's cancel scope 50 µs): the
    seeds' per-layer budgets, with 2-10x margin over what this machine kind measures."""
    agent = EchoAgent()
    pair(overhead, MIDDLEWARE[name][0](agent), agent, kind)


@pytest.mark.overhead(max_abs="1ms", work="500ms", group="middleware alone (sync)")
def test_retry_with_failures_and_backoff(overhead):
    """The failure path (one transient failure and a 100 µs backoff per message) may cost at most 1 ms per call: the
    backoff is the cost, the bookkeeping must stay small beside it."""
    agent = EchoAgent()
    pair(overhead, Retry(FlakyAgent(agent, failures=1), attempts=3, backoff_s=0.0001), agent, "sync")


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.overhead(max=1.5, max_abs="3us", work="500ms", group="stacks")
def test_minimal_stack_metrics_and_retry(overhead, kind: str):
    """Metrics plus retry may at most multiply the bare call's cost by 2.5 (and add at most 3 µs): a two-layer stack
    that costs more than its layers is a bug."""
    agent = EchoAgent()
    pair(overhead, stack(agent, SlowedMetrics, Retry), agent, kind)


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param("sync", marks=pytest.mark.overhead(max=4.0, max_abs="10us", work="500ms", group="stacks")),
        # async: the timeout layer's cancel scope alone costs ~8 µs on asyncio and ~17 µs on trio
        # (anyio.fail_after), many times a 0.7 µs agent, so only an absolute budget means something
        pytest.param("async", marks=pytest.mark.overhead(max_abs="40us", work="500ms", group="stacks")),
    ],
)
def test_full_stack_five_layers(overhead, kind: str):
    """All five layers may add at most 10 µs per call sync (40 µs async, its timeout's cancel scope): the stack a
    framework ships, bounded per call."""
    agent = EchoAgent()
    pair(overhead, stack(agent, *FULL_STACK), agent, kind)
