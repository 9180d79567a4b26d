"""Validate the engine's figures in fresh `pytest --overhead` runs (issue 3's acceptance figures).

    python benchmarks/validation/validate.py --runs 50 [--out DIR] [-- extra pytest args]

Each run is one fresh `pytest --overhead` session over six pairs (A/A, +25% work, +10%
work; sync and async). The +25% reference is a long measurement in 30 other fresh
processes. Prints a markdown summary and writes every run's JSON under --out.
This takes ~10 minutes at --runs 50: run it on a quiet machine, nothing else running.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

TESTS = '''
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
'''


def run_session(folder: Path, out: Path, select: str, extra: list[str]) -> dict:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--overhead",
               f"--overhead-json={out}", "-k", select, "-o", "overhead_inconclusive=warn", *extra]
    subprocess.run(command, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, check=False)
    return {r["nodeid"].split("::")[1]: r for r in json.loads(out.read_text())["results"]}


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


def summarise(runs: list[dict], reference: dict) -> str:
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
            f"| {kind} | +25% reference (30 processes) | {ref:.2f}% | |",
            f"| {kind} | +25%: estimates within ±1.5 points of reference | "
            f"{sum(abs(e - ref) <= 1.5 for e in inj_est)} / {len(inj)} (worst {max(abs(e - ref) for e in inj_est):.2f}) | all |",
            f"| {kind} | +25%: interval covers reference | {covered} / {len(inj)} | ≥ 90% |",
            f"| {kind} | +25%: median interval half-width | {statistics.median(half):.2f} points | ≤ 2 |",
            f"| {kind} | power: +10% fails under max=5% | {sum(r['verdict'] == 'fail' for r in power)} / {len(power)} | ≥ 95% |",
            f"| {kind} | median wall time per pair | {statistics.median(walls):.2f} s | ≤ 1.5 s |",
            f"| {kind} | harness cost per call | {statistics.median(r['harness_s'] for r in aa) * 1e9:.1f} ns | |",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument("--reference-processes", type=int, default=30)
    parser.add_argument("extra", nargs="*", help="extra pytest arguments for every run (after --)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="overheadbench-validation-") as name:
        folder = Path(name)
        (folder / "pairs.py").write_text((HERE / "pairs.py").read_text())
        (folder / "test_validation.py").write_text(TESTS)
        # ~1 s of sampling in each of N fresh processes (slice = budget * 0.2 / N), one round only
        # (a target of ±50% is met at once, so no further rounds are added).
        reference = run_session(folder, args.out / "reference.json", "injected", [
            f"--overhead-processes={args.reference_processes}", "--overhead-target=0.5",
            f"--overhead-time-budget={5 * args.reference_processes}s"])
        runs = []
        for index in range(args.runs):
            runs.append(run_session(folder, args.out / f"run-{index:02d}.json", "test_", args.extra))
            print(f"run {index + 1}/{args.runs} done", file=sys.stderr, flush=True)
    loops = harness_versus_bare_loop()
    report = summarise(runs, reference)
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
