"""A run: one session's typed document, its JSON form, and the folder of stored runs.

The same document is what ``--overhead-json`` writes, what ``--benchmark-json`` carries and
what ``--overhead-save`` stores as ``NNNN_name.json`` (``baselines/`` by default). Files are
written atomically and never replaced: saving under a name that exists adds the next number,
as pytest-benchmark does. Reading checks everything (size, JSON, schema, every field) and a
bad file raises :class:`~overheadbench.core.errors.StorageError` naming the file and the field.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import StorageError
from ..core.files import remove_stale_temporaries, write_exclusive
from ..core.jsonio import Fields, ShapeError, bare_nan_as_null, dumps, loads
from ..core.thresholds import UNGATED, Thresholds
from ..engine.readings import Reading
from ..engine.settings import Settings
from ..pairs.comparing import place_change
from ..pairs.results import REPORT_ATTRIBUTE as PAIR_ATTRIBUTE, OverheadResult
from ..transport.results import REPORT_ATTRIBUTE as FIGURES_ATTRIBUTE, FigureResult
from .environment import fingerprint, recorded_fingerprint

SCHEMA_VERSION = 23
"""2 added ``mode`` and ``counts``; 3 writes NaN as null and keeps only limits in ``budget``
(``work_s`` moved beside it); 4 added ``figures`` (transport figures); 5 added a result's
``against`` (its base tree's measurement, ``--overhead-against``); 6 a count-mode result's
``time_ratio`` (the counts' check); 7 the counts' ``counter`` (callgrind or bytecode; older
files counted bytecode); 8 the counts' ``allocation_calls`` (the allocation pass's own block
length; older files traced allocations in the instructions' blocks); 9 every judged budget as a
``check`` (a result's ``checks``, a transport figure's ``check``: value, interval, limit, status and
sentence; older figures kept those beside the figure, older results only the worst one's message);
10 a transport figure's ``measure`` (a transport pair's ``max`` change or ``max_abs`` added cost)
and its reading's own ``ci`` and ``interval`` beside the check's (an absolute figure is judged on
an interval widened by its spread between sessions); 11 each side's own block size (a sample's
``framework_calls``; older files timed both sides in blocks of ``calls_per_block``), a budget's
``max_factor``, a result's ``detectable`` and the ``factor`` unit of a check; 12 a result's
``places`` (each other place of its session, base tree or environment: its measurement and change;
older files kept one base tree in ``against``) and the environment's ``distributions``; 13 the clock a
result was judged on (a sample's ``timer``, and its blocks on the other clock: ``other_baseline_ns``,
``other_framework_ns``; older files read the wall clock only), a result's ``timer``, ``other_ratio``,
``between_sd``, ``disagree`` and ``start_s``; 14 a result's ``explain`` (where its overhead goes,
function by function); 15 a place's ``explain`` (what a change between places added, function by
function); 16 a result's ``outcome`` and ``failed`` (its budgets' verdict and every gate's finding, as
the test was decided) and the run's ``gate`` (the thresholds it was gated at, so a report of it
shows what the session showed) and a result's ``session_sd``; 17 a result's ``session_runs`` (the stored
runs its between-session term was learned from, 0: the prior); 18 an explanation's ``stacks`` (its flame
graph, written from the gathered results); 19 those stacks whole, each ``[stack, cost, added]`` (the
framework side's call stack, its cost and added cost per call; 18 kept ``module;function`` and the
added cost); 20 a result's ``widened`` (the readings of its blocks that missed its estimate's interval,
which its ``ci`` then joins); 21 the run's ``link`` (the commit its base tree was, where the session
measured one: each figure's change over it is a link of the history). Versions 1 to 20 still load."""
STALE_TEMPORARY_S = 3600.0
"""A temporary file this old in a storage folder was left by a save that was killed."""
HISTORY_RUNS = 20
"""Stored runs of this machine read for each pair's between-session spread."""
MAX_RUN_BYTES = 32 * 1024 * 1024
"""A stored run larger than this is refused before it is read (a run of 50 pairs is ~2 MB)."""
RUN_FILE = re.compile(r"^(\d{4})_(.+)\.json$")
RUN_NAME = re.compile(r"[A-Za-z0-9_][\w.-]*")
"""What ``--overhead-save`` accepts: a file name without folders, spaces or a leading dot."""


@dataclass
class Run:
    """One session: where it ran, how it measured, every measured pair and transport figure."""

    environment: dict[str, Any] = field(default_factory=dict)
    """Machine, Python, packages and commit (pytest-benchmark's ``machine_info``/``commit_info`` shapes)."""
    settings: Settings = field(default_factory=Settings)
    results: list[OverheadResult] = field(default_factory=list)
    figures: list[FigureResult] = field(default_factory=list)
    gate: Thresholds = UNGATED
    """The thresholds the session gated its changes at (percent; none: shown, not gated)."""
    link: str = ""
    """The commit the session measured beside this one (``--overhead-link``, or ``--overhead-against``
    a revision): each figure's change over it, in its places, links this run to that commit's in the
    history; empty: none."""

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "environment": self.environment,
            "gate": {"pairs": self.gate.pairs, "transport": self.gate.transport},
            "link": self.link or None,
            "settings": self.settings.to_json(),
            "results": [result.to_json() for result in self.results],
            "figures": [figure.to_json() for figure in self.figures],
        }

    @classmethod
    def from_json(cls, data: Any) -> Run:
        """The run back from :meth:`to_json`; raises :class:`ShapeError` naming a bad field."""
        fields = Fields(data, "")
        version = fields.count("schema_version")
        if version <= 2:  # they wrote an unmeasured figure as a bare NaN
            fields = Fields(bare_nan_as_null(data), "")
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
        gate = fields.obj("gate", optional=True)  # schema 16
        return cls(
            environment=environment.data if environment else {},
            gate=UNGATED if gate is None else Thresholds(gate.maybe_number("pairs"), gate.maybe_number("transport")),
            settings=known,
            results=[_with_changes(r) for r in fields.items("results", OverheadResult.from_json)],
            figures=fields.items("figures", FigureResult.from_json) if version >= 4 else [],
            link=fields.text("link", optional=True) or "",  # schema 21
        )

    def measured(self) -> list[OverheadResult]:
        return [result for result in self.results if result.measured]

    def measured_figures(self) -> list[FigureResult]:
        return [figure for figure in self.figures if figure.measured]

    @property
    def tests(self) -> list[str]:
        """The node ids of the run's pairs and figures, each once, in the order first met."""
        return list(dict.fromkeys([*(r.nodeid for r in self.results), *(f.nodeid for f in self.figures)]))

    def take(self, other: Run) -> list[str]:
        """Add ``other``'s pairs and figures, each of its tests replacing this run's measurement of
        it (a test measured again in the session: a rerun keeps its last measurement); the tests
        replaced."""
        known = set(self.tests)
        again = [test for test in other.tests if test in known]
        self.results = [r for r in self.results if r.nodeid not in again] + other.results
        self.figures = [f for f in self.figures if f.nodeid not in again] + other.figures
        return again

    @classmethod
    def carried(cls, report: object) -> Run | None:
        """What one test's report carries (each kind puts its own attribute on it, which pytest
        serialises from xdist workers), as a run of that test alone; None: it carries nothing."""
        pair: dict[str, Any] | None = getattr(report, PAIR_ATTRIBUTE, None)
        figures: list[dict[str, Any]] = getattr(report, FIGURES_ATTRIBUTE, None) or []
        if not (pair or figures):
            return None
        return cls(
            results=[OverheadResult.from_json(pair)] if pair else [],
            figures=[FigureResult.from_json(figure) for figure in figures],
        )

    def readings(self) -> list[Reading]:
        """What a history reads of the run: each pair's and figure's reading, each kind's own."""
        found = [
            *(r.series_reading(self.link) for r in self.results),
            *(f.series_reading(self.link) for f in self.figures),
        ]
        return [reading for reading in found if reading is not None]


def _with_changes(result: OverheadResult) -> OverheadResult:
    """A result stored before its places carried their changes (schemas 5 to 11 stored the base
    tree's measurement only): each change computed as the session would have."""
    for place in result.places:
        if place.change is None and place.result is not None:
            place.change = place_change(place.role, result, place.result)
    return result


def read_run(path: Path) -> Run:
    """A stored run, checked: a regular file of a size this version reads, JSON, a known
    schema, every field."""
    try:
        data = loads(_read_bounded(path))
    except OSError as exc:
        raise StorageError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        reason = "nested too deeply" if isinstance(exc, RecursionError) else f"corrupt or truncated JSON: {exc}"
        raise StorageError(f"{path}: not a valid overheadbench run ({reason})") from None
    try:
        return Run.from_json(data)
    except ShapeError as exc:
        raise StorageError(f"{path}: not a valid overheadbench run: {exc}") from None


def _read_bounded(path: Path) -> bytes:
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


def check_name(name: str, what: str = "run name") -> str:
    """A run name ``--overhead-save`` can store under (or a machine's, ``what``), or a
    :class:`StorageError` saying why not."""
    if not RUN_NAME.fullmatch(name):
        raise StorageError(f"{what} {name!r}: use letters, digits, '.', '_' or '-' (no spaces, folders or leading dot)")
    return name


@dataclass(frozen=True)
class Storage:
    """The stored runs under ``root``, one folder per machine fingerprint (as pytest-benchmark
    keeps one per machine id): ``root/<fingerprint>/NNNN_name.json``. Runs saved before
    folders existed (``root/NNNN_name.json``) are read as runs of an unknown machine.

    A runner fleet names its folder (``--overhead-machine``, :meth:`named`): hosted runners of one
    label differ in CPU model, and a folder per fingerprint split main's history into short series
    that each needed two runs a side to name a step. Each run keeps its own fingerprint; the history
    pools the name's runs (levels offset per fingerprint, links as they are), and the stored-run gate
    still refuses another fingerprint's run (a gate across CPU models measures the machines)."""

    root: Path
    machine: str = field(default_factory=fingerprint)
    """The folder's name: this machine's fingerprint, or the fleet's name."""
    own: str = ""
    """This machine's fingerprint where the folder is a fleet's name (empty: the folder is it)."""

    @classmethod
    def named(cls, root: Path, name: str | None) -> Storage:
        """The storage under ``root`` whose folder is ``name`` (checked), or this machine's fingerprint."""
        return cls(root) if not name else cls(root, check_name(name, "--overhead-machine"), fingerprint())

    @property
    def pooled(self) -> bool:
        """The folder is a fleet's name, not one machine's fingerprint."""
        return bool(self.own)

    @property
    def folder(self) -> Path:
        """This machine's folder."""
        return self.root / self.machine

    def check(self) -> None:
        """Refuse a folder that cannot hold runs (a file by that name), before any measuring."""
        for folder in (self.root, self.folder):
            if folder.exists() and not folder.is_dir():
                raise StorageError(f"{folder}: the storage folder is a file; name a folder (--overhead-storage)")

    def runs(self, every_machine: bool = False) -> list[Path]:
        """This machine's stored runs, oldest first (by number); with ``every_machine``, every
        machine's and the unfiled ones too (by number, then machine)."""
        folders = [self.folder]
        if every_machine and self.root.is_dir():
            folders = [self.root, *(p for p in self.root.iterdir() if p.is_dir())]
        found = [p for folder in folders if folder.is_dir() for p in folder.iterdir() if RUN_FILE.match(p.name)]
        return sorted(set(found), key=lambda p: (p.name, str(p.parent)))

    def is_foreign(self, path: Path, env: dict[str, Any] | None = None) -> bool:
        """Whether the run at ``path`` (its environment ``env``) was measured by another machine
        (or an unknown one): filed in another folder, or filed here but recording another
        machine's fingerprint."""
        recorded = recorded_fingerprint(env) if env is not None else None
        return path.resolve().parent != self.folder.resolve() or (
            recorded is not None and recorded != (self.own or self.machine)
        )

    def save(self, run: Run, name: str) -> Path:
        """Store ``run`` as the next ``NNNN_name.json`` of this machine. Exclusive and atomic:
        the file appears whole, under a number no other save took, even when sessions save at
        once; an existing file is never touched. Temporary files a killed save left behind
        (older than ``STALE_TEMPORARY_S``) are removed."""
        check_name(name)
        self.check()
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            remove_stale_temporaries(self.folder, STALE_TEMPORARY_S)
            return write_exclusive(
                self.folder, lambda: self.folder / f"{self._next_number():04d}_{name}.json", dumps(run.to_json()) + "\n"
            )
        except OSError as exc:
            raise StorageError(f"{self.folder}: the run cannot be written ({exc.strerror or exc})") from None

    def _next_number(self) -> int:
        numbers = [int(match.group(1)) for match in map(RUN_FILE.match, (p.name for p in self.runs())) if match]
        return max(numbers, default=0) + 1

    def find(self, reference: str | None = None) -> Path:
        """The run named by ``reference``: a path, a number (``0003``) or a name (its newest
        file), of this machine first, else of another; None: this machine's newest run."""
        if reference and Path(reference).is_file():
            return Path(reference)
        if not reference:
            runs = self.runs()
            if not runs:
                others = len(self.runs(every_machine=True))
                raise StorageError(
                    f"no stored run of this machine ({self.machine}) in {self.root}/"
                    + (
                        f"; {others} of other machines: name one to compare across machines"
                        if others
                        else " (save one with --overhead-save NAME or --overhead-autosave)"
                    )
                )
            return runs[-1]
        for every_machine in (False, True):
            runs = [p for p in self.runs(every_machine) if _matches(p.name, reference)]
            if runs:
                return max(runs, key=lambda p: (p.name, p.stat().st_mtime)) if every_machine else runs[-1]
        hint = "save one with --overhead-save NAME or --overhead-autosave"
        raise StorageError(f"no stored run matches {reference!r} in {self.root}/ ({hint})")

    def history(self, limit: int = HISTORY_RUNS) -> tuple[list[Run], list[str]]:
        """This machine's newest ``limit`` readable runs (each pair's between-session spread; in a
        fleet's folder, those of this fingerprint: another CPU model's levels are not this machine's
        spread), and why each unreadable one was skipped (the caller warns: one bad file must not
        break every later session's gate)."""
        runs, skipped = [], []
        for path in self.runs()[-limit:]:
            try:
                run = read_run(path)
            except StorageError as exc:
                skipped.append(str(exc))
                continue
            if not self.pooled or recorded_fingerprint(run.environment) in (None, self.own):
                runs.append(run)
        return runs, skipped


def _matches(file_name: str, reference: str) -> bool:
    match = RUN_FILE.match(file_name)
    return match is not None and (match.group(1) == reference.zfill(4) or match.group(2) == reference)
