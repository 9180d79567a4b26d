"""The page in a real browser: Debian's chromium driven by playwright (``.ci/run`` installs both and
requires them; elsewhere these tests are skipped where chromium is missing, saying how to get it).

What a reader does with the page, asserted on the DOM and the console: it loads from a file with no
error and no request leaving the file; every pair has its row and chart; the history's change points
and the regressed pair show their commits; the flame graph zooms on click and from the keyboard;
with JavaScript off the verdicts and figures are all there; and at a phone's width and a desktop's
nothing scrolls sideways and no text is under 10 px."""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import MIDDLE, made_run, stepped_history

from overheadbench.engine.attribution import explain
from overheadbench.engine.profiles import Profiled
from overheadbench.history.stored import stored_history
from overheadbench.report.page.document import render_page
from overheadbench.store.index import indexed_runs
from overheadbench.store.runs import Storage

pytestmark = pytest.mark.replicas  # a browser process

REQUIRED = "OVERHEADBENCH_BROWSER"
"""Set to ``required`` (``.ci/run`` does): a missing chromium fails these tests instead of skipping them."""


def chromium() -> str:
    found = os.environ.get("OVERHEADBENCH_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    message = "the page's browser tests need chromium (apt-get install chromium; or OVERHEADBENCH_CHROMIUM=PATH)"
    if os.environ.get(REQUIRED) == "required":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A failing session's page (a failed pair explained, a regressed change) with a history of ten
    commits whose pairs stepped up at the sixth; and those commits."""
    folder = tmp_path_factory.mktemp("page")
    project, storage, shas = stepped_history(folder)
    history, _, _ = stored_history(indexed_runs(Storage(storage)), "main", project)
    path = folder / "page.html"
    run = made_run()
    long = "json.encoder:_make_iterencode.<locals>._iterencode_dict"  # an explanation's table was 521 px wide
    profile = Profiled({"t:bare;app:work": 1000.0}, 1, {f"t:framed;{long}": 900.0, "t:framed;app:work": 1000.0}, 1)
    passed = dataclasses.replace(run.results[0], explain=explain(profile, "instructions", exact=True))
    run = dataclasses.replace(run, results=[passed, *run.results[1:]])  # listed last: the failure's graph first
    path.write_text(render_page(run, history), encoding="utf-8")
    return path, shas


@pytest.fixture
def opened(browser: Any, page_file: tuple[Path, list[str]]) -> Iterator[tuple[Any, list[str], list[str]]]:
    """The page opened from its file: the page, its console errors, and every URL it requested."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    requested: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("request", lambda request: requested.append(request.url))
    page.goto(page_file[0].as_uri())
    yield page, errors, requested
    context.close()


def test_the_page_loads_with_no_error_and_no_request_leaving_the_file(opened: Any, page_file: Any) -> None:
    page, errors, requested = opened
    assert errors == []
    assert requested == [page_file[0].as_uri()]
    assert page.title() == "Overhead report"


def test_every_pair_has_its_row_and_chart(opened: Any) -> None:
    page, _, _ = opened
    rows = page.locator("#pairs tbody tr")
    assert rows.count() == 3
    for index in range(3):
        chart = rows.nth(index).locator("svg.row")
        box = chart.bounding_box()
        assert chart.is_visible() and box["width"] > 100 and box["height"] > 5
        assert rows.nth(index).locator(".budget").count() == 1
    assert page.locator("#history figure svg.trend").count() == 3


def test_a_change_point_and_a_regressed_pair_show_their_commits(opened: Any, page_file: Any) -> None:
    page, _, _ = opened
    shas = page_file[1]
    verdict = page.locator("#verdict").inner_text()
    assert "test_mw.py::test_metrics regressed" in verdict
    assert "step regressed +16" in verdict and f"{shas[5][:10]} commit 5" in verdict
    labels = page.locator("#history text.commit")
    assert labels.count() == 3 and labels.first.text_content() == shas[5][:7] and labels.first.is_visible()
    assert page.locator("#changes tbody tr").first.inner_text().startswith("tests/test_mw.py::test_metrics")


def _width(frame: Any) -> float:
    return float(frame.locator("rect").get_attribute("width"))


def test_the_flame_graph_zooms_on_click_and_back(opened: Any) -> None:
    page, errors, _ = opened
    flame = page.locator("svg.flame").first
    middle = flame.locator(f'.frame[data-name="{MIDDLE}"]')
    before = _width(middle)
    assert 0 < before < 1000
    middle.click()
    assert _width(middle) == 1000.0 and flame.get_attribute("data-zoomed") == MIDDLE
    outside = flame.locator('.frame[data-depth="0"]')  # the root stays, as the zoomed frame's caller
    assert _width(outside) == 1000.0
    outside.click()
    assert _width(middle) == before and flame.get_attribute("data-zoomed") == ""
    assert errors == []


def test_the_flame_graph_is_searched_and_zoomed_from_the_keyboard(opened: Any) -> None:
    page, errors, _ = opened
    flame = page.locator("svg.flame").first
    for _ in range(300):  # Tab through the page's links, fields and frames, as a keyboard user does
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.getAttribute('data-name')") == MIDDLE:
            break
    else:
        pytest.fail("the middle layer's frame cannot be reached with Tab")
    page.keyboard.press("Enter")
    assert flame.get_attribute("data-zoomed") == MIDDLE
    page.keyboard.press("Escape")
    assert flame.get_attribute("data-zoomed") == ""
    search = page.locator(".flame-search").first
    search.fill("middle")
    assert flame.locator(".frame.match").count() == 1
    assert "1 frames" in page.locator(".flame-found").first.inner_text()
    assert errors == []


def test_with_javascript_off_the_verdicts_and_figures_are_all_there(browser: Any, page_file: Any) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(page_file[0].as_uri())
    assert "1 failed, 1 regressed, 1 passed of 3 pairs" in page.locator("#verdict").inner_text()
    assert page.locator("#pairs tbody tr").count() == 3 and page.locator("svg.flame").first.is_visible()
    assert not page.locator(".flame-tools").first.is_visible()  # the tools only work with a script
    context.close()


SMALLEST_TEXT = """() => {
  let smallest = Infinity, where = "";
  for (const el of document.querySelectorAll("body *")) {
    const box = el.getBoundingClientRect();
    const own = Array.from(el.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || !box.width || getComputedStyle(el).display === "none") continue;
    let size = parseFloat(getComputedStyle(el).fontSize);
    const svg = el instanceof SVGElement ? el.ownerSVGElement : null;
    if (svg && svg.viewBox.baseVal && svg.viewBox.baseVal.width) {
      size *= svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;  // drawn at the chart's scale
    }
    if (size < smallest) { smallest = size; where = el.textContent.trim().slice(0, 40); }
  }
  return [smallest, where];
}"""
"""The smallest text the reader sees, in CSS pixels: an SVG's text scaled as the chart is drawn."""


@pytest.mark.parametrize("width", [390, 1280])
def test_a_phones_width_and_a_desktops_need_no_sideways_scrolling_and_no_text_is_under_10px(
    browser: Any, page_file: Any, width: int
) -> None:
    """At 390 px the page was 443-498 px wide (a phone zooms out to fit it, so the window grew with it and
    the old check compared the page with itself), test ids broke every few characters, and chart labels
    were 3-5 px tall."""
    context = browser.new_context(viewport={"width": width, "height": 844}, is_mobile=width < 640)
    page = context.new_page()
    page.goto(page_file[0].as_uri())
    page.evaluate("document.querySelectorAll('details').forEach((found) => { found.open = true; })")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    smallest, where = page.evaluate(SMALLEST_TEXT)
    assert smallest >= 10, where
    context.close()
