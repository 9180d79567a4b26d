"""The ``transport`` fixture: measure transport rows and record their figures for the verdict.

``transport.load(server, concurrency=100)`` runs the lean load generator
(:func:`overheadbench.http.loadrun.load`) and records the row's req/s, p50/p95/p99, client
and server CPU per request (each server's, when the test runs several) and failed requests;
``transport.sweep`` does that per level and adds the scaling figure; ``transport.stream`` /
``astream`` repeat a stream and record its time to first event, events/s and total;
``transport.record`` takes figures measured any other way (``throughput()`` with the user's
own client). ``transport.compare`` (lean load on two targets), ``acompare`` (two request
callables) and ``acompare_streams`` (two streams) measure a transport pair: both sides in one
session, their windows interleaved (:mod:`overheadbench.transport.pairing`), each figure as
the framework side's change over the baseline side's, and each side's own row. The rows are
its :class:`~overheadbench.transport.recording.RowRecorder`'s, judged when the test ends against
``@pytest.mark.transport(...)`` and each call's own budgets.

Without ``--overhead`` every call still runs (briefly, once) so a broken test fails, and
nothing is judged, as the ``overhead`` fixture does.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from ..core.errors import OverheadUsageError
from ..core.timeouts import progressed
from ..engine.checks import Status
from ..engine.contention import core_share
from ..engine.figure_intervals import ratio_interval
from ..engine.settings import Settings
from ..http.fixtures import running
from ..http.load import Throughput
from ..http.stream_stats import StreamSide, StreamStats
from .recording import PAIR_ROUNDS, PAIR_WINDOW_S, QUICK_PAIR_ROUNDS, SMOKE_DURATION_S

if TYPE_CHECKING:
    from ..http.loadrun import Target
    from ..http.server import Server
from .metrics import LOAD_FIGURES, SIDES, STREAM_FIGURES, FigureKey, Limits, Measure, Metric, side_row
from .pairing import SideFigures, compared, load_figures, schedule, stream_rounds, stream_sides
from .recording import QUICK_STREAM_RUNS, STREAM_RUNS, RowRecorder
from .results import FigureResult, Reading
from .stream_pairs import Rounds, StreamPlan, astreamed, openers_of, pair_limits, per_round, streamed
from .verdict import judge, judged
from .windows import window_lengths

REQUEST_OPTIONS = ("method", "path", "body", "headers")
"""What ``compare`` sends to a side given as a server (a :class:`~overheadbench.http.loadrun.Target` has its own)."""


class TransportFixture(RowRecorder):
    """Measures the test's transport rows into its :class:`~.recording.RowRecorder`; :meth:`judged`
    gives their verdicts."""

    def __init__(self, nodeid: str, limits: Limits, settings: Settings, measuring: bool, quick: bool) -> None:
        super().__init__(nodeid, limits, settings, measuring)
        self.duration_s = settings.time_budget_s if measuring else SMOKE_DURATION_S
        self.ceiling_s = settings.max_time_s
        """How long a stream pair may go on looking while a budget is undecided."""
        self.stream_runs = (QUICK_STREAM_RUNS if quick else STREAM_RUNS) if measuring else 1
        """Streams per stream row (:meth:`~.recording.RowRecorder.stream`)."""
        self.rounds = (QUICK_PAIR_ROUNDS if quick else PAIR_ROUNDS) if measuring else 1
        self.window_s = PAIR_WINDOW_S if measuring else SMOKE_DURATION_S
        self.rng = random.Random()
        self.probe: Callable[[], float] = core_share
        """How much of a core this process gets when the test is judged (an absolute wall-clock figure
        past its budget on a contended machine is inconclusive); a test of recorded, made-up rows pins it."""

    # --- measuring ------------------------------------------------------------------------

    def load(self, server: Server, *, concurrency: int = 1, label: str | None = None, **options: Any) -> Throughput:
        """One row of lean load (keywords: those of :func:`~overheadbench.http.loadrun.load`,
        and budgets for this row, e.g. ``rps=600, p95="50ms"``)."""
        from ..http.loadrun import load

        budgets = self._budgets(options, "load")
        options.setdefault("duration_s", self.duration_s)
        result = running(self.nodeid, "load", [server], lambda: load(server, concurrency=concurrency, **options))
        self._record(self._row(label or f"{server.protocol} c={concurrency}"), result, budgets)
        return result

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
        results = running(self.nodeid, "sweep", [server], lambda: concurrency_sweep(server, levels, **options))
        rows = [self._row(f"{name} c={level}") for level in levels]
        for row, result in zip(rows, results, strict=True):
            self._record(row, result, budgets)
        first, last = results[0], results[-1]
        value, low, high = ratio_interval(last.window_rates, first.window_rates, self.confidence)
        interval = f"{self.confidence:.0%} CI over {len(first.window_rates)} windows each"
        row = self._row(f"{name} c={levels[-1]}/c={levels[0]}")
        self._add(Reading(row, Metric.SCALING, value, low, high, interval), budgets)
        return results

    # --- transport pairs ------------------------------------------------------------------

    def compare(
        self,
        baseline: Server | Target,
        framework: Server | Target,
        *,
        concurrency: int = 1,
        label: str | None = None,
        rounds: int | None = None,
        **options: Any,
    ) -> tuple[Throughput, Throughput]:
        """A transport pair by the lean load: ``concurrency`` requests in flight against each side
        (a server, with this call's ``path``/``body``/``method``/``headers``, or a
        :class:`~overheadbench.http.loadrun.Target` with its own) in interleaved windows, from
        the same warm worker processes. Budgets: ``max={"p95": 0.25}``, ``max_abs={"p95": "1ms"}``,
        and absolute ones for both sides' rows. Returns each side's windows pooled."""
        from ..http.loadrun import Target, Workers

        limits = self._budgets(options, "compare")
        request = {key: options.pop(key) for key in REQUEST_OPTIONS if key in options}
        targets = [side if isinstance(side, Target) else Target(side, **request) for side in (baseline, framework)]
        window_s = options.pop("duration_s", None) or self.window_s
        name = self._row(label or f"{targets[1].label} vs {targets[0].label} c={concurrency}")
        windows: tuple[list[Throughput], list[Throughput]] = ([], [])

        def run() -> None:
            with Workers(targets, concurrency, window_s, **options) as workers:
                for length in window_lengths(self.nodeid, self.measuring, name, window_s, windows):
                    for side in schedule(self._rounds(rounds), self.rng):
                        windows[side].append(workers.window(side, length))
                        progressed()  # a window done: a replica says it is still working

        running(self.nodeid, "compare", [target.server for target in targets], run)
        return self._load_pair(name, windows, limits)

    async def acompare(
        self,
        baseline: Callable[[], Awaitable[Any]],
        framework: Callable[[], Awaitable[Any]],
        *,
        concurrency: int = 1,
        label: str = "framework vs baseline",
        rounds: int | None = None,
        **budgets: Any,
    ) -> tuple[Throughput, Throughput]:
        """A transport pair of two request callables (two clients: ``lambda: bare.get("/")``
        and ``lambda: stacked.get("/")``), by :func:`~overheadbench.http.recorder.throughput` in
        interleaved windows; the servers' CPU is every running server's together."""
        from ..http.loadrun import ServersCPU
        from ..http.recorder import throughput

        limits = self._budgets(budgets, "acompare")
        cpu = ServersCPU([])
        servers_cpu_s = (lambda: sum(cpu.read())) if cpu.servers else None  # no server: not known
        windows: tuple[list[Throughput], list[Throughput]] = ([], [])
        sends, row = (baseline, framework), self._row(label)
        for length in window_lengths(self.nodeid, self.measuring, row, self.window_s, windows):
            for side in schedule(self._rounds(rounds), self.rng):
                warm = 10 if not windows[side] else 0
                windows[side].append(
                    await throughput(
                        sends[side],
                        concurrency=concurrency,
                        duration_s=length,
                        warmup=warm,
                        server_cpu_s=servers_cpu_s,
                    )
                )
                progressed()
        return self._load_pair(row, windows, limits)

    async def acompare_streams(
        self,
        baseline: StreamSide,
        framework: StreamSide,
        *,
        label: str | None = None,
        rounds: int | None = None,
        concurrency: int = 1,
        **budgets: Any,
    ) -> tuple[list[StreamStats], list[StreamStats]]:
        """A transport pair of two streams, each ``(async httpx client, url)``, ``(client, url,
        {"method": "POST", "json": ...})`` or an SDK's stream (a callable, as :meth:`aevents`), in
        interleaved rounds until its budgets are decided (:mod:`.stream_pairs`); ``concurrency``
        streams of a side in flight at once. Time to first event, events/s and total (per stream)
        as changes, each side's stream row beside them. Returns each side's streams."""
        from ..http.streaming import stream_opener

        limits = self._budgets(budgets, "acompare_streams")
        openers = openers_of(self.nodeid, "acompare_streams", stream_opener, (baseline, framework))
        row, plan = self._stream_plan(label, rounds, concurrency, limits)
        count = per_round(concurrency, self.measuring)
        return self._stream_pair(row, plan, await astreamed(plan, openers, count, concurrency), limits)

    def compare_streams(
        self,
        baseline: StreamSide,
        framework: StreamSide,
        *,
        label: str | None = None,
        rounds: int | None = None,
        concurrency: int = 1,
        **budgets: Any,
    ) -> tuple[list[StreamStats], list[StreamStats]]:
        """:meth:`acompare_streams` with sync sides: ``(httpx.Client, url[, request])`` or a sync
        SDK's stream (a callable whose result iterates its events); ``concurrency`` at once, each in a thread."""
        from ..http.streaming import sync_stream_opener

        limits = self._budgets(budgets, "compare_streams")
        openers = openers_of(self.nodeid, "compare_streams", sync_stream_opener, (baseline, framework))
        row, plan = self._stream_plan(label, rounds, concurrency, limits)
        count = per_round(concurrency, self.measuring)
        return self._stream_pair(row, plan, streamed(plan, openers, count, concurrency), limits)

    def _stream_plan(
        self, label: str | None, rounds: int | None, concurrency: int, limits: Limits
    ) -> tuple[str, StreamPlan]:
        """A stream pair's row and its plan: its looks answer its budgets, as the test will judge them."""
        if concurrency < 1:
            raise OverheadUsageError(f"{self.nodeid}: concurrency={concurrency}: a stream pair needs at least 1")
        row = self._row(label or "framework vs baseline" + (f" c={concurrency}" if concurrency > 1 else ""))
        asked = pair_limits(limits, self.limits) if self.measuring else {}

        order, decided = partial(schedule, 1, self.rng), partial(self._decided, row, asked)
        plan = StreamPlan(
            self._rounds(rounds), bool(asked), self.ceiling_s, order, decided, row, partial(stream_rounds, row)
        )
        plan.warmup = self.measuring
        return row, plan

    def _decided(self, row: str, asked: Limits, streams: Rounds, confidence: float) -> bool:
        """Whether every budget of a stream pair reads pass or fail at this look, as the test will judge it."""
        baseline, framework = stream_sides(streams)
        for (metric, measure), limit in asked.items():
            reading = compared(row, metric, measure, baseline, framework, confidence)
            if judge(self.nodeid, reading, limit, confidence=confidence).verdict == Status.INCONCLUSIVE:
                return False
        return True

    def _stream_pair(
        self, row: str, plan: StreamPlan, streams: Rounds, limits: Limits
    ) -> tuple[list[StreamStats], list[StreamStats]]:
        """Record a stream pair: its figures' changes read at the looks' confidence, each side's row."""
        self._compared(row, STREAM_FIGURES, stream_sides(streams), limits, plan.confidence)
        self._keep_rounds(stream_rounds(row, streams))
        if len(plan.looks) > 1:
            self._looked([row, *(side_row(row, name) for name in SIDES)], plan.confidence)
        pooled = [[stream for r in side for stream in r] for side in streams]
        for name, side_streams in zip(SIDES, pooled, strict=True):
            self._streams(side_row(row, name), side_streams, limits)
        return pooled[0], pooled[1]

    def _rounds(self, rounds: int | None) -> int:
        """A pair's rounds: the call's (``rounds=24``: a narrower interval, twice the time), else
        ``PAIR_ROUNDS`` (6 quick); one, briefly, without ``--overhead``."""
        if rounds is not None and rounds < 2:
            raise OverheadUsageError(f"{self.nodeid}: rounds={rounds}: a transport pair needs two rounds or more")
        return (rounds or self.rounds) if self.measuring else 1

    def _load_pair(
        self, row: str, windows: tuple[list[Throughput], list[Throughput]], limits: Limits
    ) -> tuple[Throughput, Throughput]:
        """Record a load pair: its paired figures, then each side's own row (its windows pooled)."""
        pooled = Throughput.pooled(windows[0]), Throughput.pooled(windows[1])
        sides = [
            SideFigures([load_figures(w) for w in ws], load_figures(whole))
            for ws, whole in zip(windows, pooled, strict=True)
        ]
        self._compared(row, LOAD_FIGURES, sides, limits)
        for name, result in zip(SIDES, pooled, strict=True):
            self._record(side_row(row, name), result, limits)
        return pooled

    def _compared(
        self, row: str, metrics: Sequence[Metric], sides: list[SideFigures], limits: Limits, confidence: float = 0.0
    ) -> None:
        """Each figure's change (always) and added cost (where a ``max_abs`` budget asks for it), at
        ``confidence`` (the session's where not given)."""
        level = confidence or self.confidence
        for metric in metrics:
            self._add(compared(row, metric, Measure.CHANGE, sides[0], sides[1], level), limits)
            if (metric, Measure.ADDED) in limits or (metric, Measure.ADDED) in self.limits:
                self._add(compared(row, metric, Measure.ADDED, sides[0], sides[1], level), limits)

    def judged(self, session_sd: Callable[[FigureKey], float | None] | None = None) -> list[FigureResult]:
        """Every recorded figure against its limit (:func:`~.verdict.judged`), with how contended the
        machine is now; ``session_sd`` says how far a figure moves between sessions here."""
        share = self.probe() if self.measuring else None
        return judged(self.nodeid, self.readings, self.limits, self.measuring, self.confidence, share, session_sd)
