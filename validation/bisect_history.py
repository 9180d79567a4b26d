"""``overheadbench bisect`` on a made history: is the one slowed commit found? (issue 49, part 3)

    python validation/bisect_history.py --out DIR [--trials 10] [--level 8]   # ~1 h, alone

Each trial builds a fresh git repository of a small agent project (a message validated, routed,
handled, logged and serialised in pure Python and the standard library's ``json``, against the bare
handler) with 16 commits after GOOD: 15 neutral (a note, a docstring) and one, at a position drawn for
the trial, that slows the routing layer by ``--level`` percent of framework / baseline (loop
iterations calibrated once, in an A/B session of a slowed working tree against its commit). It then
runs ``overheadbench bisect GOOD BAD --json`` there in time mode, default profile, default threshold
(5%), and records whether the commit found is the slowed one, the steps and sessions it took and its
wall time. Writes DIR/bisect.md and prints it.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import harness

COMMITS = 16
AGENT = '''"""A small agent step: the bare handler, and the same handler behind its framework's layers."""

import json

ROUTES = {{"billing": "billing-agent", "support": "support-agent", "sales": "sales-agent"}}
SLOWDOWN = range({slowdown})


def handle(message):
    words = message["text"].split()
    return {{"reply": " ".join(reversed(words)), "words": len(words)}}


def validate(message):
    if not isinstance(message.get("text"), str) or not message["text"]:
        raise ValueError("a message needs text")
    return {{"text": message["text"].strip(), "user": str(message.get("user", "anonymous"))}}


def route(message):
    for _ in SLOWDOWN:
        pass
    for word in message["text"].lower().split():
        if word in ROUTES:
            return ROUTES[word]
    return "default-agent"


def framework(message):
    checked = validate(message)
    agent = route(checked)
    reply = handle(checked)
    record = {{"agent": agent, "user": checked["user"], "reply": reply}}
    return json.dumps(record)


def bare(message):
    return handle(message)
'''
TEST = """import pytest
from agent import bare, framework

MESSAGE = {"text": "route this message to the billing agent please", "user": "u1"}


@pytest.mark.overhead(max=20.0)
def test_agent_step(overhead):
    overhead.compare(lambda: bare(MESSAGE), lambda: framework(MESSAGE))
"""
CALIBRATION_ITERATIONS = 100


def project(folder: Path, slowdown: int) -> None:
    folder.mkdir(parents=True)
    (folder / "agent.py").write_text(AGENT.format(slowdown=slowdown))
    (folder / "test_agent.py").write_text(TEST)
    (folder / "pytest.ini").write_text("[pytest]\naddopts = -p no:randomly -p no:cacheprovider\n")
    (folder / "notes.txt").write_text("notes\n")
    harness.git(folder, "init", "-q", "-b", "main")
    harness.git(folder, "add", "-A")
    harness.git(folder, "commit", "-qm", "good")


def calibrate(out: Path) -> int:
    """Loop iterations in ``route`` for ``level`` percent: one A/B session of a slowed working tree."""
    folder = out / "calibration"
    shutil.rmtree(folder, ignore_errors=True)
    project(folder, 0)
    (folder / "agent.py").write_text(AGENT.format(slowdown=CALIBRATION_ITERATIONS))
    command = [sys.executable, "-m", "pytest", "-q", "--overhead-against=HEAD", "--overhead-json=run.json"]
    subprocess.run(command, cwd=folder, check=False, capture_output=True)
    (result,) = json.loads((folder / "run.json").read_text())["results"]
    (place,) = result["places"]
    change = place["change"]
    return 100 * (change["new"] / change["old"] - 1) / CALIBRATION_ITERATIONS


def trial(out: Path, index: int, iterations: int, rng: random.Random) -> dict:
    folder = out / f"trial-{index:02d}"
    shutil.rmtree(folder, ignore_errors=True)
    project(folder, 0)
    good = harness.git(folder, "rev-parse", "HEAD").strip()
    culprit = rng.randrange(COMMITS)
    shas = []
    for number in range(COMMITS):
        if number == culprit:
            (folder / "agent.py").write_text(AGENT.format(slowdown=iterations))
            subject = f"commit {number}: routing keeps a longer table"
        else:
            (folder / "notes.txt").write_text(f"notes, revision {number}\n")
            subject = f"commit {number}: notes"
        harness.git(folder, "add", "-A")
        harness.git(folder, "commit", "-qm", subject)
        shas.append(harness.git(folder, "rev-parse", "HEAD").strip())
    started = time.monotonic()
    cli = [sys.executable, "-c", "import sys; from overheadbench.cli import main; sys.exit(main())"]
    done = subprocess.run(
        [*cli, "bisect", good, shas[-1], "--json", "found.json"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.monotonic() - started
    (folder / "bisect.out").write_text(done.stdout + done.stderr)
    found = json.loads((folder / "found.json").read_text()) if (folder / "found.json").is_file() else {}
    sessions = next((line for line in done.stdout.splitlines() if line.endswith("sessions")), "")
    explained: dict[str, Any] = found.get("explained", {})
    first: dict[str, Any] = next(iter(explained.values()), {})
    top = first.get("rows", [{}])[0].get("where", "")
    record = {
        "trial": index,
        "culprit": culprit,
        "found": found.get("first_bad") == shas[culprit],
        "first_bad": shas.index(found["first_bad"]) if found.get("first_bad") in shas else None,
        "steps": len(found.get("steps", [])),
        "sessions": int(sessions.split()[2]) if sessions else None,
        "note": found.get("note", ""),
        "explained_top": top,
        "wall_s": wall,
    }
    (folder / "record.json").write_text(json.dumps(record))
    print(json.dumps(record), flush=True)
    return record


def report(out: Path, records: list[dict], per_iteration: float, iterations: int) -> str:
    found = sum(1 for record in records if record["found"])
    most = max((record["steps"] for record in records), default=0)
    walls = [record["wall_s"] / 60 for record in records]
    lines = [
        f"{len(records)} trials; {COMMITS} commits after GOOD, one slowed by {iterations} loop iterations "
        f"({per_iteration * iterations:+.1f}% of framework / baseline by the calibration's "
        f"{per_iteration:+.3f}% per iteration)",
        "",
        "| trial | slowed commit | found | steps | sessions | explained first | minutes | note |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for record in records:
        lines.append(
            f"| {record['trial']} | {record['culprit']} | {'yes' if record['found'] else 'no (' + str(record['first_bad']) + ')'} "
            f"| {record['steps']} | {record['sessions']} | `{record['explained_top']}` | {record['wall_s'] / 60:.1f} | {record['note']} |"
        )
    bound = math.log2(COMMITS) + 2
    lines += [
        "",
        f"Found in {found} of {len(records)} trials; at most {most} steps (bound log2({COMMITS}) + 2 = {bound:g}); "
        f"{sorted(walls)[len(walls) // 2]:.1f} minutes a trial (median), {max(walls):.1f} at most.",
    ]
    text = "\n".join(lines) + "\n"
    (out / "bisect.md").write_text(text)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--level", type=float, default=8.0)
    parser.add_argument("--seed", type=int, default=49)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    calibration = args.out / "calibration.json"
    if not calibration.is_file():
        calibration.write_text(json.dumps({"per_iteration": calibrate(args.out)}))
    per_iteration = json.loads(calibration.read_text())["per_iteration"]
    iterations = max(1, round(args.level / per_iteration))
    rng = random.Random(args.seed)
    records = []
    for index in range(args.trials):
        done = args.out / f"trial-{index:02d}" / "record.json"
        draw = random.Random(rng.random())
        records.append(json.loads(done.read_text()) if done.is_file() else trial(args.out, index, iterations, draw))
    print(report(args.out, records, per_iteration, iterations))


if __name__ == "__main__":
    main()
