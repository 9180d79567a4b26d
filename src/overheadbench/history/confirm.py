"""``overheadbench history --confirm``: each regression change point measured again, as the gate
measures a pull request.

A change point is read between two runs of different sessions; each carries the between-session
spread, and a series can name a step where a run was merely unlucky. So the commit after the
point is measured against the commit before it in one session, both trees side by side
(``--overhead-against``, the gate's own machinery through a bisection step's session,
:class:`~overheadbench.history.commits.CommitSessions`), the point's test only: **confirmed** where
that session reads a regression of more than half the point's change, **not confirmed** where it
reads less than half either way, **unknown** otherwise (:data:`CONFIRMING_SHARE`). Where commits lie
between the two runs that no run measured, a confirmed step is bisected over them
(:func:`~overheadbench.history.bisect.bisect`) and ends at the first regressed commit and what it
added over its parent, function by function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..core.vocabulary import Word
from ..engine.attribution import CHANGE_HEAD
from ..engine.findings import Finding
from .bisect import Bisection, Measured, bisect
from .commits import CommitSessions, commits_between
from .timeline import ChangePoint


class Sessions(Protocol):
    """Sessions of one commit against another (:class:`~overheadbench.history.commits.CommitSessions`),
    gated at ``threshold`` percent."""

    threshold: float

    def __call__(self, commit: str, reference: str) -> Measured: ...

    def close(self) -> None: ...


class Verdict(Word):
    CONFIRMED = "confirmed"
    NOT_CONFIRMED = "not confirmed"
    UNKNOWN = "unknown"


VERDICTS = {Finding.REGRESSED: Verdict.CONFIRMED, Finding.SAME: Verdict.NOT_CONFIRMED}
CONFIRMING_SHARE = 0.5
"""The session's threshold, as a share of the change point's own change: a step of +4% is confirmed
where the two commits side by side differ by more than 2% (the whole interval above it), not
confirmed where they differ by less (the whole interval within +-2%), unknown otherwise. The
project's ``--fail-above`` is a gate's question (is it too much?); this one asks whether the step is
there at all."""
BISECTION_CUT_OFF = 5.0
"""The bisection's cut-off at most, percent (the CI templates' gate): the same share of a small step,
this of a large one. Why: a range of real releases held two steps (+42% at one, +68% three releases
later) in one of +130%; at half the step (65%) the first read "same" and only the larger was named."""


@dataclass(frozen=True)
class Confirmation:
    """A change point measured again: the session's verdict and reading, and where commits between
    the two runs were not measured, the bisection over them."""

    verdict: Verdict
    measured: Measured
    bisection: Bisection | None = None
    cut_off: float = 0.0
    """The bisection's cut-off, percent over the commit before each step it names."""

    def told(self, point: ChangePoint) -> list[str]:
        """Its lines under the change point's."""
        worst = self.measured.worst
        reading = f": {worst.told()}" if worst else ""
        after, before = point.after_commit.short, point.before_commit.short
        lines = [f"    {self.verdict.value.upper()} in one session, {after} against {before}{reading}"]
        found = self.bisection
        if found is not None and found.first_bad:
            cut = f"cut-off +{self.cut_off:.1f}%"
            lines.append(f"    first regressed commit between them ({cut} over {before}): {found.first_bad}")
            lines += [f"    then regressed again ({cut} over the one before): {then}" for then in found.then_bad]
            explained = found.explained.items()
            lines += [f"    {test}, against its parent: {why.told(head=CHANGE_HEAD)}" for test, why in explained]
        elif found is not None and found.note:
            lines.append(f"    {found.note}")
        if self.verdict is Verdict.NOT_CONFIRMED:
            lines.append("    (side by side in one session, the two commits differ by less than half the step)")
        return lines

    def to_json(self) -> dict[str, Any]:
        worst = self.measured.worst
        return {
            "verdict": self.verdict.value,
            "change": worst.to_json() if worst else None,
            "bisect": self.bisection.to_json() if self.bisection else None,
        }


def confirm(
    point: ChangePoint,
    repository: Path,
    rounds: int,
    pytest_args: list[str],
    said: Callable[[str], Any] = print,
    sessions_for: Callable[[Path, float, list[str]], Sessions] = CommitSessions,
) -> Confirmation:
    """Measure ``point``'s commit after against its commit before (its test only), in one session
    gated at :data:`CONFIRMING_SHARE` of the point's change; bisect the commits between them where it
    is confirmed and some were not measured (at that share, or :data:`BISECTION_CUT_OFF` where less).
    ``sessions_for`` makes the sessions (a test gives its own)."""
    threshold = CONFIRMING_SHARE * abs(point.shift.change) * 100
    sessions = sessions_for(repository, threshold, [*pytest_args, point.test])
    try:
        measured = sessions(point.after.commit, point.before.commit)
        verdict = VERDICTS.get(measured.finding, Verdict.UNKNOWN)
        if verdict is not Verdict.CONFIRMED or not point.between:
            return Confirmation(verdict, measured)
        good, commits = commits_between(repository, point.before.commit, point.after.commit)
        sessions.threshold = cut = min(threshold, BISECTION_CUT_OFF)
        return Confirmation(verdict, measured, bisect(good, commits, sessions, max(1, rounds), said), cut)
    finally:
        sessions.close()
