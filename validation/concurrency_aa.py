"""The identical-callables check at concurrent callers: fresh sessions of one A/A pair.

Each run is a fresh ``pytest --overhead`` session of one test whose baseline and framework
are the same function, measured with ``concurrency`` callers (threads) at ``max`` (5%). A
"false failure" is any verdict but pass (the pair fails or is inconclusive); the spread is the
range of the estimates over the runs. Run alone: it is all timing.

    .venv/bin/python validation/concurrency_aa.py [--runs 20] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

import harness

TEST = """
import pytest


def work():
    return sorted(range(200, 0, -1))[:5]


def same():
    return sorted(range(200, 0, -1))[:5]


@pytest.mark.overhead(max={budget}, concurrency={concurrency})
def test_identical(overhead):
    overhead.compare(baseline=work, framework=same)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--max", type=float, default=0.05)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="overheadbench-aa-"))
    (folder / "test_aa.py").write_text(TEST.format(budget=args.max, concurrency=args.concurrency))
    estimates, verdicts, walls, widths = [], [], [], []
    for run in range(args.runs):
        out = folder / f"run{run}.json"
        result = harness.session(folder, out, str(folder / "test_aa.py")).results[0]
        estimates.append(100 * result["overhead"])
        verdicts.append(result["verdict"])
        walls.append(result["wall_s"])
        widths.append(100 * (result["ci"][1] - result["ci"][0]) / 2)
        print(
            f"run {run + 1}: {estimates[-1]:+.2f}% (±{widths[-1]:.2f}) {verdicts[-1]} in {walls[-1]:.1f} s", flush=True
        )
    failures = sum(verdict != "pass" for verdict in verdicts)
    print(
        f"concurrency {args.concurrency}, max {args.max:.0%}, {args.runs} fresh runs: {failures} false failures "
        f"({verdicts.count('inconclusive')} inconclusive), spread {max(estimates) - min(estimates):.2f} points, "
        f"median half-width {statistics.median(widths):.2f} points, wall per pair {statistics.median(walls):.1f} s"
    )


if __name__ == "__main__":
    main()
