"""Validate the engine's figures in fresh `pytest --overhead` runs (issue 3's acceptance figures).

    python validation/validate.py --runs 50 [--out DIR] [-- extra pytest args]

Each run is one fresh `pytest --overhead` session over six pairs (A/A, +25% work, +10%
work; sync and async). The +25% reference is a long measurement in other fresh processes:
sessions of the same six tests (a pair's ratio depends on what the process ran before it:
the +25% pair read 0.3-0.8 points higher when run alone), each process sampling ~0.2 s
where a run's replicas sample ~0.05 s, as many processes as --reference-budget seconds per
pair allow (~25). It is taken in --reference-segments parts spread evenly over the runs
(before the first, between, after the last) so it sees the machine in the same states as
the runs; the parts' own values are printed, which shows how far the machine drifted.
Prints a markdown summary and writes every run's JSON under --out.
This takes ~10 minutes at --runs 50: run it on a quiet machine, nothing else running.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import harness

HERE = Path(__file__).resolve().parent

TESTS = """
import pytest
from pairs import BASE_ITERATIONS as N, awork_a, awork_b, work_a, work_b

INJECTED = round(N * 1.25)
POWER = round(N * 1.10)


@pytest.mark.overhead(max=0.05)
def test_aa_sync(overhead):
    overhead.compare(lambda: work_a(N), lambda: work_b(N))


@pytest.mark.overhead(max=0.05)
def test_aa_async(overhead):
    async def baseline():
        return await awork_a(N)

    async def framework():
        return await awork_b(N)

    overhead.compare(baseline, framework)


@pytest.mark.overhead(max=1.0)
def test_injected_sync(overhead):
    overhead.compare(lambda: work_a(N), lambda: work_b(INJECTED))


@pytest.mark.overhead(max=1.0)
def test_injected_async(overhead):
    async def baseline():
        return await awork_a(N)

    async def framework():
        return await awork_b(INJECTED)

    overhead.compare(baseline, framework)


@pytest.mark.overhead(max=0.05)
def test_power_sync(overhead):
    overhead.compare(lambda: work_a(N), lambda: work_b(POWER))


@pytest.mark.overhead(max=0.05)
def test_power_async(overhead):
    async def baseline():
        return await awork_a(N)

    async def framework():
        return await awork_b(POWER)

    overhead.compare(baseline, framework)
"""


def run_session(folder: Path, out: Path, select: str, extra: list[str]) -> tuple[dict, float]:
    """One fresh session: its results by test name, and its whole wall time (start-up included)."""
    ran = harness.session(folder, out, "-k", select, "-o", "overhead_inconclusive=warn", *extra)
    return {r["nodeid"].split("::")[1]: r for r in ran.results}, ran.wall_s


def pooled_reference(segments: list[dict]) -> dict:
    """The reference for each +25% pair: every segment's processes pooled into one estimate."""
    from overheadbench.engine.samples import Kind, ReplicaSamples
    from overheadbench.engine.settings import Settings
    from overheadbench.pairs.pair import Budget, Pair
    from overheadbench.pairs.verdict import summarise as estimate

    pooled = {}
    for name in (name for name in segments[0] if name.startswith("test_injected")):
        replicas = [ReplicaSamples.from_json(r) for segment in segments for r in segment[name]["samples"]]
        pair = Pair(name, Budget(max_overhead=1.0))
        result = estimate(pair, Kind(segments[0][name]["kind"]), replicas, Settings(), 0.0)
        pooled[name] = {
            "overhead": result.overhead,
            "processes": len(replicas),
            "parts": [segment[name]["overhead"] for segment in segments],
        }
    return pooled


def harness_versus_bare_loop(calls: int = 200_000, repeats: int = 15) -> dict:
    """Per-call cost (ns) of the harness's blocks with an empty callable vs hand-written loops."""
    import anyio

    from overheadbench.instruments.walltime import async_block, empty_async, empty_sync, sync_block

    def bare_sync() -> int:
        start = time.perf_counter_ns()
        for _ in range(calls):
            empty_sync()
        return time.perf_counter_ns() - start

    async def bare_async() -> int:
        start = time.perf_counter_ns()
        for _ in range(calls):
            await empty_async()
        return time.perf_counter_ns() - start

    harness_sync, harness_async = sync_block(empty_sync), async_block(empty_async)

    async def measure_async() -> tuple[list[int], list[int]]:
        pairs = [(await harness_async(calls), await bare_async()) for _ in range(repeats)]
        return [p[0] for p in pairs], [p[1] for p in pairs]

    sync_pairs = [(harness_sync(calls), bare_sync()) for _ in range(repeats)]
    async_harness, async_bare = anyio.run(measure_async)
    per_call = lambda values: statistics.median(values) / calls  # noqa: E731
    return {
        "sync": (per_call([p[0] for p in sync_pairs]), per_call([p[1] for p in sync_pairs])),
        "async": (per_call(async_harness), per_call(async_bare)),
    }


def speed_trend(results: list[dict]) -> str:
    """How the estimates move with the machine's speed in each run (its baseline time per call):
    the machine here ran the same code up to 2x slower at times, and a pair's ratio moved with it."""
    import numpy as np

    estimates = np.array([100 * r["overhead"] for r in results])
    speed = np.array([r["baseline_s"] * 1e9 for r in results])
    slope, intercept = np.polyfit(speed, estimates, 1)
    residual = estimates - (slope * speed + intercept)
    return (
        f"estimates vs machine speed (baseline {speed.min():.0f}..{speed.max():.0f} ns/call): correlation "
        f"{np.corrcoef(estimates, speed)[0, 1]:.2f}, {slope * (speed.max() - speed.min()):.2f} points "
        f"across that range; sd {estimates.std(ddof=1):.2f} points, {residual.std(ddof=2):.2f} without the trend"
    )


def processes_used(results: list[dict]) -> str:
    """``3: 41, 5: 9``: how many runs measured the pair in each number of processes."""
    counts = collections.Counter(r["processes"] for r in results)
    return ", ".join(f"{processes}: {runs}" for processes, runs in sorted(counts.items()))


def coverage_by_processes(results: list[dict], reference_pct: float) -> str:
    """Coverage of the reference split by how many processes a run used: a stopping rule that
    steered the estimate (adding processes until a verdict comes) shows up as a split here."""
    groups: dict[int, list[bool]] = collections.defaultdict(list)
    for r in results:
        groups[r["processes"]].append(100 * r["ci"][0] <= reference_pct <= 100 * r["ci"][1])
    return ", ".join(f"{processes} processes: {sum(hits)}/{len(hits)}" for processes, hits in sorted(groups.items()))


def summarise(runs: list[dict], reference: dict, session_walls: list[float]) -> str:
    lines = ["| kind | figure | measured | target |", "|---|---|---|---|"]
    for kind in ("sync", "async"):
        aa = [r[f"test_aa_{kind}"] for r in runs]
        inj = [r[f"test_injected_{kind}"] for r in runs]
        power = [r[f"test_power_{kind}"] for r in runs]
        aa_est = [100 * r["overhead"] for r in aa]
        ref = 100 * reference[f"test_injected_{kind}"]["overhead"]
        inj_est = [100 * r["overhead"] for r in inj]
        covered = sum(100 * r["ci"][0] <= ref <= 100 * r["ci"][1] for r in inj)
        half = [50 * (r["ci"][1] - r["ci"][0]) for r in inj]
        walls = [r["wall_s"] for r in aa + inj + power]
        lines += [
            f"| {kind} | A/A non-pass verdicts (max=5%) | {sum(r['verdict'] != 'pass' for r in aa)} / {len(aa)} | 0 |",
            f"| {kind} | A/A spread of estimates (max-min) | {max(aa_est) - min(aa_est):.2f} points "
            f"({min(aa_est):+.2f}..{max(aa_est):+.2f}) | ≤ 1.5 |",
            f"| {kind} | +25% reference ({reference[f'test_injected_{kind}']['processes']} processes; parts: "
            f"{', '.join(f'{100 * part:.2f}' for part in reference[f'test_injected_{kind}']['parts'])}) | {ref:.2f}% | |",
            f"| {kind} | +25%: estimates within ±1.5 points of reference | "
            f"{sum(abs(e - ref) <= 1.5 for e in inj_est)} / {len(inj)} (worst {max(abs(e - ref) for e in inj_est):.2f}) | all |",
            f"| {kind} | +25%: interval covers reference | {covered} / {len(inj)} | ≥ 90% |",
            f"| {kind} | +25%: median interval half-width | {statistics.median(half):.2f} points | ≤ 2 |",
            f"| {kind} | +25%: {speed_trend(inj)} | |",
            f"| {kind} | power: +10% fails under max=5% | {sum(r['verdict'] == 'fail' for r in power)} / {len(power)} | ≥ 95% |",
            f"| {kind} | median wall time per pair | {statistics.median(walls):.2f} s | ≤ 1.5 s |",
            f"| {kind} | whole session's wall time per pair (pytest start-up included) | "
            f"{statistics.median(session_walls) / len(runs[0]):.2f} s | |",
            f"| {kind} | harness cost per call | {statistics.median(r['harness_s'] for r in aa) * 1e9:.1f} ns | |",
            f"| {kind} | processes per pair (A/A, +25%, +10%: how many runs used each count) | "
            f"{processes_used(aa)}; {processes_used(inj)}; {processes_used(power)} | |",
            f"| {kind} | +25%: coverage by processes used (the stopping rule must not steer it) | "
            f"{coverage_by_processes(inj, ref)} | |",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument(
        "--reference-budget",
        type=float,
        default=8.0,
        help="seconds per pair for each part of the reference (default 8)",
    )
    parser.add_argument("--reference-segments", type=int, default=3)
    parser.add_argument("extra", nargs="*", help="extra pytest arguments for every run (after --)")
    args = parser.parse_args()
    if args.reference_segments < 2:
        parser.error("--reference-segments must be at least 2 (one before the runs, one after)")
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="overheadbench-validation-") as name:
        folder = Path(name)
        (folder / "pairs.py").write_text((HERE / "pairs.py").read_text())
        (folder / "test_validation.py").write_text(TESTS)
        # 8 processes sample budget * 0.2 / 8 each (0.2 s at 8 s), never stopping early
        # (a target of ±0.1 point is not met); further rounds of 2, up to 32, fill the budget.
        reference_args = [
            "--overhead-processes=8",
            "--overhead-max-processes=32",
            "--overhead-target=0.001",
            f"--overhead-time-budget={args.reference_budget}s",
        ]
        due = {round(i * args.runs / (args.reference_segments - 1)) for i in range(args.reference_segments)}
        segments: list[dict[str, Any]] = []
        runs, session_walls = [], []
        for index in range(args.runs + 1):
            if index in due:
                segments.append(
                    run_session(folder, args.out / f"reference-{len(segments)}.json", "test_", reference_args)[0]
                )
            if index == args.runs:
                break
            results, wall_s = run_session(folder, args.out / f"run-{index:02d}.json", "test_", args.extra)
            runs.append(results)
            session_walls.append(wall_s)
            print(f"run {index + 1}/{args.runs} done", file=sys.stderr, flush=True)
    loops = harness_versus_bare_loop()
    report = summarise(runs, pooled_reference(segments), session_walls)
    report += (
        f"\n\nHarness loop vs a bare hand-written loop, empty callable, per call: sync {loops['sync'][0]:.1f} ns vs "
        f"{loops['sync'][1]:.1f} ns ({loops['sync'][0] - loops['sync'][1]:+.1f} ns); async {loops['async'][0]:.1f} ns vs "
        f"{loops['async'][1]:.1f} ns ({loops['async'][0] - loops['async'][1]:+.1f} ns).\n"
        f"Runs: {args.runs} fresh sessions, extra args {args.extra or 'none'}; wall time {time.perf_counter() - started:.0f} s."
    )
    (args.out / "summary.md").write_text(report + "\n")
    print(report)


if __name__ == "__main__":
    main()
