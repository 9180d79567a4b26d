"""The ``overheadbench`` command: compare stored runs, print reports, draw plots, bisect commits.

    overheadbench compare OLD NEW [--fail-above PCT]    (pairs and transport figures; PCT as pytest's
                                                         --overhead-fail-above takes it)
    overheadbench report RUN [RUN ...] [--format markdown|comment|csv|checks|json] [-o FILE]
    overheadbench plot RUN [RUN ...] -o FILE.svg|png (per-pair ratio distributions)
    overheadbench plot --trend -o FILE.svg|png      (overhead across the stored runs)
    overheadbench bisect GOOD BAD [--fail-above PCT] [--json FILE] [-- PYTEST_ARGS]
                                                    (the first commit regressed over GOOD)
    overheadbench history [STORAGE] [--json FILE] [--fail-above PCT] [--since REF] [--confirm [-- PYTEST_ARGS]]
                          [--accept COMMIT --reason TEXT [--test T]] [--machine NAME]
                          [--measure REV_RANGE [--max-commits N] [-- PYTEST_ARGS]]
                                                    (every step and drift of the stored runs' figures)
    overheadbench html [RUN ... | STORAGE] -o FILE.html  (the page: one self-contained HTML file)

RUN, OLD and NEW are paths, or names/numbers of runs in the storage folder (--storage,
default baselines/). Several runs are read as one report: shards of one suite merged, runs of
other environments (another Python, other package versions) a column each
(:mod:`overheadbench.history.combined`). Exit codes: 0 fine, 1 a regression past --fail-above (bisect:
no first regressed commit found; history: a regression change point past --fail-above), 2 bad input,
130 interrupted (Ctrl-C or SIGTERM: one line says so).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from .commands import bisect, compare, history, html, plot, report
from .commands.arguments import Commands
from .core.errors import StorageError
from .core.leaving_reader import reader_may_leave
from .core.tables import plain
from .history.bisect import BisectError
from .report.files.plots import PlotUnavailable
from .store.runs import Storage


class StoredCommand(Protocol):
    """A command that reads stored runs: a module with its arguments and its ``run``."""

    def add_parser(self, commands: Commands, anywhere: argparse.ArgumentParser) -> None: ...

    def run(self, storage: Storage, args: argparse.Namespace) -> int: ...


STORED: dict[str, StoredCommand] = {"compare": compare, "report": report, "plot": plot, "html": html}
"""The commands that read stored runs (a module each, as asv's ``commands/``: its arguments and its ``run``)."""


def build_parser() -> argparse.ArgumentParser:
    """The command line: ``compare``, ``report``, ``plot``, ``bisect``, ``history`` and ``html``."""
    parser = argparse.ArgumentParser(prog="overheadbench", description="Compare, report and plot overheadbench runs.")
    storage_help = "folder of stored runs (default baselines/); before or after the command"
    parser.add_argument("--storage", type=Path, default=Path("baselines"), help=storage_help)
    anywhere = argparse.ArgumentParser(add_help=False)  # --storage after the command too, as users write it
    anywhere.add_argument("--storage", type=Path, default=argparse.SUPPRESS, help=storage_help)
    commands = parser.add_subparsers(dest="command", required=True)
    for stored in STORED.values():
        stored.add_parser(commands, anywhere)
    bisect.add_parser(commands)
    history.add_parser(commands, anywhere)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    ours, pytest_args = (given[: given.index("--")], given[given.index("--") + 1 :]) if "--" in given else (given, [])
    args = build_parser().parse_args(ours)
    storage = Storage(args.storage)
    with reader_may_leave():
        try:
            return _run(args, storage, pytest_args)
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (core.termination): one line, not a traceback
            print(f"overheadbench: {args.command} interrupted ({exc or 'SIGINT received'})", file=sys.stderr)
            return INTERRUPTED


INTERRUPTED = 130
"""The exit code of a command interrupted (128 + SIGINT, as shells report it)."""


def _run(args: argparse.Namespace, storage: Storage, pytest_args: list[str]) -> int:
    """The command ``args`` names; 2 where its input is wrong (said in a sentence)."""
    try:
        if args.command == "bisect":
            return bisect.run(args, pytest_args)
        if args.command == "history":
            return history.run(Storage.named(args.folder or storage.root, args.machine), args, pytest_args)
        return STORED[args.command].run(storage, args)
    except (StorageError, PlotUnavailable, BisectError) as exc:
        print(f"overheadbench: {plain(str(exc), lines=True)}", file=sys.stderr)  # git's and pytest's own lines
        return 2
    except OSError as exc:  # an output file that cannot be written
        print(f"overheadbench: {exc.filename}: cannot be written ({exc.strerror or exc})", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
