"""How a replica's failure is told: the errors a pair fails with, and their stories.

Every story names the test and which replicas these were (the session's own, or the base
tree's under ``--overhead-against``), quotes the replica's own report, and adds the way out
where one is known (an exclusive fixture, a slow fixture, a callable that never returns).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

EXCLUSIVE_HINT = (
    "A replica is a fresh run of this test's own session while this process still holds its fixtures: a fixture "
    "that holds an exclusive resource (a fixed port, a file, a lock) cannot be set up there at the same time. "
    "Measure this test in this process only with @pytest.mark.overhead(..., processes=1) (or "
    "--overhead-processes=1 for the session), or make the resource per process (port 0, tmp_path)."
)
SAMPLING_SILENCE = (
    "a callable that never returns? Each side is called in blocks; a slow but finishing pair may raise "
    "overhead_replica_timeout"
)
"""Why a replica may stay silent while it samples."""
SLOW_FIXTURES = "raise overhead_replica_timeout if its fixtures are that slow"
"""Why a replica may stay silent at any other time."""
SLOW_START = (
    "replicas start as many at a time as this machine has cores, and each one's silence counts from its own "
    "start; raise overhead_replica_timeout if one start of this session really takes that long"
)
"""Why a replica may stay silent while it starts or collects."""
WHERE = {
    "setup": "while setting the test up",
    "call": "while running the test, before its pair was ready to sample",
    "teardown": "without reaching overhead.compare",
    "sampling": "while sampling the pair (a callable raised)",
}
"""Where in a test a replica missed the pair, by the stage it reports."""


class MissedReport(Protocol):
    """A replica's word that its test ended before reaching ``compare`` (:class:`~.messages.Missed`)."""

    @property
    def nodeid(self) -> str: ...
    @property
    def when(self) -> str: ...
    @property
    def outcome(self) -> str: ...
    @property
    def report(self) -> str: ...


class ReplicaError(Exception):
    """A replica could not measure the pair; the message names the test and quotes the replica."""


class NotInTree(ReplicaError):
    """The replica's tree has no such test (``failed``: its file did not collect there)."""

    def __init__(self, message: str, failed: bool) -> None:
        super().__init__(message)
        self.failed = failed


class WrongTree(ReplicaError):
    """A replica of the base tree imported the head tree's code: no pair can be compared."""


def which(place: str) -> str:
    """Which replicas these are: the session's own (``place`` empty), or another place's
    (``the base tree /ci/base``, ``the environment py313``)."""
    return f"of {place}" if place else "process (a fresh run of this test's session)"


def missed_error(missed: MissedReport, directory: Path, place: str) -> ReplicaError:
    """The error for a replica (started in ``directory``) that did not reach the pair: another
    place's own kinds (the test is not there, or does not collect there), or the test's story."""
    if missed.when == "imports":
        return WrongTree(missed.report)
    if missed.when == "collect":
        what = "does not collect there:\n" + missed.report if missed.outcome == "failed" else "has no such test"
        where = place or f"the tree of {directory}"
        return NotInTree(f"{missed.nodeid}: {where} {what}", missed.outcome == "failed")
    return ReplicaError(missed_story(missed, place))


def missed_story(missed: MissedReport, place: str) -> str:
    """The test's own story of a miss in a replica: where, how, and its report."""
    where = WHERE.get(missed.when, missed.when)
    story = f"{missed.nodeid}: in a replica {which(place)} the test {missed.outcome} {where}:\n{missed.report}"
    return story + (f"\n{EXCLUSIVE_HINT}" if missed.when == "setup" and missed.outcome == "failed" else "")
