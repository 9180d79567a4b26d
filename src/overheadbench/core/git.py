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
