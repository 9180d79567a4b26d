"""Streams a gate can decide (issue 70): an LLM client SDK's stream pairs, the same verdict every session.

    python validation/stream_decided.py --out DIR --sessions 5 --busy 2

A project: an OpenAI-compatible chat endpoint (``harness.OPENAI_STREAM_APP``, ``--tokens`` chunks
``--pace`` ms apart) served by the ``asgi_server`` fixture, and four stream pairs of the ``openai``
SDK against raw httpx reading it: async and sync (``acompare_streams``, ``compare_streams``), one at a
time and 8 in flight. A first session (no budget) calibrates: each pair's figures' changes. Then
``--sessions`` sessions with a budget 1.5x each figure that changed by more than 10% (``max={...}``),
every one beside ``--busy`` busy loops. Reported: each session's figures and verdicts, how often a
session's interval covers the median of the sessions (per figure), whether the verdicts agree, and
each session's time. Needs ``pip install openai``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

import harness

TEST = """
import json
import pathlib

import pytest
from sdk_clients import async_sides, sync_sides

BUDGETS = json.loads(pathlib.Path("budgets.json").read_text()) if pathlib.Path("budgets.json").exists() else {}


def budgets(row):
    return {"max": BUDGETS[row]} if row in BUDGETS else {}


@pytest.mark.anyio
@pytest.mark.parametrize("concurrency", [1, 8])
async def test_async_sdk(transport, asgi_server, concurrency):
    async with async_sides(asgi_server("server_app:app")) as (raw, sdk):
        row = f"async c={concurrency}"
        await transport.acompare_streams(raw, sdk, label=row, concurrency=concurrency, **budgets(row))


@pytest.mark.parametrize("concurrency", [1, 8])
def test_sync_sdk(transport, asgi_server, concurrency):
    with sync_sides(asgi_server("server_app:app")) as (raw, sdk):
        row = f"sync c={concurrency}"
        transport.compare_streams(raw, sdk, label=row, concurrency=concurrency, **budgets(row))
"""
REFERENCE = """
import json
import statistics
import time

from sdk_clients import sync_sides


def test_sync_reference(transport, asgi_server):
    with sync_sides(asgi_server("server_app:app")) as (raw, start):
        firsts = []

        def plain(count):  # the same client and server, a plain loop: time to the SDK's first chunk
            for _ in range(count):
                started = time.perf_counter()
                stream = start()
                next(iter(stream))
                firsts.append(time.perf_counter() - started)
                for _ in stream:
                    pass

        plain(18)  # half before the plugin's pair and half after: neither reads the warmer process alone
        transport.compare_streams(raw, start, label="sync c=1")
        plain(18)
        with open("reference.json", "w") as out:
            json.dump(statistics.median(firsts), out)
"""
"""The sync SDK's time to first event, the plugin's (the sync pair's [framework] row) and a plain loop's
of the same client against the same server, half before it and half after in the same test (a loop
run only after read 1-21% faster: the warmer process)."""
ROWS = ("async c=1", "async c=8", "sync c=1", "sync c=8")
FIGURES = ("ttfe", "events_per_s", "total")
BUDGET_FACTOR = 1.5
CALIBRATIONS = 3
"""Sessions without budgets whose median each budget is 1.5x of (one session's figure sat 1.35x below
its budget where the five sessions' median did)."""
LARGE = 0.10
"""A change this large gets a budget (a smaller one, 1.5x, sits inside the spread between sessions alone)."""


def changes(run: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """Each pair's change figures of a session's run: (row, figure) -> its value, interval, verdict."""
    found = {}
    for figure in run.get("figures", []):
        if figure["measure"] == "max" and figure["row"] in ROWS:
            check = figure["check"]
            found[(figure["row"], figure["metric"])] = {
                "value": check["value"],
                "ci": figure["ci"],
                "judged": check["ci"],
                "status": check["status"],
                "interval": figure["interval"],
            }
    return found


def middle(runs: list[dict[tuple[str, str], dict[str, Any]]]) -> dict[tuple[str, str], dict[str, Any]]:
    """Each figure's median over the calibration sessions (the figure a budget is 1.5x of)."""
    keys = {key for run in runs for key in run}
    return {key: {"value": statistics.median(run[key]["value"] for run in runs if key in run)} for key in keys}


def calibrated(figures: dict[tuple[str, str], dict[str, Any]], row: str) -> dict[str, float]:
    """A pair's budgets: 1.5x each figure's change that reads past ``LARGE`` (a rate's: 1.5x as many fewer)."""
    found = {}
    for metric in FIGURES:
        value = figures.get((row, metric), {}).get("value", math.nan)
        if math.isfinite(value) and abs(value) > LARGE:
            found[metric] = round(BUDGET_FACTOR * abs(value), 4)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    harness.openai_stream_options(parser, pace_ms=0.0)
    harness.session_options(parser, sessions=5, busy=2)
    parser.add_argument(
        "--reference",
        type=int,
        default=0,
        metavar="TURNS",
        help="instead: the sync SDK's first event, plugin against a plain loop, TURNS turns each",
    )
    args = parser.parse_args()
    folder = harness.openai_stream_project(args, TEST)
    common = ("-p", "anyio", "-p", "no:xdist")
    if args.reference:
        with harness.busy_loops(args.busy, seconds=3600.0):
            reference(folder, args.out, args.reference, common)
        return
    with harness.busy_loops(args.busy, seconds=3600.0):
        runs = [
            harness.session(folder, args.out / f"calibration{number}.json", *common, paths=[harness.SRC])
            for number in range(CALIBRATIONS)
        ]
        figures = middle([changes(ran.run) for ran in runs])
        budgets = {row: calibrated(figures, row) for row in ROWS if calibrated(figures, row)}
        (folder / "budgets.json").write_text(json.dumps(budgets))
        print(f"calibration ({', '.join(f'{ran.wall_s:.0f} s' for ran in runs)}): budgets {budgets}")
        sessions = []
        for number in range(args.sessions):
            ran = harness.session(folder, args.out / f"session{number}.json", *common, paths=[harness.SRC])
            (args.out / f"session{number}.txt").write_text(ran.output)
            sessions.append(changes(ran.run))
            print(f"session {number}: exit {ran.exit}, {ran.wall_s:.0f} s")
    report(sessions, budgets)


def reference(folder: Path, out: Path, turns: int, common: tuple[str, ...]) -> None:
    """The sync SDK's first event (the sync one-at-a-time pair's [framework] row) against a plain loop of
    the same client and server outside the plugin, ``turns`` sessions."""
    (folder / "test_reference.py").write_text(REFERENCE)
    for turn in range(turns):
        ran = harness.session(folder, out / f"reference{turn}.json", *common, "test_reference.py", paths=[harness.SRC])
        rows = {(f["row"], f["metric"]): f["check"]["value"] for f in ran.figures}
        plugin = rows.get(("sync c=1 [framework]", "ttfe"), math.nan)
        plain = float(json.loads((folder / "reference.json").read_text()))
        print(
            f"turn {turn}: plugin {1000 * plugin:.3f} ms, plain loop {1000 * plain:.3f} ms: {100 * (plugin / plain - 1):+.1f}%"
        )


def report(sessions: list[dict[tuple[str, str], dict[str, Any]]], budgets: dict[str, dict[str, float]]) -> None:
    covered, judged, total = 0, 0, 0
    verdicts: dict[str, set[str]] = defaultdict(set)
    for row in ROWS:
        for metric in FIGURES:
            values = [s[(row, metric)]["value"] for s in sessions if (row, metric) in s]
            if not values:
                continue
            middle = statistics.median(values)
            cells = []
            for found in (s.get((row, metric)) for s in sessions):
                if found is None:
                    cells.append("-")
                    continue
                low, high = found["ci"]
                inside = math.isfinite(low) and low <= middle <= high
                wide = found["judged"][0] <= middle <= found["judged"][1]
                covered, judged, total = covered + inside, judged + wide, total + 1
                cells.append(
                    f"{100 * found['value']:+.1f}% ({100 * low:+.1f}..{100 * high:+.1f}){'' if inside else ' !'}"
                )
                if metric in budgets.get(row, {}):
                    verdicts[f"{row} {metric}"].add(found["status"])
            print(f"{row:10} {metric:13} median {100 * middle:+.1f}%: " + "; ".join(cells))
    print(f"intervals covering the median of the sessions: {covered} of {total} (judged, with the spread: {judged})")
    for row in ROWS:
        spreads = [between(sessions, row, metric) for metric in FIGURES]
        print(f"{row}: between-session sd of the change's log beyond its own error: " + ", ".join(spreads))
    for row, given in budgets.items():
        for metric, limit in given.items():
            print(f"{row} {metric}: budget {100 * limit:.1f}%, verdicts {sorted(verdicts[f'{row} {metric}'])}")


def between(sessions: list[dict[tuple[str, str], dict[str, Any]]], row: str, metric: str) -> str:
    """How far a figure's change moved between sessions beyond each session's own error (sd of its
    log; each session's own from its interval, read as normal at its confidence)."""
    found = [s[(row, metric)] for s in sessions if (row, metric) in s]
    logs = [math.log1p(f["value"]) for f in found if f["value"] > -1]
    own = []
    for f in found:
        low, high = f["ci"]
        level = float(f["interval"].split("%")[0]) / 100 if "%" in f["interval"] else 0.95
        z = statistics.NormalDist().inv_cdf((1 + level) / 2)
        own.append(((math.log1p(high) - math.log1p(low)) / (2 * z)) ** 2 if low > -1 else math.nan)
    if len(logs) < 3:
        return f"{metric} -"
    beyond = statistics.variance(logs) - statistics.fmean(own)
    return f"{metric} {math.sqrt(max(beyond, 0.0)):.1%} (all {statistics.stdev(logs):.1%})"


if __name__ == "__main__":
    main()
