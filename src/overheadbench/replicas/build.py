"""Which overheadbench build a process runs: a digest of the package's Python sources.

Why a digest and not ``__version__``: a replica and its controller speak a line protocol
(:mod:`overheadbench.replicas.messages`) that changes between commits of one version, so an
environment of ``--overhead-env`` with an older build of the same version passed the start-up
check and failed 44-87 s later on a message it could not read. The other interpreter runs this
file itself (``runpy``, the standard library only) on the overheadbench *it* imports, so both
sides compute the digest by the same code.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path


def build_of(package: Path) -> str:
    """The first 12 hex digits of a SHA-256 over every ``.py`` file of ``package`` (its path and bytes)."""
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


@cache
def this_build() -> str:
    """This process's build (the package this file is in)."""
    return build_of(Path(__file__).resolve().parents[1])
