"""Load measurements over any request callable: latency distribution, throughput over a
bounded duration, concurrency levels, and the load generator's own CPU per request.

They take a zero-argument callable that makes one request (``lambda: client.get("/echo")``)
so they work with any client, inside or outside ``overhead.compare``. Every loop is
bounded by a count and a deadline.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
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
DRAIN_S = 2.0
"""How long requests in flight at the deadline get to finish (not counted) before they are cancelled."""


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


async def throughput(
    send: Callable[[], Awaitable[Any]],
    *,
    concurrency: int = 1,
    duration_s: float = 1.0,
    max_requests: int = 1_000_000,
    warmup: int = 10,
    ok: Callable[[Any], bool] = lambda response: getattr(response, "status_code", 200) < 400,
    server_cpu_s: Callable[[], float] | None = None,
    drain_s: float = DRAIN_S,
    clock_ns: Callable[[], int] = time.perf_counter_ns,
) -> Throughput:
    """``concurrency`` workers send requests back to back until the deadline, which is exact:
    only requests completed by then are counted. Requests still in flight then are let finish
    (for at most ``drain_s``, then cancelled), not cut off: a cancelled HTTP/2 request is never
    reset by httpx, so the server kept it open and its in-flight gauge grew run after run.
    A response ``ok`` rejects (by default: HTTP status ≥ 400) or a raised exception counts as
    an error, not a request. ``server_cpu_s`` reads the server process's CPU seconds."""
    for _ in range(warmup):
        await send()
    recorder = Recorder(duration_s, clock_ns, max_requests)
    cpu_started = time.process_time()
    server_started = server_cpu_s() if server_cpu_s else math.nan

    async def status() -> int:
        response = await send()
        code = int(getattr(response, "status_code", 200))
        return code if ok(response) else max(code, 400)

    with anyio.move_on_after(duration_s + drain_s):
        async with anyio.create_task_group() as group:
            for _ in range(concurrency):
                group.start_soon(recorder.worker, status)
    cpu_s = time.process_time() - cpu_started
    server_s = server_cpu_s() - server_started if server_cpu_s else math.nan
    return recorder.throughput(concurrency, cpu_s, server_s)


class ConnectionGone(Exception):
    """A request failed because its connection is closed: the worker that holds it cannot go on."""


@dataclass
class Recorder:
    """One load run's requests, by one rule for :func:`throughput` and the lean load workers
    (:mod:`overheadbench.http.loadgen`): a request that completes by the deadline counts (its
    latency, and when it finished: the windows' req/s) when its status is below 400, else as
    an error; one that completes after the deadline is only "served" (its CPU is in the totals,
    so it counts in "per request"); a raised error is an error and the worker goes on with its
    next request (a reset HTTP/2 stream, a timeout), unless its connection is gone
    (:class:`ConnectionGone`): then that worker stops, and the run goes on with the others."""

    duration_s: float
    clock_ns: Callable[[], int] = time.perf_counter_ns
    max_requests: int = 1 << 62
    latencies_ns: list[int] = field(default_factory=list)
    finished_ns: list[int] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    late: int = 0
    issued: int = 0
    slots: list[list[int]] = field(default_factory=list)
    """Each worker's (in-flight slot's) counted requests and its last counted completion, from the start."""

    def __post_init__(self) -> None:
        self.started = self.clock_ns()
        self.deadline = self.started + int(self.duration_s * 1e9)

    async def worker(self, send: Callable[[], Awaitable[int]]) -> None:
        """Send requests back to back until the deadline (or ``max_requests`` in all)."""
        slot = [0, 0]
        self.slots.append(slot)  # kept as it goes: a slot cancelled in its last request still counts
        while self.issued < self.max_requests and (start := self.clock_ns()) < self.deadline:
            self.issued += 1
            try:
                status = await send()
            except Exception as exc:  # the request failed, not the run: counted, and said
                self.failures.append(f"{type(exc).__name__}: {exc}")
                if isinstance(exc, ConnectionGone):
                    return
                continue
            end = self.clock_ns()
            if end > self.deadline:
                self.late += 1
            elif status < 400:
                self.latencies_ns.append(end - start)
                self.finished_ns.append(end - self.started)
                slot[0], slot[1] = slot[0] + 1, end - self.started
            else:
                self.failures.append(f"status {status}")

    @property
    def served(self) -> int:
        return len(self.latencies_ns) + self.late

    @property
    def elapsed_ns(self) -> int:
        return min(self.clock_ns(), self.deadline) - self.started

    def throughput(self, concurrency: int, cpu_s: float, server_s: float = math.nan) -> Throughput:
        """The run's figures, with the client's (``cpu_s``) and the server's CPU seconds spread over
        the requests served."""
        return self.report(cpu_s).throughput(concurrency, server_s)

    def report(self, cpu_s: float) -> WorkerReport:
        """What this run recorded, as a load worker process sends it back."""
        first = self.failures[0] if self.failures else ""
        return WorkerReport(
            self.latencies_ns,
            self.finished_ns,
            len(self.failures),
            first,
            self.served,
            self.elapsed_ns,
            cpu_s,
            [(count, last) for count, last in self.slots],
        )


@dataclass(frozen=True)
class WorkerReport:
    """One recorded run: a :class:`Recorder`'s requests and the CPU its process spent; a lean load
    worker sends it back as one JSON line, and the reports of all the workers merge into one."""

    latencies_ns: list[int]
    finished_ns: list[int]
    """When each counted request finished, from the run's start (the windows' req/s)."""
    errors: int
    first_error: str
    served: int
    """Requests answered, counted or late (their CPU is in ``cpu_s``)."""
    elapsed_ns: int
    cpu_s: float
    slots: list[tuple[int, int]] = field(default_factory=list)
    """Each in-flight slot's counted requests and its last counted completion (ns from the start)."""

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> WorkerReport:
        """A report back from a worker's line (a ``KeyError`` or ``TypeError`` on a line that is not one)."""
        return cls(**{field.name: data[field.name] for field in dataclasses.fields(cls)})

    @classmethod
    def merged(cls, reports: Sequence[WorkerReport]) -> WorkerReport:
        """The workers' runs as one: their requests together, their CPU added, the longest run."""
        return cls(
            [latency for report in reports for latency in report.latencies_ns],
            [finished for report in reports for finished in report.finished_ns],
            sum(report.errors for report in reports),
            next((report.first_error for report in reports if report.first_error), ""),
            sum(report.served for report in reports),
            max(report.elapsed_ns for report in reports),
            sum(report.cpu_s for report in reports),
            [slot for report in reports for slot in report.slots],
        )

    def throughput(
        self, concurrency: int, server_s: float = math.nan, by_server: Sequence[tuple[str, float]] = ()
    ) -> Throughput:
        """The figures of the run, CPU seconds (this report's, the servers' in all, each server's
        in ``by_server`` when there are several) per request served."""
        served, samples = self.served, self.latencies_ns
        per_request = tuple((name, seconds / served if served else math.nan) for name, seconds in by_server)
        return Throughput(
            concurrency,
            len(samples),
            self.errors,
            self.elapsed_ns / 1e9,
            LatencyStats.from_ns(samples) if samples else None,
            self.cpu_s / served if served else math.nan,
            self.first_error,
            server_cpu_s_per_request=server_s / served if served else math.nan,
            server_cpu_by_server=per_request if len(per_request) > 1 else (),
            window_rates=window_rates(self.finished_ns, self.elapsed_ns),
            latency_ns=tuple(samples),
            slot_rate=sum(count * 1e9 / last for count, last in self.slots if count and last > 0)
            if self.slots
            else math.nan,
        )
