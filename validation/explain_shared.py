"""A change in a thin layer over heavy shared C work: is the changed function ranked first? (issue 56)

    python validation/explain_shared.py collect --out DIR [--sessions 20] [--level 10] [--busy 2]
    python validation/explain_shared.py report --out DIR

A small agent project (``DIR/project``, a git repository) has three pairs whose two sides share a
heavy body in C: a handler that spends its time in ``json.dumps``, in ``hashlib.sha256`` and in a
compiled regular expression, each wrapped by a thin retry layer (``attempts_left``: a few loop
iterations). The head (the working tree) raises each layer's iterations so that framework /
baseline grows by ``--level`` percent (calibrated once against the base, per pair). Each session
runs ``--overhead-against=HEAD --overhead-fail-above=5 --overhead-explain`` (every change
explained, whatever the gate found); the report counts, per pair, the sessions whose change
explanation ranks ``attempts_left`` first, and those that said they could not separate the change
from shared work. ``--busy N`` runs N ``while True: pass`` processes beside every session.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from pathlib import Path

import harness

AGENT = '''"""Three handlers that spend their time in C, each behind a thin retry layer."""
import hashlib
import json
import re

MESSAGE = {
    "role": "assistant",
    "content": "The quick brown fox jumps over the lazy dog. " * 2,
    "tool_calls": [{"id": f"call_{i}", "name": "search", "arguments": {"q": "fox", "k": i}} for i in range(2)],
    "usage": {"prompt_tokens": 812, "completion_tokens": 96},
}
BLOB = bytes(range(256)) * 24
TEXT = "user=alice id=42 token=abc123 " * 12
PATTERN = re.compile(r"(\\w+)=(\\w+)")
CHECKS = __CHECKS__


def encode(message):
    return json.dumps(message)


def digest(blob):
    return hashlib.sha256(blob).hexdigest()


def fields(text):
    return PATTERN.findall(text)


def attempts_left(state, checks):
    total = 0
    for index in range(checks):
        total += index * state["attempt"]
    return total


def with_retry(handler, checks):
    def retried(argument):
        state = {"attempt": 1}
        for _ in range(3):
            attempts_left(state, checks)
            try:
                return handler(argument)
            except ValueError:
                state["attempt"] += 1
        raise RuntimeError("gave up")

    return retried


retried = {
    "json": with_retry(encode, CHECKS["json"]),
    "hashlib": with_retry(digest, CHECKS["hashlib"]),
    "re": with_retry(fields, CHECKS["re"]),
}
'''
TESTS = """import pytest

from agent import BLOB, MESSAGE, TEXT, digest, encode, fields, retried


@pytest.mark.overhead(max=5.0)
def test_json(overhead):
    overhead.compare(lambda: encode(MESSAGE), lambda: retried["json"](MESSAGE))


@pytest.mark.overhead(max=5.0)
def test_hashlib(overhead):
    overhead.compare(lambda: digest(BLOB), lambda: retried["hashlib"](BLOB))


@pytest.mark.overhead(max=5.0)
def test_re(overhead):
    overhead.compare(lambda: fields(TEXT), lambda: retried["re"](TEXT))
"""
PAIRS = ("json", "hashlib", "re")
BASE_CHECKS = 4
PROBE_CHECKS = 104
CHANGED = "agent:attempts_left"
AGAINST = ["--overhead-against=HEAD", "--overhead-fail-above=5", "--overhead-explain"]


def write(project: Path, checks: dict[str, int]) -> None:
    (project / "agent.py").write_text(AGENT.replace("__CHECKS__", json.dumps(checks)))


def make(out: Path) -> Path:
    project = out / "project"
    if not project.exists():
        project.mkdir(parents=True)
        write(project, dict.fromkeys(PAIRS, BASE_CHECKS))
        (project / "test_agent.py").write_text(TESTS)
        (project / "pytest.ini").write_text("[pytest]\n")
        harness.git(project, "init", "-q", "-b", "main")
        harness.git(project, "add", "-A")
        harness.git(project, "commit", "-qm", "base")
    return project


def session(project: Path, path: Path, busy: int) -> dict:
    if not path.exists():
        with harness.busy_loops(busy):
            ran = harness.session(project, path, *AGAINST, measuring=False)
        ran.run["session_wall_s"] = ran.wall_s
        path.write_text(json.dumps(ran.run))
        print(f"{path.name}: {ran.wall_s:.0f} s", flush=True)
    return json.loads(path.read_text())


def change_of(run: dict, pair: str) -> float:
    result = next(r for r in run["results"] if r["nodeid"].endswith(f"test_{pair}"))
    change = result["places"][0]["change"]
    return 100 * (change["new"] / change["old"] - 1)


def collect(out: Path, sessions: int, level: float, busy: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    project = make(out)
    calibration = out / "calibration.json"
    if not calibration.exists():
        write(project, dict.fromkeys(PAIRS, PROBE_CHECKS))
        probe = session(project, out / "calibrate.json", 0)
        per_check = {pair: change_of(probe, pair) / (PROBE_CHECKS - BASE_CHECKS) for pair in PAIRS}
        checks = {pair: BASE_CHECKS + max(1, round(level / per_check[pair])) for pair in PAIRS}
        calibration.write_text(json.dumps({"per_check": per_check, "checks": checks, "level": level}))
    write(project, json.loads(calibration.read_text())["checks"])
    for index in range(sessions):
        session(project, out / f"explained-busy{busy}-{index:02d}.json", busy)
    write(project, dict.fromkeys(PAIRS, BASE_CHECKS))


def report(out: Path) -> str:
    calibration = json.loads((out / "calibration.json").read_text())
    lines = [
        f"checks in the head: {calibration['checks']} (base {BASE_CHECKS}; per check "
        + ", ".join(f"{pair} {value:+.2f}%" for pair, value in calibration["per_check"].items())
        + ")",
        "",
        "| busy loops | pair | sessions | changed function first | cannot separate (said) | its rank otherwise "
        "| its share (median) | change (median) | session (median) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for busy in sorted({int(path.name.split("-")[1].removeprefix("busy")) for path in out.glob("explained-*.json")}):
        runs = [json.loads(path.read_text()) for path in sorted(out.glob(f"explained-busy{busy}-*.json"))]
        first = total = 0
        for pair in PAIRS:
            ranks: list[int | str | None] = []
            shares, changes, unseparated = [], [], 0
            for run in runs:
                result = next((r for r in run["results"] if r["nodeid"].endswith(f"test_{pair}")), None)
                if result is None:  # the test failed before its result was carried: counted as missed
                    ranks.append("no result")
                    continue
                explain = result["places"][0].get("explain") or {"rows": []}
                rows = explain["rows"]
                rank = next((i + 1 for i, row in enumerate(rows) if row["where"] == CHANGED), None)
                ranks.append(rank)
                shares.append(rows[rank - 1]["share"] if rank else 0.0)
                changes.append(change_of(run, pair))
                unseparated += bool(rows) and rows[0]["added"] <= 2 * rows[0].get("se", 0.0)
            firsts = sum(rank == 1 for rank in ranks)
            first, total = first + firsts, total + len(runs)
            others = sorted(str(rank) for rank in ranks if rank != 1)
            changes = changes or [math.nan]
            wall = statistics.median(run["session_wall_s"] for run in runs)
            lines.append(
                f"| {busy} | {pair} | {len(runs)} | {firsts} of {len(runs)} | {unseparated} | {', '.join(others) or '-'} "
                f"| {statistics.median(shares):.0%} | {statistics.median(changes):+.1f}% | {wall:.0f} s |"
            )
        lines.append(f"| {busy} | **all** | | **{first} of {total}** | | | | | |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["collect", "report"])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--level", type=float, default=10.0)
    parser.add_argument("--busy", type=int, default=0)
    args = parser.parse_args()
    if args.command == "collect":
        collect(args.out, args.sessions, args.level, args.busy)
    else:
        print(report(args.out), end="")


if __name__ == "__main__":
    main()
