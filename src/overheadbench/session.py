"""The session: what one pytest session holds for overheadbench (its options, its places and
replicas, its stored runs, what it gathered) and its hooks, with each measured kind
(:mod:`overheadbench.pair_tests`, :mod:`overheadbench.transport_tests`) found by its marker.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Generator
from functools import partial
from typing import Any, Protocol, cast

import pytest

from .core.errors import OverheadUsageError, StorageError
from .core.jsonio import dumps, strict
from .core.tables import plain
from .core.timeouts import PairTimeout
from .core.xdist import group_timed_tests, original_nodeid, remember_nodeids
from .engine.changes import Gate, Looks
from .engine.harness import Harness
from .engine.sampling import Replication
from .engine.settings import Counter, Settings
from .engine.timed_path import AppLogging
from .gate_options import GateOptions
from .history.environment import environment
from .history.gate import StoredRuns
from .history.runs import Run
from .options import Options
from .pair_tests import FIXTURE_NAME, RESULT_KEY, PairTests
from .pairs.fixture import OverheadFixture
from .pairs.marker import MARKER_NAME
from .pairs.pair import Pair
from .pairs.strategy import strategy_for
from .replicas.failures import ReplicaError, WrongTree
from .replicas.places import Places, Where, places, under_callgrind
from .replicas.pool import ReplicaPool
from .replicas.relaunch import Invocation
from .replicas.replica import ReplicaPlugin
from .report.gathering import Gathered, carry
from .report.github import append_summary, in_actions, is_summary
from .report.markdown import render_markdown
from .report.outputs import Output, write_outputs
from .report.summary import StoredComparison, session_summary
from .transport.across import PLACE_ROUNDS, QUICK_PLACE_ROUNDS
from .transport.fixture import TransportFixture
from .transport.limits import MARKER_NAME as TRANSPORT_MARKER
from .transport.metrics import Limits
from .transport_tests import FIGURES_KEY, FIXTURE_NAME as TRANSPORT_FIXTURE_NAME, TransportTests, transported

WORKER_REPLICAS = "overheadbench_replicas"


class MeasuredKind(Protocol):
    """A kind of measured test (:class:`~overheadbench.pair_tests.PairTests`,
    :class:`~overheadbench.transport_tests.TransportTests`): it judges each test once it ran."""

    def apply(self, item: pytest.Item, stored: StoredRuns | None) -> None: ...


def times_anything(item: pytest.Item) -> bool:
    """An overhead pair or a transport test (marked, or using the fixture): under xdist these
    run on one worker, one at a time, so no load or pair disturbs another's timing."""
    return item.get_closest_marker(MARKER_NAME) is not None or transported(item)


class OverheadSession:
    """Session state: resolved options, where pairs get their samples (the replica pool, or
    in a replica the controller), and every measured pair, for the table and JSON."""

    def __init__(
        self, config: pytest.Config, options: Options, gate: GateOptions, replica: ReplicaPlugin | None = None
    ) -> None:
        self.config = config
        self.options, self.gate = options, gate
        self.settings = options.settings
        self.gathered = Gathered()
        self.marked: list[pytest.Item] = []
        # --overhead-against's base tree, or each --overhead-env; and those a plugin adds
        self.places: list[Where] = [*places(gate.against, gate.envs), *gate.added]
        self.replicas = Places(self._make_pool, self.places)
        valgrind = self.settings.counter is Counter.CALLGRIND and replica is None  # count mode counts in replicas
        self.counting = self.replicas.under(under_callgrind) if valgrind else None
        self.replication: Replication = replica if replica is not None else self.replicas
        self.app_logging = AppLogging()
        pair_gate = Gate(gate.reference, gate.thresholds.pairs, gate.unknown) if self.places else None
        harness = Harness()

        def make_pair(pair: Pair, looks: Looks | None) -> OverheadFixture:
            counting, elsewhere = self.counting, bool(self.places)
            choose = partial(
                strategy_for,
                elsewhere=counting.count if counting else None,
                places=(counting or self.replicas).count_places if elsewhere else None,
            )
            past = self.stored.history if self.stored else ()
            return OverheadFixture(
                pair,
                self.settings,
                options.measuring,
                choose,
                self.replication,
                self.app_logging,
                harness,
                looks=looks,
                past=past,
            )

        counted_elsewhere = bool(self.places or self.counting)
        self.pairs = PairTests(make_pair, self.settings, counted_elsewhere, pair_gate)
        self.harness = harness
        rounds_at = self.replicas if self.places else None
        self.transport = self._transport(options, replica, rounds_at, Gate(gate.reference, gate.thresholds.transport))
        self.kinds: dict[str, MeasuredKind] = {TRANSPORT_MARKER: self.transport, MARKER_NAME: self.pairs}
        """Each measured kind by its marker: each test is judged by every kind, in this order."""
        self._environment: dict[str, Any] | None = None
        self.stored: StoredRuns | None = None
        self.workers_replicas = 0
        """Replica processes the xdist workers started (the controller starts none)."""
        self.written: list[str] = []
        """The output files written, and what each replaced (the summary names them)."""
        self.reporting = replica is None and not hasattr(config, "workerinput")
        """Only the user's session (the xdist controller) gathers and writes; replicas and workers measure."""

    @staticmethod
    def _transport(
        options: Options, replica: ReplicaPlugin | None, rounds_at: Places | None, gate: Gate
    ) -> TransportTests:
        """The session's transport tests: their fixture (the quick profile's where asked), and, with
        other places (``rounds_at``), their rounds there and their figures' gate (an unknown change
        shown, not warned: a figure has many, each with a wide interval)."""

        def make(nodeid: str, limits: Limits, settings: Settings, measuring: bool) -> TransportFixture:
            return TransportFixture(nodeid, limits, settings, measuring, options.quick)

        figure_gate = dataclasses.replace(gate, unknown=None) if rounds_at is not None else None
        rounds = QUICK_PLACE_ROUNDS if options.quick else PLACE_ROUNDS
        return TransportTests(make, options.settings, options.measuring, replica, rounds_at, figure_gate, rounds)

    @property
    def started(self) -> int:
        """Replica processes this process started (counting ones included)."""
        return self.replicas.started + (self.counting.started if self.counting else 0)

    def environment(self) -> dict[str, Any]:
        if self._environment is None:
            self._environment = environment(self.config)
        return self._environment

    def pytest_report_header(self) -> str | None:
        if self.options.implied_by:
            return f"overheadbench: measuring (--overhead implied by {self.options.implied_by})"
        return None

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        gate = self.gate
        if not gate.uses_storage or self.replication.in_replica:
            return
        try:
            self.stored = StoredRuns.from_options(gate, self.environment())
        except StorageError as exc:
            raise pytest.UsageError(f"overheadbench: {plain(str(exc))}") from None
        self._warn_environment(start=True)

    def _warn_environment(self, start: bool = False) -> None:
        """Say at the start and the end that the stored run came from elsewhere (and which were left out)."""
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if self.stored and reporter is not None:
            for warning in self.stored.warnings(start):
                reporter.write_line(plain(warning), yellow=True, bold=True)

    @pytest.hookimpl(wrapper=True)
    def pytest_collection(self) -> Generator[None, object, object]:
        """Import the tests with the root logger as the code under test leaves it (AppLogging),
        noting the import finders and warning filters around them (Harness)."""
        with self.app_logging.importing(self.options.measuring), self.harness.importing():
            return (yield)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        remember_nodeids(items)

    @pytest.hookimpl(trylast=True, specname="pytest_collection_modifyitems")
    def pytest_collection_modifyitems_last(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """Remember the marked tests, in their final order (replicas re-run them in it)."""
        elsewhere = {item.nodeid for item in items if self.places and transported(item)}
        self.marked = [
            item for item in items if item.get_closest_marker(MARKER_NAME) is not None or item.nodeid in elsewhere
        ]
        self.pairs.marked = self.marked
        if self.options.measuring:
            group_timed_tests(config, [item for item in items if times_anything(item)])

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.gathered.add(report)  # measured pairs and figures, here or from xdist workers alike

    def _make_pool(self) -> ReplicaPool:
        """The session's replica processes, for the timed tests measured in more than one process."""
        nodeids = tuple(
            original_nodeid(item) for item in self.marked if self.pairs.replicated(item) or transported(item)
        )
        return ReplicaPool(Invocation.of(self.config), nodeids, self.settings.replica_timeout_s)

    @pytest.fixture(name=FIXTURE_NAME)
    def overhead_fixture(self, request: pytest.FixtureRequest, overhead_concurrency: int | None) -> OverheadFixture:
        """Measure a baseline-versus-framework pair: ``overhead.compare(baseline=..., framework=...)``."""
        return cast(OverheadFixture, self.pairs.fixture(request))

    @pytest.fixture(name=TRANSPORT_FIXTURE_NAME)
    def transport_fixture(self, request: pytest.FixtureRequest) -> TransportFixture:
        """Measure transport rows (``transport.load``, ``sweep``, ``stream``) and judge their
        figures against ``@pytest.mark.transport(...)`` and each call's own budgets."""
        return cast(TransportFixture, self.transport.fixture(request))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        try:
            result = yield
            for kind in self.kinds.values():
                kind.apply(item, self.stored)
        except WrongTree as exc:
            pytest.exit(f"overheadbench: {plain(str(exc))}", returncode=pytest.ExitCode.USAGE_ERROR)
        except (OverheadUsageError, ReplicaError, PairTimeout) as exc:
            raise pytest.fail.Exception(plain(str(exc), lines=True), pytrace=False) from None  # it says it all
        return result

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if call.when == "call":
            carry(report, item, item.stash.get(RESULT_KEY, None), item.stash.get(FIGURES_KEY, None))
        return report

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.reporting:
            return
        github = self.options.github and in_actions(os.environ)
        stored, gathered = self.stored, self.gathered
        compared = stored and StoredComparison(
            stored.compared_name,
            [result.stored.change for result in gathered.results if result.stored],
            [(figure, figure.stored.change) for figure in gathered.figures if figure.stored],
            stored.saved,
            stored.thresholds,
        )
        for section in session_summary(
            self.gathered.results,
            self.gathered.figures,
            compared or None,
            self.options.columns,
            measuring=self.options.measuring,
            replicas_started=self.started + self.workers_replicas,
            quick=self.options.quick,
            written=self.written,
            remeasured=self.gathered.remeasured,
            annotations=self.gathered.failures if github else (),
            against=self.gate.against.where() if self.gate.against else None,
            thresholds=self.gate.thresholds,
            target=self.settings.target_halfwidth,
            unmeasured=sum(item.get_closest_marker(MARKER_NAME) is not None for item in self.marked),
        ):
            if section.title is not None:
                terminalreporter.write_sep("-", section.title)
            for line in section.lines:
                terminalreporter.write_line(line)
        if compared and compared.changes:
            self._warn_environment()

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """An xdist worker is done: count the replicas it started (the summary's line)."""
        self.workers_replicas += int(getattr(node, "workeroutput", {}).get(WORKER_REPLICAS, 0))

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        for pools in (self.replicas, self.counting or self.replicas):  # closing twice is safe
            pools.close()
        for place in self.places:
            place.close()
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:
            workeroutput[WORKER_REPLICAS] = self.started  # to the controller's pytest_testnodedown
        if not self.reporting:
            return
        interrupted, passed = exitstatus == pytest.ExitCode.INTERRUPTED, exitstatus == pytest.ExitCode.OK
        done = write_outputs(self._outputs(exitstatus), interrupted, passed)
        self.written += done.files
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        for problem in done.problems:
            if reporter is not None:
                reporter.write_line(f"overheadbench: {plain(problem)}", red=True, bold=True)
        for warning in done.warnings:
            if reporter is not None:
                reporter.write_line(f"overheadbench: warning: {plain(warning)}", yellow=True)
        if done.problems and exitstatus != pytest.ExitCode.INTERRUPTED:
            session.exitstatus = pytest.ExitCode.USAGE_ERROR

    def _outputs(self, exitstatus: int) -> list[Output]:
        """The outputs this session was asked for (the stored run only from a session that finished)."""
        options, run = self.options, self.run
        outputs = []
        if json_path := options.json_path:
            outputs.append(Output.file(json_path, lambda: dumps(run().to_json()) + "\n"))
        summary = os.environ.get("GITHUB_STEP_SUMMARY", "the job summary")
        named = options.markdown_path is not None and is_summary(options.markdown_path, os.environ)
        if (markdown_path := options.markdown_path) and not named:
            outputs.append(Output.file(markdown_path, self.markdown))
        if named or (options.github and in_actions(os.environ) and self.gathered.measured_anything):
            appended = Output(summary, lambda: append_summary(os.environ, self.markdown()), optional=not named)
            outputs.append(appended)
        stored, finished = self.stored, exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
        if stored and stored.save_as and self.gathered.measured_anything and finished:
            outputs.append(Output(f"the run to store as {stored.save_as!r}", lambda: stored.save(run())))
        return outputs

    def markdown(self) -> str:
        gathered = self.gathered
        return render_markdown(
            gathered.results, self.environment(), gathered.figures, gathered.purposes, self.gate.thresholds
        )

    @pytest.hookimpl(optionalhook=True)
    def pytest_benchmark_update_json(self, config: Any, benchmarks: list[Any], output_json: dict[str, Any]) -> None:
        """pytest-benchmark's ``--benchmark-json`` file carries this session's pairs too."""
        output_json["overheadbench"] = strict(self.run().to_json())  # it writes with bare NaN allowed

    def run(self) -> Run:
        """This session as one run: what --overhead-json writes and a stored run holds."""
        return Run(
            self.environment(), self.settings, self.gathered.results, self.gathered.figures, self.gate.thresholds
        )
