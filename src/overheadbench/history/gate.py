"""This session against the stored runs: the run it is compared with, and where it is saved.

The plugin asks :meth:`StoredRuns.change` about each measured result (the verdict decides
whether it fails the test, see :func:`overheadbench.pairs.outcome.pair_outcome`), prints
:meth:`StoredRuns.changes` at the end and calls :meth:`StoredRuns.save`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ..core.errors import StorageError
from ..core.tables import plain
from ..core.thresholds import Thresholds
from ..engine.changes import Change, Gate, StoredChange
from ..engine.settings import Policy
from ..pairs.results import OverheadResult
from ..store.environment import differences, recorded_fingerprint, same_machine
from ..store.runs import Run, Storage, check_name, read_run
from ..transport.metrics import FigureKey
from ..transport.results import FigureResult
from .figure_changes import compare_figures, learned_session_sd
from .pair_changes import comparable, compare_result


@dataclass
class StoredRuns:
    storage: Storage
    save_as: str | None = None
    compare_with: Path | None = None
    thresholds: Thresholds = field(default_factory=Thresholds)
    """The gate's threshold for pairs and for transport figures, in percent."""
    unknown: Policy = Policy.WARN
    old: dict[str, OverheadResult] = field(default_factory=dict)
    history: list[OverheadResult] = field(default_factory=list)
    """This machine's stored results: each pair's between-session spread."""
    old_figures: dict[FigureKey, FigureResult] = field(default_factory=dict)
    figure_history: list[FigureResult] = field(default_factory=list)
    foreign: bool = False
    """The stored run was measured on another machine (or an unknown one); one of this machine
    under another Python is not foreign (:func:`~overheadbench.store.environment.same_machine`)."""
    saved: Path | None = None
    environment_differences: list[str] = field(default_factory=list)
    """What differs between the stored run's environment and this one (printed loudly)."""
    skipped: list[str] = field(default_factory=list)
    """Why each unreadable stored run of the history was left out (warned at the start)."""

    @classmethod
    def from_options(cls, gate: Any, env: dict[str, Any]) -> StoredRuns:
        """Resolve the options (``gate``: :class:`~overheadbench.gate_options.GateOptions`, not
        imported here: it sits above this module); a stored run that cannot be found or read, a storage folder
        that is a file, a bad run name, or a gate against another machine's run without
        ``--overhead-compare-force`` is a :class:`~overheadbench.core.errors.StorageError`."""
        storage, save, compare = gate.storage, gate.save, gate.compare
        storage.check()
        if gate.autosave and not save:
            commit = env.get("commit_info", {})
            save = f"{str(commit.get('id') or 'unversioned')[:12]}{'-dirty' if commit.get('dirty') else ''}"
        if save is not None:
            check_name(save)
        gated = gate.against is None and gate.thresholds.given
        if gated and compare is None:
            compare = ""
        found = storage.find(compare or None) if compare is not None and gate.against is None else None
        baselines = cls(storage, save, found, gate.thresholds, gate.unknown)
        if baselines.compare_with is not None:
            run = read_run(baselines.compare_with)
            baselines.old = {r.nodeid: r for r in run.measured()}
            baselines.environment_differences = differences(run.environment, env)
            # this machine under another Python is another environment, not another machine
            other_python = same_machine(run.environment, env) and recorded_fingerprint(run.environment) != env.get(
                "fingerprint"
            )
            baselines.foreign = storage.is_foreign(baselines.compare_with, run.environment) and not other_python
            baselines.old_figures = {f.key: f for f in run.measured_figures()}
        stored, baselines.skipped = storage.history()  # each figure's spread between sessions, compared or not
        baselines.history = [r for past in stored for r in past.measured()]
        baselines.figure_history = [f for past in stored for f in past.measured_figures()]
        if baselines.foreign and gated and not gate.force:
            raise StorageError(
                f"{baselines.compare_with}: measured on another machine than this one ({storage.machine}); "
                f"a gate across machines measures the machines, not the change. Compare with a run of this "
                f"machine, or add --overhead-compare-force to gate anyway"
            )
        return baselines

    @property
    def gate(self) -> Gate:
        """The pairs' gate against the stored run."""
        return Gate(self.compared_name, self.thresholds.pairs, self.unknown)

    @property
    def figure_gate(self) -> Gate:
        """The transport figures' gate against the stored run."""
        return Gate(self.compared_name, self.thresholds.transport, None)

    def warnings(self, start: bool) -> list[str]:
        """What the terminal says about the stored runs: at the ``start``, those left out of the
        history and why; at the start and the end, that the compared run came from elsewhere."""
        lines = [f"WARNING: {reason}; left out of the history" for reason in self.skipped] if start else []
        if self.environment_differences:
            lines.append(
                f"WARNING: overhead compared with {self.compared_name}, measured in another environment: "
                f"{'; '.join(self.environment_differences)}"
            )
        return lines

    @property
    def compared_name(self) -> str:
        return self.compare_with.name if self.compare_with else ""

    def change(self, result: OverheadResult) -> Change | None:
        """How ``result`` changed against the stored run (None if it has no such test in this mode)."""
        old = self.old.get(result.nodeid)
        if old is None or not comparable(old, result) or not result.measured:
            return None
        return compare_result(old, result, self.history)

    def stored_change(self, result: OverheadResult) -> StoredChange | None:
        """The change :meth:`change` finds, named by the stored run: what the result carries."""
        change = self.change(result)
        return None if change is None else StoredChange(self.compared_name, change)

    def session_sd(self, key: FigureKey) -> float | None:
        """How far a transport figure moves between sessions on this machine, learned from its
        stored runs (None without enough of them: the figure's prior applies)."""
        return learned_session_sd(key, self.figure_history)

    def with_changes(self, figures: Sequence[FigureResult]) -> list[FigureResult]:
        """The figures, each carrying its change against the stored run where the run has it."""
        if self.compare_with is None:
            return list(figures)
        found = {
            figure.key: StoredChange(self.compared_name, change) for figure, change in self.figure_changes(figures)
        }
        return [dataclasses.replace(figure, stored=found.get(figure.key)) for figure in figures]

    def figure_changes(self, figures: Sequence[FigureResult]) -> list[tuple[FigureResult, Change]]:
        if self.compare_with is None:
            return []
        return compare_figures(list(self.old_figures.values()), figures, self.figure_history)

    def save(self, run: Run) -> None:
        if self.save_as:
            self.saved = self.storage.save(run, self.save_as)


def session_stored(gate: Any, environment: Callable[[], dict[str, Any]]) -> StoredRuns | None:
    """The session's stored runs, where its options use storage (``environment``: read only then, it
    costs a third of a second); a storage problem is a usage error, said before anything is measured."""
    if not gate.uses_storage:
        return None
    try:
        return StoredRuns.from_options(gate, environment())
    except StorageError as exc:
        raise pytest.UsageError(f"overheadbench: {plain(str(exc))}") from None
