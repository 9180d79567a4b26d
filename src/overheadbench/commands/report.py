"""``overheadbench report RUN [RUN ...]``: a run as markdown, a pull request's comment, CSV or JSON; several
runs: shards of one suite merged, other environments a column each."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ..core.errors import StorageError
from ..core.files import write_text_atomic
from ..core.jsonio import dumps
from ..history.combined import Column, named_runs
from ..report.budgets import check_csv_rows
from ..report.files.markdown import render_markdown
from ..report.files.pairs_csv import csv_rows
from ..report.files.side_by_side import csv_side_by_side, json_side_by_side, markdown_side_by_side
from ..report.files.spreadsheet import csv_text
from ..store.runs import Run, Storage
from .arguments import Commands


def add_parser(commands: Commands, anywhere: argparse.ArgumentParser) -> None:
    report = commands.add_parser(
        "report",
        parents=[anywhere],
        help="a run as markdown, CSV (a row per pair, or per judged budget) or JSON; several runs: shards of one "
        "suite merged, other environments a column each",
    )
    report.add_argument("run", nargs="+")
    report.add_argument(
        "--format",
        choices=("markdown", "comment", "csv", "checks", "json"),
        default="markdown",
        help="markdown: pairs, transport figures and every budget; comment: the same, the gate and the changes "
        "first and the rest folded (a pull request's comment); csv: a row per pair; checks: a CSV row per "
        "judged budget (pairs' and transport figures'); json: the whole run",
    )
    report.add_argument("-o", "--output", type=Path, default=None, help="write to FILE instead of standard output")


def run(storage: Storage, args: argparse.Namespace) -> int:
    return _report(storage, args.run, args.format, args.output)


def _report(storage: Storage, references: Sequence[str], fmt: str, output: Path | None) -> int:
    columns = named_runs(storage, references)
    if len(columns) > 1:
        if fmt == "checks":
            raise StorageError("--format checks reads the runs of one environment; these are of several")
        text = _side_by_side(columns, fmt)
    else:
        text = _one_report(columns[0].run, fmt)
    if output is None:
        sys.stdout.write(text)
    else:
        write_text_atomic(output, text)
    return 0


def _side_by_side(columns: Sequence[Column], fmt: str) -> str:
    if fmt in ("markdown", "comment"):
        return markdown_side_by_side(columns)
    if fmt == "csv":
        return csv_text(csv_side_by_side(columns))
    return dumps(json_side_by_side(columns)) + "\n"


def _one_report(run: Run, fmt: str) -> str:
    results, figures = run.measured(), run.measured_figures()
    if fmt in ("markdown", "comment"):
        return render_markdown(replace(run, results=results, figures=figures), folded=fmt == "comment")
    if fmt in ("csv", "checks"):
        return csv_text(csv_rows(results) if fmt == "csv" else check_csv_rows(results, figures))
    return dumps(run.to_json()) + "\n"
