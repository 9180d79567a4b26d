"""This session against the stored runs: the run it is compared with, and where it is saved.

Each kind asks its own side (:class:`~overheadbench.history.pair_changes.StoredPairs`,
:class:`~overheadbench.history.figure_changes.StoredFigures`) how each measured test changed (the
verdict decides whether it fails the test, see :func:`overheadbench.pairs.outcome.pair_outcome`);
the reporter prints the changes at the end and calls :meth:`StoredRuns.save`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..core.errors import StorageError, usage
from ..core.tables import plain
from ..core.thresholds import Thresholds
from ..engine.changes import Gate
from ..engine.settings import Policy
from ..store.environment import differences, recorded_fingerprint, same_machine
from ..store.runs import Run, Storage, check_name, read_run
from .figure_changes import StoredFigures
from .pair_changes import StoredPairs


class StorageOptions(Protocol):
    """What the stored-run gate reads of the session's options (:class:`~overheadbench.gate_options.GateOptions`,
    which sits above this module): where runs are kept, what to save and compare, and the gate."""

    @property
    def storage(self) -> Storage: ...
    @property
    def save(self) -> str | None: ...
    @property
    def autosave(self) -> bool: ...
    @property
    def compare(self) -> str | None: ...
    @property
    def thresholds(self) -> Thresholds: ...
    @property
    def unknown(self) -> Policy: ...
    @property
    def force(self) -> bool: ...
    @property
    def against(self) -> object | None: ...
    @property
    def uses_storage(self) -> bool: ...


@dataclass
class StoredRuns:
    """The session's storage: the run it is compared with (each kind's side of it), this machine's
    stored runs, and the name it is saved under."""

    storage: Storage
    pairs: StoredPairs
    figures: StoredFigures
    save_as: str | None = None
    compare_with: Path | None = None
    thresholds: Thresholds = field(default_factory=Thresholds)
    """The gate's threshold for pairs and for transport figures, in percent."""
    foreign: bool = False
    """The stored run was measured on another machine (or an unknown one); one of this machine
    under another Python is not foreign (:func:`~overheadbench.store.environment.same_machine`)."""
    saved: Path | None = None
    environment_differences: list[str] = field(default_factory=list)
    """What differs between the stored run's environment and this one (printed loudly)."""
    skipped: list[str] = field(default_factory=list)
    """Why each unreadable stored run of the history was left out (warned at the start)."""

    @classmethod
    def from_options(cls, gate: StorageOptions, env: dict[str, Any]) -> StoredRuns:
        """Resolve the options; a stored run that cannot be found or read, a storage folder
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
        name = found.name if found else ""
        pairs = StoredPairs(Gate(name, gate.thresholds.pairs, gate.unknown))
        figures = StoredFigures(Gate(name, gate.thresholds.transport, None))
        baselines = cls(storage, pairs, figures, save, found, gate.thresholds)
        if found is not None:
            run = read_run(found)
            pairs.old = {r.nodeid: r for r in run.measured()}
            figures.old = {f.key: f for f in run.measured_figures()}
            baselines.environment_differences = differences(run.environment, env)
            # this machine under another Python is another environment, not another machine
            other_python = same_machine(run.environment, env) and recorded_fingerprint(run.environment) != env.get(
                "fingerprint"
            )
            baselines.foreign = storage.is_foreign(found, run.environment) and not other_python
        stored, baselines.skipped = storage.history()  # each figure's spread between sessions, compared or not
        pairs.history = [r for past in stored for r in past.measured()]
        figures.history = [f for past in stored for f in past.measured_figures()]
        if baselines.foreign and gated and not gate.force:
            raise StorageError(
                f"{found}: measured on another machine than this one ({storage.machine}); "
                f"a gate across machines measures the machines, not the change. Compare with a run of this "
                f"machine, or add --overhead-compare-force to gate anyway"
            )
        return baselines

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

    def save(self, run: Run) -> None:
        if self.save_as:
            self.saved = self.storage.save(run, self.save_as)


def session_stored(gate: StorageOptions, environment: Callable[[], dict[str, Any]]) -> StoredRuns | None:
    """The session's stored runs, where its options use storage (``environment``: read only then, it
    costs a third of a second); a storage problem is a usage error, said before anything is measured."""
    if not gate.uses_storage:
        return None
    try:
        return StoredRuns.from_options(gate, environment())
    except StorageError as exc:
        raise usage(f"overheadbench: {plain(str(exc))}") from None
