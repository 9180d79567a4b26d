"""pytest hooks, kept thin: options, the marker, the ``overhead`` fixture, verdicts, reports."""

from __future__ import annotations

import warnings
from collections.abc import Generator

import pytest

from . import distribution
from .baselines import Baselines
from .environment import environment
from .fixture import OverheadFixture, OverheadUsageError, Replication
from .http.fixtures import asgi_server  # noqa: F401  (registered as a fixture by this plugin module)
from .jsonio import write_json_atomic, write_text_atomic
from .marker import COUNT, MARKER_HELP, MARKER_NAME, Budget, MarkerError, budget_from_marker
from .options import Settings, add_options, settings_from_config
from .replicas.pool import ReplicaError, ReplicaPool, Replicas
from .replicas.relaunch import Invocation
from .replicas.replica import ReplicaPlugin, ReplicaRequest
from .report import render_comparison, render_markdown, render_table
from .results import JSON_SCHEMA_VERSION, OverheadResult
from .storage import Storage, StorageError
from .timeouts import PairTimeout
from .verdict import FAIL, INCONCLUSIVE

FIXTURE_NAME = "overhead"
REPORT_ATTRIBUTE = "overheadbench"
"""The test report attribute carrying its measured pair: pytest serialises extra report
attributes, so xdist brings them from workers to the controller (unlike ``user_properties``,
it stays out of JUnit XML)."""
RESULT_KEY = pytest.StashKey[dict]()


def group_for(item: pytest.Item) -> str | None:
    """The report group: the overhead marker's ``group``, else pytest-benchmark's."""
    for name in (MARKER_NAME, "benchmark"):
        mark = item.get_closest_marker(name)
        if mark is not None and mark.kwargs.get("group"):
            return str(mark.kwargs["group"])
    return None


class OverheadInconclusiveWarning(UserWarning):
    """An inconclusive verdict, reported as a warning because overhead_inconclusive=warn."""


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    """Register the session's plugin, and in a replica process the replica's plugin too."""
    config.addinivalue_line("markers", MARKER_HELP)
    request = ReplicaRequest.from_env()
    replica = ReplicaPlugin(config, request) if request is not None else None
    if replica is not None:
        config.pluginmanager.register(replica, "overheadbench-replica")
    elif config.getoption("--overhead") and config.pluginmanager.hasplugin("xdist"):
        if distribution.is_controller(config):
            distribution.prepare_controller(config)
        config.pluginmanager.register(distribution.XdistGrouping(), "overheadbench-xdist")
    config.pluginmanager.register(OverheadSession(config, replica), "overheadbench-session")


class OverheadSession:
    """Session state: resolved settings, where pairs get their samples (the replica pool, or
    in a replica the controller), and every measured pair, for the table and JSON."""

    def __init__(self, config: pytest.Config, replica: ReplicaPlugin | None = None) -> None:
        self.config = config
        self.settings: Settings = settings_from_config(config)
        self.measuring: bool = config.getoption("--overhead")
        self.results: list[OverheadResult] = []
        self.marked: list[pytest.Item] = []
        self.replicas = Replicas(self._make_pool)
        self.replication: Replication = replica if replica is not None else self.replicas
        self._environment: dict | None = None
        self.baselines: Baselines | None = None
        self.reporting = replica is None and not hasattr(config, "workerinput")
        """Only the user's session (the xdist controller, under xdist) gathers the results and
        writes every output; replicas and xdist workers only measure."""

    def environment(self) -> dict:
        if self._environment is None:
            self._environment = environment(self.config)
        return self._environment

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        option = self.config.getoption
        wanted = (
            option("--overhead-save")
            or option("--overhead-autosave")
            or option("--overhead-compare") is not None
            or option("--overhead-compare-fail") is not None
        )
        if not wanted or self.replication.in_replica:
            return
        folder = option("--overhead-storage") or self.config.getini("overhead_storage") or "baselines"
        try:
            self.baselines = Baselines.from_options(
                Storage(self.config.rootpath / folder),
                self.environment(),
                option("--overhead-save"),
                option("--overhead-autosave"),
                option("--overhead-compare"),
                option("--overhead-compare-fail"),
            )
        except StorageError as exc:
            raise pytest.UsageError(f"overheadbench: {exc}") from None
        self._warn_environment()

    def _warn_environment(self) -> None:
        """Say at the start and again at the end that the stored run came from elsewhere."""
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if self.baselines and self.baselines.environment_differences and reporter is not None:
            reporter.write_line(
                f"WARNING: overhead compared with {self.baselines.compare_with.name}, measured in "
                f"another environment: {'; '.join(self.baselines.environment_differences)}",
                yellow=True,
                bold=True,
            )

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        distribution.remember_nodeids(items)

    @pytest.hookimpl(trylast=True, specname="pytest_collection_modifyitems")
    def pytest_collection_modifyitems_last(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """Remember the marked tests, in their final order (replicas re-run them in it)."""
        self.marked = [item for item in items if item.get_closest_marker(MARKER_NAME) is not None]
        if self.measuring:
            distribution.group_overhead_tests(config, self.marked)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Gather measured pairs from the reports (here or from xdist workers alike)."""
        data = getattr(report, REPORT_ATTRIBUTE, None)
        if report.when == "call" and data:
            self.results.append(OverheadResult.from_json(data))

    def _make_pool(self) -> ReplicaPool:
        """The session's replica processes, for the timed tests measured in more than one process."""
        nodeids = tuple(distribution.original_nodeid(item) for item in self.marked if self._replicated(item))
        return ReplicaPool(Invocation.of(self.config), nodeids, self.settings.replica_timeout_s)

    def _replicated(self, item: pytest.Item) -> bool:
        try:
            budget = self.budget_for(item)
        except pytest.fail.Exception:
            return False
        return (
            budget is not None
            and (budget.mode or self.settings.mode) != COUNT
            and (budget.processes or self.settings.processes) > 1
        )

    def budget_for(self, item: pytest.Item) -> Budget | None:
        mark = item.get_closest_marker(MARKER_NAME)
        if mark is None:
            return None
        try:
            return budget_from_marker(mark.args, mark.kwargs, item.nodeid)
        except MarkerError as exc:
            raise pytest.fail.Exception(str(exc), pytrace=False) from None

    @pytest.fixture(name=FIXTURE_NAME)
    def overhead_fixture(self, request: pytest.FixtureRequest) -> OverheadFixture:
        """Measure a baseline-versus-framework pair: ``overhead.compare(baseline=..., framework=...)``."""
        item = request.node
        budget = self.budget_for(item)
        if budget is None:
            pytest.fail(
                f"{item.nodeid}: the overhead fixture needs a budget: add "
                f"@pytest.mark.overhead(max=0.25) (or max_abs='2us') to the test",
                pytrace=False,
            )
        return OverheadFixture(
            distribution.original_nodeid(item),
            budget,
            self.settings,
            self.measuring,
            self.replication,
            group=group_for(item),
        )

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        budget = self.budget_for(item)
        try:
            outcome = yield
        except (OverheadUsageError, ReplicaError, PairTimeout) as exc:
            raise pytest.fail.Exception(str(exc), pytrace=False) from None  # the message says it all
        if budget is None:
            return outcome
        fixture = getattr(item, "funcargs", {}).get(FIXTURE_NAME)
        if fixture is None or fixture.result is None:
            pytest.fail(
                f"{item.nodeid}: marked @pytest.mark.overhead but never called overhead.compare(baseline, framework)",
                pytrace=False,
            )
        self._judge(item, fixture.result)
        return outcome

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if call.when == "call" and RESULT_KEY in item.stash:
            setattr(report, REPORT_ATTRIBUTE, item.stash[RESULT_KEY])
        return report

    def _judge(self, item: pytest.Item, result: OverheadResult) -> None:
        if not result.measured:
            return
        data = result.to_json()
        item.stash[RESULT_KEY] = data  # travels on the call's report (also from xdist workers)
        regression = self.baselines.regression(data) if self.baselines else None
        if result.verdict == FAIL:
            pytest.fail(result.message + (f"\n{regression}" if regression else ""), pytrace=False)
        if regression:
            pytest.fail(regression, pytrace=False)
        if result.verdict == INCONCLUSIVE:
            if self.settings.inconclusive == "fail":
                pytest.fail(f"inconclusive: {result.message}", pytrace=False)
            warnings.warn(OverheadInconclusiveWarning(f"{result.nodeid}: inconclusive: {result.message}"))

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.reporting:
            return
        if not self.results:
            if self.measuring:
                terminalreporter.write_sep("-", "overhead: no pair was measured")
            return
        terminalreporter.write_sep("-", "overhead: framework vs baseline")
        for line in render_table(self.results):
            terminalreporter.write_line(line)
        if self.replicas.started:
            terminalreporter.write_line(f"replica processes started in this session: {self.replicas.started}")
        if self.config.getoption("--overhead-quick"):
            terminalreporter.write_line(
                "quick profile (--overhead-quick): fewer processes and less time per pair, so "
                "intervals are wider; inconclusive verdicts warn instead of failing"
            )
        for option in ("--overhead-json", "--overhead-md"):
            if self.config.getoption(option):
                terminalreporter.write_line(f"overhead results written to {self.config.getoption(option)}")
        changes = self.baselines.changes([r.to_json() for r in self.results]) if self.baselines else []
        if changes:
            terminalreporter.write_sep("-", f"overhead: compared with {self.baselines.compare_with.name}")
            for line in render_comparison(changes, self.baselines.compare_with.name):
                terminalreporter.write_line(line)
            self._warn_environment()
        if self.baselines and self.baselines.saved:
            terminalreporter.write_line(f"overhead run saved to {self.baselines.saved}")

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.replicas.close()
        if not self.reporting:
            return
        path = self.config.getoption("--overhead-json")
        if path:
            write_json_atomic(path, self.run_document())
        markdown = self.config.getoption("--overhead-md")
        if markdown:
            write_text_atomic(markdown, render_markdown(self.results, self.environment()))
        finished = exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
        if self.baselines and self.results and finished:
            self.baselines.save(self.run_document())

    @pytest.hookimpl(optionalhook=True)
    def pytest_benchmark_update_json(self, config: pytest.Config, benchmarks: list, output_json: dict) -> None:
        """pytest-benchmark's ``--benchmark-json`` file carries this session's pairs too."""
        output_json["overheadbench"] = self.run_document()

    def run_document(self) -> dict:
        """This session as one JSON document: what --overhead-json writes and a stored run holds."""
        return {
            "schema_version": JSON_SCHEMA_VERSION,
            "environment": self.environment(),
            "settings": self.settings.to_json(),
            "results": [result.to_json() for result in self.results],
        }
