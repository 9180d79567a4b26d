"""Streaming measurements: time to first event, total time, events/s, bytes, gaps.

Events are parsed by httpx-sse (the spec's line endings: LF, CRLF and CR; comments,
multi-line data, ``id`` and ``retry``), so any server's stream works, sse-starlette's CRLF
included. They are *timed* by the network read that completed them: the response's byte
stream is wrapped, each read is stamped as it arrives, and an event gets the stamp of the
read it was parsed from. So the first event is timed when its closing blank line really
arrived, not when the headers came or the body ended (a client that reads the whole body
first reports a "time to first event" equal to the total). Events that arrive in one read
share its time (with no delay between events the server's writes coalesce); ``reads`` shows
how many reads carried them. One exception, from the spec's own rule: an event whose last
line ends in a lone CR at the end of a read is known complete only when the next byte (or
the end of the stream) shows the CR is not half of a CRLF, and is timed then.
"""

from __future__ import annotations

import builtins
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import numpy as np
from httpx_sse import EventSource, ServerSentEvent

BOM = b"\xef\xbb\xbf"
"""A stream may start with a UTF-8 byte order mark, which the spec says to drop (httpx-sse keeps it)."""


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
    last_event_id: str = ""

    @property
    def events_per_s(self) -> float:
        return self.events / self.total_s if self.total_s > 0 else float("nan")


@dataclass
class EventTimer:
    """Stamps network reads as they arrive and gives each parsed event its read's stamp."""

    clock_ns: Callable[[], int] = time.perf_counter_ns
    started_ns: int = 0
    arrivals_ns: list[int] = field(default_factory=list)
    bytes: int = 0  # noqa: A003
    reads: int = 0
    last_event_id: str = ""
    _last_read_ns: int = 0

    def start(self) -> None:
        self.started_ns = self._last_read_ns = self.clock_ns()

    def read(self, chunk: builtins.bytes) -> builtins.bytes:
        """Stamp one network read; the stream's leading byte order mark is dropped."""
        if chunk:
            self._last_read_ns = self.clock_ns()
            if not self.reads and chunk.startswith(BOM):
                chunk = chunk[len(BOM) :]
            self.reads += 1
            self.bytes += len(chunk)
        return chunk

    def event(self, sse: ServerSentEvent) -> None:
        """An event was parsed: it arrived with the latest read."""
        self.arrivals_ns.append(self._last_read_ns)
        self.last_event_id = sse.id or self.last_event_id

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
            self.last_event_id,
        )


class _StampedStream(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A response's byte stream, each read stamped by the timer as it arrives."""

    def __init__(self, inner: Any, timer: EventTimer) -> None:
        self.inner, self.timer = inner, timer

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.inner:
            yield self.timer.read(chunk)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            yield self.timer.read(chunk)

    def close(self) -> None:
        self.inner.close()

    async def aclose(self) -> None:
        await self.inner.aclose()


HEADERS = {"Accept": "text/event-stream", "Cache-Control": "no-store"}


def _stamped(response: httpx.Response, timer: EventTimer) -> EventSource:
    response.raise_for_status()
    response.stream = _StampedStream(response.stream, timer)
    return EventSource(response)


def stream(
    client: httpx.Client, url: str, *, method: str = "GET", clock_ns: Callable[[], int] = time.perf_counter_ns
) -> StreamStats:
    """Stream ``url`` with a sync httpx client, timing every event as it arrives."""
    timer = EventTimer(clock_ns)
    timer.start()
    with client.stream(method, url, headers=HEADERS) as response:
        for sse in _stamped(response, timer).iter_sse():
            timer.event(sse)
    return timer.stats()


async def astream(
    client: httpx.AsyncClient, url: str, *, method: str = "GET", clock_ns: Callable[[], int] = time.perf_counter_ns
) -> StreamStats:
    """:func:`stream` with an async httpx client."""
    timer = EventTimer(clock_ns)
    timer.start()
    async with client.stream(method, url, headers=HEADERS) as response:
        async for sse in _stamped(response, timer).aiter_sse():
            timer.event(sse)
    return timer.stats()
