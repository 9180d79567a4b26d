"""The ``overhead`` fixture's object: ``compare`` (sync tests) and ``acompare`` (async tests).

It checks how it is used, makes the first calls and runs each stage's plan with the right
driver; what measures the pair, on which plan, and how the samples become a result is its
strategy's (:mod:`overheadbench.pairs.strategy`, chosen once per pair); it measures nothing itself.
"""

from __future__ import annotations

import contextlib
import inspect
import random
import time
import warnings
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
import sniffio

from ..core import event_loop
from ..core.errors import OverheadChangeWarning, OverheadUsageError
from ..core.timeouts import time_limit
from ..core.units import format_seconds
from ..core.vocabulary import Side
from ..engine.harness import Harness
from ..engine.samples import Kind
from ..engine.sampling import InProcess, Replication, blame, drive_async, drive_sync
from ..engine.settings import Settings
from ..engine.timed_path import AppLogging, loop_out_of_debug, timing_conditions
from ..instruments import Stage
from ..instruments.walltime import empty_async, empty_sync
from .comparing import Compared, between_sessions
from .explaining import Explainer
from .measuring import MeasuredPair, Strategy
from .pair import Pair
from .results import OverheadResult
from .usage import sides_kind, warn_unlike, with_callers


@dataclass(frozen=True)
class FixtureParts:
    """What every ``overhead`` fixture of one session shares, built once by the session's assembly
    (:func:`overheadbench.session.pair_kind`); a test's fixture is these with its own pair."""

    settings: Settings
    measuring: bool
    choose: Callable[[MeasuredPair], Strategy]
    replication: Replication
    app_logging: AppLogging
    harness: Harness
    explainer: Explainer

    def fixture(self, pair: Pair, past: Sequence[Compared]) -> OverheadFixture:
        """The fixture of one test: its ``pair`` and this machine's stored results (``past``)."""
        return OverheadFixture(
            pair,
            self.settings,
            self.measuring,
            self.choose,
            self.replication,
            self.app_logging,
            self.harness,
            past=past,
            explainer=self.explainer,
        )


class OverheadFixture:
    """Measures one baseline-versus-framework pair per test.

    ``clock_ns`` (default ``time.perf_counter_ns``) is the only clock used for timing and
    for the time budget; a test may replace it before calling ``compare`` to drive the
    whole machinery with synthetic costs. ``choose`` makes the pair's measuring strategy
    (:func:`overheadbench.pairs.strategy.strategy_for`, given the session's counting elsewhere):
    the session injects it, so the fixture stands below the strategies it drives.
    ``replication`` says where the time samples come from (default: this process only; or every
    place of the session).
    """

    def __init__(
        self,
        pair: Pair,
        settings: Settings,
        measuring: bool,
        choose: Callable[[MeasuredPair], Strategy],
        replication: Replication | None = None,
        app_logging: AppLogging | None = None,
        harness: Harness | None = None,
        clock_ns: Callable[[], int] = time.perf_counter_ns,
        rng: random.Random | None = None,
        past: Sequence[Compared] = (),
        explainer: Explainer | None = None,
    ) -> None:
        self.pair = pair
        self.past = past
        """This machine's stored results (read where the session uses storage): the pair's spread between sessions."""
        self.choose = choose
        self.explainer = explainer or Explainer()
        """Whether and how the pair is explained once measured (built once for the session)."""
        self.session = settings
        """The session's settings: the pair's own choices are the pair's (:attr:`settings`)."""
        self.replication: Replication = replication or InProcess()
        self.app_logging = app_logging or AppLogging()
        """The root logger's level as the code under test set it (see :mod:`overheadbench.engine.timed_path`)."""
        self.harness = harness or Harness()
        """pytest's import finders and warning filters, taken out while timing (:mod:`overheadbench.engine.harness`)."""
        self.measuring = measuring or self.replication.in_replica
        self.clock_ns = clock_ns
        self.rng = rng or random.Random()
        self.result: OverheadResult | None = None
        self._unexplained = ""
        """Why a change was not explained (a replica failed profiling it), warned once the pair is measured."""
        self._called = False
        self._slowest_call_s = 0.0

    @property
    def nodeid(self) -> str:
        return self.pair.nodeid

    @property
    def settings(self) -> Settings:
        """What the engine and the replicas read: the session's settings with the pair's own
        choices (mode, confidence, processes, callers), derived, never kept beside the pair."""
        return self.pair.applied_to(self.session)

    def compare(
        self, baseline: Callable[[], Any], framework: Callable[[], Any], concurrency: int | None = None
    ) -> OverheadResult:
        """Measure ``framework`` against ``baseline`` (zero-argument callables, both sync or both
        async), with ``concurrency`` callers of each at once (threads, or tasks of the loop)."""
        __tracebackhide__ = True
        kind = self._begin(baseline, framework, concurrency)
        with self._time_limit():
            if kind == Kind.ASYNC:
                if _loop_running():
                    raise OverheadUsageError(
                        f"{self.nodeid}: compare() was called inside a running event loop; "
                        f"in an async test use `await overhead.acompare(baseline, framework)`"
                    )
                return event_loop.run(
                    self._measure_async, baseline, framework, backend=self.settings.backend, what=self.nodeid
                )
            return self._measure_sync(baseline, framework)

    async def acompare(
        self, baseline: Callable[[], Any], framework: Callable[[], Any], concurrency: int | None = None
    ) -> OverheadResult:
        """Like :meth:`compare`, measured inside the test's own running event loop."""
        __tracebackhide__ = True
        kind = self._begin(baseline, framework, concurrency)
        with self._time_limit():
            if kind == Kind.ASYNC:
                return await self._measure_async(baseline, framework)
            return self._measure_sync(baseline, framework)

    def _time_limit(self) -> contextlib.AbstractContextManager[None]:
        """The pair's time limit in the user's session, replicas included (they are ended when it
        strikes while they owe an answer); a replica does not set its own."""
        if not self.measuring or self.replication.in_replica:
            return contextlib.nullcontext()
        limit_s = self.settings.pair_timeout_s

        def message(waiting: str | None) -> str:
            still = (
                f"{self.nodeid}: the pair made no progress for {limit_s:g} s (overhead_pair_timeout, a limit on "
                f"silence: no block timed, no replica's message, no profile's block)"
            )
            if waiting is not None:  # it hung there, not here: this process's first calls returned
                return (
                    f"{still}: {waiting} and never answered; it was ended. Does a callable (or a fixture) hang "
                    f"only in replicas (overheadbench.in_replica())? Raise --overhead-pair-timeout if one block of "
                    f"the pair really takes that long"
                )
            slow = (
                f"the slowest first call took {format_seconds(self._slowest_call_s)}"
                if self._slowest_call_s
                else "a first call never returned"
            )
            return (
                f"{still}: does the baseline or the framework callable hang, here or only while profiled? ({slow}.) "
                f"Raise --overhead-pair-timeout if one block of the pair really takes that long"
            )

        return time_limit(limit_s, message)

    def _begin(self, baseline: Any, framework: Any, concurrency: int | None = None) -> Kind:
        if self._called:
            raise OverheadUsageError(f"{self.nodeid}: overhead.compare() was called twice; measure one pair per test")
        self._called = True
        if concurrency is not None:
            self.pair = with_callers(self.pair, concurrency)
        return sides_kind(self.nodeid, baseline, framework)

    def _measure_sync(self, baseline: Callable[[], Any], framework: Callable[[], Any]) -> OverheadResult:
        started = time.perf_counter()
        values = []
        for side, fn in ((Side.BASELINE, baseline), (Side.FRAMEWORK, framework)):
            with blame(side), self._first_call():
                value = fn()
            if inspect.isawaitable(value):
                getattr(value, "close", lambda: None)()
                raise OverheadUsageError(
                    f"{self.nodeid}: the {side} callable returned an awaitable; pass an `async def` "
                    f"function instead (e.g. `async def {side}(): return await agent.process(msg)`)"
                )
            values.append(value)
        warn_unlike(self.nodeid, *values)
        if not self.measuring:
            return self._record(OverheadResult(self.pair, Kind.SYNC))
        strategy = self._strategy()
        with timing_conditions(self.settings, self.app_logging, self.harness, self.nodeid), closing(strategy):
            for stage in self._stages(Kind.SYNC, baseline, framework, strategy, started):
                stage.keep(drive_sync(stage.plan, stage.blocks))
        return self._record()

    async def _measure_async(
        self, baseline: Callable[[], Awaitable[Any]], framework: Callable[[], Awaitable[Any]]
    ) -> OverheadResult:
        started = time.perf_counter()
        values = []
        for side, fn in ((Side.BASELINE, baseline), (Side.FRAMEWORK, framework)):
            with blame(side), self._first_call():
                values.append(await fn())
        warn_unlike(self.nodeid, *values)
        if not self.measuring:
            return self._record(OverheadResult(self.pair, Kind.ASYNC))
        strategy = self._strategy()
        conditions = timing_conditions(self.settings, self.app_logging, self.harness, self.nodeid)
        with conditions, loop_out_of_debug(), closing(strategy):
            for stage in self._stages(Kind.ASYNC, baseline, framework, strategy, started):
                stage.keep(await drive_async(stage.plan, stage.blocks))
        return self._record()

    @contextmanager
    def _first_call(self) -> Iterator[None]:
        """Time a first call (real clock): slow callables get fewer calls per counted block."""
        started = time.perf_counter()
        yield
        self._slowest_call_s = max(self._slowest_call_s, time.perf_counter() - started)

    def _strategy(self) -> Strategy:
        """The pair's strategy, chosen once its callers are known (see :mod:`.strategy`)."""
        pair = self.pair
        between = between_sessions(self.past, pair.nodeid, pair.mode, pair.concurrency) if self.past else None
        run = MeasuredPair(pair, self.settings, self.replication, self.clock_ns, self.rng, between)
        return self.choose(run)

    def _stages(self, kind: Kind, baseline: Any, framework: Any, strategy: Strategy, started: float) -> Iterator[Stage]:
        """The pair's stages: its strategy's, then the explainer's when it explains the pair
        (:mod:`.explaining`). A replica sends what it measured and ends the test; or, asked for the
        pair's profiles, profiles it instead and sends them."""
        empty = empty_sync if kind == Kind.SYNC else empty_async
        sides = ((Side.BASELINE, baseline), (Side.FRAMEWORK, framework), (Side.HARNESS, empty))
        yield from strategy.stages(kind, sides, self._slowest_call_s)
        if self.replication.in_replica:
            strategy.deliver()
        else:
            self.result = strategy.result(kind, time.perf_counter() - started)
        explaining = self.explainer.stage(
            self.nodeid, self.result, strategy.profiler, kind, (baseline, framework), self._explained
        )
        if explaining is not None:
            yield explaining
        if self.replication.in_replica:
            pytest.skip("overheadbench replica process: samples sent to the controller")

    def _explained(self, result: OverheadResult, why_not: str) -> None:
        """The result explained; why a change could not be (a replica failed profiling it), warned
        once the pair is measured (warnings are not recorded while it is)."""
        self.result, self._unexplained = result, why_not

    def _record(self, result: OverheadResult | None = None) -> OverheadResult:
        """The test's result: given, or the one the stages made."""
        self.result = result = result or self.result
        assert result is not None
        if self._unexplained:
            warnings.warn(OverheadChangeWarning(self._unexplained), stacklevel=3)
        return result


def _loop_running() -> bool:
    """Whether an async library's loop runs in this thread (then ``anyio.run`` cannot)."""
    try:
        sniffio.current_async_library()
    except sniffio.AsyncLibraryNotFoundError:
        return False
    return True
