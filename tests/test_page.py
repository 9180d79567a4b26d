"""The page (``--overhead-html``, ``overheadbench html``): one self-contained HTML file, its verdict
first, every pair a row against its budget, changes with the gate's threshold, a history's change
points with their commits, and differential flame graphs of whole stacks. Read here as HTML; the
browser's view of it is tests/test_page_browser.py."""

from __future__ import annotations

import dataclasses
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from helpers import GOLDEN_RUN, MIDDLE, OUTER, made_run, stepped_history

from overheadbench.cli import main
from overheadbench.report.page import anchor, render_page
from overheadbench.store.runs import Run, read_run
from overheadbench.transport.metrics import Metric
from overheadbench.transport.results import Reading
from overheadbench.transport.verdict import judge


class Elements(HTMLParser):
    """Every start tag with its attributes, in document order, and the text under each id'd element."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {name: value or "" for name, value in attrs}))

    def ids(self) -> list[str]:
        return [attributes["id"] for _, attributes in self.tags if "id" in attributes]

    def having(self, css: str) -> list[dict[str, str]]:
        return [attributes for _, attributes in self.tags if css in attributes.get("class", "").split()]


def test_the_verdict_comes_first_then_every_pair_in_a_row_against_its_budget() -> None:
    run = made_run()
    page = Elements(render_page(run))
    sections = [attributes["id"] for tag, attributes in page.tags if tag == "section"]
    assert sections == ["verdict", "pairs", "changes", "explained"]
    verdict = render_page(run).split('id="pairs"')[0]
    assert verdict.index("test_mw.py::test_retry") < verdict.index("test_mw.py::test_metrics")  # failed first
    assert "1 failed, 1 regressed, 1 passed of 3 pairs" in verdict
    assert "test_h2c" not in verdict  # a passing pair is not listed under the verdict
    rows = {
        attributes["id"]: attributes["class"] for tag, attributes in page.tags if tag == "tr" and "id" in attributes
    }
    assert rows == {anchor("pair", result.nodeid): result.overall.value for result in run.results} | {
        anchor("change", "tests/test_mw.py::test_metrics base main"): "regressed"
    }
    assert len(page.having("budget")) == 3  # every pair's budget marked on its row
    assert len(page.having("estimate")) == 4  # and each change's


def test_a_change_is_drawn_against_the_gates_threshold_and_explained_head_less_base() -> None:
    text = render_page(made_run())
    page = Elements(text)
    assert anchor("change", "tests/test_mw.py::test_metrics base main") in page.ids()
    assert len(page.having("threshold")) == 2  # the gate's +5% and -5%, through the row
    assert "+9.1% (" in text  # 1.10 -> 1.20
    assert "what the change added (head less base)" in text


def test_the_page_is_one_file_that_loads_nothing() -> None:
    text = render_page(made_run())
    page = Elements(text)
    assert not [tag for tag, attributes in page.tags if {"src", "href"} & set(attributes) and tag != "a"]
    assert all(attributes["href"].startswith("#") for tag, attributes in page.tags if tag == "a")
    assert not re.search(r"url\(|@import|https?://", text.split("<main>")[0])  # the style asks for nothing
    policy = next(a["content"] for tag, a in page.tags if a.get("http-equiv") == "Content-Security-Policy")
    assert "default-src 'none'" in policy and "connect-src" not in policy


def test_a_test_id_is_text_in_the_page_never_markup() -> None:
    run = read_run(GOLDEN_RUN)
    hostile = dataclasses.replace(run.results[0].pair, nodeid='t.py::test[<script>alert(1)</script>"]')
    run.results[0] = dataclasses.replace(run.results[0], pair=hostile)
    text = render_page(run)
    assert "<script>alert(1)" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;&quot;" in text


def test_the_flame_graph_draws_whole_stacks_and_the_middle_layer_adds_most() -> None:
    page = Elements(render_page(made_run()))
    frames = page.having("frame")
    depth = {frame["data-name"]: int(frame["data-depth"]) for frame in frames}
    assert depth["t:framed"] == 1 and depth[OUTER] == 2 and depth[MIDDLE] == 3 and depth["app:work"] == 5
    reddest = max(frames, key=lambda frame: float(frame["data-added"]))
    assert reddest["data-name"] == MIDDLE
    shared = next(frame for frame in frames if frame["data-name"] == "app:work")
    assert float(shared["data-added"]) == 0.0 and float(shared["data-w"]) > float(reddest["data-w"]) / 2


def test_the_page_of_a_storage_folder_shows_each_pairs_history_with_its_change_points_commits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project, storage, shas = stepped_history(tmp_path)
    monkeypatch.chdir(project)  # the history in git's order, named by the commits' subjects
    assert main(["html", str(storage), "-o", str(tmp_path / "page.html")]) == 0
    assert capsys.readouterr().out == f"page written to {tmp_path / 'page.html'}\n"
    text = (tmp_path / "page.html").read_text()
    page = Elements(text)
    assert [attributes["id"] for tag, attributes in page.tags if tag == "section"] == ["verdict", "pairs", "history"]
    assert len(page.having("trend")) == 3 and len(page.having("budget")) == 6  # a trend per pair, budgets drawn
    assert len(page.having("regression")) == 3  # each pair's step, marked where it fell
    assert text.count(f">{shas[5][:7]}</text>") == 3  # ... labelled with its commit
    verdict = text.split('id="pairs"')[0]
    assert (
        "3 regressions in the history" in verdict and f'<code class="commit">{shas[5][:10]}</code> commit 5' in verdict
    )


def test_html_names_what_it_cannot_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    assert main(["html", str(tmp_path / "empty"), "-o", str(tmp_path / "page.html")]) == 2
    assert "no stored run of this machine" in capsys.readouterr().err
    assert not (tmp_path / "page.html").exists()


SESSION_PAIR = """
import pytest

@pytest.mark.overhead(max=1.0, processes=1)
def test_pair(overhead, clock):
    overhead.compare(clock.cost(1000), clock.cost(1100, seed=2))
"""


def test_a_sessions_page_holds_the_history_of_the_runs_it_stores(fake_clock_project: pytest.Pytester) -> None:
    """With a storage folder, the session's page has the history of this machine's runs, its own included."""
    fake_clock_project.makepyfile(test_session=SESSION_PAIR)
    stored = ("--overhead-autosave", "--overhead-storage=runs", "--overhead-html=page.html")
    for _ in range(3):
        fake_clock_project.runpytest("--overhead", *stored).assert_outcomes(passed=1)
    page = Elements((fake_clock_project.path / "page.html").read_text())
    sections = [attributes["id"] for tag, attributes in page.tags if tag == "section"]
    assert sections == ["verdict", "pairs", "history"]
    assert len(page.having("trend")) == 1 and len(page.having("run")) == 3  # three runs, this one the third
    fake_clock_project.runpytest("--overhead", "--overhead-html=alone.html").assert_outcomes(passed=1)
    assert 'id="history"' not in (fake_clock_project.path / "alone.html").read_text()  # no storage: no history


def test_transport_figures_are_tables_per_protocol_and_concurrency_each_test_named_once() -> None:
    figures = [
        judge("t.py::test_h2c", Reading(f"h2c c={callers}", metric, value, value * 0.98, value * 1.02, "95% CI"), None)
        for callers in (1, 100)
        for metric, value in ((Metric.RPS, 1826.0), (Metric.P95, 0.0007))
    ]
    figures.append(judge("t.py::test_sse", Reading("sse c=1", Metric.TTFE, 0.004, 0.0038, 0.0043, "95% CI"), 0.002))
    text = render_page(Run(figures=figures))
    transport = text[text.index('<section id="transport">') :]
    assert [title for title in ("Transport", "Streams") if f"<h3>{title}</h3>" in transport] == ["Transport", "Streams"]
    assert transport.count('rowspan="2"><code>t.py::test_h2c</code>') == 1  # its two rows, named once
    assert "h2c c=100" in transport and "1,826/s" in transport and "700 µs" in transport and "4.00 ms" in transport
    verdict = text[: text.index('<section id="transport">')]  # a figure over its budget is in the verdict
    assert "0 of 1 judged transport figures passed" in verdict and "t.py::test_sse</code> sse c=1" in verdict
