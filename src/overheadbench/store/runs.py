"""A run: one session's typed document, its JSON form, and the folder of stored runs.

The same document is what ``--overhead-json`` writes, what ``--benchmark-json`` carries and
what ``--overhead-save`` stores as ``NNNN_name.json`` (``baselines/`` by default). Files are
written atomically and never replaced: saving under a name that exists adds the next number,
as pytest-benchmark does. Reading checks everything (size, JSON, schema, every field) and a
bad file raises :class:`~overheadbench.core.errors.StorageError` naming the file and the field.
"""

from __future__ import annotations

import re
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
from .bounded import read_bounded
from .environment import fingerprint, recorded_fingerprint

SCHEMA_VERSION = 23
"""The stored document's version. What each version added is said once, in docs/reports.md (``--overhead-json``)
and docs/history.md (21: the run's ``link``); versions 1 to 22 still load."""
STALE_TEMPORARY_S = 3600.0
"""A temporary file this old in a storage folder was left by a save that was killed."""
HISTORY_RUNS = 20
"""Stored runs of this machine read for each pair's between-session spread."""
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
        data = loads(read_bounded(path))
    except OSError as exc:
        raise StorageError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        reason = "nested too deeply" if isinstance(exc, RecursionError) else f"corrupt or truncated JSON: {exc}"
        raise StorageError(f"{path}: not a valid overheadbench run ({reason})") from None
    try:
        return Run.from_json(data)
    except ShapeError as exc:
        raise StorageError(f"{path}: not a valid overheadbench run: {exc}") from None


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
