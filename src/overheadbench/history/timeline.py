"""A project's figures over its history: each figure's stored runs in commit order, and the change
points in them (:mod:`overheadbench.engine.shifts`) named by their commits (``overheadbench history``).

A series is one figure of one test (a pair's overhead in its mode, a transport row's figure) over
the runs of one machine and branch. Its order is git's (topological, oldest first) where every
run's commit is in the repository, else the commits' dates; runs of a commit stay in the order
they were stored. Runs of a dirty tree measured no commit and are left out (and counted).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import StorageError
from ..core.git import git
from ..engine.readings import Reading, RunRow
from ..engine.shifts import Point, Shift, ShiftKind, find_shifts


@dataclass(frozen=True)
class Commit:
    """A run's commit as the history names it: its SHA and subject (empty outside the repository)."""

    sha: str
    subject: str = ""

    @property
    def short(self) -> str:
        return self.sha[:10]


@dataclass(frozen=True)
class ChangePoint:
    """A step between two runs of a figure's series (``before``, the last run before; ``after``, the
    first after), or a drift over runs ``before..after``: the change of the figure with its
    interval, and what it did to its budget."""

    latest: Reading
    """The series' newest reading: its test, figure, budget and direction."""
    shift: Shift
    before: RunRow
    after: RunRow
    before_commit: Commit
    after_commit: Commit
    between: int | None
    """Commits strictly between the two runs' (None: unknown outside the repository)."""
    value_after: float
    """The figure's level after the change (the mean of the runs after a step, the drift's end)."""
    between_sd: float
    """The spread between sessions (sd of the figure's log) its series was read with."""
    accepted: str = ""
    """Why the team accepted this step (``history --accept``; empty: not accepted): shown, never a failure."""

    @property
    def test(self) -> str:
        return self.latest.test

    @property
    def figure(self) -> str:
        return self.latest.figure

    @property
    def limit(self) -> float | None:
        return self.latest.limit

    @property
    def regression(self) -> bool:
        return (self.shift.change > 0) == self.latest.higher_is_worse

    @property
    def pending(self) -> bool:
        """The newest commit's runs differ, too few to place the step: shown, never a failure."""
        return self.shift.kind is ShiftKind.PENDING

    @property
    def over_budget(self) -> bool | None:
        """Whether the figure's level after the change breaks its budget (None: it has none)."""
        if self.limit is None:
            return None
        return self.value_after > self.limit if self.latest.higher_is_worse else self.value_after < self.limit

    def to_json(self) -> dict[str, Any]:
        low, high = self.shift.interval()
        return {
            "test": self.test,
            "figure": self.figure,
            "kind": self.shift.kind.value,
            "commit": self.after.commit,
            "before_commit": self.before.commit,
            "change": self.shift.change,
            "ci": [low, high],
            "z": self.shift.z,
            "regression": self.regression,
            "commits_between": self.between,
            "value_after": self.value_after,
            "limit": self.limit,
            "over_budget": self.over_budget,
            "between_sd": self.between_sd,
            "runs": [self.before.path, self.after.path],
            "accepted": self.accepted or None,
        }


@dataclass(frozen=True)
class History:
    """The change points of every series of the runs read, and what was read."""

    change_points: tuple[ChangePoint, ...]
    runs: int
    series: int
    dirty: int
    """Runs of a dirty tree, left out."""
    ordered_by: str
    """``git`` or ``date``."""
    ordered: tuple[RunRow, ...] = ()
    """The runs read, oldest first (commit order): each series' points, for a page's trends."""
    machines: int = 1
    """The fingerprints whose runs were pooled (a fleet under one ``--overhead-machine`` name)."""
    linked: int = 0
    """Runs linked to the commit before them (``--overhead-link``)."""


EVERY_BRANCH = "all"
"""``history --branch all``: the runs of every branch."""


def on_branch(rows: Sequence[RunRow], branch: str | None) -> tuple[list[RunRow], str]:
    """The runs of ``branch`` and its name, where any run records it; else every run (and
    :data:`EVERY_BRANCH`)."""
    if branch and branch != EVERY_BRANCH and any(row.branch == branch for row in rows):
        return [row for row in rows if row.branch == branch], branch
    return list(rows), EVERY_BRANCH


def read_history(rows: Sequence[RunRow], repository: Path | None) -> History:
    """The change points of every figure's series in ``rows`` (one machine and branch), in commit
    order (git's, where ``repository`` holds every run's commit)."""
    clean = [row for row in rows if not row.dirty]
    positions = _git_order(repository, [row.commit for row in clean]) if repository else None
    if positions is not None:
        ordered = sorted(clean, key=lambda row: (positions[row.commit], row.number))
    else:
        ordered = sorted(clean, key=lambda row: (row.time, row.number))
    series: dict[tuple[str, str], list[tuple[RunRow, Reading]]] = {}
    for row in ordered:
        for figure in row.readings:
            series.setdefault(figure.key, []).append((row, figure))
    subjects = _Subjects(repository if positions is not None else None)
    found = [point for runs in series.values() for point in _change_points(runs, subjects)]
    order = "git" if positions else "date"
    machines, linked = len({row.machine for row in ordered}), sum(1 for row in ordered if row.linked)
    dirty = len(rows) - len(clean)
    return History(tuple(found), len(ordered), len(series), dirty, order, tuple(ordered), max(machines, 1), linked)


def _change_points(runs: list[tuple[RunRow, Reading]], subjects: _Subjects) -> list[ChangePoint]:
    readings = [figure for _, figure in runs]
    offsets = _offsets(runs)
    points = [
        Point(figure.log - offsets[row.machine], figure.se, row.commit, figure.link, figure.link_se, row.linked)
        for row, figure in runs
    ]
    found = []
    series = find_shifts(points, readings[-1].prior_sd)
    for shift in series.shifts:
        first = shift.start if shift.kind is ShiftKind.DRIFT else shift.start - 1
        before, after = runs[first][0], runs[shift.end][0]
        found.append(
            ChangePoint(
                readings[-1],
                shift,
                before,
                after,
                subjects.commit(before.commit),
                subjects.commit(after.commit),
                subjects.between(before.commit, after.commit),
                math.exp(shift.level),
                series.tau,
            )
        )
    return found


def _offsets(runs: list[tuple[RunRow, Reading]]) -> dict[str, float]:
    """Each machine's level against the series' most frequent machine (0 for it), where a fleet's
    runs share a name (``--overhead-machine``): the median difference between each of its runs and
    the nearest run of that machine. Why the nearest: a step between far runs would be read as the
    machines' offset; a median lets the few pairs across a step pass."""
    machines = [row.machine for row, _ in runs]
    reference = max(set(machines), key=machines.count)
    there = [i for i, machine in enumerate(machines) if machine == reference]
    found = {reference: 0.0}
    for machine in set(machines) - {reference}:
        differences = [
            runs[i][1].log - runs[min(there, key=lambda j: abs(j - i))][1].log
            for i, other in enumerate(machines)
            if other == machine
        ]
        found[machine] = float(statistics.median(differences))
    return found


def _git_order(repository: Path, commits: Sequence[str]) -> dict[str, int] | None:
    """Each commit's place in git's topological order (oldest first), or None where any is not
    a commit of the repository."""
    unique = sorted(set(commits))
    if not unique:
        return {}
    listed = git(repository, "rev-list", "--topo-order", "--reverse", *unique, "--")
    if listed is None or listed.returncode != 0:
        return None
    order = {sha: place for place, sha in enumerate(listed.stdout.split())}
    return order if all(sha in order for sha in unique) else None


class _Subjects:
    """Commits' subjects and the count between two, from the repository (asked once each)."""

    def __init__(self, repository: Path | None) -> None:
        self.repository = repository
        self._subjects: dict[str, str] = {}

    def commit(self, sha: str) -> Commit:
        if self.repository is None:
            return Commit(sha)
        if sha not in self._subjects:
            shown = git(self.repository, "log", "-1", "--format=%s", sha, "--")
            self._subjects[sha] = shown.stdout.strip() if shown and shown.returncode == 0 else ""
        return Commit(sha, self._subjects[sha])

    def between(self, before: str, after: str) -> int | None:
        if self.repository is None or before == after:
            return None if self.repository is None else 0
        counted = git(self.repository, "rev-list", "--count", f"{before}..{after}", "--")
        if counted is None or counted.returncode != 0:
            return None
        return max(int(counted.stdout.strip() or 0) - 1, 0)


def since(repository: Path, reference: str) -> Callable[[str], bool]:
    """Whether a commit came after ``reference``: not ``reference`` itself nor one of its ancestors.
    Raises :class:`~overheadbench.core.errors.StorageError` at once where ``reference`` is not a
    commit (a typo read every regression as old, and the gate passed), later where git cannot place a
    commit against it."""
    resolved = git(repository, "rev-parse", "--verify", "--quiet", f"{reference}^{{commit}}")
    if resolved is None or resolved.returncode != 0:
        raise StorageError(f"--since {reference}: not a commit of the repository at {repository}")
    target = resolved.stdout.strip()

    def newer(commit: str) -> bool:
        ancestor = git(repository, "merge-base", "--is-ancestor", commit, target)
        if ancestor is None or ancestor.returncode not in (0, 1):
            raise StorageError(f"--since {reference}: git cannot place commit {commit[:10]} against it")
        return ancestor.returncode == 1

    return newer
