"""What a history reads of the stored runs, indexed in sqlite and refreshed from the runs.

The runs stay the JSON files they are (the source of truth). Each is read and checked whole, which
for a project's real history (a thousand runs of fifty pairs) is most of a history's time; the
index keeps, per run file, its size and modification time and the few numbers a series needs
(:class:`RunRow`), so a history reads again only the files that changed since. A row whose file
changed size or time is read again, one whose file is gone is dropped, and an index of another
version, or one that cannot be opened, is rebuilt: it is never trusted over the files. The index
lives beside the runs (:data:`INDEX_FILE`, in the storage folder: keep it out of version control);
where that folder cannot be written, a history indexes in memory.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import closing, contextmanager, suppress
from pathlib import Path

from ..core.errors import StorageError
from ..core.termination import ended_with_parent
from ..engine.readings import RunRow
from .environment import recorded_fingerprint
from .runs import RUN_FILE, Run, Storage, read_run

INDEX_FILE = ".overheadbench-index.sqlite"
INDEX_VERSION = 3
"""Bumped whenever :class:`RunRow` changes: an index of another version is rebuilt."""
PARALLEL_FROM = 64
"""Runs to read (not in the index) from which they are read in a process per core."""
MAX_READERS = 8


def run_row(path: Path, run: Run) -> RunRow:
    commit = run.environment.get("commit_info") or {}
    numbered = RUN_FILE.match(path.name)
    return RunRow(
        str(path),
        int(numbered.group(1)) if numbered else 0,
        recorded_fingerprint(run.environment) or path.parent.name,
        str(commit.get("id") or "unversioned"),
        str(commit.get("time") or ""),
        str(commit.get("branch") or ""),
        bool(commit.get("dirty")),
        tuple(run.readings()),
        run.link,
    )


def indexed_runs(storage: Storage, every_machine: bool = False) -> tuple[list[RunRow], list[str]]:
    """Every stored run of this machine (or of every machine) as a :class:`RunRow`, oldest first
    by number, through the index (refreshed, or rebuilt; in memory where it cannot be written, a full
    disk too); and why each unreadable run was left out."""
    paths = storage.runs(every_machine)
    try:
        with _index(storage.root) as db:
            found = _refreshed(paths, db)
    except sqlite3.Error:  # "database or disk is full" mid-way: ended history and html in a traceback
        with _index(None) as db:
            found = _refreshed(paths, db)
    rows = [found[path] for path in paths if path in found]
    return [row for row in rows if isinstance(row, RunRow)], [row for row in rows if isinstance(row, str)]


def _refreshed(paths: list[Path], db: sqlite3.Connection) -> dict[Path, RunRow | str]:
    """Each run's row, from the index where it is current, else read (and indexed)."""
    found: dict[Path, RunRow | str] = {}
    stale: list[tuple[Path, os.stat_result]] = []
    known = {path: (size, mtime, data) for path, size, mtime, data in db.execute("SELECT * FROM runs")}
    for path in paths:
        try:
            stat = path.stat()
        except OSError as exc:  # gone since it was listed
            found[path] = f"{path}: cannot be read ({exc.strerror or exc})"
            continue
        entry = known.pop(str(path), None)
        kept = _row(entry[2]) if entry is not None and entry[:2] == (stat.st_size, stat.st_mtime_ns) else None
        if kept is not None:
            found[path] = kept
        else:
            stale.append((path, stat))
    for (path, stat), row in zip(stale, _read_rows([path for path, _ in stale]), strict=True):
        found[path] = row
        if isinstance(row, RunRow):
            db.execute(
                "INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?)",
                (str(path), stat.st_size, stat.st_mtime_ns, json.dumps(row.to_json())),
            )
    db.executemany("DELETE FROM runs WHERE path = ?", [(path,) for path in known if not Path(path).exists()])
    return found


def _read_rows(paths: list[Path]) -> list[RunRow | str]:
    """Each run read and checked whole, as its row (or why it cannot be read): in a process per core
    where there are many (a thousand runs of fifty pairs took 19 s in one process here, most of it
    reading each pair's samples)."""
    workers = min(os.cpu_count() or 1, MAX_READERS)
    if len(paths) < PARALLEL_FROM or workers < 2:
        return [_read_row(path) for path in paths]
    with ProcessPoolExecutor(workers, initializer=ended_with_parent) as pool:
        return list(pool.map(_read_row, paths, chunksize=max(1, len(paths) // (4 * workers))))


def _read_row(path: Path) -> RunRow | str:
    try:
        return run_row(path, read_run(path))
    except StorageError as exc:
        return str(exc)


def _row(data: str) -> RunRow | None:
    """An index row read back (None: one this version cannot read, and the run is read again)."""
    try:
        return RunRow.from_json(json.loads(data))
    except (ValueError, TypeError, KeyError):
        return None


@contextmanager
def _index(root: Path | None) -> Iterator[sqlite3.Connection]:
    """The index's connection (committed on leaving): the file in ``root``, rebuilt where it is of
    another version or unreadable; in memory where it cannot be written (or ``root`` is None)."""
    path = root / INDEX_FILE if root is not None else None
    try:
        db = _opened(path)
    except sqlite3.Error:
        if path is not None:  # in memory never fails here
            with suppress(OSError):
                path.unlink(missing_ok=True)
        try:
            db = _opened(path)
        except sqlite3.Error:
            db = _opened(None)
    with closing(db), db:
        yield db


def _opened(path: Path | None) -> sqlite3.Connection:
    if path is not None and not path.parent.is_dir():
        path = None
    db = sqlite3.connect(":memory:" if path is None else str(path), timeout=30.0)
    try:
        (version,) = db.execute("PRAGMA user_version").fetchone()
        if version != INDEX_VERSION:
            db.execute("DROP TABLE IF EXISTS runs")
            db.execute("CREATE TABLE runs (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, data TEXT)")
        db.execute(f"PRAGMA user_version = {INDEX_VERSION}")  # a write: a read-only index fails here, not later
        db.commit()
        db.execute("SELECT path, size, mtime_ns, data FROM runs LIMIT 1").fetchall()
    except sqlite3.Error:
        db.close()
        raise
    return db
