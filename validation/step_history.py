"""A real step in the stored history never widens a later interval (issue 68).

    python validation/step_history.py --out DIR              # ~15 min, run alone
    python validation/step_history.py --out DIR --busy 4     # the same beside four busy loops

A project in a git repository whose framework path does ``EXTRA`` more loop iterations per call: 14
commits, each measured in one autosaved session (``--overhead-autosave``, the quick profile): the
first five at the base cost, a real +18% step at the sixth, and a +55% step at the eleventh. Then:

* the next autosaved session (its interval learned from those 14 runs), and the same session with an
  empty storage: the ratio of their interval widths (the target: at most 1.5);
* ``overheadbench compare`` of the run before the +55% step against the one after it (the step
  confirmed by the runs after it): the target reads regressed;
* ``overheadbench history``: the steps it names and the spread it reads the series with.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import harness

PAIR = """
import json

import pytest
from costs import EXTRA

MESSAGE = {"role": "user", "content": "hello", "tools": ["search", "fetch"]}


def bare():
    return json.dumps(MESSAGE)


def framework():
    total = 0
    for i in range(EXTRA):
        total += i
    return json.dumps(MESSAGE), total


@pytest.mark.overhead(max="50x")
def test_step(overhead):
    overhead.compare(bare, framework)
"""
STEPS = {6: 1.18, 11: 1.55}
"""Commit number -> the pair's ratio after it, relative to before (a real step)."""
COMMITS = 14
QUICK = ("--overhead-quick", "-p", "no:randomly")


def extra_for(folder: Path, overhead: float) -> int:
    """Loop iterations that make the framework path cost ``overhead`` times the baseline's extra per
    call, read from one short session: the loop's cost per iteration against the pair's ratio."""
    (folder / "costs.py").write_text("EXTRA = 100\n")
    ran = harness.session(folder, folder / "calibrate.json", "--overhead-quick", paths=[harness.SRC])
    (result,) = ran.results
    per_iteration = (result["framework_s"] - result["baseline_s"]) / 100
    return max(1, round(overhead * result["baseline_s"] / per_iteration))


def commit(folder: Path, extra: int, subject: str) -> str:
    """Commit the cost ``extra`` under ``subject`` (written beside it, so a commit that keeps the cost
    still changes a file where the stored runs are ignored); its id."""
    (folder / "costs.py").write_text(f"EXTRA = {extra}\n# {subject}\n")
    harness.git(folder, "add", "-A")
    harness.git(folder, "commit", "-qm", subject)
    return harness.git(folder, "rev-parse", "HEAD").strip()


def half_width(run: dict) -> float:
    low, high = run["results"][0]["ci"]
    return (high - low) / 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--busy", type=int, default=0, help='loops of `python -c "while True: pass"` beside each')
    args = parser.parse_args()
    folder = harness.git_project(args.out, {"test_step.py": PAIR})
    with harness.busy_loops(args.busy):
        per_unit = extra_for(folder, 1.0)  # loop iterations that cost one baseline call
        ratio, ratios = 3.0, []  # the framework path 3x the baseline; each step moves this ratio
        for number in range(1, COMMITS + 1):
            ratio *= STEPS.get(number, 1.0)
            commit(folder, round((ratio - 1) * per_unit), f"commit {number}")
            out = args.out / f"run{number:02}.json"
            ran = harness.session(folder, out, "--overhead-autosave", *QUICK, paths=[harness.SRC])
            ratios.append(ran.results[0]["ratio"])
            print(f"commit {number}: ratio {ratios[-1]:.3f}", flush=True)
        learned = harness.session(folder, args.out / "learned.json", "--overhead-autosave", *QUICK, paths=[harness.SRC])
        empty = args.out / "empty"
        fresh_args = (f"--overhead-storage={empty}", "--overhead-autosave", *QUICK)
        fresh = harness.session(folder, args.out / "fresh.json", *fresh_args, paths=[harness.SRC])
    widths = half_width(learned.run), half_width(fresh.run)
    stored = sorted((folder / "baselines").rglob("*.json"))
    compared = subprocess.run(
        [sys.executable, "-m", "overheadbench.cli", "compare", str(stored[9]), str(stored[11]), "--fail-above", "5"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(harness.SRC)},
    )
    history = subprocess.run(
        [sys.executable, "-m", "overheadbench.cli", "history", str(folder / "baselines"), "--repository", str(folder)],
        capture_output=True,
        text=True,
        check=False,
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(harness.SRC)},
    )
    result = learned.results[0]
    summary = {
        "ratios": ratios,
        "learned_halfwidth": widths[0],
        "empty_halfwidth": widths[1],
        "width_ratio": widths[0] / widths[1],
        "session_sd": result["session_sd"],
        "session_runs": result["session_runs"],
        "compare_exit": compared.returncode,
        "compare": compared.stdout[-1500:],
        "history": history.stdout[-1500:],
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps({k: v for k, v in summary.items() if k not in ("compare", "history")}, indent=1))
    print(compared.stdout[-800:])
    print(history.stdout[-800:])


if __name__ == "__main__":
    main()
