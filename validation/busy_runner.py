"""Real frameworks on a busy runner (issue 45): sessions beside busy loops, against a quiet reference.

    python validation/busy_runner.py project DIR           # write the project (then install it, below)
    python validation/busy_runner.py reference DIR --python DIR/.venv/bin/python     # alone, ~3 min
    python validation/busy_runner.py sessions DIR --python ... --sessions 10 --busy 4  # ~15 min
    python validation/busy_runner.py sessions DIR --python ... --sessions 10 --busy 4 --alternate
    python validation/busy_runner.py report DIR            # coverage, half-widths, lost pairs
    python validation/busy_runner.py small --python ... --busy 4   # a 150-250 ns baseline against timeit
    python validation/busy_runner.py ab REPO --python ... --sessions 10 --busy 4 \
        --pytest-args="--overhead-against=HEAD~1 --overhead-fail-above=2%"

The project (``project``) is three real ms-scale framework paths against the same work called bare:
a haystack-ai ``Pipeline`` of three components, a strawberry-graphql query, and a llama-index-core
``Workflow`` of two async steps; install it with
``python -m venv DIR/.venv && DIR/.venv/bin/pip install -e . haystack-ai strawberry-graphql llama-index-core``.

``reference``: one session run alone with many processes and a long budget (20 processes, 20 s per pair):
each pair's quiet ratio. ``sessions``: ``--sessions`` default sessions (``--overhead-json``), each beside
``--busy`` loops of ``python -c "while True: pass"`` (each bounded to the session's time), one after the
other (``--alternate``: every other one alone). ``report``: per pair, whether each session's interval covers
the median of the sessions' estimates (issue 56: the between-session term); with ``reference.json``, per pair, how many sessions lost it to a harness limit (an error instead of a verdict),
how many intervals cover the reference (pooled over the pairs, with the binomial probability of so few
if the intervals truly cover 95%), and the median half-width.

``ab``: ``--sessions`` sessions of a git repository of your own (``REPO``: a middleware around
one of the frameworks, its head commit +6% slower than its parent by an independent loop),
each beside ``--busy`` loops with the extra options (``--overhead-against=HEAD~1
--overhead-fail-above=2%``, or ``HEAD`` for the repository against itself), alternating with a
plain session of the same profile (the A/B session's cost against it): per session, each pair's
change, its interval and finding, and both sessions' wall times (kept in ``REPO/ab-runs``).

``small``: a ~200 ns callable against a ~2 µs one, as a pair in one session (default settings), and the
same two callables under ``timeit``, interleaved, 15 rounds; the baseline's per-call figure against
timeit's median.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import harness

sys.path.insert(0, str(Path(__file__).parent))
from ab_gate import binomial_at_most  # noqa: E402

HERE = Path(__file__).parent


def session(project: Path, python: str, out: Path, *args: str, timeout_s: float = 900.0) -> dict:
    """One pytest session of the project with ``--overhead-json=out``: its wall time, exit code, results."""
    ran = harness.session(project, out, *args, python=python, timeout_s=timeout_s)
    return {"wall_s": ran.wall_s, "exit": ran.exit, "results": ran.results, "tail": ran.output[-3000:]}


def project(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tests").mkdir(exist_ok=True)
    (folder / "pyproject.toml").write_text(
        '[project]\nname = "busy-runner"\nversion = "0"\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    )
    for name in ("test_frameworks.py", "conftest.py"):
        (folder / "tests" / name).write_text((HERE / "busy_runner_project" / name).read_text())


def reference(folder: Path, python: str) -> None:
    found = session(
        folder,
        python,
        folder / "reference.json",
        "--overhead-processes=20",
        "--overhead-time-budget=20s",
        "--overhead-max-time=120s",
        "--overhead-pair-timeout=600s",
    )
    print(found["tail"])


def sessions(folder: Path, python: str, count: int, busy: int, extra: list[str], alternate: bool = False) -> None:
    """``count`` sessions one after the other, each beside ``busy`` loops (``alternate``: every other
    session alone, a runner whose load comes and goes)."""
    runs = folder / "runs"
    runs.mkdir(exist_ok=True)
    for number in range(count):
        loops = 0 if alternate and number % 2 else busy
        with harness.busy_loops(loops), tempfile.TemporaryDirectory() as scratch:
            found = session(folder, python, Path(scratch) / "run.json", *extra)
        found["busy"] = loops
        index = len(list(runs.glob("*.json")))
        (runs / f"{index:03d}.json").write_text(json.dumps(found))
        print(f"session {index}: exit {found['exit']}, {found['wall_s']:.0f} s", flush=True)


def report(folder: Path) -> None:
    runs = [json.loads(path.read_text()) for path in sorted((folder / "runs").glob("*.json"))]
    between_sessions(runs)
    if not (folder / "reference.json").exists():
        return
    quiet = {r["nodeid"]: r["ratio"] for r in json.loads((folder / "reference.json").read_text())["results"]}
    covered = total = 0
    for nodeid, truth in quiet.items():
        rows = [r for run in runs for r in run["results"] if r["nodeid"] == nodeid]
        measured = [r for r in rows if r["verdict"] != "unmeasured" and r["ci"][0] is not None]
        lost = len(runs) - len(measured)
        hits = sum(1 + r["ci"][0] <= truth <= 1 + r["ci"][1] for r in measured)
        halves = [100 * (math.log1p(r["ci"][1]) - math.log1p(r["ci"][0])) / 2 for r in measured]
        timers = sorted({r.get("timer", "wall") for r in measured})
        walls = [r["wall_s"] for r in measured]
        covered, total = covered + hits, total + len(measured)
        print(
            f"{nodeid}: quiet {truth:,.0f}x; {len(measured)} measured, {lost} lost; covered {hits}/{len(measured)}; "
            f"half-width median ±{statistics.median(halves):.1f}% (max ±{max(halves):.1f}%); "
            f"estimates {min(r['ratio'] for r in measured):,.0f}..{max(r['ratio'] for r in measured):,.0f}x; "
            f"clock {','.join(timers)}; wall {min(walls):.1f}..{max(walls):.1f} s"
        )
    walls = [run["wall_s"] for run in runs]
    print(
        f"pooled: {covered}/{total} intervals cover the quiet reference ({covered / total:.0%}); "
        f"P(so few | 95% coverage) = {binomial_at_most(covered, total, 0.95):.3f}; "
        f"sessions {min(walls):.0f}..{max(walls):.0f} s, exits {sorted({run['exit'] for run in runs})}"
    )


def between_sessions(runs: list[dict]) -> None:
    """Issue 56's target: does each session's interval cover the median of all the sessions'
    estimates (what a session's figure should stand for), pooled over the pairs, busy and quiet
    sessions apart; with the half-widths and the session term the footer adds."""
    nodeids = sorted({r["nodeid"] for run in runs for r in run["results"]})
    hits = {True: 0, False: 0}
    counts = {True: 0, False: 0}
    for nodeid in nodeids:
        rows = [(run["busy"] > 0, r) for run in runs for r in run["results"] if r["nodeid"] == nodeid]
        measured = [(busy, r) for busy, r in rows if r["ci"][0] is not None]
        middle = statistics.median(r["ratio"] for _, r in measured)
        covers = [(busy, 1 + r["ci"][0] <= middle <= 1 + r["ci"][1]) for busy, r in measured]
        for busy, hit in covers:
            hits[busy] += hit
            counts[busy] += 1
        halves = [100 * (math.log1p(r["ci"][1]) - math.log1p(r["ci"][0])) / 2 for _, r in measured]
        terms = [100 * r.get("session_sd", 0.0) for _, r in measured]
        spread = [100 * (r["ratio"] / middle - 1) for _, r in measured]
        print(
            f"{nodeid}: median of {len(measured)} sessions {middle:,.2f}x; covered {sum(h for _, h in covers)}"
            f"/{len(measured)}; half-widths ±{min(halves):.1f}..±{max(halves):.1f}% (median ±"
            f"{statistics.median(halves):.1f}%); estimates {min(spread):+.1f}..{max(spread):+.1f}% of the median; "
            f"session term {min(terms):.2f}..{max(terms):.2f}%"
        )
    covered, total = sum(hits.values()), sum(counts.values())
    print(
        f"between sessions: {covered}/{total} intervals cover the sessions' median ({covered / max(total, 1):.0%}; "
        f"busy {hits[True]}/{counts[True]}, alone {hits[False]}/{counts[False]}); "
        f"P(so few | 95%) = {binomial_at_most(covered, total, 0.95):.3f}"
    )


SMALL = """
import pytest

def tool(x):
    return sum(range(x))

def slow(x):
    return [tool(x) for _ in range(10)]

@pytest.mark.overhead(max="100x")
def test_small(overhead):
    overhead.compare(baseline=lambda: tool(8), framework=lambda: slow(8))
"""
TIMEIT = """
import timeit, statistics, json, sys
sys.path.insert(0, "tests")
from test_small import tool, slow
base = lambda: tool(8)
frame = lambda: slow(8)
b, f = [], []
for _ in range(15):
    b.append(min(timeit.repeat(base, number=20000, repeat=3)) / 20000)
    f.append(min(timeit.repeat(frame, number=2000, repeat=3)) / 2000)
print(json.dumps({"baseline_s": statistics.median(b), "framework_s": statistics.median(f)}))
"""


def small(python: str, busy: int, rounds: int) -> None:
    """Per round: one session (its 10 processes), and timeit in 10 fresh processes (a small callable's
    cost moves ±20% from one process to the next with the hash seed and the layout, so one timeit
    process is no reference), their medians compared."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "tests").mkdir()
        (folder / "tests" / "test_small.py").write_text(SMALL)
        for index in range(rounds):
            with harness.busy_loops(busy):
                found = session(folder, python, folder / "small.json")
                runs = [
                    json.loads(
                        subprocess.run(
                            [python, "-c", TIMEIT], cwd=folder, capture_output=True, text=True, check=True
                        ).stdout
                    )
                    for _ in range(10)
                ]
            timed = {key: statistics.median(run[key] for run in runs) for key in ("baseline_s", "framework_s")}
            (result,) = found["results"]
            ours, theirs = result["baseline_s"], timed["baseline_s"]
            print(
                f"round {index}: baseline {ours * 1e9:.1f} ns/call (harness {result['harness_s'] * 1e9:.1f} ns), "
                f"timeit {theirs * 1e9:.1f} ns: {100 * (ours / theirs - 1):+.1f}%; ratio {result['ratio']:.2f} "
                f"against timeit's {timed['framework_s'] / theirs:.2f}",
                flush=True,
            )


def ab(repo: Path, python: str, count: int, busy: int, extra: list[str]) -> None:
    runs = repo / "ab-runs"
    runs.mkdir(exist_ok=True)
    profile = [arg for arg in extra if arg == "--overhead-quick"]
    for _ in range(count):
        with harness.busy_loops(busy), tempfile.TemporaryDirectory() as scratch:
            gated = session(repo, python, Path(scratch) / "ab.json", *extra)
            plain = session(repo, python, Path(scratch) / "plain.json", "--overhead", *profile)
        rows = []
        for result in gated["results"]:
            for place in result.get("places", []):
                change = place.get("change") or {}
                rows.append({"nodeid": result["nodeid"], "processes": result["processes"], **change})
        index = len(list(runs.glob("*.json")))
        record = {
            "extra": extra,
            "busy": busy,
            "exit": gated["exit"],
            "wall_s": gated["wall_s"],
            "plain_wall_s": plain["wall_s"],
            "plain_exit": plain["exit"],
            "changes": rows,
        }
        (runs / f"{index:03d}.json").write_text(json.dumps(record))
        shown = "; ".join(f"{r['nodeid'].split('::')[-1]}: {_change(r)} ({r['processes']} procs)" for r in rows)
        print(
            f"session {index}: exit {gated['exit']}, {gated['wall_s']:.0f} s against plain "
            f"{plain['wall_s']:.0f} s ({gated['wall_s'] / plain['wall_s']:.2f}x); {shown}",
            flush=True,
        )


def _change(row: dict) -> str:
    """A stored change as ``+6.1% (+4.9..+7.3, 99.2%)``."""
    if not row.get("old"):
        return "none"
    from overheadbench.engine.changes import Change

    change = Change.from_json(row, "change", row["nodeid"])
    low, high = change.interval
    return f"{change.percent:+.1f}% ({low:+.1f}..{high:+.1f} at {change.confidence:.1%}) {change.finding(2.0)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=["project", "reference", "sessions", "report", "small", "ab"])
    parser.add_argument("folder", nargs="?", type=Path, default=Path("busy-runner"))
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--busy", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--alternate", action="store_true", help="sessions: every other one alone")
    parser.add_argument("--pytest-args", default="", help="more pytest options for each session (one string)")
    args = parser.parse_args()
    args.extra = shlex.split(args.pytest_args)
    if args.step == "project":
        project(args.folder)
    elif args.step == "reference":
        reference(args.folder, args.python)
    elif args.step == "sessions":
        sessions(args.folder, args.python, args.sessions, args.busy, args.extra, args.alternate)
    elif args.step == "report":
        report(args.folder)
    elif args.step == "ab":
        ab(args.folder, args.python, args.sessions, args.busy, args.extra)
    else:
        small(args.python, args.busy, args.rounds)


if __name__ == "__main__":
    main()
