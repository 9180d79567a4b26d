"""Saving this session's results, and comparing them with a stored run as they come in.

The plugin asks :meth:`Baselines.regression` about each measured result (a regression past
``--overhead-compare-fail`` then fails that test, so it is reported like any failure),
prints :meth:`Baselines.changes` at the end and calls :meth:`Baselines.save`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .comparison import Change, compare_result, compare_runs
from .environment import differences
from .storage import Storage, load_run


@dataclass
class Baselines:
    storage: Storage
    environment: dict[str, Any]
    save_as: str | None = None
    compare_with: Path | None = None
    fail_points: float | None = None
    old: dict[str, dict[str, Any]] = field(default_factory=dict)
    saved: Path | None = None
    environment_differences: list[str] = field(default_factory=list)
    """What differs between the stored run's environment and this one (printed loudly)."""

    @classmethod
    def from_options(
        cls,
        storage: Storage,
        env: dict[str, Any],
        save: str | None,
        autosave: bool,
        compare: str | None,
        fail_points: float | None,
    ) -> Baselines:
        """Resolve the options; a stored run that cannot be found or read is a :class:`StorageError`."""
        if autosave and not save:
            commit = env.get("commit_info", {})
            save = f"{str(commit.get('id') or 'unversioned')[:12]}{'-dirty' if commit.get('dirty') else ''}"
        if fail_points is not None and compare is None:
            compare = ""
        baselines = cls(storage, env, save, storage.find(compare or None) if compare is not None else None, fail_points)
        if baselines.compare_with is not None:
            run = load_run(baselines.compare_with)
            baselines.old = {r["nodeid"]: r for r in run["results"] if r.get("verdict") != "unmeasured"}
            baselines.environment_differences = differences(run.get("environment", {}), env)
        return baselines

    def regression(self, result: dict[str, Any]) -> str | None:
        """The failure message when ``result`` regressed past ``--overhead-compare-fail``, else None."""
        old = self.old.get(result["nodeid"])
        if old is None or self.fail_points is None or self.compare_with is None:
            return None
        change = compare_result(old, result)
        if not change.regressed_by_more_than(self.fail_points):
            return None
        return (
            f"{result['nodeid']}: overhead regressed against {self.compare_with.name}: {change.describe()}, "
            f"more than --overhead-compare-fail={self.fail_points:g} points"
        )

    def changes(self, results: list[dict[str, Any]]) -> list[Change]:
        """Every test of this session that the stored run has too."""
        return compare_runs(list(self.old.values()), results) if self.compare_with is not None else []

    def save(self, run: dict[str, Any]) -> None:
        if self.save_as:
            self.saved = self.storage.save(run, self.save_as)
