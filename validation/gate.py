"""The regression gate's false-alarm rate and detection curve, measured (issue 14).

    python validation/gate.py collect --out validation/out/gate   # ~25 min, run alone
    python validation/gate.py report --out validation/out/gate

``collect`` runs the suite's overhead pairs (`-m overhead benchmarks/`: in-process and HTTP
pairs; the transport tables are left out) in consecutive fresh sessions of identical code, for
the default and the quick profile, each session's run written with ``--overhead-json``. Then
it injects regressions into the metrics middleware (``OVERHEADBENCH_EXAMPLE_SLOWDOWN``, loop
iterations per call), calibrated to about +5, +10 and +20 points on its sync pair, and runs
the metrics pairs again in fresh sessions.

``report`` replays the gate of ``overheadbench.history.pair_changes`` offline on those runs: every
consecutive pair of identical sessions (the newer compared with the older, with the older ones
as the machine's history), and every injected session against every identical one. It prints
the false alarms at the documented threshold, the detection curve, and the command.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import harness

ROOT = Path(__file__).resolve().parents[1]
PROFILES = {"default": [], "quick": ["--overhead-quick"]}
METRICS = ["benchmarks/test_middleware_overhead.py", "-k", "alone and metrics"]
LEVELS = (5, 10, 20)


def session(out: Path, name: str, args: list[str], slowdown: int = 0) -> dict:
    """One fresh pytest session; its run document (kept under ``out``: a rerun goes on)."""
    env = {"OVERHEADBENCH_EXAMPLE_SLOWDOWN": str(slowdown)}
    ran = harness.session(ROOT, out / f"{name}.json", *args, env=env, reuse=True)
    if ran.wall_s:
        print(f"{name}: {ran.wall_s:.0f} s", flush=True)
    return ran.run


def overhead_of(run: dict, test: str) -> float:
    return next(r["overhead"] for r in run["results"] if r["nodeid"].endswith(test))


def collect(out: Path, sessions: int, injected: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for profile, flags in PROFILES.items():
        for index in range(sessions):
            session(out, f"aa-{profile}-{index:02d}", ["-m", "overhead", "benchmarks/", *flags])
    # calibrate: points per loop iteration on the sync metrics pair, default profile
    probe, plain = session(out, "calibrate-200", METRICS, slowdown=200), session(out, "calibrate-0", METRICS)
    sync = "test_each_middleware_alone[metrics-sync]"
    per_iteration = (overhead_of(probe, sync) - overhead_of(plain, sync)) * 100 / 200
    (out / "calibration.json").write_text(json.dumps({"points_per_iteration": per_iteration}))
    for profile, flags in PROFILES.items():
        for level in LEVELS:
            iterations = max(1, round(level / per_iteration))
            for index in range(injected):
                session(out, f"inj{level}-{profile}-{index:02d}", [*METRICS, *flags], slowdown=iterations)


def load(out: Path, pattern: str) -> list:
    """The runs whose files match ``pattern``, as typed runs, in name order."""
    from overheadbench.store.runs import read_run

    return [read_run(path) for path in sorted(out.glob(pattern))]


def report(out: Path) -> None:
    from overheadbench.engine.findings import Finding
    from overheadbench.history.pair_changes import compare_result

    thresholds = (0.0, 2.0, 5.0, 10.0)
    print("## Identical code, consecutive sessions (each compared with the one before; the older ones as history)\n")
    print(
        "| profile | pairs | comparisons | significant (no ~) | "
        + " | ".join(f"gate at {t:g} pts" for t in thresholds)
        + " |"
    )
    print("|---|---|---|---|" + "---|" * len(thresholds))
    for profile in PROFILES:
        runs = load(out, f"aa-{profile}-*.json")
        changes = []
        for index in range(1, len(runs)):
            history = [r for run in runs[:index] for r in run.measured()]
            old = {r.nodeid: r for r in runs[index - 1].measured()}
            changes += [
                compare_result(old[r.nodeid], r, history)
                for r in runs[index].measured()
                if r.nodeid in old and r.mode == old[r.nodeid].mode
            ]
        timed = [c for c in changes if not c.exact]
        pairs = len({c.what for c in timed})
        gates = " | ".join(f"{sum(c.finding(t) == Finding.REGRESSED for c in timed)}" for t in thresholds)
        print(f"| {profile} | {pairs} | {len(timed)} | {sum(c.significant for c in timed)} | {gates} |")
        worst = sorted(timed, key=lambda c: c.percent)[-3:]
        print(
            "|  | largest rises: "
            + "; ".join(f"{c.what.split('::')[-1]} {c.percent:+.1f}% ({c.evidence})" for c in worst)
            + " |"
            + " |" * (len(thresholds) + 1)
        )
    print("\n## Injected regressions (metrics middleware), each injected session against each identical one\n")
    print("| profile | pair | injected (points, measured) | comparisons | detected at 5 pts | detected at 2 pts |")
    print("|---|---|---|---|---|---|")
    for profile in PROFILES:
        identical = load(out, f"aa-{profile}-*.json")
        history = [r for run in identical for r in run.measured()]
        for level in LEVELS:
            injected = load(out, f"inj{level}-{profile}-*.json")
            for kind in ("sync", "async"):
                name = f"test_each_middleware_alone[metrics-{kind}]"
                olds = [r for run in identical for r in run.measured() if r.nodeid.endswith(name)]
                news = [r for run in injected for r in run.measured() if r.nodeid.endswith(name)]
                if not olds or not news:
                    continue
                truth = 100 * (sum(r.overhead for r in news) / len(news) - sum(r.overhead for r in olds) / len(olds))
                changes = [compare_result(old, new, history) for old in olds for new in news]
                found = [sum(c.finding(t) == Finding.REGRESSED for c in changes) for t in (5.0, 2.0)]
                print(
                    f"| {profile} | metrics-{kind} | +{level} target, {truth:+.1f} measured | {len(changes)} | "
                    f"{found[0]} ({100 * found[0] / len(changes):.0f}%) | {found[1]} ({100 * found[1] / len(changes):.0f}%) |"
                )
    print(f"\nCommand: python validation/gate.py collect && python validation/gate.py report (runs in {out})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("collect", "report"))
    parser.add_argument("--out", type=Path, default=ROOT / "validation/out/gate")
    parser.add_argument("--sessions", type=int, default=8, help="identical sessions per profile")
    parser.add_argument("--injected", type=int, default=6, help="sessions per injected level and profile")
    args = parser.parse_args()
    if args.command == "collect":
        collect(args.out, args.sessions, args.injected)
    else:
        report(args.out)


if __name__ == "__main__":
    main()
