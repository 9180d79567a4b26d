"""Count mode's determinism on the suite's count-mode pairs (issue 25): the same counts on every
fresh session? And what a pair costs under each counter.

    python validation/count_determinism.py --sessions 20 --counter callgrind   # ~10 min, run alone

Each session is a fresh ``pytest --overhead -k "instructions or count"`` over
benchmarks/test_counted_overhead.py's count-mode pairs; per pair it prints the median count per
call of each side over the sessions, their spread across sessions (lowest..highest, relative to
the median), the instruction overhead's spread, how many sessions gave the verdict of the first,
and the median wall time per pair.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

import harness

ROOT = Path(__file__).resolve().parents[1]


def session(out: Path, counter: str) -> list[dict]:
    args = ("-k", "instructions or count", f"--overhead-counter={counter}", "benchmarks/test_counted_overhead.py")
    ran = harness.session(ROOT, out, *args, paths=[ROOT / "src"])
    return [r for r in ran.results if r["mode"] == "count"]


def spread(values: list[float]) -> str:
    middle = statistics.median(values)
    return f"{100 * (min(values) / middle - 1):+.2f}..{100 * (max(values) / middle - 1):+.2f}%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--counter", default="callgrind")
    args = parser.parse_args()
    rows: dict[str, dict[str, list]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for index in range(args.sessions):
            for result in session(Path(folder) / f"s{index}.json", args.counter):
                row = rows.setdefault(result["nodeid"].split("::")[1], {"b": [], "f": [], "o": [], "v": [], "w": []})
                counts = result["counts"]
                row["b"].append(statistics.median(counts["baseline"]["instructions"]))
                row["f"].append(statistics.median(counts["framework"]["instructions"]))
                row["o"].append(result["overhead"])
                row["v"].append(result["verdict"])
                row["w"].append(result["wall_s"])
    print(f"counter: {args.counter}, {args.sessions} fresh sessions")
    print(
        "| pair | baseline/call | spread | framework/call | spread | overhead (lowest..highest) | same verdict | wall/pair |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, row in rows.items():
        same = sum(v == row["v"][0] for v in row["v"])
        print(
            f"| `{name}` | {statistics.median(row['b']):,.1f} | {spread(row['b'])} | {statistics.median(row['f']):,.1f} | "
            f"{spread(row['f'])} | {100 * min(row['o']):+.2f}..{100 * max(row['o']):+.2f}% | {same}/{len(row['v'])} "
            f"({row['v'][0]}) | {statistics.median(row['w']):.2f} s |"
        )


if __name__ == "__main__":
    main()
