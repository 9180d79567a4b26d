"""Streams in the A/B gate (issue 70, the same-session A/B's starting point): an SDK's stream pairs in two trees.

    python validation/stream_ab.py --out DIR --sessions 3 --busy 2

The async pairs of stream_decided.py (the ``openai`` SDK against raw httpx, one at a time and 8 in
flight), the SDK side through a layer that spins ``spin_ns.txt`` ns a chunk: main spins 0, the head a
share of the SDK stream's time (``--slower 0.10``: +10% of its total one at a time), calibrated on the
base tree's rounds of an A/B session of main against itself beside the same busy loops (a busy plain
session's figure made a "+10%" head read +16..+67%).
Each session, beside ``--busy`` busy loops: ``pytest --overhead --overhead-against=main
--overhead-fail-above=transport:5`` on main (identical trees) and on the head. Reported per tree: the
pairs' ratios' (gated) and the SDK side's rows' (``[framework]``, shown only) total and events/s change
at the base tree, the gate's finding at 5%, what each change detects, the sessions the gate failed, and
each session's time against a plain one's. Needs ``pip install openai``.
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict

import harness

TEST = """
import pathlib
import time

import pytest
from sdk_clients import async_sides

SPIN_NS = int(pathlib.Path("spin_ns.txt").read_text())


def spin(ns):
    end = time.perf_counter_ns() + ns
    while time.perf_counter_ns() < end:
        pass


def layered(start):  # the framework's layer over each chunk: what the head makes slower
    async def stream():
        async for chunk in await start():
            spin(SPIN_NS)
            yield chunk

    return stream


@pytest.mark.anyio
@pytest.mark.parametrize("concurrency", [1, 8])
async def test_sdk_ab(transport, asgi_server, concurrency):
    async with async_sides(asgi_server("server_app:app")) as (raw, sdk):
        await transport.acompare_streams(raw, layered(sdk), label=f"c={concurrency}", concurrency=concurrency)
"""
ROWS = ("c=1", "c=8", "c=1 [framework]", "c=8 [framework]")
"""The pairs' ratios (gated) and the SDK side's own figures (shown, not gated)."""
CALIBRATION_ROW = "c=1 [framework]"
FIGURES = ("total", "events_per_s")
THRESHOLD = 5.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    harness.openai_stream_options(parser, pace_ms=0.0)
    harness.session_options(parser, sessions=3, busy=2)
    parser.add_argument("--slower", type=float, default=0.10, help="the head's share of the SDK stream's total")
    args = parser.parse_args()
    folder = harness.openai_stream_project(args, TEST)
    common = ("-p", "anyio", "-p", "no:xdist")
    (folder / "spin_ns.txt").write_text("0")
    harness.git(folder, "add", "-A")
    harness.git(folder, "commit", "-qm", "main")
    with harness.busy_loops(args.busy, seconds=3600.0):
        plain = harness.session(folder, args.out / "plain.json", *common, paths=[harness.SRC])
        against = ("--overhead-against=main", f"--overhead-fail-above=transport:{THRESHOLD:g}")
        base = harness.session(folder, args.out / "calibration.json", *common, *against, paths=[harness.SRC])
        total = next(  # the A/B's own base: its stream as the gate's rounds read it beside these busy loops
            f["places"][0]["change"]["old"]
            for f in base.figures
            if f["row"] == CALIBRATION_ROW and f["metric"] == "total"
        )
        spin_ns = int(args.slower * total * 1e9 / args.tokens)
        print(
            f"plain session {plain.wall_s:.0f} s; the SDK's stream {1000 * total:.2f} ms: the head spins {spin_ns} ns a chunk"
        )
        harness.git(folder, "checkout", "-qb", "head")
        (folder / "spin_ns.txt").write_text(str(spin_ns))
        harness.git(folder, "commit", "-qam", "head: the layer spins")
        found: dict[str, list[dict[tuple[str, str], tuple[float, float, str]]]] = defaultdict(list)
        walls: list[float] = []
        for number in range(args.sessions):
            for tree in ("main", "head"):
                harness.git(folder, "checkout", "-q", tree)
                ran = harness.session(
                    folder,
                    args.out / f"{tree}{number}.json",
                    *common,
                    *against,
                    paths=[harness.SRC],
                )
                walls.append(ran.wall_s)
                found[tree].append(harness.base_changes(ran.run, ROWS, FIGURES, THRESHOLD))
                print(f"session {number} {tree}: exit {ran.exit}, {ran.wall_s:.0f} s")
    report(found, walls, plain.wall_s)


def report(
    found: dict[str, list[dict[tuple[str, str], tuple[float, float, str]]]], walls: list[float], plain_s: float
) -> None:
    for tree, sessions in found.items():
        for row in ROWS:
            for metric in FIGURES:
                cells = [s[(row, metric)] for s in sessions if (row, metric) in s]
                said = "; ".join(f"{p:+.1f}% ±{d:.1f}% {f}" for p, d, f in cells)
                regressed = sum(f == "regressed" for _, _, f in cells)
                same = sum(f == "same" for _, _, f in cells)
                pooled = statistics.fmean(p for p, _, _ in cells) if cells else float("nan")
                print(
                    f"{tree}: {row} {metric}: {regressed} regressed, {same} same of {len(cells)} (mean {pooled:+.1f}%): {said}"
                )
    print(
        f"A/B session {statistics.median(walls):.0f} s (median) against a plain one's {plain_s:.0f} s: {statistics.median(walls) / plain_s:.1f}x"
    )


if __name__ == "__main__":
    main()
