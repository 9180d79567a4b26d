"""``overheadbench bisect GOOD BAD``: the first commit whose change over GOOD is regressed."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..core.files import cannot_write, write_text_atomic
from ..core.jsonio import dumps
from ..core.termination import install_sigterm, uninstall_sigterm
from ..engine.attribution import CHANGE_HEAD
from ..history.bisect import BisectError, bisect
from ..history.commits import CommitSessions, commits_between
from .arguments import Commands, percent

BISECT_THRESHOLD = 5.0
"""``bisect``'s threshold, percent, where none is given: the CI templates' gate."""
BISECT_ROUNDS = 3
"""Sessions of a commit whose change stays unknown before it is skipped."""


def add_parser(commands: Commands) -> None:
    bisect = commands.add_parser(
        "bisect",
        help="find the first commit between GOOD and BAD whose change over GOOD, measured in one session "
        "against GOOD's tree, is regressed (pytest arguments after --)",
    )
    bisect.add_argument("good")
    bisect.add_argument("bad")
    bisect.add_argument(
        "--fail-above", type=percent, default=BISECT_THRESHOLD, metavar="PCT", help="the gate's threshold, percent"
    )
    bisect.add_argument(
        "--rounds", type=int, default=BISECT_ROUNDS, help="sessions for a commit whose change stays unknown"
    )
    bisect.add_argument("--json", type=Path, default=None, help="write the steps and first_bad to FILE")


def run(args: argparse.Namespace, pytest_args: list[str]) -> int:
    return _bisect(args.good, args.bad, args.fail_above, args.rounds, args.json, pytest_args)


def _bisect(good: str, bad: str, threshold: float, rounds: int, output: Path | None, pytest_args: list[str]) -> int:
    """``overheadbench bisect``: each step printed as it ends, then the first regressed commit (or
    why there is none); 0 when one was found, 1 otherwise."""
    repository = Path.cwd()
    if output is not None and (why := cannot_write(output)):  # before the first session, not after the last
        raise BisectError(f"--json {output}: {why}")
    good_id, commits = commits_between(repository, good, bad)
    install_sigterm()  # SIGTERM ends the bisection as Ctrl-C does: the step's session and worktree go too
    sessions = CommitSessions(repository, threshold, pytest_args)
    try:
        found = bisect(good_id, commits, sessions, max(1, rounds))
    finally:
        sessions.close()
        uninstall_sigterm()
    subjects = dict(commits)
    if found.first_bad:
        cut = f"cut-off +{threshold:g}% over {good_id[:12]}"
        print(f"first regressed ({cut}): {found.first_bad} {subjects[found.first_bad]}")
    for before, then in zip((found.first_bad, *found.then_bad), found.then_bad, strict=False):
        print(f"then regressed (cut-off +{threshold:g}% over {str(before)[:12]}): {then} {subjects[then]}")
    for test, explanation in found.explained.items():
        print(f"{test}, against its parent: {explanation.told(head=CHANGE_HEAD)}")
    if found.note:
        print(found.note)
    print(f"{len(found.steps)} steps, {sessions.sessions} sessions")
    if output is not None:
        write_text_atomic(output, dumps(found.to_json()) + "\n")
    return 0 if found.first_bad else 1
