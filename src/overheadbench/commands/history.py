"""``overheadbench history``: every step and drift of a branch's stored runs, named by its commits,
confirmed on request, and a gate on them."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..core.errors import StorageError
from ..core.files import cannot_write, write_text_atomic
from ..core.git import checked_out_branch, is_repository
from ..core.jsonio import dumps
from ..core.tables import plain
from ..core.termination import install_sigterm, uninstall_sigterm
from ..history.accepted import ACCEPTED_FILE, accept
from ..history.confirm import confirm
from ..history.past import MAX_COMMITS, measure_past
from ..history.stored import stored_history
from ..history.timeline import EVERY_BRANCH, since
from ..report.history import history_document, regressions, render_history, whose
from ..store.index import indexed_runs
from ..store.runs import Storage
from .arguments import Commands, percent
from .bisect import BISECT_ROUNDS


def add_parser(commands: Commands, anywhere: argparse.ArgumentParser) -> None:
    history = commands.add_parser(
        "history",
        parents=[anywhere],
        help="every step and drift in the stored runs' figures, in commit order, named by their commits",
    )
    history.add_argument("folder", nargs="?", type=Path, default=None, metavar="STORAGE", help="(as --storage)")
    history.add_argument("--branch", default=None, help="the runs of this branch (default: the checked-out one)")
    history.add_argument("--repository", type=Path, default=Path("."), help="the git repository (default: .)")
    history.add_argument("--json", type=Path, default=None, help="write the change points to FILE")
    history.add_argument(
        "--fail-above",
        type=percent,
        default=None,
        metavar="PCT",
        help="exit 1 on a regression of more than PCT percent",
    )
    history.add_argument("--since", default=None, metavar="REF", help="... that came after REF (a commit or branch)")
    history.add_argument(
        "--confirm",
        action="store_true",
        help="measure each regression's two commits in one session (pytest args after --)",
    )
    history.add_argument(
        "--accept",
        default=None,
        metavar="COMMIT",
        help=f"accept the step at COMMIT (with --reason; --test for one test): recorded in {ACCEPTED_FILE}, "
        "shown as accepted and never failing --fail-above",
    )
    history.add_argument(
        "--measure",
        default=None,
        metavar="REV_RANGE",
        help="first measure and store each commit of REV_RANGE (A..B) that has no run, each linked to the one "
        "before it (pytest args after --; resumable)",
    )
    history.add_argument(
        "--max-commits", type=int, default=MAX_COMMITS, metavar="N", help="--measure's newest N commits of the range"
    )
    history.add_argument(
        "--machine", default=None, metavar="NAME", help="the runs stored under NAME (--overhead-machine: a fleet)"
    )
    history.add_argument("--test", default=None, help="the test whose step --accept accepts (default: every test)")
    history.add_argument("--reason", default="", help="why --accept's step is the cost the team meant")


def run(storage: Storage, args: argparse.Namespace, pytest_args: list[str]) -> int:
    """The change points of this machine's runs on one branch (the checked-out one, where runs record it),
    printed, confirmed (``--confirm``) and written; 1 where ``--fail-above`` finds a regression. What
    it is given is checked before anything runs: a gate that reads nothing must not pass."""
    if not is_repository(args.repository) and (args.since or args.confirm or args.measure):
        raise StorageError(f"--since, --confirm and --measure read git: {args.repository} is not a git repository")
    if args.measure:  # a project with no history yet: its folder is made
        storage.root.mkdir(parents=True, exist_ok=True)
    _a_folder(storage)
    if args.json and (why := cannot_write(args.json)):  # before the first session, not after the last
        raise StorageError(f"--json {args.json}: {why}")
    newer = since(args.repository, args.since) if args.since else None
    if (args.test or args.reason) and not args.accept:
        raise StorageError("--test and --reason go with --accept COMMIT")
    if args.measure:
        _measure(storage, args, pytest_args)
    if args.accept:
        made = accept(args.repository, args.accept, args.test, args.reason)
        print(
            f"accepted: the step at {made.commit[:10]} for {plain(made.test) if made.test else 'every test'} "
            f"({plain(made.reason)}); commit {ACCEPTED_FILE} to keep it"
        )
    history, branch, skipped = stored_history(indexed_runs(storage), args.branch, args.repository)
    for reason in skipped:
        print(f"overheadbench: left out: {plain(reason)}")
    confirmed = {}
    for point in (p for p in history.change_points if p.regression and args.confirm):
        confirmed[point] = confirm(point, args.repository, BISECT_ROUNDS, pytest_args)
    print("\n".join(render_history(history, whose(storage.machine, branch), confirmed)))
    if args.json:
        write_text_atomic(args.json, dumps(history_document(history, storage.machine, branch, confirmed)) + "\n")
    if args.fail_above is None:
        return 0
    failing = regressions(history, args.fail_above, newer)
    for line in failing:
        print(line)
    return 1 if failing else 0


def _measure(storage: Storage, args: argparse.Namespace, pytest_args: list[str]) -> None:
    """``--measure``: the range's missing commits measured and stored first, on the branch read."""
    if args.max_commits < 1:
        raise StorageError(f"--max-commits {args.max_commits}: give at least 1")
    branch = args.branch or checked_out_branch(args.repository)
    if not branch or branch in ("HEAD", EVERY_BRANCH):
        raise StorageError("--measure stores runs of a branch: name it with --branch (the checkout is detached)")
    install_sigterm()  # SIGTERM ends it as Ctrl-C does: the session's worktree goes too
    try:
        stored = {row.commit for row in indexed_runs(storage)[0] if not row.dirty}
        done = measure_past(storage, stored, args.repository, args.measure, branch, pytest_args, args.max_commits)
    finally:
        uninstall_sigterm()
    print(f"overheadbench history --measure {args.measure}: {done.told()}")


def _a_folder(storage: Storage) -> None:
    """The storage named is a folder: a missing one (a typo in a CI path) read "0 runs" and passed
    every gate, for good."""
    root = storage.root
    if root.is_dir():
        return
    why = (
        "a link to nothing"
        if root.is_symlink() and not root.exists()
        else "not a folder"
        if root.exists()
        else "no such folder"
    )
    raise StorageError(
        f"{root}: {why}; history reads a folder of stored runs (STORAGE, or --storage; default baselines/)"
    )
