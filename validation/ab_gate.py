"""The A/B gate (``--overhead-against``) and the intervals it reads, measured (issue 24).

    python validation/ab_gate.py intervals --out DIR --before REV   # ~20 min, run alone
    python validation/ab_gate.py collect --out DIR                  # ~40 min, run alone
    python validation/ab_gate.py report --out DIR

Every session runs from a frozen clone of this repository's HEAD (``DIR/tree``, its own
``src`` first on ``PYTHONPATH``), so editing the working copy meanwhile changes nothing.

``intervals``: fresh plain sessions of the suite's in-process pairs (the middleware, stack and
composition pairs, sync and async), alternating between this version and ``--before`` (an
older commit, cloned to ``DIR/before``), ``--sessions`` each. The report gives, per pair and
version, the 95% interval's coverage of a pooled long reference (the median of every process
median of that version's sessions) and its median half-width over 1.96 times the sd of the
estimate across sessions (both on the log scale), and the wall time per pair.

``collect``: ``--overhead-against=HEAD`` sessions in the clone (head = its working tree, base =
its HEAD): ``--sessions`` with identical trees per profile (default, quick), then the metrics
middleware slowed in the head only (its two SLOWDOWN lines edited; loop iterations calibrated
to +5, +10 and +20% of framework / baseline, sync and async apart), ``--injected`` sessions
per level and profile, and as many plain sessions for the stored-history gate beside it.

``report``: false alarms at the 5% gate and the coverage of zero on identical trees, the
detection curve, the stored-history gate replayed on plain sessions of the same day, the
interval efficiency before and after, and the wall time of an A/B session over a plain one.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import harness

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ["benchmarks/test_middleware_overhead.py", "benchmarks/test_composition_overhead.py", "-m", "overhead"]
METRICS = ["benchmarks/test_middleware_overhead.py", "-k", "alone and metrics"]
PROFILES = {"default": [], "quick": ["--overhead-quick"]}
LEVELS = (5, 10, 20)
THRESHOLD = 5.0
MIDDLEWARE = "benchmarks/test_middleware_overhead.py"


def clone(out: Path, name: str, revision: str = "HEAD") -> Path:
    """A frozen copy of this repository at ``revision``, made once."""
    tree = out / name
    if not tree.exists():
        subprocess.run(["git", "clone", "-q", str(ROOT), str(tree)], check=True)
        subprocess.run(["git", "-C", str(tree), "checkout", "-q", "--detach", revision], check=True)
    return tree


def session(tree: Path, path: Path, args: list[str]) -> dict:
    """One fresh pytest session in ``tree`` (its own ``src``); its run document, with its wall time."""
    ran = harness.session(tree, path, *args, paths=[tree / "src"], measuring=False, reuse=True)
    if ran.wall_s:
        ran.run["session_wall_s"] = ran.wall_s
        path.write_text(json.dumps(ran.run))
        print(f"{path.name}: {ran.wall_s:.0f} s", flush=True)
    return ran.run


def slow_head(tree: Path, sync_iterations: int, async_iterations: int) -> None:
    """Slow the metrics middleware in the head tree only (its working copy)."""
    path = tree / MIDDLEWARE
    text = subprocess.run(
        ["git", "-C", str(tree), "show", f"HEAD:{MIDDLEWARE}"], capture_output=True, text=True, check=True
    ).stdout
    text = re.sub(r"^SLOWDOWN = .*$", f"SLOWDOWN = range({sync_iterations})", text, flags=re.M)
    text = re.sub(r"^ASYNC_SLOWDOWN = .*$", f"ASYNC_SLOWDOWN = range({async_iterations})", text, flags=re.M)
    path.write_text(text)


def intervals(out: Path, before: str, sessions: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    trees = {"after": clone(out, "tree"), "before": clone(out, "before", before)}
    for index in range(sessions):
        for version, tree in trees.items():
            session(tree, out / f"plain-{version}-{index:02d}.json", ["--overhead", *PAIRS])


def collect(out: Path, sessions: int, injected: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tree = clone(out, "tree")
    against = ["--overhead-against=HEAD", f"--overhead-fail-above={THRESHOLD:g}"]
    slow_head(tree, 0, 0)
    for index in range(sessions):
        for profile, flags in PROFILES.items():
            session(tree, out / f"aa-{profile}-{index:02d}.json", [*against, *PAIRS, *flags])
    slow_head(tree, 200, 200)
    probe = session(tree, out / "calibrate.json", [*against, *METRICS])
    per_iteration = {kind: change_of(probe, f"metrics-{kind}") / 200 for kind in ("sync", "async")}
    (out / "calibration.json").write_text(json.dumps(per_iteration))
    for level in LEVELS:
        slow_head(tree, *(max(1, round(level / per_iteration[kind])) for kind in ("sync", "async")))
        for index in range(injected):
            for profile, flags in PROFILES.items():
                session(tree, out / f"inj{level}-{profile}-{index:02d}.json", [*against, *METRICS, *flags])
                session(tree, out / f"plain{level}-{profile}-{index:02d}.json", ["--overhead", *METRICS, *flags])
    slow_head(tree, 0, 0)
    for index in range(injected):
        for profile, flags in PROFILES.items():
            session(tree, out / f"plain0-{profile}-{index:02d}.json", ["--overhead", *METRICS, *flags])


def change_of(run: dict, test: str) -> float:
    """The A/B change (percent) of the first result whose id contains ``test``."""
    from overheadbench.pairs.results import OverheadResult

    data = next(r for r in run["results"] if test in r["nodeid"])
    moved = side_change(OverheadResult.from_json(data))
    return moved.percent if moved else math.nan


def side_change(result):  # noqa: ANN001, ANN201  (the base tree's change, as the session stored it)
    return next((place.change for place in result.places if place.role == "base"), None)


def load(out: Path, pattern: str) -> list:
    from overheadbench.store.runs import read_run

    return [read_run(path) for path in sorted(out.glob(pattern))]


def walls(out: Path, pattern: str) -> list[float]:
    return [json.loads(path.read_text())["session_wall_s"] for path in sorted(out.glob(pattern))]


def report(out: Path) -> None:
    from overheadbench.engine.findings import Finding
    from overheadbench.history.pair_changes import compare_result

    print(f"# A/B gate validation (issue 24), this machine, {time.strftime('%Y-%m-%d')}\n")
    print(f"Made with `python validation/ab_gate.py intervals|collect|report --out {out}`.\n")
    print("## Identical trees (`--overhead-against=HEAD`), the suite's in-process pairs\n")
    print(
        "| profile | sessions | changes | gate failures at 5% | interval covers 0 | same | unknown | median half-width |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for profile in PROFILES:
        runs = load(out, f"aa-{profile}-*.json")
        changes = [c for run in runs for r in run.measured() if (c := side_change(r)) is not None]
        if not changes:
            continue
        findings = [c.finding(THRESHOLD) for c in changes]
        covers = sum(c.interval[0] <= 0 <= c.interval[1] for c in changes)
        half = statistics.median((c.interval[1] - c.interval[0]) / 2 for c in changes)
        print(
            f"| {profile} | {len(runs)} | {len(changes)} | {findings.count(Finding.REGRESSED)} | "
            f"{covers / len(changes):.1%} | {findings.count(Finding.SAME)} | {findings.count(Finding.UNKNOWN)} | "
            f"±{half:.2f}% |"
        )
    print("\n## Injected regressions (the metrics middleware slowed in the head only)\n")
    calibration = json.loads((out / "calibration.json").read_text()) if (out / "calibration.json").exists() else {}
    print(f"Calibration (percent of framework / baseline per loop iteration): {calibration}\n")
    print("| profile | pair | target | measured (median) | sessions | regressed at 5% | unknown | stored-run gate |")
    print("|---|---|---|---|---|---|---|---|")
    for profile in PROFILES:
        plain_runs = load(out, f"plain0-{profile}-*.json")
        for level in LEVELS:
            runs, slowed = load(out, f"inj{level}-{profile}-*.json"), load(out, f"plain{level}-{profile}-*.json")
            for kind in ("sync", "async"):
                test = f"metrics-{kind}"
                changes = [side_change(r) for run in runs for r in run.measured() if test in r.nodeid]
                changes = [c for c in changes if c is not None]
                if not changes:
                    continue
                findings = [c.finding(THRESHOLD) for c in changes]
                stored = [
                    compare_result(old, new)
                    for before in plain_runs
                    for after in slowed
                    for old in before.measured()
                    for new in after.measured()
                    if test in old.nodeid and new.nodeid == old.nodeid
                ]
                caught = sum(c.finding(THRESHOLD) == Finding.REGRESSED for c in stored)
                print(
                    f"| {profile} | {test} | +{level}% | {statistics.median(c.percent for c in changes):+.1f}% | "
                    f"{len(changes)} | {findings.count(Finding.REGRESSED)} "
                    f"({findings.count(Finding.REGRESSED) / len(changes):.0%}) | {findings.count(Finding.UNKNOWN)} | "
                    f"{caught}/{len(stored)} |"
                )
    _stored_false_alarms(out)
    _efficiency(out)
    aa, plain = walls(out, "aa-default-*.json"), walls(out, "plain-after-*.json")
    if aa and plain:
        print(
            f"\nWall time, default profile, the suite's in-process pairs: A/B session median "
            f"{statistics.median(aa):.0f} s, plain {statistics.median(plain):.0f} s: "
            f"{statistics.median(aa) / statistics.median(plain):.2f}x"
        )


def _stored_false_alarms(out: Path) -> None:
    """The stored-history gate on the A/A sessions' head results: each against the one before, the older as history."""
    from overheadbench.engine.findings import Finding
    from overheadbench.history.pair_changes import compare_result

    print("\n## The stored-history gate on the same sessions (each against the previous, older ones as history)\n")
    print("| profile | comparisons | gate failures at 5% | unknown |")
    print("|---|---|---|---|")
    for profile in PROFILES:
        runs = load(out, f"aa-{profile}-*.json")
        findings = []
        for index in range(1, len(runs)):
            history = [r for run in runs[:index] for r in run.measured()]
            old = {r.nodeid: r for r in runs[index - 1].measured()}
            findings += [
                compare_result(old[r.nodeid], r, history).finding(THRESHOLD)
                for r in runs[index].measured()
                if r.nodeid in old
            ]
        if findings:
            print(
                f"| {profile} | {len(findings)} | {findings.count(Finding.REGRESSED)} | "
                f"{findings.count(Finding.UNKNOWN)} |"
            )


def binomial_at_most(hits: int, n: int, p: float) -> float:
    """P(X <= hits) for X ~ Binomial(n, p): how surprising a coverage count is if the truth is p."""
    return sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(hits + 1))


def chi2_quantile(q: float, df: int) -> float:
    """Wilson-Hilferty: the chi-square quantile, for the interval of an sd from ``df + 1`` values."""
    z = statistics.NormalDist().inv_cdf(q)
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def _efficiency(out: Path) -> None:
    """Per pair and version: coverage of the pooled reference (and how likely so few coverings
    are if the interval truly covers 95%), the half-width over 1.96 sd (with the 95% interval of
    that ratio, from the sd's own chi-square uncertainty), and the wall time per pair."""
    from overheadbench.pairs.comparing import process_ratios

    print("\n## Intervals: before and after (plain sessions, default profile)\n")
    print(
        "| pair | version | sessions | estimate sd | median half-width | half-width / 1.96 sd (95% CI) "
        "| covers reference | P(so few) at 95% | wall per pair |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    summary = {}
    for version in ("before", "after"):
        runs = load(out, f"plain-{version}-*.json")
        by_pair: dict[str, list] = {}
        for run in runs:
            for r in run.measured():
                by_pair.setdefault(r.nodeid, []).append(r)
        rows = []
        for nodeid, results in by_pair.items():
            reference = statistics.median(m for r in results for m in process_ratios(r.samples))
            logs = [math.log(r.ratio) for r in results]
            n = len(logs)
            sd = statistics.stdev(logs) if n > 1 else math.nan
            halves = [(math.log1p(r.ci[1]) - math.log1p(r.ci[0])) / 2 for r in results]
            covered = sum(1 + r.ci[0] <= reference <= 1 + r.ci[1] for r in results)
            ratio = statistics.median(halves) / (1.96 * sd) if sd > 0 else math.nan
            spread = (
                math.sqrt((n - 1) / chi2_quantile(0.975, n - 1)),
                math.sqrt((n - 1) / chi2_quantile(0.025, n - 1)),
            )
            low, high = ratio / spread[1], ratio / spread[0]
            chance = binomial_at_most(covered, n, 0.95)
            wall = statistics.mean(r.wall_s for r in results)
            rows.append((covered, n, ratio, low, chance, wall))
            print(
                f"| `{nodeid.split('::')[1]}` | {version} | {n} | {100 * sd:.2f}% | "
                f"±{100 * statistics.median(halves):.2f}% | {ratio:.2f} ({low:.2f}..{high:.2f}) | "
                f"{covered}/{n} | {chance:.2f} | {wall:.2f} s |"
            )
        if rows:
            summary[version] = rows
    for version, rows in summary.items():
        n = rows[0][1]
        calibrated = 1 - binomial_at_most(math.ceil(0.95 * n) - 1, n, 0.95)
        pooled = sum(r[0] for r in rows) / sum(r[1] for r in rows)
        print(
            f"\n{version}: pairs {len(rows)}; covering the reference in >= 95% of sessions: "
            f"{sum(c >= 0.95 * k for c, k, *_ in rows)} (a truly 95% interval does so at {n} sessions with "
            f"probability {calibrated:.2f}: {calibrated * len(rows):.1f} of {len(rows)} expected); pooled coverage "
            f"{pooled:.1%}; coverage below 95% beyond chance (P < 0.05 / {len(rows)} pairs): "
            f"{sum(r[4] < 0.05 / len(rows) for r in rows)}; half-width / 1.96 sd <= 1.3: "
            f"{sum(r[2] <= 1.3 for r in rows)}, its 95% CI's low end above 1.3: {sum(r[3] > 1.3 for r in rows)}; "
            f"median ratio {statistics.median(r[2] for r in rows):.2f}; mean wall per pair "
            f"{statistics.mean(r[5] for r in rows):.2f} s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("intervals", "collect", "report"))
    parser.add_argument("--out", type=Path, default=ROOT / "validation/out/ab")
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--injected", type=int, default=8)
    parser.add_argument("--before", default="80d81de", help="the commit to compare the intervals with")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    if args.command == "intervals":
        intervals(args.out, args.before, args.sessions)
    elif args.command == "collect":
        collect(args.out, args.sessions, args.injected)
    else:
        report(args.out)


if __name__ == "__main__":
    main()
