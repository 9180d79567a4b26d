"""Load measurements over any request callable: latency distribution, throughput over a
bounded duration (run by :func:`~.recorder.throughput`), concurrency levels, and the load
generator's own CPU per request.

They take a zero-argument callable that makes one request (``lambda: client.get("/echo")``)
so they work with any client, inside or outside ``overhead.compare``. Every loop is
bounded by a count and a deadline.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

P99_MIN_SAMPLES = 1000


@dataclass(frozen=True)
class LatencyStats:
    """A latency distribution in seconds. ``p99_s`` is None below 1,000 samples (``note`` says so)."""

    count: int
    min_s: float
    mean_s: float
    p50_s: float
    p95_s: float
    p99_s: float | None
    max_s: float
    note: str = ""

    @classmethod
    def from_ns(cls, samples_ns: list[int] | np.ndarray) -> LatencyStats:
        values = np.asarray(samples_ns, float) / 1e9
        if values.size == 0:
            raise ValueError("no latency samples")
        p50, p95, p99 = np.percentile(values, [50, 95, 99])
        enough = values.size >= P99_MIN_SAMPLES
        note = "" if enough else f"p99 needs >= {P99_MIN_SAMPLES} samples, have {values.size}"
        return cls(
            int(values.size),
            float(values.min()),
            float(values.mean()),
            float(p50),
            float(p95),
            float(p99) if enough else None,
            float(values.max()),
            note,
        )


@dataclass(frozen=True)
class Throughput:
    """Completed requests over a bounded duration at a concurrency level, with what the
    load generator and (when it can be read) the server spent in CPU per request."""

    concurrency: int
    requests: int
    errors: int
    duration_s: float
    latency: LatencyStats | None
    client_cpu_s_per_request: float
    """CPU time the load generator (this process, or all its worker processes) spent per request."""
    first_error: str = ""
    """The first failed request's exception or status, when there were errors."""
    server_cpu_s_per_request: float = math.nan
    """CPU time the server processes spent per request (from the OS; NaN where it cannot be read):
    every server the test had running, so a gateway's row carries its upstream's work too."""
    server_cpu_by_server: tuple[tuple[str, float], ...] = ()
    """Each server's own CPU time per request (its name, seconds), when more than one was running."""
    window_rates: tuple[float, ...] = ()
    """Requests per second in each of ``WINDOWS`` equal slices of the duration: the spread
    the req/s interval is made from."""
    latency_ns: tuple[int, ...] = field(default=(), repr=False)
    """Every counted request's latency (the percentiles' intervals are made from them)."""
    in_flight_seen: int | None = None
    """A sweep's check of the level: the most requests the server had in flight at once (None: not checked)."""
    in_flight_wait_s: float = math.nan
    """How long that check's barrier waited for them."""
    slot_rate: float = math.nan
    """Requests per second summed over the in-flight slots, each slot's counted requests over the time
    to its last counted completion (NaN where the slots were not kept: a sequential run)."""

    @property
    def shortfall(self) -> str:
        """The level not reached, said ("" where it was, or was not checked)."""
        if self.in_flight_seen is None or self.in_flight_seen >= self.concurrency:
            return ""
        return (
            f"concurrency not reached: asked for {self.concurrency} requests in flight, the server saw at most "
            f"{self.in_flight_seen} at once within {self.in_flight_wait_s:.1f} s (a serialising client, or a busy "
            f"machine); the level's figures are for what the client achieved"
        )

    @property
    def requests_per_s(self) -> float:
        """Completed requests per second: per slot where the slots were kept (:attr:`slot_rate`),
        else the requests over the duration. Why per slot: each slot's request still running at the
        deadline is not counted, so requests over the duration read low by up to one request a slot
        (an eighth at 8 requests a slot); a slot's own time ends at its last completion."""
        if math.isfinite(self.slot_rate):
            return self.slot_rate
        return self.requests / self.duration_s if self.duration_s > 0 else math.nan

    @classmethod
    def pooled(cls, windows: Sequence[Throughput]) -> Throughput:
        """Windows of one load as one run (a transport pair's side): their requests, errors and
        seconds added, CPU per request weighted by each window's requests, one window rate each."""
        requests = sum(w.requests for w in windows)

        def per_request(values: Sequence[tuple[Throughput, float]]) -> float:
            return sum(value * w.requests for w, value in values) / requests if requests else math.nan

        names = [name for name, _ in windows[0].server_cpu_by_server]
        latency_ns = tuple(latency for w in windows for latency in w.latency_ns)
        seconds = sum(w.duration_s for w in windows)
        slotted = all(math.isfinite(w.slot_rate) for w in windows) and seconds > 0
        return cls(
            windows[0].concurrency,
            requests,
            sum(w.errors for w in windows),
            sum(w.duration_s for w in windows),
            LatencyStats.from_ns(list(latency_ns)) if latency_ns else None,
            per_request([(w, w.client_cpu_s_per_request) for w in windows]),
            next((w.first_error for w in windows if w.first_error), ""),
            per_request([(w, w.server_cpu_s_per_request) for w in windows]),
            tuple((name, per_request([(w, dict(w.server_cpu_by_server)[name]) for w in windows])) for name in names),
            tuple(w.requests_per_s for w in windows),
            latency_ns,
            slot_rate=sum(w.slot_rate * w.duration_s for w in windows) / seconds if slotted else math.nan,
        )


WINDOWS = 10


def window_rates(finished_ns: list[int] | np.ndarray, duration_ns: int, windows: int = WINDOWS) -> tuple[float, ...]:
    """Completions per second in ``windows`` equal slices of ``[0, duration_ns)``."""
    if duration_ns <= 0:
        return ()
    counts, _ = np.histogram(np.asarray(finished_ns, float), bins=windows, range=(0, duration_ns))
    return tuple(float(count) * windows * 1e9 / duration_ns for count in counts)


@dataclass
class Sequential:
    """The sequential-latency procedure, written once for the sync and async drivers:
    ``count`` requests after ``warmup`` (a warm connection), stopping early at ``max_s``.
    Iterating it asks for one request per step; the driver only sends it (the generator's
    resume, ~0.1 µs, is inside the timed request, far below a request's milliseconds)."""

    count: int = 1000
    warmup: int = 20
    max_s: float = 30.0
    clock_ns: Callable[[], int] = time.perf_counter_ns
    stats: LatencyStats | None = None

    def __iter__(self) -> Iterator[None]:
        for _ in range(self.warmup):
            yield
        samples: list[int] = []
        deadline = self.clock_ns() + self.max_s * 1e9
        while len(samples) < self.count and self.clock_ns() < deadline:
            start = self.clock_ns()
            yield
            samples.append(self.clock_ns() - start)
        self.stats = LatencyStats.from_ns(samples)


def latency(send: Callable[[], Any], **limits: Any) -> LatencyStats:
    """Sequential requests' latency (``limits``: the keywords of :class:`Sequential`)."""
    steps = Sequential(**limits)
    for _ in steps:
        send()
    assert steps.stats is not None
    return steps.stats


async def alatency(send: Callable[[], Awaitable[Any]], **limits: Any) -> LatencyStats:
    """:func:`latency` for an async request callable."""
    steps = Sequential(**limits)
    for _ in steps:
        await send()
    assert steps.stats is not None
    return steps.stats
