"""``overheadbench history --measure REV_RANGE``: a history for a project that has none yet, measured
commit by commit (as asv's ``run A..B`` does) into the storage the history reads.

Each commit of the range (first parents: the branch's own history, newest ``max_commits``) that has
no stored run is measured in one session at that commit, linked to the commit before it (that one's
tree measured beside it, ``--overhead-against``), and stored (``--overhead-autosave``) under the
branch being read. A run is stored as its session ends, so an interrupted measuring loses one session
at most, and the next one measures only what is still missing. A commit whose session stores nothing
(its tests do not collect) is skipped and counted, as a bisection skips it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..core.errors import StorageError
from ..core.git import git
from ..store.runs import Storage
from .commits import CommitSessions

MAX_COMMITS = 20
"""Commits ``--measure`` takes from a range, the newest, where ``--max-commits`` is not given."""


class Storing(Protocol):
    """Sessions that store a commit's run (:class:`~overheadbench.history.commits.CommitSessions`)."""

    def store(self, commit: str, options: list[str], branch: str) -> str: ...

    def close(self) -> None: ...


@dataclass
class Measuring:
    """What ``--measure`` did: the commits it measured, those stored before, and those skipped (why)."""

    measured: list[str] = field(default_factory=list)
    had_runs: int = 0
    skipped: dict[str, str] = field(default_factory=dict)

    def told(self) -> str:
        skipped = f"; {len(self.skipped)} skipped (no results: {', '.join(c[:10] for c in self.skipped)})"
        return (
            f"measured {len(self.measured)} commit{'s' if len(self.measured) != 1 else ''}, "
            f"{self.had_runs} had runs already" + (skipped if self.skipped else "")
        )


def range_commits(repository: Path, revisions: str, max_commits: int) -> list[tuple[str, str]]:
    """The newest ``max_commits`` commits of ``revisions`` (``A..B``, or a revision and its ancestors),
    oldest first, first parents only, each with its parent (empty for a root commit)."""
    listed = git(repository, "rev-list", "--first-parent", "--parents", "--reverse", revisions, "--")
    if listed is None or listed.returncode != 0:
        why = listed.stderr.strip() if listed is not None else "git is not installed"
        raise StorageError(f"--measure {revisions}: not a range of commits of {repository} ({why})")
    commits = [(line.split() + [""])[:2] for line in listed.stdout.splitlines() if line.strip()]
    if not commits:
        raise StorageError(f"--measure {revisions}: the range holds no commit")
    return [(commit, parent) for commit, parent in commits[-max_commits:]]


def measure_past(
    storage: Storage,
    stored: set[str],
    repository: Path,
    revisions: str,
    branch: str,
    pytest_args: list[str],
    max_commits: int = MAX_COMMITS,
    said: Callable[[str], Any] = print,
    sessions_for: Callable[[Path, float, list[str]], Storing] = CommitSessions,
) -> Measuring:
    """Measure and store each commit of the range that has no run in ``storage`` (``stored``: the
    commits that have one; see the module)."""
    commits = range_commits(repository, revisions, max_commits)
    stored = set(stored)
    done = Measuring()
    where = [f"--overhead-storage={storage.root.resolve()}", "--overhead-autosave"]
    where += [f"--overhead-machine={storage.machine}"] if storage.pooled else []
    sessions = sessions_for(repository, 0.0, pytest_args)
    try:
        for number, (commit, parent) in enumerate(commits, 1):
            if commit in stored:
                done.had_runs += 1
                continue
            link = [f"--overhead-against={parent[:12]}"] if parent in stored else []
            said(f"measuring {number}/{len(commits)}: {commit[:10]}" + (f", linked to {parent[:10]}" if link else ""))
            broken = sessions.store(commit, [*where, *link], branch)
            if broken:
                done.skipped[commit] = broken
                continue
            done.measured.append(commit)
            stored.add(commit)
    finally:
        sessions.close()
    return done
