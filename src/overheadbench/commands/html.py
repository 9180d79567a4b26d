"""``overheadbench html``: the page of a storage folder (its newest run and its branch's history) or of
the runs named."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from ..core.files import write_text_atomic
from ..core.git import is_repository
from ..core.tables import plain
from ..history.stored import stored_history
from ..history.timeline import read_history
from ..report.page.document import render_page
from ..store.index import indexed_runs, run_row
from ..store.runs import Storage, read_run
from .arguments import Commands


def add_parser(commands: Commands, anywhere: argparse.ArgumentParser) -> None:
    page = commands.add_parser("html", parents=[anywhere], help="the page of runs or a storage folder: one HTML file")
    page.add_argument("runs", nargs="*", metavar="RUN|STORAGE", help="runs, or a storage folder (default --storage)")
    page.add_argument("-o", "--output", type=Path, required=True, help="the page's file (.html)")
    page.add_argument("--branch", default=None, help="the history's branch (default: the checked-out one)")
    page.add_argument("--machine", default=None, metavar="NAME", help="the runs stored under NAME (a fleet's)")


def run(storage: Storage, args: argparse.Namespace) -> int:
    return _html(storage, args.runs, args.output, args.branch, args.machine)


def _html(storage: Storage, references: Sequence[str], output: Path, branch: str | None, machine: str | None) -> int:
    """The page of a storage folder (this machine's newest run and its branch's history) or of the
    runs named (the last one, and the history of them all)."""
    here = Path(".")
    if len(references) <= 1 and (not references or Path(references[0]).is_dir()):
        storage = Storage.named(Path(references[0]) if references else storage.root, machine)
        history, _, skipped = stored_history(indexed_runs(storage), branch, here)
        print("".join(f"overheadbench: left out: {plain(reason)}\n" for reason in skipped), end="")
        run = read_run(storage.find())  # none stored here: an error that says so
    else:
        runs = [(path, read_run(path)) for path in map(storage.find, references)]
        history = read_history([run_row(*each) for each in runs], here if is_repository(here) else None)
        run = runs[-1][1]
    write_text_atomic(output, render_page(run, history))
    print(f"page written to {output}")
    return 0
