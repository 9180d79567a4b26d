"""Streaming measurements: time to first event, total time, events/s, bytes, gaps.

The first event is timed when its bytes have really arrived (its terminating blank line
read from the network), not when the response headers came or the body ended: a client
that reads the whole body first reports a "time to first chunk" equal to the total.
Events that arrive in one network read share one arrival time (with no delay between
events the server's writes coalesce); ``reads`` shows how many reads carried them.
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

EVENT_END = b"\n\n"


@dataclass(frozen=True)
class StreamStats:
    """One streamed response. Times in seconds from the request being sent."""

    events: int
    bytes: int
    reads: int
    first_event_s: float
    total_s: float
    gap_p50_s: float
    gap_p95_s: float

    @property
    def events_per_s(self) -> float:
        return self.events / self.total_s if self.total_s > 0 else float("nan")


@dataclass
class EventTimer:
    """Fed network reads as they arrive; timestamps every complete server-sent event."""

    clock_ns: Callable[[], int] = time.perf_counter_ns
    started_ns: int = 0
    arrivals_ns: list[int] = field(default_factory=list)
    bytes: int = 0  # noqa: A003
    reads: int = 0
    _tail: builtins.bytes = b""

    def start(self) -> None:
        self.started_ns = self.clock_ns()

    def feed(self, chunk: builtins.bytes) -> None:
        if not chunk:
            return
        now = self.clock_ns()
        self.reads += 1
        self.bytes += len(chunk)
        data = self._tail + chunk
        complete = data.count(EVENT_END)
        self.arrivals_ns.extend([now] * complete)
        self._tail = data[data.rfind(EVENT_END) + len(EVENT_END) :] if complete else data

    def stats(self) -> StreamStats:
        end_ns = self.clock_ns()
        if not self.arrivals_ns:
            raise ValueError(f"the stream ended after {self.bytes} bytes without one complete event")
        arrivals = (np.asarray(self.arrivals_ns, float) - self.started_ns) / 1e9
        gaps = np.diff(arrivals) if arrivals.size > 1 else np.zeros(1)
        return StreamStats(
            int(arrivals.size),
            self.bytes,
            self.reads,
            float(arrivals[0]),
            (end_ns - self.started_ns) / 1e9,
            float(np.percentile(gaps, 50)),
            float(np.percentile(gaps, 95)),
        )


def stream(
    client: Any, url: str, *, method: str = "GET", clock_ns: Callable[[], int] = time.perf_counter_ns
) -> StreamStats:
    """Stream ``url`` with a sync httpx client, timing every event as it arrives."""
    timer = EventTimer(clock_ns)
    timer.start()
    with client.stream(method, url) as response:
        response.raise_for_status()
        for chunk in response.iter_raw():
            timer.feed(chunk)
    return timer.stats()


async def astream(
    client: Any, url: str, *, method: str = "GET", clock_ns: Callable[[], int] = time.perf_counter_ns
) -> StreamStats:
    """:func:`stream` with an async httpx client."""
    timer = EventTimer(clock_ns)
    timer.start()
    async with client.stream(method, url) as response:
        response.raise_for_status()
        async for chunk in response.aiter_raw():
            timer.feed(chunk)
    return timer.stats()
