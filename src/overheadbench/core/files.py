"""Files written atomically (a reader never sees half a file, a failed write never clobbers one), a stored
run never overwritten (:func:`write_exclusive`), the temporaries of a killed writer removed, and a path
checked for writing before a session measures anything (:func:`cannot_write`). What goes in them is
:mod:`.jsonio`'s.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

TEMPORARY_PREFIX = ".run."


OWN_TEMPORARY = re.compile(r"\.run\.[a-z0-9_]{8}\.tmp")
"""The name of a temporary file :func:`write_exclusive` makes (``tempfile.mkstemp``'s eight characters):
the only files the clean-up may remove from a folder that holds other people's files too."""


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` to a temporary file beside ``path``, fsync it, then rename over ``path``."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = _temporary(target.parent, f".{target.name}.", text)
    try:
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink()
        raise
    return target


def write_exclusive(folder: Path, next_path: Callable[[], Path], text: str) -> Path:
    """Create a new file holding ``text`` at ``next_path()``, atomically and never replacing a file:
    the whole file is hard-linked into place, which fails if the name exists (another writer
    took it), and then the next name is tried."""
    temporary = _temporary(folder, TEMPORARY_PREFIX, text)
    try:
        for _ in range(10_000):
            path = next_path()
            try:
                os.link(temporary, path)
                return path
            except FileExistsError:
                continue
        raise FileExistsError(f"no free name in {folder}")
    finally:
        temporary.unlink()


def remove_stale_temporaries(folder: Path, older_than_s: float) -> None:
    """Remove the temporary files of writes killed before they finished (kill -9 leaves them):
    only names :func:`write_exclusive` makes (a storage folder may be a link to a folder of others'
    files, whose hidden ``*.tmp`` files are theirs)."""
    limit = time.time() - older_than_s
    for path in folder.glob(f"{TEMPORARY_PREFIX}*.tmp"):
        with contextlib.suppress(OSError):
            if OWN_TEMPORARY.fullmatch(path.name) and path.is_file() and path.stat().st_mtime < limit:
                path.unlink()


def _temporary(folder: Path, prefix: str, text: str) -> Path:
    """``text`` in a new, fsynced temporary file in ``folder`` (with an ordinary file's permissions)."""
    handle, name = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=folder)
    try:
        os.chmod(name, 0o666 & ~_umask())  # mkstemp makes 0600; a report is an ordinary file
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
    except BaseException:
        os.unlink(name)
        raise
    return Path(name)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def cannot_write(path: Path, folder: bool = False) -> str | None:
    """Why ``path`` cannot be written (None: it can), checked before anything is measured so that no
    result is lost at the end: a file (``folder``: a folder to write files in) whose place exists or
    can be made, in a folder this process may write."""
    if folder and path.exists() and not path.is_dir():
        return f"{path} is not a folder"
    if not folder and path.is_dir():
        return "is a folder; name a file"
    nearest = path.absolute() if folder else path.absolute().parent
    while not nearest.exists():
        nearest = nearest.parent
    if not nearest.is_dir() or not os.access(nearest, os.W_OK | os.X_OK):
        return f"cannot write in {nearest}"
    if not folder and path.exists() and not os.access(path, os.W_OK) and not os.access(path.parent, os.W_OK):
        return "cannot be written"
    return None
