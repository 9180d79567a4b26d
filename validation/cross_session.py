"""Stored runs compared across sessions (issue 47): do two sessions of identical code read "no change"?

    python validation/cross_session.py project DIR      # write the project, then install it:
        python -m venv DIR/.venv && DIR/.venv/bin/pip install -e PATH/TO/overheadbench pydantic
    python validation/cross_session.py sessions DIR --python DIR/.venv/bin/python --sessions 21 --busy 4
    python validation/cross_session.py sessions DIR2 --python ... --sessions 11 --busy 4 --alternate
    python validation/cross_session.py report DIR

The project (``project``) is a small agent project as a team would gate it: pydantic messages, three
middleware layers, an async agent step, four pairs (cross_session_project/test_agent.py). ``sessions``:
``--sessions`` default sessions one after the other, each beside ``--busy`` loops of
``python -c "while True: pass"`` (busy_runner.py's), each run kept in ``DIR/runs``; ``--alternate``: every
other session alone, so each comparison is of a busy session against a quiet one (a runner whose load
comes and goes).

``report`` replays ``overheadbench compare OLD NEW`` offline (:func:`overheadbench.history.pair_changes.compare_result`)
on every consecutive pair of sessions: identical code, so each interval should cover 0. Twice: with the
prior only (a machine with no stored history: what a first ``compare`` reads) and with the older sessions as
the machine's history. Per pair it prints the between-session sd of the log ratio beyond what the runs' own
errors explain, against the pair's between-process sd: the ratio the prior
(:data:`~overheadbench.engine.combining.SESSION_SHARE`) rests on.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

import numpy as np

from overheadbench.history.pair_changes import compare_result, process_log_sd
from overheadbench.pairs.comparing import reading
from overheadbench.pairs.results import OverheadResult

sys.path.insert(0, str(Path(__file__).parent))
from ab_gate import binomial_at_most  # noqa: E402
from busy_runner import sessions  # noqa: E402

HERE = Path(__file__).parent


def project(folder: Path) -> None:
    (folder / "tests").mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text(
        '[project]\nname = "agentproj"\nversion = "0"\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    )
    source = HERE / "cross_session_project" / "test_agent.py"
    (folder / "tests" / "test_agent.py").write_text(source.read_text())


def load(folder: Path) -> list[list[OverheadResult]]:
    """Each session's measured results, oldest first."""
    runs = []
    for path in sorted((folder / "runs").glob("*.json")):
        found = json.loads(path.read_text())["results"]
        results = [OverheadResult.from_json(data, f"{path}:{index}") for index, data in enumerate(found)]
        runs.append([result for result in results if result.measured])
    return runs


def report(folder: Path) -> None:
    runs = load(folder)
    tests = sorted({result.nodeid for run in runs for result in run})
    for nodeid in tests:
        found = [result for run in runs for result in run if result.nodeid == nodeid]
        logs = np.log([result.ratio for result in found])
        own = np.array([reading(result).log_se for result in found])
        excess = math.sqrt(max(float(np.var(logs, ddof=1) - np.mean(own**2)), 0.0))
        process = statistics.median(process_log_sd(result) for result in found)
        print(
            f"{nodeid}: {len(found)} sessions, ratio {min(r.ratio for r in found):.3f}..{max(r.ratio for r in found):.3f}; "
            f"between sessions {excess:.2%} sd beyond their own errors ({statistics.median(own):.2%}); "
            f"between processes {process:.2%} sd: {excess / process:.2f} of it"
        )
    for label, with_history in (("prior only", False), ("with history", True)):
        covered = total = 0
        halves = []
        for index in range(1, len(runs)):
            old = {result.nodeid: result for result in runs[index - 1]}
            history = [result for run in runs[: index - 1] for result in run] if with_history else []
            for new in runs[index]:
                if new.nodeid not in old:
                    continue
                low, high = compare_result(old[new.nodeid], new, history).interval
                covered, total = covered + (low <= 0 <= high), total + 1
                halves.append((high - low) / 2)
        print(
            f"{label}: {covered}/{total} consecutive comparisons cover 0 ({covered / max(total, 1):.0%}); "
            f"P(so few | 95% coverage) = {binomial_at_most(covered, total, 0.95):.3f}; "
            f"half-width median ±{statistics.median(halves):.1f}% (max ±{max(halves):.1f}%)"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=("project", "sessions", "report"))
    parser.add_argument("folder", type=Path)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--sessions", type=int, default=21)
    parser.add_argument("--busy", type=int, default=4)
    parser.add_argument("--alternate", action="store_true", help="every other session alone (no busy loops)")
    args = parser.parse_args()
    if args.command == "project":
        project(args.folder)
    elif args.command == "sessions" and args.alternate:
        for index in range(args.sessions):  # a runner whose load comes and goes: alone, then busy, ...
            sessions(args.folder, args.python, 1, args.busy if index % 2 else 0, ["--overhead"])
    elif args.command == "sessions":
        sessions(args.folder, args.python, args.sessions, args.busy, ["--overhead"])
    else:
        report(args.folder)


if __name__ == "__main__":
    main()
