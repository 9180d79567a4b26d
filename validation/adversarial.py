"""Adversarial pairs (issue 68): no pass or fail whose interval misses the truth.

    python validation/adversarial.py truth --out DIR                      # ~2 min, run alone
    python validation/adversarial.py truth --out DIR --busy 4             # the same beside 4 busy loops
    python validation/adversarial.py collect --out DIR --sessions 5       # alone: ~8 min
    python validation/adversarial.py collect --out DIR --sessions 5 --busy 4
    python validation/adversarial.py report --out DIR                     # the table again
    python validation/adversarial.py collect --out DIR2 --select growing  # one pair again (copy the truths)

The pairs (``adversarial_project/adversaries.py``): a baseline whose first 10/50/100/300/1000 calls are
slow (15 µs, then ~60 ns), bimodal calls, a pause every 500 calls, a framework that hands its work
to a thread pool, an async side that yields to its loop, a side whose cost grows with its calls
(until its history is full), a ~60 ns baseline; each under a budget its truth is far from.

``truth``: each pair's long interleaved reference outside pytest, in ``--processes`` fresh
processes, beside ``--busy`` busy loops (a pair that waits on a thread costs what the machine's load
makes it cost: its truth is the load's): the pair built as the test builds it, warmed up for
``--warm`` seconds, then blocks of about a millisecond a side, alternating, for ``--seconds``; the
ratio of each side's total time per call (what a call costs on average, pauses included), with the
same loop the plugin times (``for _ in range(n): fn()``). The truth is the median over the
processes, and the range they span is kept beside it (``truth-b{busy}.json``).

``collect``: ``--sessions`` fresh sessions at each of ``overhead_processes`` 1, 3 and the default,
beside ``--busy`` busy loops, each run kept as ``DIR/b{busy}-p{processes}-{n}.json``.

``report``: per pair, setting and load: pass, fail, inconclusive and unknown; **wrong**, a pass or a
fail whose interval misses every process of the reference at the session's load (the truth's own
range); and how many miss the quiet machine's reference (a CPU-bound pair's ratio should not move
with load; a pair that waits on a thread costs what the load makes it cost).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import harness

PROJECT = Path(__file__).parent / "adversarial_project"
SETTINGS = {"p1": ["-o", "overhead_processes=1"], "p3": ["-o", "overhead_processes=3"], "default": []}
REFERENCE = """
import asyncio, json, sys, time
sys.path.insert(0, {project!r})
from adversaries import ADVERSARIES

pair = ADVERSARIES[{name!r}]
baseline, framework = pair.build()


def sync_block(fn, n):
    start = time.perf_counter_ns()
    for _ in range(n):
        fn()
    return time.perf_counter_ns() - start


async def async_block(fn, n):
    start = time.perf_counter_ns()
    for _ in range(n):
        await fn()
    return time.perf_counter_ns() - start


async def block(fn, n):
    return await async_block(fn, n) if pair.is_async else sync_block(fn, n)


async def main():  # one loop for the whole reference, as an app runs (and the plugin times) an async pair
    end = time.monotonic() + {warm}
    while time.monotonic() < end:
        await block(baseline, 64)
        await block(framework, 64)
    sizes = []
    for fn in (baseline, framework):
        n = 1
        while await block(fn, n) < 1e6 and n < 1 << 24:
            n *= 2
        sizes.append(n)
    totals, end = [0, 0], time.monotonic() + {seconds}
    while time.monotonic() < end:
        totals[0] += await block(baseline, sizes[0])
        totals[1] += await block(framework, sizes[1])
    return (totals[1] / sizes[1]) / (totals[0] / sizes[0])


print(json.dumps(asyncio.run(main())))
"""


def truth(out: Path, processes: int, warm: float, seconds: float, busy: int) -> dict[str, Any]:
    names = subprocess.run(
        [sys.executable, "-c", "import json, adversaries; print(json.dumps(list(adversaries.ADVERSARIES)))"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = {}
    with harness.busy_loops(busy):
        for name in json.loads(names):
            found[name] = _reference(name, processes, warm, seconds)
            shown = found[name]
            print(f"{name}: {shown['ratio']:.4f} ({shown['low']:.4f}..{shown['high']:.4f})", flush=True)
    (out / f"truth-b{busy}.json").write_text(json.dumps(found, indent=1))
    return found


def _reference(name: str, processes: int, warm: float, seconds: float) -> dict[str, float]:
    """One pair's reference: its ratio in each of ``processes`` fresh processes, their median and range."""
    code = REFERENCE.format(project=str(PROJECT), name=name, warm=warm, seconds=seconds)
    ratios = [
        json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
        for _ in range(processes)
    ]
    return {"ratio": statistics.median(ratios), "low": min(ratios), "high": max(ratios)}


def collect(out: Path, sessions: int, busy: int, python: str, select: str) -> None:
    chosen = ["-k", select] if select else []
    with harness.busy_loops(busy):
        for n in range(sessions):
            for setting, args in SETTINGS.items():
                path = out / f"b{busy}-{setting}-{n}.json"
                started = time.monotonic()
                ran = harness.session(PROJECT, path, *args, *chosen, python=python, paths=[harness.SRC], reuse=True)
                print(f"{path.name}: {len(ran.results)} pairs, {time.monotonic() - started:.0f} s", flush=True)


def name_of(nodeid: str) -> str:
    return nodeid.rsplit("[", 1)[1].rstrip("]")


def report(out: Path) -> str:
    truths = {load: json.loads(path.read_text()) for path in out.glob("truth-*.json") for load in [path.stem[6:]]}
    tally: dict[tuple[str, str, str], Counter[str]] = {}
    wrong: list[str] = []
    for path in sorted(out.glob("b*-*.json")):
        load, setting, _ = path.stem.split("-")
        for result in json.loads(path.read_text())["results"]:
            name = name_of(result["nodeid"])
            verdict = result.get("outcome") or result["verdict"]
            counts = tally.setdefault((name, setting, load), Counter())
            counts[verdict] += 1
            low, high = (1 + bound for bound in result["ci"])
            truth, quiet = truths[load][name], truths["b0"][name]
            misses = [high < t["low"] or low > t["high"] for t in (truth, quiet)]
            if verdict in ("pass", "fail") and misses[0]:
                counts["wrong"] += 1
                wrong.append(f"{path.name} {name}: {verdict} {low:.3f}..{high:.3f}, truth {truth['ratio']:.3f}")
            counts["misses quiet"] += verdict in ("pass", "fail") and misses[1]
    lines = [
        "| pair | truth at this load (range over reference processes) | setting | load | pass | fail | inconclusive "
        "| unknown | wrong | misses the quiet truth |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (name, setting, load), counts in sorted(tally.items()):
        truth = truths[load][name]
        lines.append(
            f"| {name} | {truth['ratio']:.3f} ({truth['low']:.3f}..{truth['high']:.3f}) | {setting} | {load} | "
            f"{counts['pass']} | {counts['fail']} | {counts['inconclusive']} | {counts['unknown']} | {counts['wrong']} "
            f"| {counts['misses quiet']} |"
        )
    total = sum(c["wrong"] for c in tally.values())
    decided = sum(c["pass"] + c["fail"] for c in tally.values())
    lines += ["", f"wrong verdicts: {total} of {decided} pass or fail verdicts", *wrong]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    reference = commands.add_parser("truth", help="each pair's long interleaved reference outside pytest")
    reference.add_argument("--out", type=Path, required=True)
    reference.add_argument("--processes", type=int, default=5)
    reference.add_argument("--warm", type=float, default=1.0)
    reference.add_argument("--seconds", type=float, default=4.0)
    reference.add_argument("--busy", type=int, default=0, help="busy loops beside the reference")
    sessions = commands.add_parser("collect", help="sessions at processes 1, 3 and the default")
    sessions.add_argument("--out", type=Path, required=True)
    harness.session_options(sessions, sessions=5, busy=0)
    sessions.add_argument("--select", default="", help="only the pairs pytest's -k expression picks")
    table = commands.add_parser("report", help="the verdict table")
    table.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.command == "truth":
        truth(args.out, args.processes, args.warm, args.seconds, args.busy)
    elif args.command == "collect":
        collect(args.out, args.sessions, args.busy, args.python, args.select)
    else:
        print(report(args.out))


if __name__ == "__main__":
    main()
