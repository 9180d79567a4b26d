"""pytest hooks, kept thin: options, the marker, the ``overhead`` fixture, verdicts, reports."""

from __future__ import annotations

import dataclasses
import warnings
from typing import Generator

import pytest

from .fixture import OverheadFixture, OverheadUsageError
from .jsonio import write_json_atomic
from .marker import MARKER_HELP, MARKER_NAME, Budget, MarkerError, budget_from_marker
from .options import Settings, add_options, settings_from_config
from .replicas import Launch, ReplicaError, needed_plugins, pending_request, plugin_args
from .report import render_table
from .results import JSON_SCHEMA_VERSION, OverheadResult
from .verdict import FAIL, INCONCLUSIVE

FIXTURE_NAME = "overhead"


class OverheadInconclusiveWarning(UserWarning):
    """An inconclusive verdict, reported as a warning because overhead_inconclusive=warn."""


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)
    config.pluginmanager.register(OverheadSession(config), "overheadbench-session")


class OverheadSession:
    """Session state: resolved settings and every measured pair, for the table and JSON."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.settings: Settings = settings_from_config(config)
        self.measuring: bool = config.getoption("--overhead")
        self.results: list[OverheadResult] = []
        self.launch = Launch(
            rootdir=config.rootpath,
            inifile=config.inipath,
            plugin_args=plugin_args(config.invocation_params.args),
        )

    def launch_for(self, item: pytest.Item) -> Launch:
        """How a replica process re-runs ``item``."""
        if self.settings.replica_plugins == "all":
            return self.launch
        return dataclasses.replace(self.launch, plugins=needed_plugins(item))

    def budget_for(self, item: pytest.Item) -> Budget | None:
        mark = item.get_closest_marker(MARKER_NAME)
        if mark is None:
            return None
        try:
            return budget_from_marker(mark.args, mark.kwargs, item.nodeid)
        except MarkerError as exc:
            pytest.fail(str(exc), pytrace=False)

    @pytest.fixture(name=FIXTURE_NAME)
    def overhead_fixture(self, request: pytest.FixtureRequest) -> OverheadFixture:
        """Measure a baseline-versus-framework pair: ``overhead.compare(baseline=..., framework=...)``."""
        item = request.node
        budget = self.budget_for(item)
        if budget is None:
            pytest.fail(f"{item.nodeid}: the overhead fixture needs a budget: add "
                        f"@pytest.mark.overhead(max=0.25) (or max_abs='2us') to the test", pytrace=False)
        worker = pending_request(item.nodeid)
        settings = worker.settings if worker else self.settings
        return OverheadFixture(item.nodeid, budget, settings, self.measuring, self.launch_for(item), worker)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        budget = self.budget_for(item)
        try:
            outcome = yield
        except (OverheadUsageError, ReplicaError) as exc:
            pytest.fail(str(exc), pytrace=False)
        if budget is None:
            return outcome
        fixture = getattr(item, "funcargs", {}).get(FIXTURE_NAME)
        if fixture is None or fixture.result is None:
            pytest.fail(f"{item.nodeid}: marked @pytest.mark.overhead but never called "
                        f"overhead.compare(baseline, framework)", pytrace=False)
        self._judge(fixture.result)
        return outcome

    def _judge(self, result: OverheadResult) -> None:
        if not result.measured:
            return
        self.results.append(result)
        if result.verdict == FAIL:
            pytest.fail(result.message, pytrace=False)
        if result.verdict == INCONCLUSIVE:
            if self.settings.inconclusive == "fail":
                pytest.fail(f"inconclusive: {result.message}", pytrace=False)
            warnings.warn(OverheadInconclusiveWarning(f"{result.nodeid}: inconclusive: {result.message}"))

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.results:
            if self.measuring:
                terminalreporter.write_sep("-", "overhead: no pair was measured")
            return
        terminalreporter.write_sep("-", "overhead: framework vs baseline")
        for line in render_table(self.results):
            terminalreporter.write_line(line)
        path = self.config.getoption("--overhead-json")
        if path:
            terminalreporter.write_line(f"overhead results written to {path}")

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        path = self.config.getoption("--overhead-json")
        if path:
            write_json_atomic(path, {
                "schema_version": JSON_SCHEMA_VERSION,
                "settings": self.settings.to_json(),
                "results": [result.to_json() for result in self.results],
            })
