"""A transport test's rows: each call's figures recorded as readings with their budgets, and the
stream rows measured (a stream repeated, as the fixture's ``stream``, ``astream`` and ``aevents``).

The ``transport`` fixture (:mod:`overheadbench.transport.fixture`) measures; this is what it
records into and what the session reads when the test ends: a load's req/s (a confidence
interval over its windows), latency quantiles (order statistics), CPU per request and failed
requests; a stream row's time to first event, events/s and total; a row name per call, never
two merged; and each call's budget keywords, told apart from the load's own options.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core.errors import MarkerError, OverheadUsageError
from ..engine.figure_intervals import mean_interval, quantile_interval
from ..engine.process_ratio import median_interval
from ..engine.settings import Settings
from ..http.load import Throughput
from ..http.stream_stats import REQUEST_KEYS, StreamStats
from .limits import parse_limits
from .metrics import BY_SERVER, KEYWORDS, PAIR_KEYWORDS, QUANTILES, Limits, Metric, RoundValues
from .results import Reading

STREAM_RUNS = 21
"""Streams per stream row (fewer in the quick profile): its median's interval needs at least 6."""
QUICK_STREAM_RUNS = 7
LOAD_OPTIONS = {"duration_s", "method", "path", "body", "processes", "warmup", "headers"}
"""What ``load`` and ``sweep`` pass on to :func:`~overheadbench.http.loadrun.load` (and ``sweep`` its ``verify``)."""
SMOKE_DURATION_S = 0.05
"""A row's load, or a pair's window, without ``--overhead``: once, briefly, so a broken test fails."""
PAIR_ROUNDS = 12
"""Rounds of a transport pair: one window of each side per round."""
QUICK_PAIR_ROUNDS = 6
PAIR_WINDOW_S = 0.25
"""A pair's load window: long enough for a p95 of its own at a few hundred req/s."""


class RowRecorder:
    """The test's transport rows and their budgets (the fixture judges them when the test ends)."""

    def __init__(self, nodeid: str, limits: Limits, settings: Settings, measuring: bool) -> None:
        self.nodeid = nodeid
        self.limits = limits
        """The marker's budgets (a call's own come with each reading)."""
        self.confidence = settings.confidence
        self.measuring = measuring
        self.readings: list[tuple[Reading, Limits]] = []
        self._rows: set[str] = set()
        self.stream_runs = STREAM_RUNS if measuring else 1
        """Streams per stream row (the quick profile's fixture takes fewer)."""
        self.paired: list[RoundValues] = []
        """The pairs' rounds as other places compare them: every pair's k-th together (:func:`.pairing.pair_rounds`)."""
        self.levels: dict[str, float] = {}
        """The confidence of each row read at looks (a stream pair's and its sides')."""

    def record(self, label: str, result: Throughput, **budgets: Any) -> None:
        """Record a :class:`~overheadbench.http.load.Throughput` as row ``label`` (from
        :func:`load`, or from ``throughput()`` with any client)."""
        self._record(self._row(label), result, self._budgets(budgets, "record"))

    def stream(
        self, client: Any, url: str, *, label: str | None = None, runs: int | None = None, **options: Any
    ) -> StreamStats:
        """Stream ``url`` ``runs`` times (default ``STREAM_RUNS``; 7 in the quick profile) with a
        sync httpx client (``method``, ``headers``, ``json`` or ``content`` as the API wants them);
        returns the median stream."""
        from ..http.streaming import stream

        limits = self._budgets(options, "stream")
        streams = [stream(client, url, **options) for _ in range(self._runs(runs))]
        return self._streams(self._row(label or f"stream {url}"), streams, limits)

    async def astream(
        self, client: Any, url: str, *, label: str | None = None, runs: int | None = None, **options: Any
    ) -> StreamStats:
        """:meth:`stream` with an async httpx client."""
        from ..http.streaming import astream

        limits = self._budgets(options, "astream")
        streams = [await astream(client, url, **options) for _ in range(self._runs(runs))]
        return self._streams(self._row(label or f"stream {url}"), streams, limits)

    async def aevents(
        self, source: Callable[[], Any], *, label: str = "events", runs: int | None = None, **budgets: Any
    ) -> StreamStats:
        """An SDK's stream as a row: ``source()`` starts it (an async iterator of events, or an
        awaitable of one), ``runs`` times; each event timed as the iterator yields it."""
        from ..http.streaming import aevents

        limits = self._budgets(budgets, "aevents")
        return self._streams(self._row(label), [await aevents(source) for _ in range(self._runs(runs))], limits)

    def _runs(self, runs: int | None) -> int:
        if runs is not None and runs < 1:
            raise OverheadUsageError(f"{self.nodeid}: runs={runs}: a stream row needs at least one stream")
        return (runs or self.stream_runs) if self.measuring else 1

    def _record(self, label: str, result: Throughput, limits: Limits) -> None:
        confidence = self.confidence
        if result.window_rates:
            value, low, high = mean_interval(result.window_rates, confidence)
            rate = result.requests_per_s  # per slot: the windows' slices read low for long requests
            scale = rate / value if value > 0 and math.isfinite(rate) else 1.0  # their relative spread kept
            interval = f"{confidence:.0%} CI over {len(result.window_rates)} windows"
            rates = result.window_rates
            rps = Reading(label, Metric.RPS, rate, low * scale, high * scale, interval, rates, note=result.shortfall)
        else:
            rate = result.requests_per_s
            rps = Reading(label, Metric.RPS, rate, rate, rate, "", note=result.shortfall)
        self._add(rps, limits)
        if result.latency is not None and result.latency_ns:
            for metric, q in QUANTILES.items():
                value, low, high = quantile_interval(result.latency_ns, q, confidence)
                interval = f"{confidence:.0%} CI, order statistics of {result.requests:,} requests"
                self._add(Reading(label, metric, value / 1e9, low / 1e9, high / 1e9, interval), limits)
        for metric, value in (
            (Metric.CLIENT_CPU, result.client_cpu_s_per_request),
            (Metric.SERVER_CPU, result.server_cpu_s_per_request),
        ):
            self._add(Reading(label, metric, value, value, value, ""), limits)
        for server, value in result.server_cpu_by_server:
            self._add(Reading(f"{label}{BY_SERVER}{server}", Metric.SERVER_CPU, value, value, value, ""), limits)
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
        mine = {key: options.pop(key) for key in list(options) if key in KEYWORDS or key in PAIR_KEYWORDS}
        passed_on = {
            "load": LOAD_OPTIONS,
            "sweep": LOAD_OPTIONS | {"verify"},
            "compare": LOAD_OPTIONS,
            "stream": set(REQUEST_KEYS),
            "astream": set(REQUEST_KEYS),
        }.get(call, set())
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

    def _keep_rounds(self, rounds: list[RoundValues]) -> None:
        """Keep a pair's rounds for the other places' (round k beside every other pair's k-th)."""
        for index, values in enumerate(rounds):
            if index == len(self.paired):
                self.paired.append([])
            self.paired[index] += values

    def _looked(self, rows: Sequence[str], confidence: float) -> None:
        """These rows (a pair's and its sides') were read at looks, at ``confidence``."""
        self.levels.update(dict.fromkeys(rows, confidence))

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
