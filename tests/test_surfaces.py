"""One run, every surface a reader sees (issue 71): the terminal's tables, the markdown report, the pull
request's comment and the page each show every pair's outcome and interval and every change's, read back
here from the text each surface wrote and held against the run itself. A surface that says "pass" where
another says "same", or an interval that is not the run's, fails the test.

The run holds a pair of each shape a suite brings: pass, fail, inconclusive, not judged, regressed, same,
unknown and improved against a base tree, a change against a stored run, a faster framework path, a
factor-sized overhead, count mode's exact counts, and transport figures over and within their budgets.
A history of three series (a pair's step up, a req/s's step down, a latency's step down) is read back
from ``overheadbench history``'s lines, its JSON and the page's trends.
"""

from __future__ import annotations

import dataclasses
import math
import random
import re
from html.parser import HTMLParser

import pytest
from helpers import GOLDEN_RUN

from overheadbench.core.units import format_overhead
from overheadbench.core.vocabulary import Role
from overheadbench.engine.changes import Change, StoredChange
from overheadbench.engine.checks import Overall, Status
from overheadbench.engine.combining import Method
from overheadbench.engine.findings import Finding
from overheadbench.engine.readings import Reading as SeriesReading, RunRow
from overheadbench.engine.settings import Mode
from overheadbench.history.timeline import History, read_history
from overheadbench.pairs.results import OverheadResult, PlaceResult
from overheadbench.report.files.markdown import MARKDOWN_STATUS, render_markdown
from overheadbench.report.history import history_document, render_history
from overheadbench.report.page.document import OUTCOME_WORDS, render_page
from overheadbench.report.page.svg import anchor
from overheadbench.report.pairs import STATUS_MARKS
from overheadbench.report.terminal.summary import place_tables, render_table
from overheadbench.report.transport import render_figures
from overheadbench.store.runs import Run, read_run
from overheadbench.transport.metrics import SPECS, Metric
from overheadbench.transport.results import Reading
from overheadbench.transport.verdict import judge

GATE = 5.0
NUMBER = r"[-+]?[\d,]+(?:\.\d+)?"


def _run() -> Run:
    golden = read_run(GOLDEN_RUN)
    template = golden.results[0]

    def pair(name: str, overhead: float, ci: tuple[float, float], status: Status, overall: Overall, **more: object):
        nodeid = f"tests/test_shapes.py::{name}"
        budget = dataclasses.replace(template.pair.budget, max_overhead=more.pop("budget", 0.25))
        made = dataclasses.replace(template.pair, nodeid=nodeid, budget=budget)
        failed = overall in (Overall.FAIL, Overall.REGRESSED, Overall.INCONCLUSIVE)
        return dataclasses.replace(
            template, pair=made, ratio=1 + overhead, ci=ci, verdict=status, outcome=overall, failed=failed, **more
        )

    def against(name: str, base: float, head: float, se: float) -> list[PlaceResult]:
        other = dataclasses.replace(template, ratio=1 + base, ci=(base - 0.01, base + 0.01))
        change = Change(f"tests/test_shapes.py::{name}", 1 + base, 1 + head, se=se)
        return [PlaceResult("main", Role.BASE, other, change)]

    counted = dataclasses.replace(template.pair, nodeid="tests/test_shapes.py::test_counted", mode=Mode.COUNT)
    results = [
        pair("test_pass", 0.12, (0.11, 0.132), Status.PASS, Overall.PASS),
        pair("test_fail", 0.40, (0.35, 0.45), Status.FAIL, Overall.FAIL),
        pair("test_inconclusive", 0.24, (0.20, 0.29), Status.INCONCLUSIVE, Overall.INCONCLUSIVE),
        pair("test_unjudged", 0.30, (0.28, 0.32), Status.UNJUDGED, Overall.UNJUDGED, budget=None),
        pair(
            "test_regressed",
            0.20,
            (0.19, 0.212),
            Status.PASS,
            Overall.REGRESSED,
            places=against("test_regressed", 0.10, 0.20, 0.01),
        ),
        pair(
            "test_same", 0.101, (0.09, 0.11), Status.PASS, Overall.PASS, places=against("test_same", 0.10, 0.101, 0.005)
        ),
        pair(
            "test_unknown",
            0.10,
            (0.09, 0.11),
            Status.PASS,
            Overall.UNKNOWN,
            places=against("test_unknown", 0.05, 0.10, 0.04),
        ),
        pair(
            "test_improved",
            0.05,
            (0.04, 0.06),
            Status.PASS,
            Overall.PASS,
            places=against("test_improved", 0.20, 0.05, 0.01),
        ),
        pair(
            "test_stored",
            0.15,
            (0.14, 0.16),
            Status.PASS,
            Overall.REGRESSED,
            stored=StoredChange("0007_main.json", Change("tests/test_shapes.py::test_stored", 1.05, 1.15, se=0.01)),
        ),
        pair("test_faster", -0.10, (-0.12, -0.08), Status.PASS, Overall.PASS),
        pair("test_factor", 2.0, (1.9, 2.1), Status.PASS, Overall.PASS, budget=4.0),
        dataclasses.replace(
            template,
            pair=counted,
            ratio=1.25,
            ci=(0.25, 0.25),
            method=Method.COUNTED,
            verdict=Status.PASS,
            outcome=Overall.PASS,
        ),
    ]
    figures = [
        judge(
            "tests/test_shapes.py::test_gateway",
            Reading("h2c c=10", Metric.P95, 0.004, 0.0038, 0.0043, "95% CI"),
            0.002,
        ),
        judge(
            "tests/test_shapes.py::test_gateway", Reading("h2c c=10", Metric.RPS, 900.0, 880.0, 920.0, "95% CI"), 500.0
        ),
    ]
    return dataclasses.replace(
        golden, results=results, figures=figures, gate=dataclasses.replace(golden.gate, pairs=GATE)
    )


RUN = _run()
SHAPES = [result.nodeid for result in RUN.results]
CHANGED = {
    result.nodeid: change
    for result in RUN.results
    for change in [*(p.change for p in result.places if p.change), *([result.stored.change] if result.stored else [])]
}


def _numbers(text: str) -> list[float]:
    return [float(found.replace(",", "")) for found in re.findall(NUMBER, text)]


def _overhead_cell(result: OverheadResult) -> tuple[float, ...]:
    """What a surface's overhead cell must read: the overhead and its interval, in the cell's unit."""
    low, high = result.ci
    if result.method == Method.COUNTED:
        return (100 * result.overhead,)
    return tuple(100 * value for value in (result.overhead, low, high))


def _close(read: list[float], expected: tuple[float, ...], what: str) -> None:
    assert len(read) >= len(expected), what
    for got, want in zip(read, expected, strict=False):
        assert got == pytest.approx(want, abs=0.051 + 0.0005 * abs(want)), what


class _Rows(HTMLParser):
    """Each table row of the page with an id: its class and its cells' text."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.rows: dict[str, tuple[str, list[str]]] = {}
        self._row: str | None = None
        self._depth = 0
        super().feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "tr" and found.get("id"):
            self._row = found["id"]
            self.rows[self._row] = (found.get("class") or "", [])
        elif self._row and tag in ("td", "th"):
            self.rows[self._row][1].append("")
        elif tag == "svg":
            self._depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "tr":
            self._row = None
        elif tag == "svg":
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._row and self._depth == 0 and self.rows[self._row][1]:
            self.rows[self._row][1][-1] += data


def _markdown_rows(text: str, column: str) -> list[tuple[str, dict[str, str]]]:
    """Each markdown table row naming a test, as {header: cell}, from the tables that have ``column``."""
    found: list[tuple[str, dict[str, str]]] = []
    header: list[str] = []
    for line in text.splitlines():
        if not line.startswith("|"):
            header = []
            continue
        cells = [cell.strip() for cell in line.strip("|").split(" | ")]
        if not header:
            header = cells
        elif column in header and cells[0].startswith("`"):
            found.append((cells[0].strip("`"), dict(zip(header, cells, strict=False))))
    return found


def _terminal_rows(lines: list[str], names: list[str]) -> dict[str, str]:
    """The line of each test in a terminal table (named by what follows its file's heading)."""
    rows = {}
    for nodeid in names:
        short = nodeid.rpartition("/")[2].partition("::")[2] or nodeid
        matching = [line for line in lines if line.strip().startswith(f"{short} ")]
        if matching:
            rows[nodeid] = matching[0]
    return rows


MARKDOWN_OUTCOMES = {word: outcome for outcome, word in MARKDOWN_STATUS.items()}
TERMINAL_OUTCOMES = {word: outcome for outcome, word in STATUS_MARKS.items()}
PAGE_OUTCOMES = {word: outcome for outcome, word in OUTCOME_WORDS.items()}


@pytest.mark.parametrize("nodeid", SHAPES)
def test_every_surface_shows_each_pairs_outcome_and_interval_as_the_run_holds_them(nodeid: str) -> None:
    (result,) = [result for result in RUN.results if result.nodeid == nodeid]
    expected = _overhead_cell(result)
    terminal = _terminal_rows(render_table(RUN), [nodeid])[nodeid]
    status = re.split(r"\s{2,}", terminal.strip())[-1]
    assert TERMINAL_OUTCOMES[status] == result.overall, terminal
    _close(_numbers(terminal.split("%")[0].split()[-1] + " " + terminal.partition("(")[2]), expected, terminal)
    for surface in (render_markdown(RUN), render_markdown(RUN, folded=True)):
        (row,) = [row for name, row in _markdown_rows(surface, "Status") if name == nodeid]
        assert MARKDOWN_OUTCOMES[row["Status"]] == result.overall, row
        _close(_numbers(row["Overhead (interval)"]), expected, str(row))
    klass, cells = _Rows(render_page(RUN)).rows[anchor("pair", nodeid)]
    assert klass == result.overall.value and PAGE_OUTCOMES[cells[3]] == result.overall, cells
    _close(_numbers(cells[1]), expected, str(cells))


@pytest.mark.parametrize("nodeid", sorted(CHANGED))
def test_every_surface_shows_each_changes_own_outcome_and_interval(nodeid: str) -> None:
    change = CHANGED[nodeid]
    expected = (change.percent, *change.interval)
    finding = change.finding(GATE)
    stored = any(result.stored and result.nodeid == nodeid for result in RUN.results)
    where = "stored run 0007_main.json" if stored else "base main"
    klass, cells = _Rows(render_page(RUN)).rows[anchor("change", f"{nodeid} {where}")]
    assert klass == finding.value == cells[3], cells
    _close(_numbers(cells[2]), expected, str(cells))
    if stored:
        return  # the terminal and markdown tables of a stored run's changes: tests/test_baselines.py
    terminal = _terminal_rows(place_tables(RUN, RUN.gate), [nodeid])[nodeid]
    assert Finding(terminal.split()[-1]) == finding, terminal
    _close(_numbers(" ".join(terminal.split()[3:6]).replace("..", " ")), expected, terminal)
    for surface in (render_markdown(RUN), render_markdown(RUN, folded=True)):
        (row,) = [row for name, row in _markdown_rows(surface, "Outcome") if name == nodeid]
        assert Finding(row["Outcome"]) == finding, row
        _close(_numbers(f"{row['Change']} {row['95% CI'].replace('..', ' ')}"), expected, str(row))


def test_every_surface_shows_each_transport_figures_verdict_and_interval() -> None:
    markdown = _markdown_rows(render_markdown(RUN), "verdict")
    terminal = render_figures(RUN.figures)
    passed = 0
    for figure in RUN.figures:
        check = figure.check
        interval = [check.show(check.low), check.show(check.high)]
        (row,) = [
            row for name, row in markdown if name == figure.nodeid and row["figure"].endswith(SPECS[figure.metric].what)
        ]
        assert Status(row["verdict"].lower()) == figure.verdict and row["interval"].endswith("..".join(interval)), row
        (line,) = [line for line in terminal if line.strip().startswith(f"{figure.row}: {SPECS[figure.metric].what}")]
        assert Status(line.split()[-1].lower()) == figure.verdict and "..".join(interval) in line, line
        passed += figure.verdict == Status.PASS
    page = render_page(RUN)
    verdict = page[page.index('id="verdict"') : page.index('id="pairs"')]
    assert f"{passed} of {len(RUN.figures)} judged transport figures passed" in verdict
    failing = [figure for figure in RUN.figures if figure.verdict == Status.FAIL]
    assert verdict.count('<li class="fail">') == len(failing) + sum(r.overall == Overall.FAIL for r in RUN.results)


SERIES = (  # test, figure, level, the run its step comes at, the step (log), higher is worse, a ratio, its limit
    ("tests/test_shapes.py::test_pair", "overhead (time)", 1.12, 8, math.log(1.20), True, True, 1.30),
    ("tests/test_shapes.py::test_rps", "h2c c=10 rps", 600.0, 10, math.log(0.85), False, False, None),
    ("tests/test_shapes.py::test_p99", "h2c c=10 p99", 0.004, 6, math.log(0.75), True, False, None),
    ("tests/test_shapes.py::test_factor", "overhead (time)", 74.0, 16, 0.0, True, True, None),
)


def _history() -> History:
    """16 runs of the three series: a regression up, a regression down (a req/s), an improvement."""
    rng = random.Random(11)
    rows = []
    for i in range(16):
        readings = tuple(
            SeriesReading(
                test,
                figure,
                math.log(level) + step * (i >= at) + rng.gauss(0, 0.004),
                0.004,
                0.005,
                limit,
                worse,
                ratio,
            )
            for test, figure, level, at, step, worse, ratio, limit in SERIES
        )
        rows.append(RunRow(f"{i:04d}_c{i}.json", i, "m", f"c{i}", f"2026-01-{i + 1:02d}", "main", False, readings))
    return read_history(rows, None)


def _change(text: str) -> list[float]:
    """``+20.1% (95% CI +19.4%..+20.9%)`` read as its three numbers."""
    return _numbers(text.replace("95% CI", "").replace("..", " "))


def test_every_surface_shows_each_change_point_as_the_history_holds_it() -> None:
    history = _history()
    assert sorted((p.test, p.after.commit, p.regression) for p in history.change_points) == [
        ("tests/test_shapes.py::test_p99", "c6", False),
        ("tests/test_shapes.py::test_pair", "c8", True),
        ("tests/test_shapes.py::test_rps", "c10", True),
    ]
    terminal = render_history(history, "m on main")
    document = history_document(history, "m", "main", {})
    stored = {(item["test"], item["figure"]): item for item in document["change_points"]}
    page = render_page(Run(results=[]), history)
    for point in history.change_points:
        low, high = point.shift.interval()
        expected = tuple(100 * value for value in (point.shift.change, low, high))
        kind, words = point.shift.kind.value, "regressed" if point.regression else "improved"
        (head,) = [line for line in terminal if f": {point.test} {point.figure}: " in line]
        assert head.startswith(f"{kind.upper()} {words}: "), head
        _close(_change(head.rpartition(f"{point.figure}: ")[2]), expected, head)
        item = stored[(point.test, point.figure)]
        assert (item["kind"], item["commit"], item["regression"]) == (kind, point.after.commit, point.regression)
        _close([100 * item["change"], *(100 * end for end in item["ci"])], expected, str(item))
        figure = page[page.index(f'id="{anchor("trend", f"{point.test} {point.figure}")}"') :]
        caption = re.sub(r"<[^>]+>", "", figure[: figure.index("</figcaption>")])
        said = caption.rpartition(f"{kind} {words}: ")[2]
        assert said and said.partition(" at ")[2].startswith(point.after.commit), caption
        _close(_change(said.partition(" at ")[0]), expected, caption)
    factor = page[page.index(f'id="{anchor("trend", "tests/test_shapes.py::test_factor overhead (time)")}"') :]
    latest = re.sub(r"<[^>]+>", "", factor[: factor.index("</figcaption>")]).partition("; latest ")[2].split(";")[0]
    newest = history.ordered[-1].readings[-1]
    assert latest == format_overhead(math.exp(newest.log) - 1) and latest.endswith("x"), latest  # it read "7.40e+03%"
