"""pytest hooks, kept thin: options, the marker, the ``overhead`` fixture, verdicts, reports."""

from __future__ import annotations

import warnings
from typing import Generator

import pytest

from .baselines import Baselines
from .environment import environment
from .fixture import OverheadFixture, OverheadUsageError
from .http.fixtures import asgi_server  # noqa: F401  (registered as a fixture by this plugin module)
from .jsonio import write_json_atomic, write_text_atomic
from .marker import COUNT, MARKER_HELP, MARKER_NAME, Budget, MarkerError, budget_from_marker
from .options import Settings, add_options, settings_from_config
from .replicas import (ControllerGone, Launch, ReplicaError, ReplicaPool, WorkerChannel, WorkerRequest,
                       needed_plugins, order_like, plugin_args)
from .report import render_comparison, render_markdown, render_table
from .storage import Storage, StorageError
from .results import JSON_SCHEMA_VERSION, OverheadResult
from .verdict import FAIL, INCONCLUSIVE

FIXTURE_NAME = "overhead"
REPORT_ATTRIBUTE = "overheadbench"
"""The test report attribute carrying its measured pair: pytest serialises extra report
attributes, so xdist brings them from workers to the controller (unlike ``user_properties``,
it stays out of JUnit XML)."""
RESULT_KEY = pytest.StashKey[dict]()
XDIST_GROUP = "overheadbench"


def group_for(item: pytest.Item) -> str | None:
    """The report group: the overhead marker's ``group``, else pytest-benchmark's."""
    for name in (MARKER_NAME, "benchmark"):
        mark = item.get_closest_marker(name)
        if mark is not None and mark.kwargs.get("group"):
            return str(mark.kwargs["group"])
    return None


def _mode_of(item: pytest.Item, settings: Settings) -> str:
    """The test's mode: its marker's ``mode``, else the session's (replicas only re-run timed tests)."""
    mark = item.get_closest_marker(MARKER_NAME)
    return (mark.kwargs.get("mode") if mark is not None else None) or settings.mode


class OverheadInconclusiveWarning(UserWarning):
    """An inconclusive verdict, reported as a warning because overhead_inconclusive=warn."""


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)
    config.pluginmanager.register(OverheadSession(config), "overheadbench-session")


class OverheadSession:
    """Session state: resolved settings, the replica pool (or, in a replica, the channel to
    the controller) and every measured pair, for the table and JSON."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        request = WorkerRequest.from_env()
        self.worker: WorkerChannel | None = WorkerChannel(request) if request else None
        self.settings: Settings = request.settings if request else settings_from_config(config)
        self.measuring: bool = config.getoption("--overhead")
        self.results: list[OverheadResult] = []
        self.marked: list[pytest.Item] = []
        self._pool: ReplicaPool | None = None
        self._environment: dict | None = None
        self.baselines: Baselines | None = None
        self.xdist_worker = hasattr(config, "workerinput")
        """In an xdist worker the controller gathers the results and writes every output."""

    def environment(self) -> dict:
        if self._environment is None:
            self._environment = environment(self.config)
        return self._environment

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self._warn_xdist()
        option = self.config.getoption
        wanted = option("--overhead-save") or option("--overhead-autosave") or option("--overhead-compare") is not None \
            or option("--overhead-compare-fail") is not None
        if not wanted or self.worker is not None:
            return
        folder = option("--overhead-storage") or self.config.getini("overhead_storage") or "baselines"
        try:
            self.baselines = Baselines.from_options(
                Storage(self.config.rootpath / folder), self.environment(), option("--overhead-save"),
                option("--overhead-autosave"), option("--overhead-compare"), option("--overhead-compare-fail"))
        except StorageError as exc:
            raise pytest.UsageError(f"overheadbench: {exc}") from None
        self._warn_environment()

    def _warn_xdist(self) -> None:
        """Under xdist, overhead tests belong on one worker (``--dist loadgroup``); say so when not."""
        options = self.config.option
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if self.measuring and getattr(options, "numprocesses", None) and getattr(options, "dist", "no") != "loadgroup" \
                and reporter is not None and not self.xdist_worker:
            reporter.write_line("WARNING: overheadbench under pytest-xdist without --dist loadgroup: overhead tests may "
                                "be measured on several workers at once, disturbing each other; add --dist loadgroup "
                                "(they are grouped onto one worker) or run them without -n", yellow=True, bold=True)

    def _warn_environment(self) -> None:
        """Say at the start and again at the end that the stored run came from elsewhere."""
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if self.baselines and self.baselines.environment_differences and reporter is not None:
            reporter.write_line(f"WARNING: overhead compared with {self.baselines.compare_with.name}, measured in "
                                f"another environment: {'; '.join(self.baselines.environment_differences)}",
                                yellow=True, bold=True)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """Remember the marked tests (replicas run them); in a replica, run only those, in order."""
        if self.worker is not None:
            kept, rest = order_like(items, self.worker.request.nodeids)
            if rest:
                config.hook.pytest_deselected(items=rest)
            items[:] = kept
        self.marked = [item for item in items if item.get_closest_marker(MARKER_NAME) is not None]
        if config.pluginmanager.hasplugin("xdist"):
            for item in self.marked:  # one worker measures them all, one at a time (with --dist loadgroup)
                item.add_marker(pytest.mark.xdist_group(XDIST_GROUP))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Gather measured pairs from the reports (here or from xdist workers alike); in a replica,
        print a failure at once: the controller quotes the replica's output."""
        data = getattr(report, REPORT_ATTRIBUTE, None)
        if report.when == "call" and data:
            self.results.append(OverheadResult.from_json(data))
        if self.worker is not None and report.failed:
            reporter = self.config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:
                reporter.write_line(f"{report.nodeid} failed in {report.when}:\n{report.longreprtext}")

    def pool(self) -> ReplicaPool:
        """The session's replica processes, started on the first pair that needs them."""
        if self._pool is None:
            plugins = None if self.settings.replica_plugins == "all" else needed_plugins(self.marked)
            launch = Launch(rootdir=self.config.rootpath, inifile=self.config.inipath,
                            plugin_args=plugin_args(self.config.invocation_params.args), plugins=plugins)
            timed = [item for item in self.marked if _mode_of(item, self.settings) != COUNT]
            self._pool = ReplicaPool(launch, tuple(item.nodeid for item in timed), self.settings)
        return self._pool

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
            pytest.fail(f"{item.nodeid}: the overhead fixture needs a budget: add "
                        f"@pytest.mark.overhead(max=0.25) (or max_abs='2us') to the test", pytrace=False)
        return OverheadFixture(item.nodeid, budget, self.settings, self.measuring, self.pool, self.worker,
                               group=group_for(item))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        budget = self.budget_for(item)
        try:
            outcome = yield
        except (OverheadUsageError, ReplicaError) as exc:
            raise pytest.fail.Exception(str(exc), pytrace=False) from None  # the message says it all
        except ControllerGone as exc:
            pytest.exit(str(exc), returncode=0)
        if budget is None:
            return outcome
        fixture = getattr(item, "funcargs", {}).get(FIXTURE_NAME)
        if fixture is None or fixture.result is None:
            pytest.fail(f"{item.nodeid}: marked @pytest.mark.overhead but never called "
                        f"overhead.compare(baseline, framework)", pytrace=False)
        self._judge(item, fixture.result)
        return outcome

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
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
        if self.xdist_worker:
            return
        if not self.results:
            if self.measuring:
                terminalreporter.write_sep("-", "overhead: no pair was measured")
            return
        terminalreporter.write_sep("-", "overhead: framework vs baseline")
        for line in render_table(self.results):
            terminalreporter.write_line(line)
        if self.config.getoption("--overhead-quick"):
            terminalreporter.write_line("quick profile (--overhead-quick): fewer processes and less time per pair, so "
                                        "intervals are wider; inconclusive verdicts warn instead of failing")
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
        if self._pool is not None:
            self._pool.close()
        if self.xdist_worker:
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
