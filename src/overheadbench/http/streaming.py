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

A stream is requested as an SDK requests it: any method, headers and a body (``json=`` or
``content=``: an OpenAI-style streaming API is a POST with JSON). And a stream need not be a URL
at all: :func:`events` / :func:`aevents` time an iterator of events (an SDK's own stream object,
already parsed), each event stamped as the iterator yields it.
"""

from __future__ import annotations

import builtins
import inspect
import time
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
import numpy as np
from httpx_sse import EventSource, ServerSentEvent

from ..core.timeouts import progressed
from .stream_stats import REQUEST_KEYS, StreamSide, StreamStats

TERMINATOR = "[DONE]"
"""The data of the event that ends an OpenAI-style stream (``data: [DONE]``): the end, not an event."""
BOM = b"\xef\xbb\xbf"
"""A stream may start with a UTF-8 byte order mark, which the spec says to drop (httpx-sse keeps it)."""


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
        """An event was parsed: it arrived with the latest read; a stream's ``[DONE]`` terminator is
        not an event (an SDK's iterator never yields it: counted, it took 3% off a raw stream's
        events/s against the SDK's own)."""
        if sse.data == TERMINATOR:
            return
        self.arrivals_ns.append(self._last_read_ns)
        self.last_event_id = sse.id or self.last_event_id

    def arrived(self) -> None:
        """An iterator yielded an event (an SDK's stream, parsed already): it arrived now."""
        self.reads += 1
        self.arrivals_ns.append(self.clock_ns())

    def stats(self) -> StreamStats:
        """The stream's figures, once it ended (a stream done is progress: a replica measuring minutes
        of streams says it is still working, :func:`~overheadbench.core.timeouts.progressed`)."""
        end_ns = self.clock_ns()
        progressed()
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


def _request(request: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The stream request's method, and httpx's keywords for it: the event-stream headers under
    the caller's own, and a ``json`` or ``content`` body (``REQUEST_KEYS``; another key is a
    ``TypeError``, as a misspelt keyword is)."""
    unknown = sorted(set(request) - set(REQUEST_KEYS))
    if unknown:
        raise TypeError(f"a stream's request takes {', '.join(REQUEST_KEYS)}; got {', '.join(unknown)}")
    found: dict[str, Any] = {"headers": {**HEADERS, **(request.get("headers") or {})}}
    found.update({key: request[key] for key in ("json", "content") if request.get(key) is not None})
    return request.get("method") or "GET", found


def stream(
    client: httpx.Client, url: str, *, clock_ns: Callable[[], int] = time.perf_counter_ns, **request: Any
) -> StreamStats:
    """Stream ``url`` with a sync httpx client, timing every event as it arrives; ``request``: its
    ``method`` (GET), ``headers`` and a ``json`` or ``content`` body, as the API wants them."""
    timer = EventTimer(clock_ns)
    timer.start()
    method, options = _request(request)
    with client.stream(method, url, **options) as response:
        for sse in _stamped(response, timer).iter_sse():
            timer.event(sse)
    return timer.stats()


async def astream(
    client: httpx.AsyncClient, url: str, *, clock_ns: Callable[[], int] = time.perf_counter_ns, **request: Any
) -> StreamStats:
    """:func:`stream` with an async httpx client."""
    timer = EventTimer(clock_ns)
    timer.start()
    method, options = _request(request)
    async with client.stream(method, url, **options) as response:
        async for sse in _stamped(response, timer).aiter_sse():
            timer.event(sse)
    return timer.stats()


def events(source: Callable[[], Iterable[Any]], *, clock_ns: Callable[[], int] = time.perf_counter_ns) -> StreamStats:
    """Time the events of ``source()`` (a zero-argument callable that starts a stream: an SDK's
    ``client.chat.completions.create(..., stream=True)``), each as the iterator yields it."""
    timer = EventTimer(clock_ns)
    timer.start()
    for _ in source():
        timer.arrived()
    return timer.stats()


async def aevents(source: Callable[[], Any], *, clock_ns: Callable[[], int] = time.perf_counter_ns) -> StreamStats:
    """:func:`events` for an async stream: ``source()`` gives an async iterator of events, or an
    awaitable of one (``await client.chat.completions.create(..., stream=True)``)."""
    timer = EventTimer(clock_ns)
    timer.start()
    started: Any = source()
    iterable: AsyncIterable[Any] = await started if inspect.isawaitable(started) else started
    async for _ in iterable:
        timer.arrived()
    return timer.stats()


def stream_opener(side: StreamSide) -> Callable[[], Awaitable[StreamStats]]:
    """What streams one side of an async pair, checked now: a side of another shape (or a request
    with other keys than ``REQUEST_KEYS``) raises ``ValueError`` saying what is accepted."""
    if callable(side):
        return lambda: aevents(side)
    client, url, request = _checked(side)
    return lambda: astream(client, url, **request)


def sync_stream_opener(side: StreamSide) -> Callable[[], StreamStats]:
    """:func:`stream_opener` for a sync pair: ``(httpx.Client, url[, request])``, or a callable that
    starts a sync SDK's stream (an iterator of events, :func:`events`)."""
    if callable(side):
        return lambda: events(side)
    client, url, request = _checked(side)
    return lambda: stream(client, url, **request)


def _checked(side: object) -> tuple[Any, str, dict[str, Any]]:
    if not isinstance(side, tuple) or len(side) not in (2, 3):
        raise ValueError(f"a stream side is (client, url), (client, url, request) or a callable; got {side!r}")
    client, url, *rest = side
    request = dict(rest[0]) if rest else {}
    try:
        _request(request)
    except TypeError as exc:
        raise ValueError(str(exc)) from None
    return client, url, request
