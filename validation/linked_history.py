"""A busy runner's history, linked and not (issue 69): are both steps named at their commits, and nothing else?

    python validation/linked_history.py --out DIR --busy 2              # linked, beside 2 busy loops (~20 min)
    python validation/linked_history.py --out DIR --unlinked            # levels only, alone (~10 min)
    python validation/linked_history.py --out DIR --busy 4 --no-steps --alternate --commits 40
                                             # identical code, every other session beside the loops
    python validation/linked_history.py --out DIR --fleet PYTHON --commits 20
                                             # two runners (this Python and PYTHON) under one name
    python validation/linked_history.py --out DIR --cost 8
                                             # a linked session's time over a plain autosaved one's
    python validation/linked_history.py --out DIR --past --commits 20
                                             # `history --measure`, interrupted after 6 runs, run again

A project in a git repository whose framework path does ``EXTRA`` more loop iterations per call (as
``step_history.py``): ``--commits`` commits, each measured once (``--overhead-quick
--overhead-autosave``, and ``--overhead-link`` unless ``--unlinked``) while the busy loops run the
whole time (``--alternate``: beside every other session), with real steps of +9% at commit 9 and +4.5% at commit 17. Then ``overheadbench history``:
the change points it names, by commit number, against the truth (``summary.json``). ``--fleet``
measures every other commit with another interpreter (another fingerprint: a runner of another CPU
model stands in), all under ``--overhead-machine=fleet``, and reads ``history --machine fleet``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import harness
from step_history import PAIR, QUICK, commit, extra_for

STEPS = {9: 1.09, 17: 1.045}
"""Commit number -> the pair's ratio after it, relative to before."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--busy", type=int, default=0, help='loops of `python -c "while True: pass"` the whole time')
    parser.add_argument("--commits", type=int, default=24)
    parser.add_argument("--unlinked", action="store_true", help="store levels only (no --overhead-link)")
    parser.add_argument("--no-steps", action="store_true", help="identical code at every commit")
    parser.add_argument("--alternate", action="store_true", help="the busy loops beside every other session only")
    parser.add_argument("--fleet", default=None, metavar="PYTHON", help="every other commit measured by PYTHON")
    parser.add_argument("--cost", type=int, default=0, metavar="N", help="time N plain and N linked sessions instead")
    parser.add_argument("--past", action="store_true", help="commit everything, then `history --measure` it")
    parser.add_argument("--default-profile", action="store_true", help="each session in the default profile, not quick")
    args = parser.parse_args()
    if args.cost:
        cost(args.out, args.cost)
        return
    if args.past:
        past(args.out, args.commits)
        return
    folder = harness.git_project(args.out, {"test_step.py": PAIR, ".gitignore": "baselines/\n"})
    steps = {} if args.no_steps else STEPS
    link = () if args.unlinked else ("--overhead-link",)
    machine = ("--overhead-machine=fleet",) if args.fleet else ()
    numbers, seconds = {}, []
    per_unit = extra_for(folder, 1.0)  # loop iterations that cost one baseline call
    ratio = 3.0
    for number in range(1, args.commits + 1):
        ratio *= steps.get(number, 1.0)
        numbers[commit(folder, round((ratio - 1) * per_unit), f"commit {number}")] = number
        python = args.fleet if args.fleet and number % 2 == 0 else sys.executable
        started = time.monotonic()
        out = args.out / f"run{number:02}.json"
        profile = QUICK[1:] if args.default_profile else QUICK  # -p no:randomly either way
        with harness.busy_loops(0 if args.alternate and number % 2 else args.busy):
            ran = harness.session(
                folder, out, "--overhead-autosave", *link, *machine, *profile, python=python, paths=[harness.SRC]
            )
        seconds.append(time.monotonic() - started)
        print(f"commit {number}: ratio {ran.results[0]['ratio']:.3f} in {seconds[-1]:.0f} s", flush=True)
    reading = [
        "history",
        "baselines",
        "--json",
        str(args.out / "history.json"),
        *(["--machine", "fleet"] * bool(args.fleet)),
    ]
    history = subprocess.run(
        [sys.executable, "-m", "overheadbench.cli", *reading],
        capture_output=True,
        text=True,
        check=False,
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(harness.SRC)},
    )
    points = json.loads((args.out / "history.json").read_text())["change_points"]
    named = sorted((point["kind"], numbers.get(point["commit"], -1), round(point["change"], 4)) for point in points)
    truth = sorted(("step", number, round(step - 1, 4)) for number, step in steps.items())
    summary = {
        "linked": not args.unlinked,
        "alternate": args.alternate,
        "fleet": args.fleet,
        "profile": "default" if args.default_profile else "quick",
        "busy": args.busy,
        "commits": args.commits,
        "named": named,
        "truth": truth,
        "exact": [(kind, number) for kind, number, _ in named] == [("step", number) for _, number, _ in truth],
        "session_s": seconds,
        "history": history.stdout[-3000:],
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(history.stdout[-2000:])
    print(json.dumps({key: value for key, value in summary.items() if key not in ("history", "session_s")}))
    print(f"median session {sorted(seconds)[len(seconds) // 2]:.1f} s")


INTERRUPTED_AT = 6
"""Runs ``--past`` lets ``history --measure`` store before it sends it ``SIGTERM``."""


def past(out: Path, commits: int) -> None:
    """Every commit made first (the steps of :data:`STEPS`), then ``overheadbench history --measure``
    over them, sent ``SIGTERM`` once it has stored :data:`INTERRUPTED_AT` runs, and run again: what the
    second one measured, and the history it read."""
    folder = harness.git_project(out, {"test_step.py": PAIR, ".gitignore": "baselines/\n"})
    per_unit, ratio, numbers = extra_for(folder, 1.0), 3.0, {}
    for number in range(1, commits + 1):
        ratio *= STEPS.get(number, 1.0)
        numbers[commit(folder, round((ratio - 1) * per_unit), f"commit {number}")] = number
    command = [sys.executable, "-m", "overheadbench.cli", "history", "--measure", "HEAD", "--max-commits", str(commits)]
    command += ["--json", str(out / "history.json"), "--", *QUICK]
    env = {**os.environ, "PYTHONPATH": str(harness.SRC)}
    first = subprocess.Popen(command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    while first.poll() is None and len(list((folder / "baselines").rglob("*.json"))) < INTERRUPTED_AT:
        time.sleep(0.5)
    first.terminate()
    said_first, _ = first.communicate()
    stored_first = len(list((folder / "baselines").rglob("*.json")))
    second = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, check=False)
    stored = sorted((folder / "baselines").rglob("*.json"))
    runs = [json.loads(path.read_text())["environment"]["commit_info"]["id"] for path in stored]
    points = json.loads((out / "history.json").read_text())["change_points"]
    summary = {
        "stored_when_interrupted": stored_first,
        "first_exit": first.returncode,
        "second_exit": second.returncode,
        "second_said": [line for line in second.stdout.splitlines() if "--measure" in line],
        "runs": len(runs),
        "commits_with_one_run": len(set(runs)) == len(runs) == commits,
        "named": sorted((p["kind"], numbers.get(p["commit"], -1)) for p in points),
        "truth": sorted(("step", number) for number in STEPS),
        "first_tail": said_first[-600:],
        "history": second.stdout[-2000:],
    }
    (out / "past.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps({k: v for k, v in summary.items() if k not in ("history", "first_tail")}))
    print(second.stdout[-1500:])


def cost(out: Path, sessions: int) -> None:
    """``sessions`` plain autosaved sessions and as many linked ones of the same commit, alternating
    (each linked to the commit before, whose run is stored first), timed whole: the ratio of medians."""
    folder = harness.git_project(out, {"test_step.py": PAIR, ".gitignore": "baselines/\n"})
    per_unit = extra_for(folder, 1.0)
    commit(folder, 2 * per_unit, "commit 1")
    harness.session(folder, out / "first.json", "--overhead-autosave", *QUICK, paths=[harness.SRC])
    commit(folder, 2 * per_unit, "commit 2")
    times: dict[str, list[float]] = {"plain": [], "linked": []}
    for number in range(2 * sessions):
        kind = "linked" if number % 2 else "plain"
        storage = f"--overhead-storage={out / kind}"  # the plain runs never become the linked ones' ancestor
        if kind == "linked":
            shutil.copytree(folder / "baselines", out / kind, dirs_exist_ok=True)
        started = time.monotonic()
        harness.session(
            folder,
            out / f"{kind}{number}.json",
            "--overhead-autosave",
            storage,
            *(("--overhead-link",) if kind == "linked" else ()),
            *QUICK,
            paths=[harness.SRC],
        )
        times[kind].append(time.monotonic() - started)
        shutil.rmtree(out / kind, ignore_errors=True)
    medians = {kind: statistics.median(values) for kind, values in times.items()}
    summary = {"times_s": times, "medians_s": medians, "ratio": medians["linked"] / medians["plain"]}
    (out / "cost.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
