"""A branch's history of a storage's runs: its rows (read through the index), the branch checked,
the series read and the accepted steps marked (``overheadbench history``, ``html``, the page)."""

from __future__ import annotations

from pathlib import Path

from ..core.errors import StorageError
from ..core.git import checked_out_branch, is_repository
from ..engine.readings import RunRow
from .accepted import marked, read_accepted
from .timeline import EVERY_BRANCH, History, on_branch, read_history


def stored_history(
    indexed: tuple[list[RunRow], list[str]], branch: str | None, repository: Path
) -> tuple[History, str, list[str]]:
    """A storage folder's runs (``indexed``: :func:`~overheadbench.store.index.indexed_runs`'s rows,
    and why each unreadable run was left out) on ``branch`` (default: the checked-out one; every
    branch where no run records it) read as a history, in git's order where ``repository`` is a
    repository; the branch read; and why each unreadable run was left out."""
    every, skipped = indexed
    rows, read = on_branch(every, branch or checked_out_branch(repository))
    there = sorted({row.branch for row in every if row.branch})
    if branch and branch != EVERY_BRANCH and read != branch and there:  # a typo read every branch's steps
        raise StorageError(
            f"--branch {branch}: no run stored here is of it; the branches with runs: {', '.join(there)} "
            f"(or --branch {EVERY_BRANCH})"
        )
    if not is_repository(repository):
        return read_history(rows, None), read, skipped
    return marked(read_history(rows, repository), read_accepted(repository), repository), read, skipped
