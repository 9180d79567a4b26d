"""``overheadbench plot``: a run's per-pair ratio distributions, the runs of several environments side by
side, or (``--trend``) each test's overhead across the stored runs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ..core.errors import StorageError
from ..core.tables import plain
from ..history.combined import named_runs
from ..report.files.plots import distributions, stored_trend, trend as trend_plot
from ..store.runs import Storage
from .arguments import Commands


def add_parser(commands: Commands, anywhere: argparse.ArgumentParser) -> None:
    plot = commands.add_parser(
        "plot", parents=[anywhere], help="per-pair ratio distributions of a run, or the trend over stored runs"
    )
    plot.add_argument("run", nargs="*")
    plot.add_argument("--trend", action="store_true", help="overhead of each test across every stored run")
    plot.add_argument("-o", "--output", type=Path, required=True, help="FILE.svg or FILE.png")


def run(storage: Storage, args: argparse.Namespace) -> int:
    return _plot(storage, args.run, args.trend, args.output)


def _plot(storage: Storage, references: Sequence[str], over_runs: bool, output: Path) -> int:
    if output.suffix.lower() not in (".svg", ".png"):
        raise StorageError(f"{output}: the plot is written as .svg or .png")
    if over_runs:
        for warning in stored_trend(storage, output):
            print(f"overheadbench: warning: {plain(warning)}", file=sys.stderr)
    else:
        if not references:
            raise StorageError("plot needs a RUN (or --trend)")
        columns = named_runs(storage, references)
        if len(columns) > 1:  # one point per environment: separate sessions, not paired
            trend_plot([(column.label, column.run) for column in columns], output, "overhead by environment")
        else:
            distributions(", ".join(columns[0].files), columns[0].run, output)
    print(f"plot written to {output}")
    return 0
