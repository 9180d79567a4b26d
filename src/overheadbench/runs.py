"""A run: one session's typed document, its JSON form, and the folder of stored runs.

The same document is what ``--overhead-json`` writes, what ``--benchmark-json`` carries and
what ``--overhead-save`` stores as ``NNNN_name.json`` (``baselines/`` by default). Files are
written atomically and never replaced: saving under a name that exists adds the next number,
as pytest-benchmark does. Reading checks everything (size, JSON, schema, every field) and a
bad file raises :class:`~overheadbench.errors.StorageError` naming the file and the field.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import StorageError
from .jsonio import Fields, ShapeError, write_json_atomic
from .results import OverheadResult
from .settings import Settings

SCHEMA_VERSION = 3
"""2 added ``mode`` and ``counts``; 3 writes NaN as null and keeps only limits in ``budget``
(``work_s`` moved beside it). Versions 1 and 2 still load."""
MAX_RUN_BYTES = 32 * 1024 * 1024
"""A stored run larger than this is refused before it is read (a run of 50 pairs is ~2 MB)."""
RUN_FILE = re.compile(r"^(\d{4})_(.+)\.json$")
RUN_NAME = re.compile(r"[A-Za-z0-9_][\w.-]*")
"""What ``--overhead-save`` accepts: a file name without folders, spaces or a leading dot."""


@dataclass
class Run:
    """One session: where it ran, how it measured, and every measured pair."""

    environment: dict[str, Any] = field(default_factory=dict)
    """Machine, Python, packages and commit (pytest-benchmark's ``machine_info``/``commit_info`` shapes)."""
    settings: Settings = field(default_factory=Settings)
    results: list[OverheadResult] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "environment": self.environment,
            "settings": self.settings.to_json(),
            "results": [result.to_json() for result in self.results],
        }

    @classmethod
    def from_json(cls, data: Any) -> Run:
        """The run back from :meth:`to_json`; raises :class:`ShapeError` naming a bad field."""
        fields = Fields(data, "")
        version = fields.whole("schema_version")
        if version > SCHEMA_VERSION:
            raise ShapeError(
                f"schema version {version} was written by a newer overheadbench; this one reads up to "
                f"{SCHEMA_VERSION} (upgrade overheadbench)"
            )
        environment = fields.obj("environment", optional=True)
        settings = fields.obj("settings", optional=True)
        try:
            known = Settings.from_json(settings.data) if settings else Settings()
        except (TypeError, ValueError) as exc:
            raise ShapeError(f"settings: {exc}") from None
        return cls(
            environment=environment.data if environment else {},
            settings=known,
            results=fields.items("results", OverheadResult.from_json),
        )

    def measured(self) -> list[OverheadResult]:
        return [result for result in self.results if result.measured]


def read_run(path: Path) -> Run:
    """A stored run, checked: a size this version reads, JSON, a known schema, every field."""
    try:
        size = path.stat().st_size
        if size > MAX_RUN_BYTES:
            raise StorageError(
                f"{path}: {size / 2**20:.0f} MiB is larger than a run can be ({MAX_RUN_BYTES // 2**20} MiB); not read"
            )
        data = json.loads(path.read_bytes())
    except OSError as exc:
        raise StorageError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        reason = "nested too deeply" if isinstance(exc, RecursionError) else f"corrupt or truncated JSON: {exc}"
        raise StorageError(f"{path}: not a valid overheadbench run ({reason})") from None
    try:
        return Run.from_json(data)
    except ShapeError as exc:
        raise StorageError(f"{path}: not a valid overheadbench run: {exc}") from None


def check_name(name: str) -> str:
    """A run name ``--overhead-save`` can store under, or a :class:`StorageError` saying why not."""
    if not RUN_NAME.fullmatch(name):
        raise StorageError(
            f"run name {name!r}: use letters, digits, '.', '_' or '-' (no spaces, folders or leading dot)"
        )
    return name


@dataclass(frozen=True)
class Storage:
    """A folder of stored runs, ``NNNN_name.json``."""

    folder: Path

    def check(self) -> None:
        """Refuse a folder that cannot hold runs (a file by that name), before any measuring."""
        if self.folder.exists() and not self.folder.is_dir():
            raise StorageError(f"{self.folder}: the storage folder is a file; name a folder (--overhead-storage)")

    def runs(self) -> list[Path]:
        """Stored run files, oldest first (by number)."""
        if not self.folder.is_dir():
            return []
        return sorted((p for p in self.folder.iterdir() if RUN_FILE.match(p.name)), key=lambda p: p.name)

    def save(self, run: Run, name: str) -> Path:
        """Store ``run`` as the next ``NNNN_name.json``; an existing file is never touched."""
        check_name(name)
        self.check()
        numbers = [int(match.group(1)) for match in map(RUN_FILE.match, (p.name for p in self.runs())) if match]
        path = self.folder / f"{max(numbers, default=0) + 1:04d}_{name}.json"
        try:
            write_json_atomic(path, run.to_json())
        except OSError as exc:
            raise StorageError(f"{path}: cannot be written ({exc.strerror or exc})") from None
        return path

    def find(self, reference: str | None = None) -> Path:
        """The run named by ``reference``: a path, a number (``0003``), a name (its newest
        file), or None for the newest run of all."""
        if reference and Path(reference).is_file():
            return Path(reference)
        runs = self.runs()
        if reference:
            runs = [p for p in runs if _matches(p.name, reference)]
        if not runs:
            what = f"no stored run matches {reference!r}" if reference else "no stored run"
            raise StorageError(f"{what} in {self.folder}/ (save one with --overhead-save NAME or --overhead-autosave)")
        return runs[-1]


def _matches(file_name: str, reference: str) -> bool:
    match = RUN_FILE.match(file_name)
    return match is not None and (match.group(1) == reference.zfill(4) or match.group(2) == reference)
