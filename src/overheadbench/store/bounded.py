"""A stored run's bytes, read with care (:func:`read_bounded`): a regular file (a link followed and its target
checked), at most :data:`MAX_RUN_BYTES` of them whatever the file claims. A repository can commit a "run" that
is a link to ``/dev/zero`` or a FIFO.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..core.errors import StorageError

MAX_RUN_BYTES = 32 * 1024 * 1024
"""A stored run larger than this is refused before it is read (a run of 50 pairs is ~2 MB)."""


def read_bounded(path: Path) -> bytes:
    """The bytes of the regular file at ``path`` (a link is followed, and its target checked),
    at most :data:`MAX_RUN_BYTES` of them whatever the file claims.

    Why so careful: a repository can commit a stored run that is a link to ``/dev/zero``
    (size 0, endless: 1.3 GB read in 3 s) or a FIFO (``open`` waits for a writer forever).
    Opened without waiting (``O_NONBLOCK``), the file itself is checked, not its name.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            target = f" (a link to {path.resolve()})" if path.is_symlink() else ""
            raise StorageError(f"{path}{target}: not a regular file but {_file_kind(info.st_mode)}; not read")
        if info.st_size > MAX_RUN_BYTES:  # said before reading: nothing of it is read
            raise _too_large(path, f"{info.st_size / 2**20:.1f} MiB")
        with os.fdopen(fd, "rb", closefd=False) as stream:
            data = stream.read(MAX_RUN_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_RUN_BYTES:  # it grew while being read: only the limit's worth was
        raise _too_large(path, f"more than {MAX_RUN_BYTES // 2**20} MiB")
    return data


def _too_large(path: Path, size: str) -> StorageError:
    return StorageError(f"{path}: {size}, larger than a run can be ({MAX_RUN_BYTES // 2**20} MiB); not read")


def _file_kind(mode: int) -> str:
    kinds = (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), "not a file")
