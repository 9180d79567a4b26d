"""This machine and this commit, as a run records them, in pytest-benchmark's shapes
(``machine_info``, ``commit_info``) whether or not pytest-benchmark is installed.

Why our own: pytest-benchmark became an extra (``overheadbench[benchmark]``), because with it
loaded every session, plain ``pytest`` included, printed its header and made an empty
``.benchmarks/``. Where it is loaded its hooks still answer (a project that customises them
gets its own fields); where not, these give the fields the reports, the fingerprint and the
gate read, with the same keys, so runs made either way compare.
"""

from __future__ import annotations

import os
import platform
import re
from pathlib import Path
from typing import Any

from ..core.git import git


def machine_info() -> dict[str, Any]:
    """The interpreter and the machine: the fields of pytest-benchmark's ``machine_info``, its
    ``cpu`` narrowed to what is read (the model, word size, core count) without py-cpuinfo's
    second of probing."""
    return {
        "node": platform.node(),
        "processor": platform.processor(),
        "machine": platform.machine(),
        "python_compiler": platform.python_compiler(),
        "python_implementation": platform.python_implementation(),
        "python_implementation_version": platform.python_version(),
        "python_version": platform.python_version(),
        "python_build": list(platform.python_build()),
        "release": platform.release(),
        "system": platform.system(),
        "cpu": {
            "brand_raw": cpu_model(),
            "bits": int(platform.architecture()[0].rstrip("bit") or 64),
            "count": os.cpu_count(),
        },
    }


def _word_size() -> int:
    digits = platform.architecture()[0].removesuffix("bit")
    return int(digits) if digits.isdigit() else 64


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``, else what :mod:`platform` knows)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return platform.processor() or platform.machine()
    found = re.search(r"^model name\s*:\s*(.+)$", text, re.M)
    return found.group(1).strip() if found else platform.machine()


def commit_info(root: Path) -> dict[str, Any]:
    """The commit checked out at ``root``: id, times, whether tracked files changed, branch
    (pytest-benchmark's keys; ``unversioned`` outside a git work tree)."""
    info: dict[str, Any] = {"id": "unversioned", "time": None, "author_time": None, "dirty": False}
    info |= {"project": root.resolve().name, "branch": "(unknown)"}
    shown = git(root, "show", "-s", "--format=%H%n%cI%n%aI")
    if shown is None or shown.returncode != 0 or len(shown.stdout.split()) != 3:
        return info
    info["id"], info["time"], info["author_time"] = shown.stdout.split()
    status = git(root, "status", "--porcelain", "--untracked-files=no")
    info["dirty"] = bool(status and status.stdout.strip())
    branch = git(root, "rev-parse", "--abbrev-ref", "HEAD")
    if branch is not None and branch.returncode == 0:
        name = branch.stdout.strip()
        info["branch"] = "(detached head)" if name == "HEAD" else name
    return info
