"""The page (``--overhead-html``, ``overheadbench html``) validated (issue 59).

    python validation/page.py flame --out DIR      # ~1 min: the held-out three-layer stack, time and count mode
    python validation/page.py session --out DIR    # ~6 min: the benchmark suite's page, its cost and size
    python validation/page.py storage --out DIR    # ~2 min: 1,000 stored runs of 50 pairs, in chromium too

``flame``: a framework path of three layers over shared ``json.dumps`` work, whose middle layer's
loop dominates (as the bar ``--overhead-explain`` is held to), measured in a real session with
``--overhead-explain --overhead-html`` in time mode and in count mode; the page's flame graph must
draw the middle layer's frame as the one that adds the most itself (the widest added frame).

``session``: the benchmark suite in ``benchmarks/`` measured with ``--overhead-quick
--overhead-json``; then the page of that run is built as the session builds it at its end (the one
thing ``--overhead-html`` adds to a session), timed (median of 5) and weighed.

``storage``: 1,000 runs of 50 pairs written to a storage folder (the golden run's pairs, drawn
around a step at run 600); ``overheadbench html STORAGE`` timed twice (the first builds the
history's index), the page weighed, and opened in chromium (playwright): the time from navigation
to the first trend drawn, median of 3.

Writes DIR/page-<mode>.md and prints it.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import statistics
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

import harness

from overheadbench.report.page.document import render_page
from overheadbench.store.environment import fingerprint
from overheadbench.store.runs import read_run

ROOT = Path(__file__).parent.parent
CLI = [sys.executable, "-c", "import sys; from overheadbench.cli import main; sys.exit(main())"]
GOLDEN = ROOT / "tests" / "golden" / "0001_old.json"
CHROMIUM = "/usr/bin/chromium"

LAYERS = """
import json

import pytest

PAYLOAD = {"items": list(range(40)), "name": "x" * 30}


def work():
    return json.dumps(PAYLOAD)


def outer(inner):
    def run():
        return inner()
    return run


def middle(inner):
    def run():
        total = 0
        for step in range(120):
            total += step
        return inner()
    return run


def innermost(inner):
    def run():
        return inner()
    return run


stacked = outer(middle(innermost(work)))


@pytest.mark.overhead(max=100.0)
def test_timed(overhead):
    overhead.compare(work, stacked)


@pytest.mark.overhead(max=100.0, mode="count")
def test_counted(overhead):
    overhead.compare(work, stacked)
"""


class Frames(HTMLParser):
    """Each flame graph's frames (their ``data-`` attributes), one list per graph, in page order."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.graphs: list[list[dict[str, str]]] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if tag == "svg" and "flame" in classes:
            self.graphs.append([])
        elif tag == "g" and "frame" in classes:
            self.graphs[-1].append({name: value or "" for name, value in attrs})


def flame_mode(out: Path) -> str:
    project = out / "layers"
    project.mkdir(parents=True, exist_ok=True)
    (project / "test_layers.py").write_text(LAYERS)
    (project / "pytest.ini").write_text("[pytest]\n")
    page = out / "layers.html"
    ran = harness.session(project, out / "layers.json", "--overhead-explain", f"--overhead-html={page}")
    graphs = Frames(page.read_text()).graphs
    lines = ["# page: the held-out three-layer stack's flame graphs", "", f"session exit {ran.exit}", ""]
    lines += ["| mode | widest added frames (what each adds itself, share of the frames' added) | middle first? |"]
    lines += ["|---|---|---|"]
    for mode, frames in zip(("time", "count"), graphs, strict=True):
        added = sorted((f for f in frames if float(f["data-added"]) > 0), key=lambda f: -float(f["data-added"]))
        total = sum(float(f["data-added"]) for f in added) or 1.0
        top = ", ".join(f"{f['data-name']} {float(f['data-added']) / total:.0%}" for f in added[:3])
        met = bool(added) and added[0]["data-name"].endswith("middle.<locals>.run")
        lines.append(f"| {mode} | {top} | {'met' if met else 'MISSED'} |")
    return "\n".join(lines)


def session_mode(out: Path) -> str:
    ran = harness.session(ROOT / "benchmarks", out / "suite.json", "--overhead-quick", timeout_s=1800)
    run = read_run(out / "suite.json")
    times = []
    for _ in range(5):
        started = time.perf_counter()
        text = render_page(run)
        (out / "suite.html").write_text(text, encoding="utf-8")
        times.append(time.perf_counter() - started)
    size = (out / "suite.html").stat().st_size
    return "\n".join(
        [
            "# page: the benchmark suite's session",
            "",
            f"session: exit {ran.exit}, {len(run.results)} pairs, {len(run.figures)} transport figures, {ran.wall_s:.0f} s",
            f"the page built and written: {statistics.median(times):.3f} s (median of 5; aim 1 s), {size / 1e6:.2f} MB (aim 2 MB)",
        ]
    )


def write_storage(folder: Path, runs: int, pairs: int, seed: int) -> None:
    """``runs`` runs of ``pairs`` pairs (the golden run's, renamed), each run's ratios drawn with a
    between-session spread of 1%; every pair 8% slower from run 600 on."""
    golden = json.loads(GOLDEN.read_text())
    rng = random.Random(seed)
    machine = folder / fingerprint()
    machine.mkdir(parents=True, exist_ok=True)
    for number in range(1, runs + 1):
        data = copy.deepcopy(golden)
        data["environment"]["commit_info"] = {
            "id": f"{number:040x}",
            "branch": "main",
            "dirty": False,
            "time": f"2026-{1 + number // 400:02d}-{1 + number % 400 // 15:02d}T{number % 15:02d}:00:00",
        }
        results = []
        for index in range(pairs):
            result = copy.deepcopy(golden["results"][index % len(golden["results"])])
            result["nodeid"] = f"tests/test_suite.py::test_pair[{index}]"
            result["ratio"] *= (1.08 if number >= 600 else 1.0) * (1 + rng.gauss(0, 0.01))
            results.append(result)
        data["results"] = results
        (machine / f"{number:04d}_main.json").write_text(json.dumps(data))


def chromium_seconds(page: Path) -> float:
    """Navigation to the first trend drawn, in chromium (playwright), median of 3."""
    from playwright.sync_api import sync_playwright

    times = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        for _ in range(3):
            tab = browser.new_page()
            started = time.perf_counter()
            tab.goto(page.as_uri(), wait_until="commit")
            tab.wait_for_selector("svg.trend", state="visible")
            times.append(time.perf_counter() - started)
            tab.close()
        browser.close()
    return statistics.median(times)


def storage_mode(out: Path, runs: int, pairs: int, seed: int) -> str:
    storage = out / "runs"
    subprocess.run(["rm", "-rf", str(storage)], check=True)
    write_storage(storage, runs, pairs, seed)
    times = []
    for _ in range(2):  # the first builds the history's index
        started = time.perf_counter()
        subprocess.run([*CLI, "html", str(storage), "-o", str(out / "storage.html")], cwd=out, check=True)
        times.append(time.perf_counter() - started)
    size = (out / "storage.html").stat().st_size
    drawn = chromium_seconds(out / "storage.html")
    return "\n".join(
        [
            f"# page: {runs} stored runs of {pairs} pairs",
            "",
            f"overheadbench html: {times[0]:.1f} s first (index built), {times[1]:.1f} s again (aim 10 s)",
            f"the page: {size / 1e6:.2f} MB (aim 5 MB)",
            f"chromium: navigation to the first trend drawn {drawn:.2f} s (median of 3; aim 2 s)",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("flame", "session", "storage"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=1000, help="storage: stored runs")
    parser.add_argument("--pairs", type=int, default=50, help="storage: pairs a run")
    parser.add_argument("--seed", type=int, default=59)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.mode == "flame":
        text = flame_mode(args.out)
    elif args.mode == "session":
        text = session_mode(args.out)
    else:
        text = storage_mode(args.out, args.runs, args.pairs, args.seed)
    (args.out / f"page-{args.mode}.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
