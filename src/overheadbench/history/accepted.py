"""Steps a team accepted (``overheadbench history --accept COMMIT --reason TEXT``): an intended cost,
a new feature's, failed every later ``history --fail-above`` run, and ``--since`` was the only way
past it. An accepted change point is still shown, marked with its reason, and never fails the gate.

The acceptances live in a file of the repository (:data:`ACCEPTED_FILE`), reviewed and merged like
code, as Bencher dismisses an alert in its own database. A change point is accepted where an
acceptance's commit lies in its range (after its last run before, up to its first run after, as git
orders them) and names its test or none.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from ..core.errors import StorageError
from ..core.files import write_text_atomic
from ..core.git import git
from ..core.jsonio import dumps
from .timeline import ChangePoint, History

ACCEPTED_FILE = ".overheadbench-accepted.json"
"""In the repository's top folder: ``{"accepted": [{"commit", "test", "reason"}, ...]}``."""


@dataclass(frozen=True)
class Accepted:
    """A step accepted at ``commit`` (a full SHA), for ``test`` (every test where None)."""

    commit: str
    test: str | None
    reason: str

    def holds(self, point: ChangePoint, repository: Path) -> bool:
        """Whether ``point`` is this step: of its test, and its commit in the point's range."""
        if self.test is not None and self.test != point.test:
            return False
        if self.commit == point.after.commit:
            return True
        return _ancestor(repository, self.commit, point.after.commit) and not _ancestor(
            repository, self.commit, point.before.commit
        )


def read_accepted(repository: Path) -> list[Accepted]:
    """The repository's acceptances (none where it has no file); a file that cannot be read is
    refused by name: a gate must not pass on a file it misread."""
    path = repository / ACCEPTED_FILE
    if not path.exists():
        return []
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))["accepted"]
        return [Accepted(str(e["commit"]), e.get("test"), str(e["reason"])) for e in entries]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise StorageError(f"{path}: cannot be read as accepted steps ({exc})") from None


def accept(repository: Path, reference: str, test: str | None, reason: str) -> Accepted:
    """Record a step accepted at ``reference`` (a commit or branch), written atomically to the
    repository's file beside the acceptances already there."""
    if not reason.strip():
        raise StorageError("--accept needs --reason: why the step is the cost the team meant")
    resolved = git(repository, "rev-parse", "--verify", "--quiet", f"{reference}^{{commit}}")
    if resolved is None or resolved.returncode != 0:
        raise StorageError(f"--accept {reference}: not a commit of the repository at {repository}")
    made = Accepted(resolved.stdout.strip(), test, reason.strip())
    kept = [entry for entry in read_accepted(repository) if entry != made]
    document = {"accepted": [asdict(entry) for entry in [*kept, made]]}
    write_text_atomic(repository / ACCEPTED_FILE, dumps(document) + "\n")
    return made


def marked(history: History, accepted: list[Accepted], repository: Path) -> History:
    """``history`` with each change point an acceptance holds marked with its reason."""
    if not accepted:
        return history
    points = []
    for point in history.change_points:
        reasons = [entry.reason for entry in accepted if entry.holds(point, repository)]
        points.append(replace(point, accepted="; ".join(reasons)) if reasons else point)
    return replace(history, change_points=tuple(points))


def _ancestor(repository: Path, commit: str, of: str) -> bool:
    found = git(repository, "merge-base", "--is-ancestor", commit, of)
    return found is not None and found.returncode == 0
