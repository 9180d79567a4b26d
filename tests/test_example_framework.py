"""The example agent framework in benchmarks/ behaves correctly (a benchmark of broken
middleware measures nothing). Fake clocks where time matters; no timing asserts."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from framework import (
    Batching,
    CircuitBreaker,
    CircuitOpen,
    EchoAgent,
    Fallback,
    FlakyAgent,
    Metrics,  # noqa: E402
    Parallel,
    RateLimited,
    RateLimiter,
    Retry,
    Router,
    Sequential,
    Timeout,
    stack,
)

MESSAGE = {"text": "route this"}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Broken:
    def handle(self, message):
        raise ValueError("broken")

    async def process(self, message):
        raise ValueError("broken")


class Slow:
    async def process(self, message):
        await asyncio.sleep(10)

    def handle(self, message):
        return message


def both(agent, message=MESSAGE):
    """The sync and the async answer, which must agree."""
    sync = agent.handle(message)
    assert asyncio.run(agent.process(message)) == sync
    return sync


def test_echo_and_stack() -> None:
    assert both(EchoAgent("a")) == {"text": "route this", "reply": "ROUTE THIS", "tokens": 2, "by": "a"}
    wrapped = stack(EchoAgent(), Metrics, Retry)
    assert isinstance(wrapped, Retry) and isinstance(wrapped.agent, Metrics)


def test_retry_recovers_from_transient_failures_and_gives_up_after_its_attempts() -> None:
    assert both(Retry(FlakyAgent(EchoAgent(), failures=2), attempts=3, backoff_s=0.0001))["reply"] == "ROUTE THIS"
    with pytest.raises(ConnectionError):
        Retry(FlakyAgent(EchoAgent(), failures=3), attempts=3).handle(MESSAGE)
    with pytest.raises(ConnectionError):
        asyncio.run(Retry(FlakyAgent(EchoAgent(), failures=3), attempts=3).process(MESSAGE))


def test_metrics_count_calls_and_errors() -> None:
    metrics = Metrics(EchoAgent())
    both(metrics)
    with pytest.raises(ValueError):
        Metrics(Broken()).handle(MESSAGE)
    broken = Metrics(Broken())
    with pytest.raises(ValueError):
        asyncio.run(broken.process(MESSAGE))
    assert (metrics.calls, metrics.errors, broken.calls, broken.errors) == (2, 0, 1, 1)


def test_circuit_breaker_opens_refuses_and_half_opens() -> None:
    clock = Clock()
    breaker = CircuitBreaker(Broken(), threshold=2, reset_s=10, clock=clock)
    for _ in range(2):
        with pytest.raises(ValueError):
            breaker.handle(MESSAGE)
    with pytest.raises(CircuitOpen):
        breaker.handle(MESSAGE)
    clock.now = 11
    with pytest.raises(ValueError):  # half-open: one call goes through (and fails again)
        breaker.handle(MESSAGE)
    closed = CircuitBreaker(EchoAgent(), threshold=2, clock=clock)
    assert both(closed)["reply"] == "ROUTE THIS" and closed.opened_at is None


def test_rate_limiter_spends_and_refills_tokens() -> None:
    clock = Clock()
    limiter = RateLimiter(EchoAgent(), rate=10, burst=2, clock=clock)
    both(limiter)  # two tokens spent
    with pytest.raises(RateLimited):
        limiter.handle(MESSAGE)
    clock.now = 0.1  # one token back
    assert limiter.handle(MESSAGE)["reply"] == "ROUTE THIS"


def test_timeout_cancels_a_slow_async_call_and_passes_a_fast_one() -> None:
    with pytest.raises(TimeoutError):
        asyncio.run(Timeout(Slow(), seconds=0.01).process(MESSAGE))
    assert both(Timeout(EchoAgent(), seconds=5))["reply"] == "ROUTE THIS"


def test_batching_hands_over_in_batches() -> None:
    seen = []

    class Recording(EchoAgent):
        def handle(self, message):
            seen.append(message["text"])
            return super().handle(message)

    batching = Batching(Recording(), size=2)
    results = batching.handle_batch([{"text": str(i)} for i in range(5)])
    assert [r["reply"] for r in results] == ["0", "1", "2", "3", "4"] and seen == ["0", "1", "2", "3", "4"]
    assert both(batching)["reply"] == "ROUTE THIS"


def test_compositions() -> None:
    a, b, c = EchoAgent("a"), EchoAgent("b"), EchoAgent("c")
    assert both(Sequential([a, b, c]))["by"] == "c"
    assert [r["by"] for r in both(Parallel([a, b, c]))["results"]] == ["a", "b", "c"]
    assert both(Fallback([Broken(), b, c]))["by"] == "b"
    router = Router([(lambda m: "billing" in m["text"], a), (lambda m: "route" in m["text"], b)], default=c)
    assert both(router)["by"] == "b" and router.handle({"text": "other"})["by"] == "c"
    nested = both(Parallel([Sequential([a, b]), Sequential([b, c])]))
    assert [r["by"] for r in nested["results"]] == ["b", "c"]
