"""Runs of one suite in several environments, a column each (``overheadbench report A.json
B.json ...``, see :mod:`overheadbench.history.combined`): each pair's overhead with its
interval, each transport figure's value, per environment, in markdown or CSV.

Separate sessions, not paired: the columns differ by their environment *and* by how the machine
moved between the sessions (a pair's figure carries the between-session spread in its
interval; a transport figure moves more, docs/transport.md). Said under every such table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ...core.tables import markdown_cell, markdown_table, plain
from ...store.runs import Run
from ...transport.metrics import SPECS
from ..pairs import environment_lines, overhead_cell


class Column(Protocol):
    """One environment's runs, merged (:class:`~overheadbench.history.combined.Column`)."""

    label: str
    files: list[str]
    run: Run


CAVEAT = (
    "_Separate sessions: not paired. Each column is its own session (a CI job, a tox environment): a difference "
    "between columns is the environments' and the machine's between those sessions alike, which a pair's "
    "interval covers only for its own session's spread. To gate one environment against another, measure them in "
    "one session, interleaved: `--overhead-env` (docs/environments.md)._"
)


def _rows(columns: Sequence[Column]) -> list[tuple[str, ...]]:
    """A row per pair and per transport figure measured in any column, its cell per column."""
    pairs: dict[str, dict[int, str]] = {}
    figures: dict[tuple[str, str], dict[int, str]] = {}
    for index, column in enumerate(columns):
        for result in column.run.measured():
            pairs.setdefault(result.nodeid, {})[index] = overhead_cell(result)
        for figure in column.run.measured_figures():
            what = f"{figure.row} {SPECS[figure.metric].what}"
            figures.setdefault((figure.nodeid, what), {})[index] = figure.check.show(figure.reading.value)
    rows = [(nodeid, "overhead", *(cells.get(i, "") for i in range(len(columns)))) for nodeid, cells in pairs.items()]
    rows += [
        (nodeid, what, *(cells.get(i, "") for i in range(len(columns)))) for (nodeid, what), cells in figures.items()
    ]
    return rows


def markdown_side_by_side(columns: Sequence[Column]) -> str:
    """Every environment's figures side by side, each column labelled, with the caveat, then each
    environment's own description and the files it was read from."""
    header = ("Test", "Figure", *(markdown_cell(column.label) for column in columns))
    lines = ["# Overhead by environment", "", *markdown_table([header, *_rows(columns)]), "", CAVEAT, ""]
    for column in columns:
        lines += [f"## {markdown_cell(column.label)}", "", f"Runs: {', '.join(map(plain, column.files))}", ""]
        lines += [*environment_lines(column.run.environment), ""]
    return "\n".join(lines)


def csv_side_by_side(columns: Sequence[Column]) -> list[tuple[Any, ...]]:
    """The same table as CSV: a column per environment (the values as the report prints them)."""
    return [("test", "figure", *(plain(column.label) for column in columns)), *_rows(columns)]


def json_side_by_side(columns: Sequence[Column]) -> dict[str, Any]:
    """Every environment's merged run, labelled, with the files it came from."""
    return {
        "paired": False,
        "environments": [
            {"label": column.label, "files": column.files, "run": column.run.to_json()} for column in columns
        ],
    }
