"""Atomic files: a reader never sees half a file, and a failed write never clobbers one."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` to a temporary file beside ``path``, fsync it, then rename over ``path``."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp makes 0600; a report is an ordinary file
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise
    return target


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_json_atomic(path: str | os.PathLike[str], data: Any) -> Path:
    """:func:`write_text_atomic` of ``data`` as indented JSON."""
    return write_text_atomic(path, json.dumps(data, indent=1, allow_nan=True))
