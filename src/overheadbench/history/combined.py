"""Several runs read as one report (``overheadbench report A.json B.json ...``): shards of one
suite merged, runs of one suite in several environments set side by side.

A suite too big for one CI job is split across jobs (pytest-split, a CI matrix), and a tox
matrix runs the suite once per environment: each job writes its own run. Runs of one
environment (the same Python and the same installed versions) are shards and merge into one
run; a test measured in two of them is an error naming both files (two full runs are compared
with ``overheadbench compare``, not merged). Runs of different environments become one column
each, named by their Python and what differs from the first: separate sessions, not paired
(their difference includes how the machine moved between them; ``--overhead-env`` pairs them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import StorageError
from ..replicas.environments import Interpreter, derived_name
from ..store.environment import own_dependencies
from ..store.runs import Run, Storage, read_run


@dataclass
class Column:
    """One environment's runs, merged: its label, the files it came from and the merged run."""

    label: str
    files: list[str] = field(default_factory=list)
    run: Run = field(default_factory=Run)
    owners: dict[str, str] = field(default_factory=dict)
    """Which file each test came from (by node id), to name both files of a test found twice."""


def interpreter_of(environment: dict[str, Any]) -> Interpreter:
    """A run's environment as an interpreter: its Python version and installed versions (every
    distribution where the run recorded them, else the plugin's own packages)."""
    machine = environment.get("machine_info") or {}
    packages = environment.get("distributions") or environment.get("packages") or {}
    return Interpreter("", str(machine.get("python_version") or "?"), {k: str(v) for k, v in packages.items() if v})


def combine(runs: Sequence[tuple[Path, Run]]) -> list[Column]:
    """The runs by environment, in the order first met, each environment's shards merged; a test
    (or transport figure) in two shards of one environment raises :class:`StorageError` naming both."""
    columns: list[Column] = []
    keys: list[Interpreter] = []
    for path, run in runs:
        key = interpreter_of(run.environment)
        if key not in keys:
            keys.append(key)
            columns.append(Column("", run=Run(run.environment, run.settings, gate=run.gate)))
        column = columns[keys.index(key)]
        _merge(column, path, run)
    project = own_dependencies(*(run.environment for _, run in runs))
    for key, column in zip(keys, columns, strict=True):
        column.label = derived_name(keys[0], key, project) if len(columns) > 1 else ""
    labels = [column.label for column in columns]
    for column in columns:
        if labels.count(column.label) > 1:  # differing only beyond the packages a label names
            column.label += f" ({Path(column.files[0]).name})"
    return columns


def _merge(column: Column, path: Path, run: Run) -> None:
    """Add a shard to its environment's column; a test it shares with an earlier shard is an error."""
    for result in run.results:
        if (earlier := column.owners.get(result.nodeid)) is not None:
            raise StorageError(
                f"{result.nodeid}: measured in both {earlier} and {path.name}, runs of the same environment; shards "
                f"of one suite each measure other tests (two runs of the same tests: overheadbench compare "
                f"{earlier} {path.name})"
            )
    for figure in run.figures:
        if (earlier := column.owners.get(figure.nodeid)) is not None and earlier != path.name:
            raise StorageError(
                f"{figure.nodeid}: its transport figures are in both {earlier} and {path.name}, runs of the same "
                f"environment"
            )
    column.files.append(path.name)
    column.run.results += run.results
    column.run.figures += run.figures
    column.owners.update({result.nodeid: path.name for result in run.results})
    column.owners.update({figure.nodeid: path.name for figure in run.figures})


def named_runs(storage: Storage, references: Sequence[str]) -> list[Column]:
    """The runs named (paths, or names and numbers in ``storage``), by environment (shards of one merged)."""
    paths = [storage.find(reference) for reference in references]
    return combine([(path, read_run(path)) for path in paths])
