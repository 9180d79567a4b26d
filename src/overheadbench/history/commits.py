"""Measuring a commit against another, as a bisection step does: one session, both trees.

The commit is checked out in one worktree that every step reuses (a fresh checkout each step
costs the whole tree's files; :class:`~overheadbench.replicas.trees.Worktree`, the base tree's
home too), and a session runs there with ``--overhead-against`` the reference commit,
``--overhead-fail-above`` the threshold and the user's own pytest arguments; its JSON gives each
pair's change over the reference, the gate's finding and, for a regressed or
unknown change, its explanation.

Nothing outlives the bisection, however it ends. ``SIGTERM`` is an interrupt (as in a session):
the step's session is sent ``SIGTERM`` in turn, so it tears its replicas and base tree down, and
the worktree is removed. ``SIGKILL`` runs no cleanup, so two things do it for the dead process:
the step's session is started to receive ``SIGTERM`` when its parent dies (Linux's
``PR_SET_PDEATHSIG``), and the worktree is a reaped one (:class:`~overheadbench.replicas.trees.Worktree`):
a small process removes it at any death.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ..core.git import git
from ..core.jsonio import Fields
from ..core.termination import ended_with_parent
from ..engine.attribution import Explanation
from ..engine.changes import Change, Gate
from ..replicas.trees import TreeError, Worktree
from ..store.environment import BRANCH_VARIABLE
from .bisect import BisectError, Measured, Moved

SESSION_TIMEOUT_S = 3600.0
"""One step's session may take at most this long."""
STOP_GRACE_S = 20.0
"""A step's session sent ``SIGTERM`` (the bisection was) gets this long to tear down before it is killed."""
QUOTED_LINES = 20
"""The end of a session's output quoted when it wrote no results."""


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
    ancestor = git(repository, "merge-base", "--is-ancestor", good, bad)
    if ancestor is not None and ancestor.returncode == 1:
        raise BisectError(f"{good} is not an ancestor of {bad}: a bisection searches the history from GOOD to BAD")
    commits = [tuple(line.split("\0", 1)) for line in listed.stdout.splitlines() if "\0" in line]
    if not commits:
        raise BisectError(f"{bad} has no commit after {good} (is {good} an ancestor of {bad}?)")
    return resolved.stdout.strip(), [(commit, subject) for commit, subject in commits]


class CommitSessions:
    """Each step's session, in one reused worktree of ``repository`` in a scratch folder of its own,
    which a reaper process removes if this one dies (see the module docstring)."""

    def __init__(self, repository: Path, threshold: float, pytest_args: list[str]) -> None:
        self.repository, self.threshold, self.pytest_args = repository, threshold, pytest_args
        self.worktree = Worktree(repository, "bisect", reaped=True)
        self.scratch = self.worktree.prepare()
        self.sessions = 0

    def __call__(self, commit: str, reference: str) -> Measured:
        against = [f"--overhead-against={reference}", f"--overhead-fail-above={self.threshold:g}%"]
        output = self._session(commit, against)
        return self._read(output) if isinstance(output, Path) else Measured((), broken=output)

    def store(self, commit: str, options: list[str], branch: str) -> str:
        """Run a session at ``commit`` that stores its run (``options`` say where, and what it links to),
        recording ``branch``; empty where it wrote its results, else the end of what it said."""
        output = self._session(commit, options, {BRANCH_VARIABLE: branch} if branch else {})
        return "" if isinstance(output, Path) else output

    def _session(self, commit: str, options: list[str], env: dict[str, str] | None = None) -> Path | str:
        """Run a session at ``commit`` with ``options`` and the user's arguments (and ``env`` added to
        this process's environment): its JSON's path, or (it wrote none) the end of what it said."""
        tree = self._checkout(commit)
        self.sessions += 1
        output = self.scratch / f"session-{self.sessions}.json"
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--overhead", *options]
        command += [f"--overhead-json={output}", *self.pytest_args]
        step = subprocess.Popen(
            command,
            cwd=tree,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            preexec_fn=ended_with_parent,
            env={**os.environ, **(env or {})},
        )
        try:
            said, _ = step.communicate(timeout=SESSION_TIMEOUT_S)
        except BaseException:  # interrupted (SIGTERM, Ctrl-C) or timed out: the session tears down first
            _stop(step)
            raise
        if not output.is_file():
            return "\n".join(said.strip().splitlines()[-QUOTED_LINES:]) or f"exit {step.returncode}"
        return output

    def _checkout(self, commit: str) -> Path:
        try:
            return self.worktree.checkout(commit)
        except TreeError as exc:
            raise BisectError(f"cannot check {commit[:12]} out: {exc}") from None

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
        """Take the worktree and the scratch folder away (the repository forgets it too)."""
        self.worktree.remove()


def _stop(step: subprocess.Popen[str]) -> None:
    """End a step's session: ``SIGTERM`` (it tears its replicas and base tree down), then a kill."""
    step.terminate()
    try:
        step.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        step.kill()
        step.wait()
