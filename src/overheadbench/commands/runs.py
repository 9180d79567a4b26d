"""The commands that read stored runs: ``compare``, ``report``, ``plot`` and ``html``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ..core.errors import StorageError
from ..core.git import is_repository
from ..core.jsonio import dumps, write_text_atomic
from ..core.tables import fitted, plain
from ..core.thresholds import HELP_EXAMPLE, Thresholds
from ..engine.changes import Finding, Gate
from ..engine.outcome import Gated, gate_sentence
from ..engine.settings import Policy
from ..history.combined import Column, combine
from ..history.figure_changes import compare_figures
from ..history.pair_changes import compare_runs
from ..history.stored import stored_history
from ..history.timeline import read_history
from ..report.budgets import check_csv_rows
from ..report.markdown import render_markdown
from ..report.page import render_page
from ..report.pair_changes import pair_shown
from ..report.pairs_csv import csv_rows
from ..report.plots import distributions, stored_trend, trend as trend_plot
from ..report.shown import Shown, render_changes
from ..report.side_by_side import csv_side_by_side, json_side_by_side, markdown_side_by_side
from ..report.spreadsheet import csv_text
from ..report.summary import place_tables
from ..report.transport import figure_shown
from ..store.environment import differences_heading
from ..store.index import indexed_runs, run_row
from ..store.runs import Run, Storage, read_run
from .arguments import Commands, thresholds


def add_parsers(commands: Commands, anywhere: argparse.ArgumentParser) -> None:
    """``compare``, ``report``, ``plot`` and ``html``."""
    _compare_command(commands, anywhere)
    _report_commands(commands, anywhere)
    page = commands.add_parser("html", parents=[anywhere], help="the page of runs or a storage folder: one HTML file")
    page.add_argument("runs", nargs="*", metavar="RUN|STORAGE", help="runs, or a storage folder (default --storage)")
    page.add_argument("-o", "--output", type=Path, required=True, help="the page's file (.html)")
    page.add_argument("--branch", default=None, help="the history's branch (default: the checked-out one)")
    page.add_argument("--machine", default=None, metavar="NAME", help="the runs stored under NAME (a fleet's)")


def run(storage: Storage, args: argparse.Namespace) -> int:
    """The command ``args`` names, on the runs of ``storage``."""
    if args.command == "compare":
        return _compare(storage, args.old, args.new, args.fail_above, args.unknown)
    if args.command == "report":
        return _report(storage, args.run, args.format, args.output)
    if args.command == "html":
        return _html(storage, args.runs, args.output, args.branch, args.machine)
    return _plot(storage, args.run, args.trend, args.output)


def _compare_command(commands: Commands, anywhere: argparse.ArgumentParser) -> None:
    compare = commands.add_parser(
        "compare",
        parents=[anywhere],
        help="per-test change between two runs, or (one run) between the trees of an --overhead-against run",
    )
    compare.add_argument("old")
    compare.add_argument("new", nargs="?")
    compare.add_argument(
        "--fail-above",
        type=thresholds,
        default=Thresholds(),
        metavar="PCT",
        help="exit 1 when a test's framework path got slower (framework / baseline), or a transport figure "
        f"worse, by more than PCT percent with confidence: {HELP_EXAMPLE}",
    )
    compare.add_argument(
        "--unknown",
        type=Policy,
        choices=(Policy.WARN, Policy.FAIL),
        default=Policy.WARN,
        help="a pair whose interval contains the threshold: warn (the default) or fail, as "
        "--overhead-compare-unknown does in a session",
    )


def _report_commands(commands: Commands, anywhere: argparse.ArgumentParser) -> None:
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
    plot = commands.add_parser(
        "plot", parents=[anywhere], help="per-pair ratio distributions of a run, or the trend over stored runs"
    )
    plot.add_argument("run", nargs="*")
    plot.add_argument("--trend", action="store_true", help="overhead of each test across every stored run")
    plot.add_argument("-o", "--output", type=Path, required=True, help="FILE.svg or FILE.png")


def _compare(storage: Storage, old_ref: str, new_ref: str | None, fail_above: Thresholds, unknown: Policy) -> int:
    if new_ref is None:
        return _compare_trees(storage.find(old_ref), fail_above, unknown)
    old_path, new_path = storage.find(old_ref), storage.find(new_ref)
    old, new = read_run(old_path), read_run(new_path)
    heading = differences_heading(old.environment, new.environment)
    machine = Storage(storage.root, old_path.resolve().parent.name)  # the old run's machine, and its history
    stored, skipped = machine.history() if machine.folder.is_dir() else ([], [])
    for reason in skipped:
        print(fitted(f"WARNING: {plain(reason)}; left out of the history"), file=sys.stderr)
    history = [r for run in stored for r in run.measured()]
    shown = [pair_shown(change) for change in compare_runs(old.results, new.results, history)]
    figure_history = [f for run in stored for f in run.measured_figures()]
    moved = compare_figures(old.measured_figures(), new.measured_figures(), figure_history)
    shown += [figure_shown(figure, change) for figure, change in moved]
    if not shown:
        print(f"no test was measured in both {plain(old_path.name)} and {plain(new_path.name)}")
        return 0
    print("\n".join([*([plain(heading)] if heading else []), *render_changes(shown, old_path.name, fail_above)]))
    return _regressions([(old_path.name, each) for each in shown], fail_above, unknown)


def _compare_trees(path: Path, fail_above: Thresholds, unknown: Policy) -> int:
    """One run measured with ``--overhead-against`` or ``--overhead-env``: its pairs' and
    transport figures' change at each other place of its session; or one measured with
    ``--overhead-compare``: the changes it carries against the stored run it was compared with."""
    run = read_run(path)
    results = [r for r in run.measured() if r.places]
    figures = [f for f in run.measured_figures() if f.places]
    stored = [pair_shown(r.stored.change) for r in run.measured() if r.stored]
    stored += [figure_shown(f, f.stored.change) for f in run.measured_figures() if f.stored]
    if not (results or figures or stored):
        print(
            f"{plain(path.name)} was measured without --overhead-against, --overhead-env or --overhead-compare: "
            "name two runs to compare"
        )
        return 0
    runs = [r.stored.run for r in run.measured() if r.stored] + [
        f.stored.run for f in run.measured_figures() if f.stored
    ]
    against = runs[0] if runs else ""
    lines = place_tables(replace(run, results=results, figures=figures), fail_above)
    lines += [*([""] if lines and stored else []), *(render_changes(stored, against, fail_above) if stored else [])]
    print("\n".join(lines))
    changes = [
        (place.name, pair_shown(place.change)) for r in results for place in r.places if place.change is not None
    ]
    changes += [(p.name, figure_shown(f, p.change, control=p.control)) for f in figures for p in f.places if p.gated]
    return _regressions([*changes, *((against, shown) for shown in stored)], fail_above, unknown)


def _regressions(changes: Sequence[tuple[str, Shown]], fail_above: Thresholds, unknown: Policy) -> int:
    """Say each change (against the run or place named beside it) the gate fails or warns of, at its
    kind's threshold (percent), on standard error, in the session's own sentence (its one regression
    check, :meth:`~overheadbench.engine.changes.Gate.fails`); 1 if any fails."""
    failed = False
    for reference, shown in changes:
        gate = Gate(reference, fail_above.pick(shown.pair), unknown)
        if not (gate.fails(shown.change) or gate.warns(shown.change)):
            continue
        failed = failed or gate.fails(shown.change)
        word = "REGRESSION" if gate.finding(shown.change) == Finding.REGRESSED else "UNKNOWN"
        gated = Gated(plain(shown.figure), shown.change.describe((shown.old, shown.new)), shown.change)
        sentence = gate_sentence(plain(shown.test), gated, gate, f"--fail-above={gate.threshold:g}%")
        print(f"{word} {sentence}", file=sys.stderr)
    return 1 if failed else 0


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


def _columns(storage: Storage, references: Sequence[str]) -> list[Column]:
    """The runs named, by environment (shards of one merged)."""
    paths = [storage.find(reference) for reference in references]
    return combine([(path, read_run(path)) for path in paths])


def _report(storage: Storage, references: Sequence[str], fmt: str, output: Path | None) -> int:
    columns = _columns(storage, references)
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


def _plot(storage: Storage, references: Sequence[str], over_runs: bool, output: Path) -> int:
    if output.suffix.lower() not in (".svg", ".png"):
        raise StorageError(f"{output}: the plot is written as .svg or .png")
    if over_runs:
        for warning in stored_trend(storage, output):
            print(f"overheadbench: warning: {plain(warning)}", file=sys.stderr)
    else:
        if not references:
            raise StorageError("plot needs a RUN (or --trend)")
        columns = _columns(storage, references)
        if len(columns) > 1:  # one point per environment: separate sessions, not paired
            trend_plot([(column.label, column.run) for column in columns], output, "overhead by environment")
        else:
            distributions(", ".join(columns[0].files), columns[0].run, output)
    print(f"plot written to {output}")
    return 0
