"""What the session's test reports carry back: measured pairs, judged transport figures, the
failures to annotate, and what each test's budget is for.

Workers (xdist) and this process alike put a measured test's data on its call report, as
extra attributes that pytest serialises; the user's session gathers them here. A test
measured twice in one session (pytest-rerunfailures re-running a failure) keeps its last
measurement only, and is named, because re-measuring until a verdict passes is optional
stopping: the last attempt is not the whole story.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from ..engine.kind import PURPOSE_ATTRIBUTE
from ..pairs.results import OVERHEAD, REPORT_ATTRIBUTE as RESULT_ATTRIBUTE, OverheadResult
from ..transport.results import REPORT_ATTRIBUTE as FIGURES_ATTRIBUTE, FigureResult

TRANSPORT = "transport"


@dataclass(frozen=True)
class Failure:
    """A failing measured test: its file, line (1-based), message, and kind (a pair's
    ``overhead`` or a ``transport`` test's figures), which the annotation's title names."""

    path: str
    line: int
    message: str
    kind: str = OVERHEAD
    test: str = ""
    """The test's name within its file, parameters included (``test_x[c=64-retry]``): the
    parametrized cases of one function share its line, and only this tells their annotations apart."""


@dataclass
class Gathered:
    """Everything measured in the session, from the reports (here or from xdist workers)."""

    results: list[OverheadResult] = field(default_factory=list)
    figures: list[FigureResult] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    """Each failing measured test: GitHub annotations."""
    purposes: dict[str, str] = field(default_factory=dict)
    """Test function id (no parameters) -> what its budget is for."""
    remeasured: list[str] = field(default_factory=list)
    """Node ids measured more than once (the last measurement kept)."""

    @property
    def measured_anything(self) -> bool:
        return bool(self.results or self.figures)

    def add(self, report: pytest.TestReport) -> None:
        data: dict[str, Any] | None = getattr(report, RESULT_ATTRIBUTE, None)
        figures: list[dict[str, Any]] = getattr(report, FIGURES_ATTRIBUTE, None) or []
        if report.when != "call" or not (data or figures):
            return
        nodeid = OverheadResult.from_json(data).nodeid if data else FigureResult.from_json(figures[0]).nodeid
        if any(r.nodeid == nodeid for r in self.results) or any(f.nodeid == nodeid for f in self.figures):
            self.remeasured.append(nodeid)
            self.results = [r for r in self.results if r.nodeid != nodeid]
            self.figures = [f for f in self.figures if f.nodeid != nodeid]
        if data:
            self.results.append(OverheadResult.from_json(data))
        self.figures += [FigureResult.from_json(figure) for figure in figures]
        text = getattr(report, PURPOSE_ATTRIBUTE, "")
        if text:
            self.purposes[nodeid.partition("[")[0]] = text
        if report.failed:
            path, line, _ = report.location
            kind = TRANSPORT if figures and not data else OVERHEAD
            test = report.nodeid.split("::", 1)[-1]
            self.failures.append(Failure(path, (line or 0) + 1, report.longreprtext, kind, test))
