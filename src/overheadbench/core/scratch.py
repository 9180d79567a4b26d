"""Temporary folders a session owns (replica caches, TLS keys), and removing the ones whose
session died.

Why a lock: a session killed by ``SIGKILL`` (an OOM kill, a CI runner torn down) runs no
cleanup, and its folders, one of them holding a private key, stayed in the temporary
directory for good. Each folder holds an ``flock`` on a file inside it for its owner's life;
the kernel drops the lock when the owner dies, however it dies. The next session's
:func:`remove_orphans` takes the lock of every ``overheadbench-*`` folder it can and removes
those: a lock it can take has no living owner, whatever process ids were reused since.

A folder is made under a hidden name, locked, then renamed into view, so that no sweep can
see it between its creation and its lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

PREFIX = "overheadbench-"
PENDING_PREFIX = ".overheadbench-pending-"
LOCK_FILE = ".owner.lock"
STALE_S = 3600.0
"""A lockless folder this old was left by a dead session: a hidden one not yet renamed
(its maker was killed in between), or one of a version before the locks."""
LOCKLESS = re.compile(r"^(\.overheadbench-pending-|overheadbench-replica-cache-|overheadbench-tls-)[a-z0-9_]{8}$")
"""The lockless folders this package makes or made (``mkdtemp`` names): nothing else is touched."""

_HELD: dict[Path, int] = {}
"""This process's folders and the descriptors holding their locks."""


def owned_folder(kind: str, root: Path | None = None) -> Path:
    """A new folder ``overheadbench-<kind>-*`` in the temporary directory (or ``root``), owned
    by this process until :func:`remove` (or its death)."""
    parent = Path(root or tempfile.gettempdir())
    pending = Path(tempfile.mkdtemp(prefix=PENDING_PREFIX, dir=parent))
    fd = os.open(pending / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{kind}-", dir=parent))
    os.rename(pending, folder)  # replaces the empty folder mkdtemp reserved the name with
    _HELD[folder] = fd
    return folder


def remove_folder(folder: Path) -> None:
    """Remove an owned folder and release its lock; safe twice."""
    shutil.rmtree(folder, ignore_errors=True)
    fd = _HELD.pop(folder, None)
    if fd is not None:
        os.close(fd)


def remove_orphans(root: Path | None = None) -> list[Path]:
    """Remove the folders of sessions that died (their lock is free, or they are lockless
    and stale); return them."""
    parent = Path(root or tempfile.gettempdir())
    limit = time.time() - STALE_S
    removed = []
    with contextlib.suppress(OSError):
        for folder in [*parent.glob(f"{PREFIX}*"), *parent.glob(f"{PENDING_PREFIX}*")]:
            if folder in _HELD or folder.is_symlink() or not folder.is_dir():
                continue
            if folder.name.startswith(PENDING_PREFIX) or not (folder / LOCK_FILE).exists():
                # (a pending folder's lock may be moments from taken: only its age tells)
                stale = bool(LOCKLESS.match(folder.name)) and _older(folder, limit)
            else:
                stale = _ownerless(folder)
            if stale:
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
    return removed


def _older(folder: Path, limit: float) -> bool:
    try:
        return folder.stat().st_mtime < limit
    except OSError:
        return False


def _ownerless(folder: Path) -> bool:
    """Whether the owner of ``folder`` (made by :func:`owned_folder`) is gone."""
    try:
        fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False  # not ours to remove
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False  # its owner holds it
    finally:
        os.close(fd)
    return True
