"""Running git, bounded: one call shape for whatever asks git (the base tree of
``--overhead-against``, the commit a run records).

Why bounded: a git that waits on a lock or a credential prompt stopped a session that only
wanted a commit id; every call here ends within ``GIT_TIMEOUT_S``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

GIT_TIMEOUT_S = 120.0


def git(directory: Path, *args: str) -> subprocess.CompletedProcess[str] | None:
    """``git -C directory ARGS``, its output as text; None where git is not installed."""
    try:
        return subprocess.run(
            ["git", "-C", str(directory), *args], capture_output=True, text=True, timeout=GIT_TIMEOUT_S, check=False
        )
    except FileNotFoundError:
        return None


def is_repository(directory: Path) -> bool:
    """Whether ``directory`` is inside a git work tree."""
    inside = git(directory, "rev-parse", "--is-inside-work-tree")
    return inside is not None and inside.returncode == 0 and inside.stdout.strip() == "true"


def checked_out_branch(directory: Path) -> str | None:
    """The branch checked out at ``directory`` (``HEAD`` when detached; None outside a repository)."""
    shown = git(directory, "rev-parse", "--abbrev-ref", "HEAD")
    return shown.stdout.strip() if shown is not None and shown.returncode == 0 else None
