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
import math
import os
import sqlite3
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import closing, contextmanager, suppress
from pathlib import Path

from ..core.errors import StorageError
from ..core.git import checked_out_branch, is_repository
from ..core.termination import ended_with_parent
from ..core.vocabulary import Role
from ..engine.changes import Change, interval_estimate
from ..engine.stats import SESSION_SD
from ..pairs.comparing import reading
from ..pairs.results import OverheadResult
from ..transport.metrics import SPECS, Measure
from ..transport.results import FigureResult
from .accepted import marked, read_accepted
from .environment import recorded_fingerprint
from .runs import RUN_FILE, Run, Storage, read_run
from .timeline import EVERY_BRANCH, History, Reading, RunRow, on_branch, read_history

INDEX_FILE = ".overheadbench-index.sqlite"
INDEX_VERSION = 2
"""Bumped whenever :class:`RunRow` changes: an index of another version is rebuilt."""
PARALLEL_FROM = 64
"""Runs to read (not in the index) from which they are read in a process per core."""
MAX_READERS = 8
COUNT_PRIOR_SD = 0.001
"""The between-session sd (of the log) a counted pair's series leans on (a time pair's is
:data:`~overheadbench.engine.stats.SESSION_SD`): counts are exact, but a 0.1% move is an
interpreter's, not the code's."""


def stored_history(storage: Storage, branch: str | None, repository: Path) -> tuple[History, str, list[str]]:
    """This machine's stored runs on ``branch`` (default: the checked-out one; every branch where no
    run records it) read as a history, in git's order where ``repository`` is a repository; the
    branch read; and why each unreadable run was left out."""
    every, skipped = indexed_runs(storage)
    rows, read = on_branch(every, branch or checked_out_branch(repository))
    there = sorted({row.branch for row in every if row.branch})
    if branch and branch != EVERY_BRANCH and read != branch and there:  # a typo read every branch's steps
        raise StorageError(
            f"--branch {branch}: no run stored here is of it; the branches with runs: {', '.join(there)} "
            f"(or --branch {EVERY_BRANCH})"
        )
    if not is_repository(repository):
        return read_history(rows, None), read, skipped
    return marked(read_history(rows, repository), read_accepted(repository), repository), read, skipped


def run_row(path: Path, run: Run) -> RunRow:
    commit = run.environment.get("commit_info") or {}
    readings = [_pair_reading(r, run.link) for r in run.measured() if r.ratio > 0 and math.isfinite(r.ratio)]
    readings += [_figure_reading(f, run.link) for f in run.measured_figures() if _indexed_figure(f)]
    numbered = RUN_FILE.match(path.name)
    return RunRow(
        str(path),
        int(numbered.group(1)) if numbered else 0,
        recorded_fingerprint(run.environment) or path.parent.name,
        str(commit.get("id") or "unversioned"),
        str(commit.get("time") or ""),
        str(commit.get("branch") or ""),
        bool(commit.get("dirty")),
        tuple(readings),
        run.link,
    )


def _pair_reading(result: OverheadResult, linked: str) -> Reading:
    estimate = reading(result)
    changes = [p.change for p in result.places if p.role is Role.BASE and p.change is not None] if linked else []
    figure = f"overhead ({result.mode.value}" + (f", {result.concurrency} callers)" if result.concurrency > 1 else ")")
    budget = result.pair.budget.max_overhead
    prior = COUNT_PRIOR_SD if result.mode.counted else SESSION_SD
    limit = None if budget is None else 1 + budget
    link, link_se = _link(changes)
    return Reading(
        result.nodeid, figure, math.log(result.ratio), estimate.log_se, prior, limit, link=link, link_se=link_se
    )


def _indexed_figure(figure: FigureResult) -> bool:
    """A transport figure a series can follow: a row's own reading, positive."""
    return figure.reading.measure is Measure.FIGURE and figure.reading.value > 0 and figure.reading.metric in SPECS


def _figure_reading(figure: FigureResult, linked: str) -> Reading:
    value = figure.reading
    changes = [p.change for p in figure.places if p.role is Role.BASE] if linked else []
    spec = SPECS[value.metric]
    estimate = interval_estimate(value.value, value.low, value.high)
    return Reading(
        figure.nodeid,
        f"{value.row} {value.metric.value}",
        math.log(value.value),
        estimate.log_se,
        spec.session_sd,
        figure.check.limit,
        not spec.floor,
        False,
        *_link(changes),
    )


def _link(changes: list[Change]) -> tuple[float | None, float]:
    """A reading's link: its change over the base tree, the linked commit (the log of new / old and its
    standard error); none where the run is not linked or the figure was not measured there."""
    usable = [c for c in changes if c.old > 0 and c.new > 0 and math.isfinite(c.se)]
    if not usable:
        return None, 0.0
    return math.log(usable[0].new / usable[0].old), usable[0].se


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
