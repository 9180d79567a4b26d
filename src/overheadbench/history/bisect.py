"""Which commit did it: a bisection of the commits between GOOD and BAD on measured changes.

Each step measures one commit against GOOD's tree in one session, as ``--overhead-against``
does (:mod:`overheadbench.history.commits`), and reads the gate's finding at the threshold:
*regressed* (some pair's change over GOOD is above it with confidence) makes the commit bad;
*same* or *improved* (every pair) good; *unknown* is measured again, up to ``rounds`` sessions, and
then skipped as ``git bisect skip`` skips: never guessed. BAD is measured first: a BAD that is
not regressed over GOOD has nothing to find.

The first bad commit found is then measured against its own parent (again while unknown, as a step
is): where it is the same there, the regression is made of several smaller steps (each below the
threshold, together above it) and is reported as such, each measured step's change beside it, not
as one culprit; where it stays unknown, that is said (it may be either). Where it is
regressed there, that session has explained its change (head less parent, function by function:
:mod:`overheadbench.pairs.explaining`), and the bisection carries it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine.attribution import Explanation
from ..engine.findings import Finding

SKIPPED = "skipped"
"""A commit still unknown after its rounds: left out of the search, as ``git bisect skip`` does."""
NAMED = 4
"""Candidates a bisection left unsplit named in its note (the rest counted, each line readable)."""


@dataclass(frozen=True)
class Moved:
    """One pair's change over the reference tree, as a step reads it."""

    test: str
    percent: float
    low: float
    high: float
    finding: Finding
    explained: Explanation | None = field(default=None, compare=False)
    """What the change added, function by function, where the session explained it (regressed or unknown)."""

    def told(self) -> str:
        return f"{self.percent:+.1f}% ({self.low:+.1f}..{self.high:+.1f}%) {self.finding}"

    def to_json(self) -> dict[str, Any]:
        return {"test": self.test, "percent": self.percent, "low": self.low, "high": self.high, "finding": self.finding}


class BisectError(Exception):
    """A commit cannot be listed or checked out, or its session left no results; the message says which."""


@dataclass(frozen=True)
class Measured:
    """A commit measured once against a reference: every pair's change."""

    changes: tuple[Moved, ...]
    missing: tuple[str, ...] = ()
    """The pairs BAD regressed that this session did not compare (they raised, were renamed or did
    not collect at the commit): the commit cannot be told, whatever the other pairs read."""
    broken: str = ""
    """Where the session at the commit wrote no results (its tests did not collect, or it crashed):
    the end of what it said. The commit is skipped, as ``git bisect skip`` skips a commit that does
    not build; it once ended the whole bisection (exit 2)."""

    @property
    def finding(self) -> Finding:
        """Unknown if a watched pair is missing or nothing was compared; else regressed if any pair
        regressed; else unknown if any is unknown; else same."""
        if self.missing or not self.changes or self.broken:
            return Finding.UNKNOWN
        found = {moved.finding for moved in self.changes}
        for finding in (Finding.REGRESSED, Finding.UNKNOWN):
            if finding in found:
                return finding
        return Finding.SAME

    @property
    def worst(self) -> Moved | None:
        """The pair that decides the step: the largest change among those of its finding."""
        deciding = [moved for moved in self.changes if moved.finding == self.finding] or list(self.changes)
        return max(deciding, key=lambda moved: moved.percent, default=None)


@dataclass(frozen=True)
class Step:
    commit: str
    subject: str
    outcome: str
    """``bad``, ``good`` or ``skipped``."""
    rounds: int
    measured: Measured

    def told(self, number: int) -> str:
        worst, missing = self.measured.worst, self.measured.missing
        change = f"{worst.told()} ({worst.test})" if worst else "no pair compared"
        if missing:
            change = f"{', '.join(missing)} not compared (raised, renamed or not collected here): cannot be told"
        if self.measured.broken:
            change = (
                f"its session wrote no results (its tests did not collect?): {self.measured.broken.splitlines()[-1]}"
            )
        return f"step {number}: {self.commit[:12]} {self.subject[:50]}: {change} -> {self.outcome}"

    def to_json(self) -> dict[str, Any]:
        return {
            "commit": self.commit,
            "subject": self.subject,
            "outcome": self.outcome,
            "rounds": self.rounds,
            "changes": [moved.to_json() for moved in self.measured.changes],
            "missing": list(self.measured.missing),
            "broken": self.measured.broken or None,
        }


@dataclass
class Bisection:
    good: str
    bad: str
    steps: list[Step] = field(default_factory=list)
    first_bad: str | None = None
    unsplit: tuple[str, ...] = ()
    """Where skipped commits left a range it could not split: the commits the first bad one is among."""
    alone: Measured | None = None
    """The first bad commit against its own parent (None: not measured)."""
    note: str = ""
    then_bad: tuple[str, ...] = ()
    """Each later first regressed commit, over the one before it: a range of two steps (+30.6%, then
    +55% five commits later) was bisected to the larger alone, the first judged "same -> good"."""

    @property
    def explained(self) -> dict[str, Explanation]:
        """Each pair the first bad commit regressed (or left unknown) against its parent: what its
        framework path adds there, function by function, beyond the parent's (that session's own
        explanation)."""
        changes = self.alone.changes if self.alone is not None else ()
        return {
            moved.test: moved.explained for moved in changes if moved.finding.unsettled and moved.explained is not None
        }

    @property
    def gradual(self) -> bool:
        """The first bad commit is the same as (or better than) its parent at the threshold: several
        smaller steps did it. (Unknown against its parent is not this: it cannot be told.)"""
        return self.alone is not None and not self.alone.finding.unsettled

    def to_json(self) -> dict[str, Any]:
        return {
            "good": self.good,
            "bad": self.bad,
            "first_bad": self.first_bad,
            "then_bad": list(self.then_bad),
            "unsplit": list(self.unsplit),
            "gradual": self.gradual,
            "alone": [moved.to_json() for moved in self.alone.changes] if self.alone else None,
            "note": self.note,
            "explained": {test: explanation.to_json() for test, explanation in self.explained.items()},
            "steps": [step.to_json() for step in self.steps],
        }


Measure = Callable[[str, str], Measured]
"""Measure a commit against a reference commit (both full ids)."""


class _Search:
    """One bisection's state: the commits, how each is measured, the steps so far."""

    def __init__(
        self,
        good: str,
        commits: Sequence[tuple[str, str]],
        measure: Measure,
        rounds: int,
        said: Callable[[str], Any],
        found: Bisection | None = None,
    ) -> None:
        self.good, self.commits, self.measure, self.rounds, self.said = good, commits, measure, rounds, said
        self.found = Bisection(good, commits[-1][0], steps=found.steps if found is not None else [])
        self.watched: set[str] = set()
        """The pairs BAD regressed: each step must compare them all to be told."""

    def once(self, commit: str, reference: str) -> Measured:
        measured = self.measure(commit, reference)
        compared = {moved.test for moved in measured.changes}
        return dataclasses.replace(measured, missing=tuple(sorted(self.watched - compared)))

    def known(self, commit: str, reference: str) -> tuple[Measured, int]:
        """``commit`` against ``reference``, measured again while unknown (at most ``rounds``
        sessions); a pair missing there is not noise, and is not measured again."""
        measured, tries = self.once(commit, reference), 1
        while measured.finding == Finding.UNKNOWN and not (measured.missing or measured.broken) and tries < self.rounds:
            measured, tries = self.once(commit, reference), tries + 1
        return measured, tries

    def step(self, index: int) -> str:
        commit, subject = self.commits[index]
        measured, tries = self.known(commit, self.good)
        outcome = {Finding.REGRESSED: "bad", Finding.UNKNOWN: SKIPPED}.get(measured.finding, "good")
        self.found.steps.append(Step(commit, subject, outcome, tries, measured))
        self.said(self.found.steps[-1].told(len(self.found.steps)))
        return outcome

    def narrowed(self) -> tuple[int, int]:
        """The last good step's index and the first bad one's, every untold step between them skipped."""
        low, high, skipped = -1, len(self.commits) - 1, set[int]()
        while untested := [index for index in range(low + 1, high) if index not in skipped]:
            middle = min(untested, key=lambda index: (abs(index - (low + high) / 2), index))
            outcome = self.step(middle)
            if outcome == "bad":
                high = middle
            elif outcome == "good":
                low = middle
            else:
                skipped.add(middle)
        return low, high

    def alone(self, high: int) -> None:
        """The first bad commit against its own parent: alone regressed, gradual, or unknown."""
        found, good = self.found, self.good
        found.first_bad = self.commits[high][0]
        parent = self.commits[high - 1][0] if high > 0 else good
        found.alone, tries = self.known(found.first_bad, parent)
        alone = found.alone.worst.told() if found.alone.worst else "nothing measured"
        if found.gradual:
            found.note = (
                f"{found.first_bad[:12]} alone is not regressed over its parent ({alone}): the regression is made of "
                f"several smaller steps; each measured step's change over {good[:12]} is above"
            )
        elif found.alone.finding == Finding.UNKNOWN:
            found.note = (
                f"{found.first_bad[:12]} against its parent stayed unknown after {tries} session(s) ({alone}): "
                f"whether it alone passes the threshold cannot be told (it is the first regressed over {good[:12]})"
            )


def bisect(
    good: str,
    commits: Sequence[tuple[str, str]],
    measure: Measure,
    rounds: int,
    said: Callable[[str], Any] = print,
) -> Bisection:
    """Search ``commits`` (oldest first, each ``(id, subject)``, BAD last; GOOD not among them) for the
    first whose change over ``good`` is regressed; ``said`` gets each step as it ends. A step that did
    not compare every pair BAD regressed is never good: it cannot be told, and is skipped. A BAD that
    compared nothing is a :class:`BisectError` (there is nothing to search on)."""
    return _bisected(_Search(good, commits, measure, rounds, said))


def _bisected(search: _Search) -> Bisection:
    """The search's first regressed commit, then (from it) each later one: over the commit before
    it, BAD still regressed means another step lies between them."""
    good, commits = search.good, search.commits
    found, bad = search.found, commits[-1][0]
    if search.step(len(commits) - 1) != "bad":
        if not found.steps[-1].measured.changes:
            raise BisectError(
                f"no pair was compared at {bad[:12]} against {good[:12]} (each raised, was renamed, or was not "
                f"collected at one of them): nothing to bisect on"
            )
        found.note = f"{bad[:12]} is not regressed over {good[:12]}: nothing to find"
        return found
    search.watched.update(
        moved.test for moved in found.steps[-1].measured.changes if moved.finding == Finding.REGRESSED
    )
    low, high = search.narrowed()
    between = [commits[index][0] for index in range(low + 1, high + 1)]
    if len(between) > 1:
        found.unsplit = tuple(between)
        named = ", ".join(commit[:12] for commit in between[:NAMED]) + (
            f" and {len(between) - NAMED} more" if len(between) > NAMED else ""
        )
        found.note = f"skipped commits left {len(between)} candidates ({named}): the first regressed is one of them"
        return found
    search.alone(high)
    later = commits[high + 1 :]
    if later and not found.gradual:
        after = _Search(commits[high][0], later, search.measure, search.rounds, search.said, found)
        try:
            rest = _bisected(after)
        except BisectError:  # BAD compared nothing over the first bad commit: no later step can be told
            return found
        if rest.first_bad:
            found.then_bad = (rest.first_bad, *rest.then_bad)
            found.note = "; ".join(note for note in (found.note, rest.note) if note)
    return found
