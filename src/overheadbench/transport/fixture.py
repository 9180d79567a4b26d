"""The ``transport`` fixture: measure transport rows and record their figures for the verdict.

``transport.load(server, concurrency=100)`` runs the lean load generator
(:func:`overheadbench.http.loadrun.load`) and records the row's req/s, p50/p95/p99, client
and server CPU per request and failed requests; ``transport.sweep`` does that per level and
adds the scaling figure; ``transport.stream`` / ``astream`` repeat a stream and record its
time to first event, events/s and total; ``transport.record`` takes figures measured any
other way (``throughput()`` with the user's own client). The test's figures are judged when
it ends, against ``@pytest.mark.transport(...)`` and each call's own budgets.

Without ``--overhead`` every call still runs (briefly, once) so a broken test fails, and
nothing is judged, as the ``overhead`` fixture does.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ..core.errors import MarkerError, OverheadUsageError
from ..engine.settings import Settings
from ..engine.stats import mean_interval, median_interval, quantile_interval, ratio_interval
from ..http.load import Throughput
from ..http.streaming import StreamStats

if TYPE_CHECKING:
    from ..http.server import Server
from .figures import DEFAULT_ERRORS, KEYWORDS, FigureResult, Limits, Metric, Reading, judge, parse_limits

T = TypeVar("T")
LOAD_OPTIONS = {"duration_s", "method", "path", "body", "processes", "warmup", "headers"}
"""What ``load`` and ``sweep`` pass on to :func:`~overheadbench.http.loadrun.load` (and ``sweep`` its ``verify``)."""
STREAM_RUNS = 21
"""Streams per stream row (fewer in the quick profile): its median's interval needs at least 6."""
SMOKE_DURATION_S = 0.05


class TransportFixture:
    """Records the test's transport rows; :meth:`judged` gives their verdicts."""

    def __init__(self, nodeid: str, limits: Limits, settings: Settings, measuring: bool, quick: bool) -> None:
        self.nodeid = nodeid
        self.limits = limits
        self.confidence = settings.confidence
        self.measuring = measuring
        self.duration_s = settings.time_budget_s if measuring else SMOKE_DURATION_S
        self.stream_runs = (7 if quick else STREAM_RUNS) if measuring else 1
        self.readings: list[tuple[Reading, Limits]] = []
        self._rows: set[str] = set()

    # --- measuring ------------------------------------------------------------------------

    def load(self, server: Server, *, concurrency: int = 1, label: str | None = None, **options: Any) -> Throughput:
        """One row of lean load (keywords: those of :func:`~overheadbench.http.loadrun.load`,
        and budgets for this row, e.g. ``rps=600, p95="50ms"``)."""
        from ..http.loadrun import load

        budgets = self._budgets(options, "load")
        options.setdefault("duration_s", self.duration_s)
        result = self._running("load", server, lambda: load(server, concurrency=concurrency, **options))
        self._record(self._row(label or f"{server.protocol} c={concurrency}"), result, budgets)
        return result

    def _running(self, call: str, server: Server, run: Callable[[], T]) -> T:
        """``run()``, with a wrong server, a bad option or a load that cannot run reported as
        the test's mistake (its name, the call, what is wrong), not as a traceback from inside."""
        from ..http.loadgen import LoadError
        from ..http.server import Server

        where = f"{self.nodeid}: transport.{call}()"
        if not isinstance(server, Server):
            raise OverheadUsageError(f"{where} takes a server started by asgi_server, not {type(server).__name__}")
        try:
            return run()
        except (ValueError, LoadError) as exc:
            raise OverheadUsageError(f"{where}: {exc}") from None

    def sweep(
        self, server: Server, levels: Sequence[int] = (1, 10, 50, 100), *, label: str | None = None, **options: Any
    ) -> list[Throughput]:
        """:func:`~overheadbench.http.sweeps.concurrency_sweep` (each level verified on the
        server's side where it can be), a row per level, and the row "<label> c=<last>/c=<first>"
        with the scaling figure (req/s at the last level / at the first) for a ``scaling`` floor."""
        from ..http.sweeps import concurrency_sweep

        if len(levels) < 2:
            raise OverheadUsageError(f"{self.nodeid}: transport.sweep needs two levels or more, got {list(levels)}")
        budgets = self._budgets(options, "sweep")
        options.setdefault("duration_s", self.duration_s)
        name = label or server.protocol
        results = self._running("sweep", server, lambda: concurrency_sweep(server, levels, **options))
        rows = [self._row(f"{name} c={level}") for level in levels]
        for row, result in zip(rows, results, strict=True):
            self._record(row, result, budgets)
        first, last = results[0], results[-1]
        value, low, high = ratio_interval(last.window_rates, first.window_rates, self.confidence)
        interval = f"{self.confidence:.0%} CI over {len(first.window_rates)} windows each"
        row = self._row(f"{name} c={levels[-1]}/c={levels[0]}")
        self._add(Reading(row, Metric.SCALING, value, low, high, interval), budgets)
        return results

    def stream(
        self, client: Any, url: str, *, label: str | None = None, runs: int | None = None, **budgets: Any
    ) -> StreamStats:
        """Stream ``url`` ``runs`` times (default ``STREAM_RUNS``; 7 in the quick profile) with a
        sync httpx client; returns the median stream."""
        from ..http.streaming import stream

        limits = self._budgets(budgets, "stream")
        streams = [stream(client, url) for _ in range(self._runs(runs))]
        return self._streams(self._row(label or f"stream {url}"), streams, limits)

    async def astream(
        self, client: Any, url: str, *, label: str | None = None, runs: int | None = None, **budgets: Any
    ) -> StreamStats:
        """:meth:`stream` with an async httpx client."""
        from ..http.streaming import astream

        limits = self._budgets(budgets, "astream")
        streams = [await astream(client, url) for _ in range(self._runs(runs))]
        return self._streams(self._row(label or f"stream {url}"), streams, limits)

    def _runs(self, runs: int | None) -> int:
        if runs is not None and runs < 1:
            raise OverheadUsageError(f"{self.nodeid}: runs={runs}: a stream row needs at least one stream")
        return (runs or self.stream_runs) if self.measuring else 1

    # --- recording ------------------------------------------------------------------------

    def record(self, label: str, result: Throughput, **budgets: Any) -> None:
        """Record a :class:`~overheadbench.http.load.Throughput` as row ``label`` (from
        :func:`load`, or from ``throughput()`` with any client)."""
        self._record(self._row(label), result, self._budgets(budgets, "record"))

    def _record(self, label: str, result: Throughput, limits: Limits) -> None:
        confidence = self.confidence
        if result.window_rates:
            value, low, high = mean_interval(result.window_rates, confidence)
            interval = f"{confidence:.0%} CI over {len(result.window_rates)} windows"
            self._add(
                Reading(label, Metric.RPS, result.requests_per_s, low, high, interval, result.window_rates), limits
            )
        else:
            rate = result.requests_per_s
            self._add(Reading(label, Metric.RPS, rate, rate, rate, ""), limits)
        if result.latency is not None and result.latency_ns:
            for metric, q in ((Metric.P50, 0.50), (Metric.P95, 0.95), (Metric.P99, 0.99)):
                value, low, high = quantile_interval(result.latency_ns, q, confidence)
                interval = f"{confidence:.0%} CI, order statistics of {result.requests:,} requests"
                self._add(Reading(label, metric, value / 1e9, low / 1e9, high / 1e9, interval), limits)
        for metric, value in (
            (Metric.CLIENT_CPU, result.client_cpu_s_per_request),
            (Metric.SERVER_CPU, result.server_cpu_s_per_request),
        ):
            self._add(Reading(label, metric, value, value, value, ""), limits)
        note = f"the first: {result.first_error}" if result.first_error else ""
        self._add(Reading(label, Metric.ERRORS, result.errors, result.errors, result.errors, "", note=note), limits)

    def _streams(self, label: str, runs: list[StreamStats], limits: Limits) -> StreamStats:
        interval = f"{self.confidence:.0%} CI of the median of {len(runs)} streams"
        for metric, values in (
            (Metric.TTFE, [run.first_event_s for run in runs]),
            (Metric.EVENTS_PER_S, [run.events_per_s for run in runs]),
            (Metric.TOTAL, [run.total_s for run in runs]),
        ):
            value, low, high = (
                median_interval(np.asarray(values), self.confidence) if len(values) > 1 else (values[0],) * 3
            )
            measured = tuple(v for v in values if math.isfinite(v))  # a stream with no event has no first one
            self._add(Reading(label, metric, value, low, high, interval if len(values) > 1 else "", measured), limits)
        middle = statistics.median(run.total_s for run in runs)
        return min(runs, key=lambda run: abs(run.total_s - middle))

    def _budgets(self, options: dict[str, Any], call: str) -> Limits:
        """Take this call's budget keywords out of ``options``; what is left must be options of
        the load (``load`` and ``sweep`` only), else the test fails naming the keyword."""
        where = f"{self.nodeid}: transport.{call}()"
        mine = {key: options.pop(key) for key in list(options) if key in KEYWORDS}
        passed_on = {"load": LOAD_OPTIONS, "sweep": LOAD_OPTIONS | {"verify"}}.get(call, set())
        unknown = sorted(set(options) - passed_on)
        if unknown:
            accepted = sorted(passed_on | set(KEYWORDS))
            raise OverheadUsageError(
                f"{where} got unknown keyword(s) {', '.join(unknown)}; it accepts {', '.join(accepted)}"
            )
        try:
            return parse_limits(mine, where)
        except MarkerError as exc:
            raise OverheadUsageError(str(exc)) from None

    def _add(self, reading: Reading, limits: Limits) -> None:
        self.readings.append((reading, limits))

    def _row(self, label: str) -> str:
        """``label``, or ``label (2)``... when an earlier call of the test took it (a load and a
        sweep's first level are both ``http1 c=1``): one row per call, never two merged."""
        row, count = label, 1
        while row in self._rows:
            count += 1
            row = f"{label} ({count})"
        self._rows.add(row)
        return row

    # --- judging --------------------------------------------------------------------------

    def judged(self) -> list[FigureResult]:
        """Every recorded figure against its limit: the call's, else the marker's (failed
        requests: at most ``DEFAULT_ERRORS`` unless a limit is given)."""
        results = []
        for reading, own in self.readings:
            limit = own.get(reading.metric, self.limits.get(reading.metric))
            if limit is None and reading.metric == Metric.ERRORS:
                limit = DEFAULT_ERRORS
            results.append(judge(self.nodeid, reading, limit, self.measuring))
        return results
