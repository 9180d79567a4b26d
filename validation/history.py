"""``overheadbench history`` validated: real series of stored runs, and simulated ones (issue 58).

    python validation/history.py series --out DIR       # ~8 min, alone: the held-out "CI on main"
    python validation/history.py busy --out DIR         # ~12 min: identical code, alone and beside 4 loops
    python validation/history.py simulate --out DIR     # ~1 min: false change points and detection rates

``series``: a fresh git repository of the small agent project of ``bisect_history.py``, 30 commits:
README edits, and at two commits drawn for the run the routing layer slowed by about 9% and then
4.5% more of framework / baseline (loop iterations calibrated once, in an A/B session). Each commit
is measured once, as CI on main would (``--overhead-quick --overhead-autosave``, one storage folder),
then ``overheadbench history --json`` reads the folder: both steps must be named at their exact
commits, and nothing else.

``busy``: 40 commits of README edits (identical code), measured alternately alone and beside
``--busy`` busy loops: no change point may be named.

``simulate``: series drawn with the between-session sd and own standard error measured in the two
real series (``--tau``, ``--se``; defaults: this machine's, docs/history.md): false change points
per 1,000 runs of a flat series, and the share of series whose one step (1 to 5 between-session sds,
at a drawn run) is found within one run of its commit; and a drift of +0.5% a run over 20 runs.
``--link-se``: every run linked to the one before (``--overhead-link``), its link the true change plus
noise of that standard error (issue 69).

Writes DIR/history-<mode>.md and prints it.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import subprocess
import sys
from pathlib import Path

import harness
import numpy as np
from bisect_history import AGENT, calibrate, project

from overheadbench.engine.combining import SESSION_SD
from overheadbench.engine.shifts import Point, ShiftKind, find_shifts

CLI = [sys.executable, "-c", "import sys; from overheadbench.cli import main; sys.exit(main())"]
STEPS = (0.09, 0.045)
"""The held-out series' two steps, as fractions of framework / baseline."""


def measure(folder: Path, runs: Path, busy: int) -> None:
    """One CI run of the checked-out commit: quick, stored under its commit."""
    with harness.busy_loops(busy):
        command = harness.pytest_command(
            sys.executable, "--overhead-quick", "--overhead-autosave", f"--overhead-storage={runs}"
        )
        subprocess.run(command, cwd=folder, capture_output=True, check=False, timeout=900)


def read_history(folder: Path, runs: Path, out: Path) -> dict:
    subprocess.run([*CLI, "history", str(runs), "--json", str(out)], cwd=folder, check=True)
    return json.loads(out.read_text())


def real_series(out: Path, commits: int, busy_every: int, steps: dict[int, int]) -> tuple[list[str], dict]:
    """A repository of ``commits`` commits (``steps``: commit -> loop iterations from it on), each
    measured once (beside 4 busy loops every ``busy_every``-th), and its history."""
    folder = out / "project"
    subprocess.run(["rm", "-rf", str(folder)], check=True)
    project(folder, 0)
    runs, shas, iterations = out / "runs", [], 0
    subprocess.run(["rm", "-rf", str(runs)], check=True)
    for number in range(commits):
        if number in steps:
            iterations = steps[number]
            (folder / "agent.py").write_text(AGENT.format(slowdown=iterations))
        else:
            (folder / "notes.txt").write_text(f"README, revision {number}\n")
        harness.git(folder, "commit", "-qam", f"commit {number}" + (" (slower routing)" if number in steps else ""))
        shas.append(harness.git(folder, "rev-parse", "HEAD").strip())
        measure(folder, runs, 4 if busy_every and number % busy_every == 1 else 0)
        print(f"commit {number} measured", file=sys.stderr)
    return shas, read_history(folder, runs, out / "history.json")


def series_mode(out: Path, seed: int) -> str:
    per_iteration = calibrate(out)
    rng = random.Random(seed)
    first, second = sorted(rng.sample(range(5, 26), 2))
    while second - first < 4:
        first, second = sorted(rng.sample(range(5, 26), 2))
    iterations = round(100 * STEPS[0] / per_iteration)
    total = round(100 * ((1 + STEPS[0]) * (1 + STEPS[1]) - 1) / per_iteration)
    shas, found = real_series(out, 30, 0, {first: iterations, second: total})
    named = sorted(shas.index(point["commit"]) for point in found["change_points"])
    lines = [
        "# history: the held-out series (30 commits, CI on main)",
        "",
        f"calibration: {per_iteration:.3f}% per loop iteration; steps at commits {first} (+9%) and {second} (+4.5%)",
        "",
        "| commit | kind | change | 95% CI | z |",
        "|---|---|---|---|---|",
    ]
    for point in found["change_points"]:
        low, high = point["ci"]
        lines.append(
            f"| {shas.index(point['commit'])} | {point['kind']} | {point['change']:+.1%} | "
            f"{low:+.1%}..{high:+.1%} | {point['z']:.1f} |"
        )
    lines += [
        "",
        f"named at commits {named}; expected [{first}, {second}]: {'met' if named == [first, second] else 'MISSED'}",
    ]
    return "\n".join(lines)


def busy_mode(out: Path, commits: int) -> str:
    _, found = real_series(out, commits, 2, {})
    points = found["change_points"]
    lines = ["# history: identical code, alternately alone and beside 4 busy loops", ""]
    lines.append(f"{found['runs']} runs, {found['series']} series: {len(points)} change points")
    lines += [f"- {p['kind']} {p['test']} {p['change']:+.1%} at {p['commit'][:10]} (z {p['z']:.1f})" for p in points]
    return "\n".join(lines)


def simulated(
    rng: np.random.Generator, runs: int, tau: float, se: float, at: int = -1, size: float = 0.0, link_se: float = 0.0
) -> list[Point]:
    """A series of ``runs`` (a step of ``size`` at run ``at``); with ``link_se``, each run after the first
    linked to the one before: the true change plus noise of that standard error (stated with it)."""
    levels = np.where(np.arange(runs) >= at, math.log1p(size), 0.0) if at >= 0 else np.zeros(runs)
    values = levels + rng.normal(0, tau, runs) + rng.normal(0, se, runs)
    if not link_se:
        return [Point(float(v), se, str(i)) for i, v in enumerate(values)]
    links = np.diff(levels, prepend=levels[0]) + rng.normal(0, link_se, runs)
    return [
        Point(float(v), se, str(i), float(links[i]) if i else None, link_se, str(i - 1) if i else "")
        for i, v in enumerate(values)
    ]


def simulate_mode(series: int, runs: int, tau: float, se: float, seed: int, link_se: float = 0.0) -> str:
    rng = np.random.default_rng(seed)
    false = sum(
        len(find_shifts(simulated(rng, runs, tau, se, link_se=link_se), SESSION_SD).shifts) for _ in range(series)
    )
    linked = f", linked at se {link_se:.2%}" if link_se else ""
    lines = [
        f"# history: simulated series (tau {tau:.2%}, own se {se:.2%}, {runs} runs{linked})",
        "",
        f"flat series: {false} change points in {series * runs} runs = {1000 * false / (series * runs):.2f} per 1,000 runs",
        "",
        "| step (between-session sds) | step | found within one run |",
        "|---|---|---|",
    ]
    for sds in (1, 2, 3, 4, 5):
        size, hits, trials = math.expm1(sds * tau), 0, max(series // 5, 200)
        for _ in range(trials):
            at = int(rng.integers(3, runs - 2))
            found = find_shifts(simulated(rng, runs, tau, se, at, size, link_se), SESSION_SD).shifts
            hits += any(s.kind is ShiftKind.STEP and abs(s.start - at) <= 1 for s in found)
        lines.append(f"| {sds} | {size:+.1%} | {hits / trials:.1%} |")
    drifts = 0
    for _ in range(200):
        values = [
            Point(p.log + i * math.log1p(0.005), p.se, p.commit) for i, p in enumerate(simulated(rng, 20, tau, se))
        ]
        drifts += any(s.kind is ShiftKind.DRIFT for s in find_shifts(values, SESSION_SD).shifts)
    lines += ["", f"a drift of +0.5% a run over 20 runs: read as a drift in {drifts / 200:.0%} of 200 series"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["series", "busy", "simulate"])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=58)
    parser.add_argument("--commits", type=int, default=40, help="busy: commits measured")
    parser.add_argument("--series", type=int, default=3000, help="simulate: flat series drawn")
    parser.add_argument("--runs", type=int, default=30, help="simulate: runs a series")
    parser.add_argument("--tau", type=float, default=0.005, help="simulate: between-session sd of the log")
    parser.add_argument("--se", type=float, default=0.003, help="simulate: each run's own standard error of the log")
    parser.add_argument("--link-se", type=float, default=0.0, help="simulate: each run linked, at this standard error")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.mode == "series":
        text = series_mode(args.out, args.seed)
    elif args.mode == "busy":
        text = busy_mode(args.out, args.commits)
    else:
        text = simulate_mode(args.series, args.runs, args.tau, args.se, args.seed, args.link_se)
    (args.out / f"history-{args.mode}.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
