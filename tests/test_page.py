"""The page (``--overhead-html``, ``overheadbench html``): one self-contained HTML file, its verdict
first, every pair a row against its budget, changes with the gate's threshold, a history's change
points with their commits, and differential flame graphs of whole stacks. Read here as HTML; the
browser's view of it is tests/test_page_browser.py."""

from __future__ import annotations

import dataclasses
import math
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from helpers import GOLDEN_RUN, MIDDLE, OUTER, made_run, stepped_history

from overheadbench.cli import main
from overheadbench.engine.changes import Change, StoredChange
from overheadbench.engine.checks import Overall
from overheadbench.report.page.document import render_page, script_hash
from overheadbench.report.page.svg import anchor
from overheadbench.store.runs import Run, read_run
from overheadbench.transport.metrics import Metric
from overheadbench.transport.results import Reading
from overheadbench.transport.verdict import judge


def shown(html: str) -> str:
    """The page's HTML as a reader's text runs: names break only at ``<wbr>`` marks, which are not text."""
    return html.replace("<wbr>", "")


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
    verdict = shown(render_page(run)).split('id="pairs"')[0]
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
    text = shown(render_page(made_run()))
    page = Elements(text)
    assert anchor("change", "tests/test_mw.py::test_metrics base main") in page.ids()
    assert len(page.having("threshold")) == 2  # the gate's +5% and -5%, through the row
    assert "+9.1% (" in text  # 1.10 -> 1.20
    assert "what the change added (head less base)" in text


def test_the_page_is_one_file_that_loads_nothing() -> None:
    text = shown(render_page(made_run()))
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
    text = shown(render_page(run))
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
    text = shown((tmp_path / "page.html").read_text())
    page = Elements(text)
    assert [attributes["id"] for tag, attributes in page.tags if tag == "section"] == ["verdict", "pairs", "history"]
    assert len(page.having("trend")) == 3 and len(page.having("budget")) == 6  # a trend per pair, budgets drawn
    assert len(page.having("regression")) == 3  # each pair's step, marked where it fell
    assert text.count(f">{shas[5][:7]}</text>") == 3  # ... labelled with its commit
    verdict = text.split('id="pairs"')[0]
    assert (
        "3 regressions in the history" in verdict
        and f'<code class="commit">{shas[5][:10]}</code> <bdi>commit 5</bdi>' in verdict
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
    text = shown(render_page(Run(figures=figures)))
    transport = text[text.index('<section id="transport">') :]
    assert [title for title in ("Transport", "Streams") if f"<h3>{title}</h3>" in transport] == ["Transport", "Streams"]
    assert transport.count('rowspan="2"><bdi><code>t.py::test_h2c</code></bdi>') == 1  # its two rows, named once
    assert "h2c c=100" in transport and "1,826/s" in transport and "700 µs" in transport and "4.00 ms" in transport
    verdict = text[: text.index('<section id="transport">')]  # a figure over its budget is in the verdict
    assert (
        "0 of 1 judged transport figures passed" in verdict
        and "t.py::test_sse</code></bdi> <bdi>sse c=1</bdi>" in verdict
    )


def test_a_changes_row_shows_the_changes_own_outcome_not_the_pairs() -> None:
    """A pair regressed on one place and the same on the stored run: each row says its own."""
    run = made_run()
    regressed = run.results[1]
    same = StoredChange("0007_main.json", Change("overhead", 1.10, 1.102, se=0.002))
    run.results[1] = dataclasses.replace(regressed, stored=same)
    page = Elements(render_page(run))
    rows = {a["id"]: a["class"] for tag, a in page.tags if tag == "tr" and a.get("id", "").startswith("change-")}
    assert rows == {
        anchor("change", f"{regressed.nodeid} base main"): "regressed",
        anchor("change", f"{regressed.nodeid} stored run 0007_main.json"): "same",  # the pair's outcome: regressed
    }


def test_what_failed_the_job_comes_first_in_the_verdict() -> None:
    """An inconclusive pair that only warned was listed before the transport figure that failed the job."""
    run = read_run(GOLDEN_RUN)
    warned = dataclasses.replace(run.results[0], outcome=Overall.INCONCLUSIVE, failed=False)
    failing = judge("t.py::test_sse", Reading("sse c=1", Metric.TTFE, 0.004, 0.0038, 0.0043, "95% CI"), 0.002)
    text = shown(render_page(dataclasses.replace(run, results=[warned], figures=[failing])))
    assert text.index("t.py::test_sse") < text.index(warned.nodeid, text.index('id="verdict"'))


def test_every_name_from_a_file_is_isolated_so_an_override_cannot_reverse_the_line() -> None:
    """A stored run's name with a right-to-left override reversed the rest of the verdict line."""
    run = made_run()
    hostile = "0007\u202emain.json"
    moved = StoredChange(hostile, Change("overhead", 1.10, 1.30, se=0.01))
    run.results[1] = dataclasses.replace(run.results[1], stored=moved)
    text = render_page(run)
    isolated = re.findall(r"<bdi>(.*?)</bdi>", text)
    assert text.count("\u202e") == sum(part.count("\u202e") for part in isolated) > 0
    assert all("outcome" not in part for part in isolated)  # the outcome words stay outside any isolate


def test_the_pages_policy_admits_its_own_script_by_hash_and_no_other() -> None:
    text = render_page(made_run())
    policy = re.search(r'Content-Security-Policy" content="([^"]*)"', text)
    assert policy is not None and "'unsafe-inline'" not in policy[1].split("script-src")[1].split(";")[0]
    (script,) = re.findall(r"<script>(.*?)</script>", text, re.S)
    assert f"script-src '{script_hash(script)}'" in policy[1]


def test_a_runs_band_in_the_history_is_its_own_listed_interval() -> None:
    """The newest run's band spanned about 58..62 where the page listed its interval as 23.9..93.7."""
    result = dataclasses.replace(read_run(GOLDEN_RUN).results[0], ci=(0.239, 0.937))
    reading = result.series_reading("")
    assert reading is not None and reading.band == pytest.approx((math.log(1.239), math.log(1.937)))
