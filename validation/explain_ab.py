"""A change between places explained: is an injected slowdown ranked first? (issue 49, part 2)

    python validation/explain_ab.py collect --out DIR [--sessions 20] [--level 10]   # ~20 min, alone
    python validation/explain_ab.py report --out DIR

Every session runs in a frozen clone of this repository's HEAD (``DIR/tree``, as ab_gate.py's),
``--overhead-against=HEAD`` with the metrics middleware slowed in the head only (its two SLOWDOWN
lines edited: loop iterations in ``SlowedMetrics.handle`` and ``SlowedMetrics.process``,
calibrated once to ``--level`` percent of framework / baseline on the two-layer stack), on the
pairs that hold that layer: the metrics middleware alone and the minimal stack (metrics and
retry), sync and async. ``--overhead-explain`` explains every change, whatever the gate found; the
report counts, per pair, the sessions whose change explanation ranks the slowed function first,
and what the gate found at 5%.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ab_gate import change_of, clone, session, slow_head

SELECTION = ["benchmarks/test_middleware_overhead.py", "-k", "minimal_stack or (alone and metrics)"]
AGAINST = ["--overhead-against=HEAD", "--overhead-fail-above=5", "--overhead-explain"]
SLOWED = {"sync": ":SlowedMetrics.handle", "async": ":SlowedMetrics.process"}
CALIBRATION_ITERATIONS = 100


def collect(out: Path, sessions: int, level: float) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tree = clone(out, "tree")
    slow_head(tree, CALIBRATION_ITERATIONS, CALIBRATION_ITERATIONS)
    probe = session(tree, out / "calibrate.json", ["--overhead-against=HEAD", *SELECTION])
    stack = "minimal_stack_metrics_and_retry"
    per_iteration = {kind: change_of(probe, f"{stack}[{kind}]") / CALIBRATION_ITERATIONS for kind in SLOWED}
    iterations = {kind: max(1, round(level / per_iteration[kind])) for kind in SLOWED}
    (out / "calibration.json").write_text(json.dumps({"per_iteration": per_iteration, "iterations": iterations}))
    slow_head(tree, iterations["sync"], iterations["async"])
    for index in range(sessions):
        session(tree, out / f"explained-{index:02d}.json", [*AGAINST, *SELECTION])
    slow_head(tree, 0, 0)


def report(out: Path) -> str:
    runs = [json.loads(path.read_text()) for path in sorted(out.glob("explained-*.json"))]
    calibration = json.loads((out / "calibration.json").read_text())
    tests = sorted({result["nodeid"] for run in runs for result in run["results"]})
    lines = [
        f"{len(runs)} sessions; iterations injected {calibration['iterations']} "
        f"(per iteration, on the two-layer stack: "
        + ", ".join(f"{kind} {value:+.2f}%" for kind, value in calibration["per_iteration"].items())
        + ")",
        "",
        "| pair | slowed function ranked first | its rank otherwise | its share (median) | change (median) "
        "| gate at 5%: regressed / unknown / same |",
        "|---|---|---|---|---|---|",
    ]
    first_all = total = 0
    for test in tests:
        kind = "async" if "async" in test else "sync"
        ranks, shares, changes, findings = [], [], [], {"regressed": 0, "unknown": 0, "same": 0, "improved": 0}
        for run in runs:
            result = next(r for r in run["results"] if r["nodeid"] == test)
            (place,) = result["places"]
            rows = place["explain"]["rows"] if place.get("explain") else []
            rank = next((i + 1 for i, row in enumerate(rows) if row["where"].endswith(SLOWED[kind])), None)
            ranks.append(rank)
            shares.append(rows[rank - 1]["share"] if rank else 0.0)
            changes.append(change_of(run, test.split("::")[-1]))
            change = place["change"]
            low, high = _interval(change)
            findings[
                "regressed"
                if low > 5
                else "improved"
                if high < -5
                else "same"
                if -5 <= low and high <= 5
                else "unknown"
            ] += 1
        first = sum(1 for rank in ranks if rank == 1)
        first_all, total = first_all + first, total + len(ranks)
        others = ", ".join(str(rank) if rank else "absent" for rank in ranks if rank != 1) or "-"
        lines.append(
            f"| `{test.split('::')[-1]}` | {first} of {len(ranks)} | {others} | {_median(shares):.0%} "
            f"| {_median(changes):+.1f}% | {findings['regressed']} / {findings['unknown']} / {findings['same']} |"
        )
    lines += ["", f"All pairs: ranked first in {first_all} of {total} explained changes."]
    text = "\n".join(lines) + "\n"
    (out / "explain_ab.md").write_text(text)
    return text


def _interval(change: dict) -> tuple[float, float]:
    from overheadbench.engine.changes import Change

    return Change.from_json(change, "change", "").interval


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["collect", "report"])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument(
        "--level", type=float, default=10.0, help="the injected change, percent of framework / baseline"
    )
    args = parser.parse_args()
    if args.command == "collect":
        collect(args.out, args.sessions, args.level)
    print(report(args.out))


if __name__ == "__main__":
    main()
