"""Load measurements over any request callable: latency distribution, throughput over a
bounded duration, concurrency levels, and the load generator's own CPU per request.

They take a zero-argument callable that makes one request (``lambda: client.get("/echo")``)
so they work with any client, inside or outside ``overhead.compare``. Every loop is
bounded by a count and a deadline.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import anyio
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
    """Completed requests over a bounded duration at a concurrency level."""

    concurrency: int
    requests: int
    errors: int
    duration_s: float
    latency: LatencyStats | None
    client_cpu_s_per_request: float
    """CPU time this process (the load generator) spent per completed request."""
    first_error: str = ""
    """The first failed request's exception or status, when there were errors."""
    server_max_in_flight: int | None = None
    """Most requests the server saw at once, when it can tell (the built-in app can)."""

    @property
    def requests_per_s(self) -> float:
        return self.requests / self.duration_s if self.duration_s > 0 else math.nan


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


async def throughput(
    send: Callable[[], Awaitable[Any]],
    *,
    concurrency: int = 1,
    duration_s: float = 1.0,
    max_requests: int = 1_000_000,
    warmup: int = 10,
    ok: Callable[[Any], bool] = lambda response: getattr(response, "status_code", 200) < 400,
    clock_ns: Callable[[], int] = time.perf_counter_ns,
) -> Throughput:
    """``concurrency`` workers send requests back to back until the deadline, which is exact:
    requests still in flight then are cancelled and not counted. A response ``ok`` rejects
    (by default: HTTP status ≥ 400) or a raised exception counts as an error, not a request."""
    for _ in range(warmup):
        await send()
    samples: list[int] = []
    failures: list[str] = []
    started = clock_ns()
    cpu_started = time.process_time()

    issued = 0

    async def worker() -> None:
        nonlocal issued
        while issued < max_requests:
            issued += 1
            start = clock_ns()
            try:
                response = await send()
            except Exception as exc:
                failures.append(f"{type(exc).__name__}: {exc}")
                continue
            if ok(response):
                samples.append(clock_ns() - start)
            else:
                failures.append(f"status {getattr(response, 'status_code', '?')}")

    with anyio.move_on_after(duration_s):
        async with anyio.create_task_group() as group:
            for _ in range(concurrency):
                group.start_soon(worker)
    elapsed_s = (clock_ns() - started) / 1e9
    cpu_s = time.process_time() - cpu_started
    return Throughput(
        concurrency,
        len(samples),
        len(failures),
        elapsed_s,
        LatencyStats.from_ns(samples) if samples else None,
        cpu_s / len(samples) if samples else math.nan,
        failures[0] if failures else "",
    )
