"""Count mode's figures (issue 7): the same counts on every run, what counting costs, and
the project's middleware pairs in both modes side by side.

    python validation/count_mode.py --runs 20 [--out DIR]

1. ``--runs`` fresh ``pytest --overhead --overhead-mode=count`` sessions over every pair of
   the benchmark suite (each a new process with its own hash seed and memory layout);
   for every pair and figure, how many distinct values the runs gave.
2. One time-mode session over the middleware pairs, and the count-mode figures beside it.
3. The cost of counting per call: a few of the example framework's callables timed bare,
   under the instruction counter and under the allocation tracer.
Prints markdown. Counting itself is not disturbed by other load, but step 2 and 3 time
things: run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import harness

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
PAIRS = [
    "benchmarks/test_middleware_overhead.py",
    "benchmarks/test_composition_overhead.py",
    "benchmarks/test_counted_overhead.py",
    "benchmarks/test_transport.py",
]
FIGURES = ("instructions", "peak_bytes", "kept_blocks", "kept_bytes")


def session(out: Path, *args: str) -> tuple[list[dict], float]:
    """One fresh pytest session over the pairs; its results and wall time (failures expected:
    time budgets judged on instructions)."""
    ran = harness.session(ROOT, out, *PAIRS, "-m", "overhead", *args)
    return ran.results, ran.wall_s


def determinism(runs: list[list[dict]]) -> list[str]:
    """Per pair: is every figure one value over all runs (per side, per repeat)?"""
    by_test: dict[str, list[dict]] = {}
    for results in runs:
        for result in results:
            if result["mode"] == "count":
                by_test.setdefault(result["nodeid"], []).append(result["counts"])
    lines = [
        "| pair | instructions/call (base -> framework) | distinct values over the runs: instructions, "
        "peak bytes, blocks kept, bytes kept | within a run |",
        "|---|---|---|---|",
    ]
    exact = 0
    for nodeid, counts in by_test.items():
        distinct = []
        for figure in FIGURES:
            values = {json.dumps([c["baseline"][figure], c["framework"][figure]]) for c in counts}
            distinct.append(len(values))
        within = all(
            len(set(c[side][figure])) == 1 for c in counts for side in ("baseline", "framework") for figure in FIGURES
        )
        exact += distinct == [1] * len(FIGURES)
        first = counts[0]

        def span(side: str) -> str:
            values = first[side]["instructions"]
            return f"{min(values):,.0f}" + ("" if len(set(values)) == 1 else f"..{max(values):,.0f}")

        lines.append(
            f"| `{nodeid.split('::', 1)[1]}` | {span('baseline')} -> {span('framework')} | "
            f"{', '.join(map(str, distinct))} | {'exact' if within else 'varies'} |"
        )
    lines.insert(0, f"{exact} of {len(by_test)} pairs gave one value for every figure in all {len(runs)} runs.\n")
    return lines


def side_by_side(timed: list[dict], counted: list[dict]) -> list[str]:
    counted_by_id = {r["nodeid"]: r for r in counted if r["mode"] == "count"}
    lines = [
        "| pair | time overhead (95% CI) | instruction overhead | instructions/call | peak memory/call "
        "(base -> framework) | blocks kept/call |",
        "|---|---|---|---|---|---|",
    ]
    for result in timed:
        other = counted_by_id.get(result["nodeid"])
        if result["mode"] != "time" or other is None:
            continue
        counts = other["counts"]
        median = lambda side, figure: sorted(counts[side][figure])[len(counts[side][figure]) // 2]  # noqa: E731
        lines.append(
            f"| `{result['nodeid'].split('::', 1)[1]}` | {100 * result['overhead']:.1f}% "
            f"({100 * result['ci'][0]:.1f}..{100 * result['ci'][1]:.1f}) | {100 * other['overhead']:.1f}% | "
            f"{median('baseline', 'instructions'):,.0f} -> {median('framework', 'instructions'):,.0f} | "
            f"{median('baseline', 'peak_bytes'):,.0f} -> {median('framework', 'peak_bytes'):,.0f} B | "
            f"{median('baseline', 'kept_blocks'):g} -> {median('framework', 'kept_blocks'):g} |"
        )
    return lines


def counting_cost() -> list[str]:
    """Per-call time bare, counted (instructions) and traced (allocations), best of 5."""
    sys.path.insert(0, str(BENCHMARKS))
    from framework import CircuitBreaker, EchoAgent, Metrics, Retry, Timeout, stack  # type: ignore[import-not-found]
    from test_counted_overhead import MESSAGE, AuditLog  # type: ignore[import-not-found]

    from overheadbench.instruments import allocations, instructions, walltime

    agent = EchoAgent()
    callables = {
        "bare agent": agent,
        "retry": Retry(agent),
        "4-layer stack": stack(agent, Metrics, Retry, CircuitBreaker, lambda a: Timeout(a, seconds=30)),
        "audit log (json + sha256 in C)": AuditLog(agent),
    }
    lines = ["| callable | bare per call | counting instructions | tracing allocations |", "|---|---|---|---|"]
    calls = 2000
    for name, target in callables.items():
        fn = lambda target=target: target.handle(MESSAGE)  # noqa: E731
        bare = min(walltime.sync_block(fn)(calls) for _ in range(5)) / calls
        counter = instructions.InstructionCounter()
        counted_block = instructions.sync_block(fn, counter)
        counted = min(_timed(lambda: counted_block(calls)) for _ in range(5)) / calls
        traced_block = allocations.sync_block(fn)
        traced = min(_timed(lambda: traced_block(calls)) for _ in range(5)) / calls
        lines.append(
            f"| {name} | {bare / 1e3:.2f} µs | {counted / 1e3:.1f} µs ({counted / bare:.0f}x) | "
            f"{traced / 1e3:.1f} µs ({traced / bare:.1f}x) |"
        )
    return lines


def _timed(run) -> int:
    started = time.perf_counter_ns()
    run()
    return time.perf_counter_ns() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--out", type=Path, default=None)
    options = parser.parse_args()
    out = options.out or Path(tempfile.mkdtemp(prefix="overheadbench-count-"))
    out.mkdir(parents=True, exist_ok=True)
    runs, walls = [], []
    for index in range(options.runs):
        results, wall = session(out / f"count_{index:02d}.json", "--overhead-mode=count")
        runs.append(results)
        walls.append(wall)
    timed, timed_wall = session(out / "time.json")
    print(f"# Count mode: {options.runs} runs, Python {sys.version.split()[0]}\n")
    print(
        f"Sessions over {len(runs[0])} pairs: count mode {min(walls):.1f}-{max(walls):.1f} s, time mode "
        f"{timed_wall:.1f} s (pytest start-up and the HTTP servers included). JSON in {out}.\n"
    )
    print("## The same counts on every run\n")
    print("\n".join(determinism(runs)))
    print("\n## Both modes side by side\n")
    print("\n".join(side_by_side(timed, runs[0])))
    print("\n## What counting costs per call\n")
    print("\n".join(counting_cost()))


if __name__ == "__main__":
    main()
