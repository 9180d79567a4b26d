"""The session's reporting plugin, registered in the user's session only (as pytest-xdist's
``TerminalDistReporter`` is): it gathers what the test reports carry (:class:`Gathered`, here and
from xdist workers), prints the summary, and writes the outputs: ``--overhead-json``,
``--overhead-md``, ``--overhead-html``, the job summary, the stored run, each explained pair's flame graph
(``--overhead-flame``), and this session's run inside pytest-benchmark's JSON.

Each measured kind puts its tests' data on their call reports, as extra attributes that pytest
serialises (:class:`~overheadbench.engine.outcome.KindHooks`). A test measured twice in one session
(pytest-rerunfailures re-running a failure) keeps its last measurement only, and is named, because
re-measuring until a verdict passes is optional stopping: the last attempt is not the whole story.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import pytest

from ..core.files import write_text_atomic
from ..core.jsonio import dumps, strict
from ..core.tables import TERMINAL_WIDTH, plain, said
from ..core.thresholds import Thresholds
from ..core.vocabulary import OVERHEAD, TRANSPORT
from ..core.xdist import WORKER_REPLICAS
from ..engine.outcome import PURPOSE_ATTRIBUTE
from ..engine.settings import Settings
from ..history.gate import StoredRuns
from ..history.stored import stored_history
from ..history.timeline import History
from ..pairs.explaining import flame_path
from ..pairs.marker import MARKER_NAME
from ..store.index import indexed_runs
from ..store.runs import Run
from .files.github import Failure, append_summary, in_actions, is_summary
from .files.markdown import render_markdown
from .files.outputs import Output, write_outputs
from .page.document import render_page
from .pair_changes import pair_shown
from .terminal.summary import SessionFacts, StoredComparison, session_summary
from .transport import figure_shown


@dataclass
class Gathered:
    """Everything measured in the session, from the reports (here or from xdist workers)."""

    measured: Run = field(default_factory=Run)
    """The session's pairs and transport figures (the rest of the run is filled in when it is written)."""
    failures: list[Failure] = field(default_factory=list)
    """Each failing measured test: GitHub annotations."""
    purposes: dict[str, str] = field(default_factory=dict)
    """Test function id (no parameters) -> what its budget is for."""
    remeasured: list[str] = field(default_factory=list)
    """Node ids measured more than once (the last measurement kept)."""

    @property
    def measured_anything(self) -> bool:
        return bool(self.measured.tests)

    def add(self, report: pytest.TestReport) -> None:
        carried = Run.carried(report) if report.when == "call" else None
        if carried is None:
            return
        self.remeasured += self.measured.take(carried)
        nodeid = carried.tests[0]
        text = getattr(report, PURPOSE_ATTRIBUTE, "")
        if text:
            self.purposes[nodeid.partition("[")[0]] = text
        if report.failed:
            path, line, _ = report.location
            kind = OVERHEAD if carried.results else TRANSPORT
            test = report.nodeid.split("::", 1)[-1]
            self.failures.append(Failure(path, (line or 0) + 1, report.longreprtext, kind, test))


class ReporterOptions(Protocol):
    """The options the reporter reads (:class:`~overheadbench.options.Options`)."""

    @property
    def settings(self) -> Settings: ...
    @property
    def measuring(self) -> bool: ...
    @property
    def quick(self) -> bool: ...
    @property
    def json_path(self) -> Path | None: ...
    @property
    def markdown_path(self) -> Path | None: ...
    @property
    def html_path(self) -> Path | None: ...
    @property
    def columns(self) -> tuple[str, ...]: ...
    @property
    def github(self) -> bool: ...
    @property
    def flame(self) -> Path | None: ...


class Gating(Protocol):
    """What the reporter reads of the gate's options (:class:`~overheadbench.gate_options.GateOptions`)."""

    @property
    def thresholds(self) -> Thresholds: ...
    @property
    def against(self) -> Any: ...
    @property
    def linking(self) -> bool: ...


class ReporterState(Protocol):
    """What the reporter reads of the session's state (:class:`~overheadbench.measurer.SessionState`)."""

    @property
    def marked(self) -> list[pytest.Item]: ...
    @property
    def stored(self) -> StoredRuns | None: ...

    def environment(self) -> dict[str, Any]: ...


class Reporter:
    """The reporting plugin: what the session measured, gathered, shown and written."""

    def __init__(
        self,
        config: pytest.Config,
        options: ReporterOptions,
        gate: Gating,
        state: ReporterState,
        started: Callable[[], int],
    ) -> None:
        self.config, self.options, self.gate, self.state = config, options, gate, state
        self.started = started
        """Replica processes this process started."""
        self.gathered = Gathered()
        self.workers_replicas = 0
        """Replica processes the xdist workers started (the controller starts none)."""
        self.written: list[str] = []
        """The output files written, and what each replaced (the summary names them)."""

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self._warn_environment(start=True)

    def _warn_environment(self, start: bool = False) -> None:
        """Say at the start and the end that the stored run came from elsewhere (and which were left out)."""
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if self.state.stored and reporter is not None:
            for warning in self.state.stored.warnings(start):
                for line in said(warning, TERMINAL_WIDTH).splitlines():
                    reporter.write_line(line, yellow=True, bold=True)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.gathered.add(report)  # measured pairs and figures, here or from xdist workers alike

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """An xdist worker is done: count the replicas it started (the summary's line)."""
        self.workers_replicas += int(getattr(node, "workeroutput", {}).get(WORKER_REPLICAS, 0))

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        options, gathered, stored = self.options, self.gathered, self.state.stored
        github = options.github and in_actions(os.environ)
        compared = stored and StoredComparison(
            stored.compared_name,
            [pair_shown(result.stored.change) for result in gathered.measured.results if result.stored],
            [figure_shown(figure, figure.stored.change) for figure in gathered.measured.figures if figure.stored],
            stored.saved,
            stored.thresholds,
            self._link(),
        )
        facts = SessionFacts(
            measuring=options.measuring,
            replicas_started=self.started() + self.workers_replicas,
            quick=options.quick,
            written=self.written,
            remeasured=gathered.remeasured,
            annotations=gathered.failures if github else (),
            against=self.gate.against.where() if self.gate.against else None,
            thresholds=self.gate.thresholds,
            target=options.settings.target_halfwidth,
            unmeasured=sum(item.get_closest_marker(MARKER_NAME) is not None for item in self.state.marked),
        )
        for section in session_summary(gathered.measured, compared or None, options.columns, facts):
            if section.title is not None:
                terminalreporter.write_sep("-", section.title)
            for line in section.lines:
                terminalreporter.write_line(line)
        if compared and compared.changes:
            self._warn_environment()

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
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
        stored, finished = self.state.stored, exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
        if stored and stored.save_as and self.gathered.measured_anything and finished:
            outputs.append(Output(f"the run to store as {stored.save_as!r}", lambda: stored.save(run())))
        if html_path := options.html_path:  # after the stored run: its history holds this session's run
            outputs.append(Output.file(html_path, lambda: render_page(run(), self._history())))
        return outputs + self._flames()

    def _history(self) -> History | None:
        """The history of this machine's stored runs on the checked-out branch, where the session
        stores or compares runs (the page's trends); None where it does not, or none is stored."""
        stored = self.state.stored
        if stored is None:
            return None
        history, _, _ = stored_history(indexed_runs(stored.storage), None, self.config.rootpath)
        return history if history.ordered else None

    def _flames(self) -> list[Output]:
        """Each explained pair's flame graph (``--overhead-flame``): an optional output (a file that
        cannot be written is a warning; the pair's result stands)."""
        folder = self.options.flame
        if folder is None:
            return []
        outputs = []
        for result in self.gathered.measured.results:
            if (explanation := result.explain) is not None:
                path = flame_path(str(folder), result.nodeid)
                outputs.append(Output(str(path), partial(write_text_atomic, path, explanation.folded()), optional=True))
        return outputs

    def _link(self) -> str:
        """What ``--overhead-link`` linked this run to: a first run has no stored ancestor to link to."""
        if not self.gate.linking:
            return ""
        base = self.gate.against
        if base is not None and base.revision:
            return f"linked to {base.revision[:12]}"
        return "unlinked: no stored run of this branch is an ancestor of HEAD; the next linked run links to it"

    def markdown(self) -> str:
        return render_markdown(self.run(), self.gathered.purposes)

    @pytest.hookimpl(optionalhook=True)
    def pytest_benchmark_update_json(self, config: Any, benchmarks: list[Any], output_json: dict[str, Any]) -> None:
        """pytest-benchmark's ``--benchmark-json`` file carries this session's pairs too."""
        output_json["overheadbench"] = strict(self.run().to_json())  # it writes with bare NaN allowed

    def run(self) -> Run:
        """This session as one run: what --overhead-json writes and a stored run holds."""
        measured = self.gathered.measured
        base = self.gate.against
        link = base.revision if base is not None and base.revision else ""
        return Run(
            self.state.environment(),
            self.options.settings,
            measured.results,
            measured.figures,
            self.gate.thresholds,
            link,
        )
