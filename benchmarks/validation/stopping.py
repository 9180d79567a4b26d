"""Does the rule that adds processes inflate the error rate? Resampling real processes.

    python benchmarks/validation/stopping.py [--runs-from benchmarks/validation/out] [--draws 2000]

Reads the per-process samples of the runs `validate.py` wrote (each pair's replicas, every
run), and replays the engine's own procedure (`overheadbench.replicas.replication.pair_plan`, with a
pool that hands out processes drawn at random from those real ones) under several rules:

* `width` (the engine's): 6 processes first, +3 while the interval is wider than ±1 point, up to 9;
  the same from 5 and from 3 processes (cheaper, but below 6 the interval is mean ± t, and a draw
  whose first few processes happen to agree stops with an interval that is too narrow);
* the rule before (9 processes, +2 while the interval is wide *or the verdict inconclusive*);
* fixed 5 and 9 processes.

For each it prints the coverage of the truth (the median over every real process of that pair),
coverage split by how many processes a draw used, the estimate's spread, the mean process count,
and the verdicts against a budget 0.5 points above the truth (the right verdict is pass; a
"fail" is a false alarm, an inconclusive a non-answer). Drawing processes independently leaves
out what `validate.py` cannot (the machine's state drifting between runs), so this isolates the
stopping rule itself. No timing: it runs in seconds.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from overheadbench.engine.samples import Side
from overheadbench.engine.sampling import drive_sync
from overheadbench.engine.settings import Settings
from overheadbench.engine.stats import combine, replica_ratio
from overheadbench.pairs.pair import Budget, Pair
from overheadbench.pairs.verdict import judge_time
from overheadbench.replicas.places import places_plan

HERE = Path(__file__).resolve().parent
PAIRS = ("test_aa_sync", "test_aa_async", "test_injected_sync", "test_injected_async")
RULES = {  # first processes, added per round, most processes, also while inconclusive
    "width (6, +3, up to 9: the default)": (6, 3, 9, False),
    "width (5, +4, up to 9)": (5, 4, 9, False),
    "width (3, +2, up to 9)": (3, 2, 9, False),
    "old: width or inconclusive (9, +2, up to 13)": (9, 2, 13, True),
    "fixed 6": (6, 1, 6, False),
    "fixed 9": (9, 1, 9, False),
}


@dataclass(frozen=True)
class Process:
    """One real replica's result: its median ratio and within-process interval."""

    median: float
    low: float
    high: float


class ResamplingPool:
    """A replica pool whose processes are drawn at random from real ones."""

    def __init__(self, processes: list[Process], rng: random.Random) -> None:
        self.processes, self.rng = processes, rng

    def ensure(self, count: int, nodeid: str) -> None:
        pass

    def sample(self, index: int, calls_per_block: int, settings: Settings) -> Process:
        return self.rng.choice(self.processes)

    def release(self) -> None:
        pass

    def round_ns(self, count: int) -> float:
        return 0.0  # the time budget is not what is tested here


def load(folder: Path) -> dict[str, list[Process]]:
    processes: dict[str, list[Process]] = collections.defaultdict(list)
    for path in sorted(folder.glob("run-*.json")):
        for result in json.loads(path.read_text())["results"]:
            name = result["nodeid"].split("::")[-1]
            for sample in result["samples"]:
                processes[name].append(
                    Process(*replica_ratio(sample["baseline_ns"], sample["framework_ns"], 0.0, 0.95))
                )
    return processes


def draw(processes: list[Process], rule: tuple[int, int, bool], budget: Budget, rng: random.Random):
    start, extra, cap, on_verdict = rule
    settings = Settings(processes=start, extra_processes=extra, max_processes=cap, time_budget_s=1e9)

    def estimate(replicas: list[Process]):
        found = combine([(p.median, p.low, p.high) for p in replicas], 0.95)
        return found, judge_time(found.overhead, found.overhead_ci, 1e-6, Pair("replayed", budget))

    def too_wide(replicas: list[Process]) -> bool:
        found, verdict = estimate(replicas)
        wide = (found.high - found.low) / 2 > settings.target_halfwidth
        return wide or (on_verdict and verdict.status == "inconclusive")

    blocks = {Side.BASELINE: lambda n: 10**6, Side.FRAMEWORK: lambda n: 10**6}
    pool = ResamplingPool(processes, rng)
    replicas = drive_sync(places_plan(settings, rng, lambda: 0, [pool], (), "x", too_wide), blocks).samples
    found, verdict = estimate(replicas)
    return found, verdict.status, len(replicas)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs-from", type=Path, default=HERE / "out")
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    processes = load(args.runs_from)
    if not processes:
        sys.exit(f"no run-*.json in {args.runs_from}: run validate.py first")
    print(
        "| pair | rule | coverage | coverage by processes used | estimate sd | mean processes | "
        "budget = truth + 0.5 points: pass / inconclusive / fail |"
    )
    print("|---|---|---|---|---|---|---|")
    for name in PAIRS:
        real = processes[name]
        truth = float(np.median([p.median for p in real]))
        budget = Budget(max_overhead=truth - 1 + 0.005)
        for label, rule in RULES.items():
            rng = random.Random(args.seed)
            draws = [draw(real, rule, budget, rng) for _ in range(args.draws)]
            hits = [found.low <= truth <= found.high for found, _, _ in draws]
            by_count: dict[int, list[bool]] = collections.defaultdict(list)
            for (_, _, count), hit in zip(draws, hits, strict=True):
                by_count[count].append(hit)
            verdicts = collections.Counter(status for _, status, _ in draws)
            print(
                f"| {name} ({len(real)} processes, truth {100 * (truth - 1):.2f}%) | {label} | "
                f"{np.mean(hits):.3f} | "
                + ", ".join(f"{count}: {np.mean(h):.2f} ({len(h)})" for count, h in sorted(by_count.items()))
                + f" | {100 * np.std([found.ratio for found, _, _ in draws]):.2f} points | "
                f"{np.mean([count for _, _, count in draws]):.1f} | "
                f"{verdicts['pass'] / args.draws:.3f} / {verdicts['inconclusive'] / args.draws:.3f} / "
                f"{verdicts['fail'] / args.draws:.3f} |"
            )
    print(f"\n{args.draws} draws per rule, processes from {args.runs_from}.")


if __name__ == "__main__":
    main()
