"""Measuring a commit against another, as a bisection step does: one session, both trees.

The commit is checked out in one worktree that every step reuses (a fresh checkout each step
costs the whole tree's files), and a session runs there with ``--overhead-against`` the
reference commit, ``--overhead-fail-above`` the threshold and the user's own pytest arguments;
its JSON gives each pair's change over the reference, the gate's finding and, for a regressed or
unknown change, its explanation.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ..core.git import git
from ..core.jsonio import Fields
from ..engine.attribution import Explanation
from ..engine.changes import Change, Gate
from .bisect import Measured, Moved

SESSION_TIMEOUT_S = 3600.0
"""One step's session may take at most this long."""
QUOTED_LINES = 20
"""The end of a session's output quoted when it wrote no results."""


class BisectError(Exception):
    """A commit cannot be listed or checked out, or its session left no results; the message says which."""


def commits_between(repository: Path, good: str, bad: str) -> tuple[str, list[tuple[str, str]]]:
    """GOOD's full id and the commits after it up to BAD, oldest first (first parents: the
    branch's own history), each with its subject."""
    listed = git(repository, "log", "--reverse", "--first-parent", "--format=%H%x00%s", f"{good}..{bad}")
    resolved = git(repository, "rev-parse", "--verify", f"{good}^{{commit}}")
    if listed is None or resolved is None:
        raise BisectError("git is not installed")
    if listed.returncode or resolved.returncode:
        why = (listed.stderr if listed.returncode else resolved.stderr).strip()
        raise BisectError(f"cannot list the commits from {good} to {bad}: {why}")
    commits = [tuple(line.split("\0", 1)) for line in listed.stdout.splitlines() if "\0" in line]
    if not commits:
        raise BisectError(f"{bad} has no commit after {good} (is {good} an ancestor of {bad}?)")
    return resolved.stdout.strip(), [(commit, subject) for commit, subject in commits]


class CommitSessions:
    """Each step's session, in one reused worktree of ``repository`` under ``scratch``."""

    def __init__(self, repository: Path, scratch: Path, threshold: float, pytest_args: list[str]) -> None:
        self.repository, self.scratch = repository, scratch
        self.threshold, self.pytest_args = threshold, pytest_args
        self.tree = scratch / "tree"
        self.sessions = 0

    def __call__(self, commit: str, reference: str) -> Measured:
        against = [f"--overhead-against={reference}", f"--overhead-fail-above={self.threshold:g}%"]
        return self._read(self._session(commit, against))

    def _session(self, commit: str, options: list[str]) -> Path:
        """Run a session at ``commit`` with ``options`` and the user's arguments: its JSON's path."""
        self._checkout(commit)
        self.sessions += 1
        output = self.scratch / f"session-{self.sessions}.json"
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--overhead", *options]
        command += [f"--overhead-json={output}", *self.pytest_args]
        done = subprocess.run(
            command, cwd=self.tree, capture_output=True, text=True, timeout=SESSION_TIMEOUT_S, check=False
        )
        if not output.is_file():
            said = "\n".join((done.stdout + done.stderr).strip().splitlines()[-QUOTED_LINES:])
            raise BisectError(f"the session at {commit[:12]} wrote no results; it said:\n{said}")
        return output

    def _checkout(self, commit: str) -> None:
        if self.tree.is_dir():
            done = git(self.tree, "checkout", "--quiet", "--detach", "--force", commit)
        else:
            done = git(self.repository, "worktree", "add", "--quiet", "--detach", str(self.tree), commit)
        if done is None or done.returncode:
            raise BisectError(f"cannot check {commit[:12]} out: {done.stderr.strip() if done else 'no git'}")

    def _read(self, output: Path) -> Measured:
        gate = Gate("", self.threshold)
        moved = []
        for data in json.loads(output.read_text(encoding="utf-8"))["results"]:
            for place in data.get("places") or []:
                if place.get("change") is None:
                    continue
                change = Change.from_json(place["change"], "change", data["nodeid"])
                finding = gate.finding(change)
                assert finding is not None
                low, high = change.interval
                explained = Explanation.from_json(Fields(place["explain"], "explain")) if place.get("explain") else None
                moved.append(Moved(data["nodeid"], change.percent, low, high, finding, explained))
        return Measured(tuple(moved))

    def close(self) -> None:
        """Take the worktree away (the repository forgets it too)."""
        if self.tree.is_dir():
            git(self.repository, "worktree", "remove", "--force", str(self.tree))
