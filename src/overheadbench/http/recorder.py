"""A bounded load run over a request callable (:func:`throughput`) and what it, or a load-generating process,
records and reports (:class:`Recorder`: each response's latency and its time, per window; :class:`WorkerReport`:
what a process sends its parent), and a connection lost mid-load (:class:`ConnectionGone`). The figures they
make (latency statistics, req/s and their windows) are :mod:`.load`'s.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from .load import LatencyStats, Throughput, window_rates

DRAIN_S = 2.0
"""How long requests in flight at the deadline get to finish (not counted) before they are cancelled."""


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
