"""Stored runs: one JSON file per run, ``NNNN_name.json`` in a folder (``baselines/`` by default).

Files are written atomically (a temporary file, then a rename) and never replaced: saving
under a name that exists adds the next number, as pytest-benchmark does. Reading a file
that is not JSON, is truncated, lacks the run's fields or was written by a newer schema
raises :class:`StorageError` naming the file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .jsonio import write_json_atomic
from .results import JSON_SCHEMA_VERSION

RUN_FILE = re.compile(r"^(\d{4})_(.+)\.json$")
REQUIRED = ("schema_version", "results")


class StorageError(Exception):
    """A stored run cannot be found, read or written; the message names the file."""


@dataclass(frozen=True)
class Storage:
    folder: Path

    def runs(self) -> list[Path]:
        """Stored run files, oldest first (by number)."""
        if not self.folder.is_dir():
            return []
        return sorted((p for p in self.folder.iterdir() if RUN_FILE.match(p.name)), key=lambda p: p.name)

    def save(self, run: dict[str, Any], name: str) -> Path:
        """Store ``run`` as the next ``NNNN_name.json``; an existing file is never touched."""
        if not re.fullmatch(r"[\w.-]+", name):
            raise StorageError(f"run name {name!r}: use letters, digits, '.', '_' or '-'")
        self.folder.mkdir(parents=True, exist_ok=True)
        numbers = [int(RUN_FILE.match(p.name).group(1)) for p in self.runs()]  # type: ignore[union-attr]
        path = self.folder / f"{max(numbers, default=0) + 1:04d}_{name}.json"
        write_json_atomic(path, run)
        return path

    def find(self, reference: str | None = None) -> Path:
        """The run named by ``reference``: a path, a number (``0003``), a name (its newest
        file), or None for the newest run of all."""
        if reference and Path(reference).is_file():
            return Path(reference)
        runs = self.runs()
        if reference:
            runs = [
                p
                for p in runs
                if RUN_FILE.match(p.name).group(1) == reference.zfill(4)  # type: ignore[union-attr]
                or RUN_FILE.match(p.name).group(2) == reference
            ]  # type: ignore[union-attr]
        if not runs:
            what = f"no stored run matches {reference!r}" if reference else "no stored run"
            raise StorageError(f"{what} in {self.folder}/ (save one with --overhead-save NAME or --overhead-autosave)")
        return runs[-1]


def load_run(path: Path) -> dict[str, Any]:
    """A stored run, checked: readable JSON, the run's fields, a schema this version reads."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise StorageError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise StorageError(f"{path}: not a valid overheadbench run (corrupt or truncated JSON: {exc})") from None
    if not isinstance(data, dict) or any(key not in data for key in REQUIRED):
        raise StorageError(f"{path}: not an overheadbench run (needs {', '.join(REQUIRED)})")
    version = data["schema_version"]
    if not isinstance(version, int) or version > JSON_SCHEMA_VERSION:
        raise StorageError(
            f"{path}: schema version {version!r} was written by a newer overheadbench; "
            f"this one reads up to {JSON_SCHEMA_VERSION} (upgrade overheadbench)"
        )
    return data
