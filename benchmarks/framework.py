"""A small agent-style framework to benchmark: agents, middleware and composition patterns.

An example, not the product: it has the shapes agent frameworks publish overhead tables for.
Every agent has an async ``process(message) -> message`` and a sync twin ``handle``.
Middleware wraps an agent and is itself an agent; compositions combine agents. Async code
uses anyio, so it runs on asyncio and trio alike.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
import anyio.lowlevel
import anyio.to_thread

Message = dict[str, Any]


class Agent(Protocol):
    def handle(self, message: Message) -> Message: ...

    async def process(self, message: Message) -> Message: ...


class EchoAgent:
    """A cheap real step: upper-cases the text and counts tokens (~0.5 µs)."""

    def __init__(self, name: str = "echo") -> None:
        self.name = name

    def handle(self, message: Message) -> Message:
        return {**message, "reply": message["text"].upper(), "tokens": len(message["text"].split()), "by": self.name}

    async def process(self, message: Message) -> Message:
        return self.handle(message)


class HashingAgent:
    """Checksums a 64 KiB document per message: C work that releases the GIL (and, async, runs
    in a worker thread), so concurrent callers really overlap on several cores."""

    def __init__(self, size: int = 64 * 1024) -> None:
        self.document = bytes(range(256)) * (size // 256)

    def handle(self, message: Message) -> Message:
        return {**message, "checksum": hashlib.sha256(self.document).hexdigest()[:8]}

    async def process(self, message: Message) -> Message:
        return await anyio.to_thread.run_sync(self.handle, message)


class FlakyAgent:
    """Fails the first ``failures`` calls of every message with ConnectionError, then answers."""

    def __init__(self, agent: Agent, failures: int) -> None:
        self.agent, self.failures, self.seen = agent, failures, 0

    def _maybe_fail(self) -> None:
        self.seen += 1
        if self.seen <= self.failures:
            raise ConnectionError(f"transient failure {self.seen}")
        self.seen = 0

    def handle(self, message: Message) -> Message:
        self._maybe_fail()
        return self.agent.handle(message)

    async def process(self, message: Message) -> Message:
        self._maybe_fail()
        return await self.agent.process(message)


# ---------------------------------------------------------------- middleware


class Retry:
    """Retries on ConnectionError, ``attempts`` times in all, sleeping ``backoff_s * 2**n`` between."""

    def __init__(self, agent: Agent, attempts: int = 3, backoff_s: float = 0.0) -> None:
        self.agent, self.attempts, self.backoff_s = agent, attempts, backoff_s

    def handle(self, message: Message) -> Message:
        for attempt in range(self.attempts):
            try:
                return self.agent.handle(message)
            except ConnectionError:
                if attempt == self.attempts - 1:
                    raise
                if self.backoff_s:
                    time.sleep(self.backoff_s * 2**attempt)
        raise AssertionError("unreachable")

    async def process(self, message: Message) -> Message:
        for attempt in range(self.attempts):
            try:
                return await self.agent.process(message)
            except ConnectionError:
                if attempt == self.attempts - 1:
                    raise
                if self.backoff_s:
                    await anyio.sleep(self.backoff_s * 2**attempt)
        raise AssertionError("unreachable")


class Metrics:
    """Counts calls and errors and accumulates time spent."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.calls = self.errors = 0
        self.seconds = 0.0

    def _record(self, started: float, failed: bool) -> None:
        self.calls += 1
        self.errors += failed
        self.seconds += time.perf_counter() - started

    def handle(self, message: Message) -> Message:
        started, failed = time.perf_counter(), True
        try:
            result = self.agent.handle(message)
            failed = False
            return result
        finally:
            self._record(started, failed)

    async def process(self, message: Message) -> Message:
        started, failed = time.perf_counter(), True
        try:
            result = await self.agent.process(message)
            failed = False
            return result
        finally:
            self._record(started, failed)


class SharedCounter:
    """The deliberately contended middleware: counts calls in one shared counter, and holds its
    lock across the call it counts (the classic mistake). Nearly free for one caller; with
    many, every call waits for the one in progress, so callers that could overlap cannot."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.count = 0
        self._lock = threading.Lock()
        self._async_locks: dict[object, anyio.Lock] = {}

    def handle(self, message: Message) -> Message:
        with self._lock:
            self.count += 1
            return self.agent.handle(message)

    async def process(self, message: Message) -> Message:
        loop = anyio.lowlevel.current_token()  # an anyio.Lock belongs to the loop it was made in
        lock = self._async_locks.setdefault(loop, anyio.Lock())
        async with lock:
            self.count += 1
            return await self.agent.process(message)


class CircuitOpen(Exception):
    """The circuit breaker is open: calls are refused until the reset time."""


class CircuitBreaker:
    """Opens after ``threshold`` consecutive failures, refuses calls for ``reset_s``, then tries again."""

    def __init__(
        self, agent: Agent, threshold: int = 5, reset_s: float = 30.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.agent, self.threshold, self.reset_s, self.clock = agent, threshold, reset_s, clock
        self.failures = 0
        self.opened_at: float | None = None

    def _before(self) -> None:
        if self.opened_at is not None:
            if self.clock() - self.opened_at < self.reset_s:
                raise CircuitOpen("circuit open")
            self.opened_at = None  # half-open: let one call through

    def _after(self, ok: bool) -> None:
        self.failures = 0 if ok else self.failures + 1
        if self.failures >= self.threshold:
            self.opened_at = self.clock()

    def handle(self, message: Message) -> Message:
        self._before()
        try:
            result = self.agent.handle(message)
        except Exception:
            self._after(False)
            raise
        self._after(True)
        return result

    async def process(self, message: Message) -> Message:
        self._before()
        try:
            result = await self.agent.process(message)
        except Exception:
            self._after(False)
            raise
        self._after(True)
        return result


class RateLimited(Exception):
    """No token was available."""


class RateLimiter:
    """Token bucket: ``rate`` tokens per second up to ``burst``; a call takes one or is refused."""

    def __init__(self, agent: Agent, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.agent, self.rate, self.burst, self.clock = agent, rate, burst, clock
        self.tokens, self.updated = float(burst), clock()

    def _take(self) -> None:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
        self.updated = now
        if self.tokens < 1:
            raise RateLimited("rate limit reached")
        self.tokens -= 1

    def handle(self, message: Message) -> Message:
        self._take()
        return self.agent.handle(message)

    async def process(self, message: Message) -> Message:
        self._take()
        return await self.agent.process(message)


class Timeout:
    """Async: cancels a call after ``seconds`` (TimeoutError). Sync: checks after the call."""

    def __init__(self, agent: Agent, seconds: float) -> None:
        self.agent, self.seconds = agent, seconds

    def handle(self, message: Message) -> Message:
        started = time.perf_counter()
        result = self.agent.handle(message)
        if time.perf_counter() - started > self.seconds:
            raise TimeoutError(f"call took longer than {self.seconds} s")
        return result

    async def process(self, message: Message) -> Message:
        with anyio.fail_after(self.seconds):
            return await self.agent.process(message)


class Batching:
    """Collects messages and hands them to the agent ``size`` at a time (one ``handle_batch``)."""

    def __init__(self, agent: Agent, size: int) -> None:
        self.agent, self.size = agent, size
        self.pending: list[Message] = []

    def handle(self, message: Message) -> Message:
        """One message through the batch path: a batch of one, flushed at once."""
        return self.handle_batch([message])[0]

    async def process(self, message: Message) -> Message:
        return self.handle(message)

    def handle_batch(self, messages: Sequence[Message]) -> list[Message]:
        results: list[Message] = []
        for start in range(0, len(messages), self.size):
            results += [self.agent.handle(m) for m in messages[start : start + self.size]]
        return results


def stack(agent: Agent, *layers: Callable[[Agent], Agent]) -> Agent:
    """Wrap ``agent`` in ``layers``, innermost first."""
    for layer in layers:
        agent = layer(agent)
    return agent


# ---------------------------------------------------------------- composition


@dataclass
class Sequential:
    """Each agent gets the previous one's output."""

    agents: Sequence[Agent]

    def handle(self, message: Message) -> Message:
        for agent in self.agents:
            message = agent.handle(message)
        return message

    async def process(self, message: Message) -> Message:
        for agent in self.agents:
            message = await agent.process(message)
        return message


@dataclass
class Parallel:
    """Every agent gets the same message; the results are merged under ``results``."""

    agents: Sequence[Agent]

    def handle(self, message: Message) -> Message:
        return {**message, "results": [agent.handle(message) for agent in self.agents]}

    async def process(self, message: Message) -> Message:
        results: list[Message | None] = [None] * len(self.agents)

        async def run(index: int, agent: Agent) -> None:
            results[index] = await agent.process(message)

        async with anyio.create_task_group() as group:
            for index, agent in enumerate(self.agents):
                group.start_soon(run, index, agent)
        return {**message, "results": results}


@dataclass
class Fallback:
    """The first agent that does not raise answers."""

    agents: Sequence[Agent]
    errors: tuple[type[BaseException], ...] = (Exception,)

    def handle(self, message: Message) -> Message:
        for agent in self.agents[:-1]:
            try:
                return agent.handle(message)
            except self.errors:
                continue
        return self.agents[-1].handle(message)

    async def process(self, message: Message) -> Message:
        for agent in self.agents[:-1]:
            try:
                return await agent.process(message)
            except self.errors:
                continue
        return await self.agents[-1].process(message)


@dataclass
class Router:
    """Sends a message to the first route whose predicate accepts it, else to ``default``."""

    routes: Sequence[tuple[Callable[[Message], bool], Agent]]
    default: Agent

    def _pick(self, message: Message) -> Agent:
        for predicate, agent in self.routes:
            if predicate(message):
                return agent
        return self.default

    def handle(self, message: Message) -> Message:
        return self._pick(message).handle(message)

    async def process(self, message: Message) -> Message:
        return await self._pick(message).process(message)
