"""The ``overheadbench`` command: compare stored runs, print reports, draw plots, bisect commits.

    overheadbench compare OLD NEW [--fail-above PCT]    (pairs and transport figures; PCT as pytest's
                                                         --overhead-fail-above takes it)
    overheadbench report RUN [RUN ...] [--format markdown|comment|csv|checks|json] [-o FILE]
    overheadbench plot RUN [RUN ...] -o FILE.svg|png (per-pair ratio distributions)
    overheadbench plot --trend -o FILE.svg|png      (overhead across the stored runs)
    overheadbench bisect GOOD BAD [--fail-above PCT] [--json FILE] [-- PYTEST_ARGS]
                                                    (the first commit regressed over GOOD)
    overheadbench history [STORAGE] [--json FILE] [--fail-above PCT] [--since REF] [--confirm [-- PYTEST_ARGS]]
                                                    (every step and drift of the stored runs' figures)
    overheadbench html [RUN ... | STORAGE] -o FILE.html  (the page: one self-contained HTML file)

RUN, OLD and NEW are paths, or names/numbers of runs in the storage folder (--storage,
default baselines/). Several runs are read as one report: shards of one suite merged, runs of
other environments (another Python, other package versions) a column each
(:mod:`overheadbench.history.combined`). Exit codes: 0 fine, 1 a regression past --fail-above (bisect:
no first regressed commit found; history: a regression change point past --fail-above), 2 bad input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .core.errors import StorageError
from .core.git import is_repository
from .core.jsonio import cannot_write, dumps, write_text_atomic
from .core.tables import plain
from .core.termination import install_sigterm, uninstall_sigterm
from .core.thresholds import HELP_EXAMPLE, Thresholds, parse_thresholds
from .engine.attribution import CHANGE_HEAD
from .engine.settings import Policy
from .history.bisect import BisectError, bisect
from .history.combined import Column, combine
from .history.commits import CommitSessions, commits_between
from .history.confirm import confirm
from .history.environment import differences_heading
from .history.figure_changes import compare_figures
from .history.index import run_row, stored_history
from .history.pair_changes import compare_runs
from .history.runs import Run, Storage, read_run
from .history.timeline import newer_than, read_history
from .report.budgets import check_csv_rows
from .report.changes import (
    Shown,
    figure_places,
    figure_shown,
    gate_lines,
    pair_shown,
    render_changes,
    render_places,
)
from .report.history import history_document, regressions, render_history, whose
from .report.markdown import render_markdown
from .report.page import render_page
from .report.pairs_csv import csv_rows
from .report.plots import PlotUnavailable, distributions, stored_trend, trend as trend_plot
from .report.side_by_side import csv_side_by_side, json_side_by_side, markdown_side_by_side
from .report.spreadsheet import csv_text

BISECT_THRESHOLD = 5.0
"""``bisect``'s threshold, percent, where none is given: the CI templates' gate."""
BISECT_ROUNDS = 3
"""Sessions of a commit whose change stays unknown before it is skipped."""


def build_parser() -> argparse.ArgumentParser:
    """The command line: ``compare``, ``report``, ``plot``, ``bisect``, ``history`` and ``html``."""
    parser = argparse.ArgumentParser(prog="overheadbench", description="Compare, report and plot overheadbench runs.")
    storage_help = "folder of stored runs (default baselines/); before or after the command"
    parser.add_argument("--storage", type=Path, default=Path("baselines"), help=storage_help)
    anywhere = argparse.ArgumentParser(add_help=False)  # --storage after the command too, as users write it
    anywhere.add_argument("--storage", type=Path, default=argparse.SUPPRESS, help=storage_help)
    commands = parser.add_subparsers(dest="command", required=True)
    _compare_command(commands, anywhere)
    _report_commands(commands, anywhere)
    _bisect_command(commands)
    _history_command(commands, anywhere)
    page = commands.add_parser("html", parents=[anywhere], help="the page of runs or a storage folder: one HTML file")
    page.add_argument("runs", nargs="*", metavar="RUN|STORAGE", help="runs, or a storage folder (default --storage)")
    page.add_argument("-o", "--output", type=Path, required=True, help="the page's file (.html)")
    page.add_argument("--branch", default=None, help="the history's branch (default: the checked-out one)")
    return parser


Commands = Any
"""argparse's sub-parsers action (its type is private)."""


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
        type=_thresholds,
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


def _bisect_command(commands: Commands) -> None:
    bisect = commands.add_parser(
        "bisect",
        help="find the first commit between GOOD and BAD whose change over GOOD, measured in one session "
        "against GOOD's tree, is regressed (pytest arguments after --)",
    )
    bisect.add_argument("good")
    bisect.add_argument("bad")
    bisect.add_argument(
        "--fail-above", type=float, default=BISECT_THRESHOLD, metavar="PCT", help="the gate's threshold, percent"
    )
    bisect.add_argument(
        "--rounds", type=int, default=BISECT_ROUNDS, help="sessions for a commit whose change stays unknown"
    )
    bisect.add_argument("--json", type=Path, default=None, help="write the steps and first_bad to FILE")


def _history_command(commands: Commands, anywhere: argparse.ArgumentParser) -> None:
    history = commands.add_parser(
        "history",
        parents=[anywhere],
        help="every step and drift in the stored runs' figures, in commit order, named by their commits",
    )
    history.add_argument("folder", nargs="?", type=Path, default=None, metavar="STORAGE", help="(as --storage)")
    history.add_argument("--branch", default=None, help="the runs of this branch (default: the checked-out one)")
    history.add_argument("--repository", type=Path, default=Path("."), help="the git repository (default: .)")
    history.add_argument("--json", type=Path, default=None, help="write the change points to FILE")
    history.add_argument(
        "--fail-above", type=float, default=None, metavar="PCT", help="exit 1 on a regression of more than PCT percent"
    )
    history.add_argument("--since", default=None, metavar="REF", help="... that came after REF (a commit or branch)")
    history.add_argument(
        "--confirm",
        action="store_true",
        help="measure each regression's two commits in one session (pytest args after --)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    ours, pytest_args = (given[: given.index("--")], given[given.index("--") + 1 :]) if "--" in given else (given, [])
    args = build_parser().parse_args(ours)
    storage = Storage(args.storage)
    try:
        if args.command == "compare":
            return _compare(storage, args.old, args.new, args.fail_above, args.unknown)
        if args.command == "report":
            return _report(storage, args.run, args.format, args.output)
        if args.command == "bisect":
            return _bisect(args.good, args.bad, args.fail_above, args.rounds, args.json, pytest_args)
        if args.command == "history":
            return _history(Storage(args.folder) if args.folder else storage, args, pytest_args)
        if args.command == "html":
            return _html(storage, args.runs, args.output, args.branch)
        return _plot(storage, args.run, args.trend, args.output)
    except (StorageError, PlotUnavailable, BisectError) as exc:
        print(f"overheadbench: {plain(str(exc), lines=True)}", file=sys.stderr)  # git's and pytest's own lines
        return 2
    except OSError as exc:  # an output file that cannot be written
        print(f"overheadbench: {exc.filename}: cannot be written ({exc.strerror or exc})", file=sys.stderr)
        return 2


def _compare(storage: Storage, old_ref: str, new_ref: str | None, fail_above: Thresholds, unknown: Policy) -> int:
    if new_ref is None:
        return _compare_trees(storage.find(old_ref), fail_above, unknown)
    old_path, new_path = storage.find(old_ref), storage.find(new_ref)
    old, new = read_run(old_path), read_run(new_path)
    heading = differences_heading(old.environment, new.environment)
    machine = Storage(storage.root, old_path.resolve().parent.name)  # the old run's machine, and its history
    stored, skipped = machine.history() if machine.folder.is_dir() else ([], [])
    for reason in skipped:
        print(f"WARNING: {plain(reason)}; left out of the history", file=sys.stderr)
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
    lines = render_places(results, fail_above, figures) if results or figures else []
    lines += [*([""] if lines and stored else []), *(render_changes(stored, against, fail_above) if stored else [])]
    print("\n".join(lines))
    changes = [
        (place.name, pair_shown(place.change)) for r in results for place in r.places if place.change is not None
    ]
    changes += [(name, shown) for name, (_, rows) in figure_places(figures).items() for shown in rows]
    return _regressions([*changes, *((against, shown) for shown in stored)], fail_above, unknown)


def _regressions(changes: Sequence[tuple[str, Shown]], fail_above: Thresholds, unknown: Policy) -> int:
    """Say each change the gate fails or warns of (:func:`~overheadbench.report.changes.gate_lines`); 1 if any fails."""
    lines, failed = gate_lines(changes, fail_above, unknown)
    for line in lines:
        print(line, file=sys.stderr)
    return 1 if failed else 0


def _bisect(good: str, bad: str, threshold: float, rounds: int, output: Path | None, pytest_args: list[str]) -> int:
    """``overheadbench bisect``: each step printed as it ends, then the first regressed commit (or
    why there is none); 0 when one was found, 1 otherwise."""
    repository = Path.cwd()
    if output is not None and (why := cannot_write(output)):  # before the first session, not after the last
        raise BisectError(f"--json {output}: {why}")
    good_id, commits = commits_between(repository, good, bad)
    install_sigterm()  # SIGTERM ends the bisection as Ctrl-C does: the step's session and worktree go too
    sessions = CommitSessions(repository, threshold, pytest_args)
    try:
        found = bisect(good_id, commits, sessions, max(1, rounds))
    finally:
        sessions.close()
        uninstall_sigterm()
    subjects = dict(commits)
    if found.first_bad:
        print(f"first regressed: {found.first_bad} {subjects[found.first_bad]}")
    for test, explanation in found.explained.items():
        print(f"{test}, against its parent: {explanation.told(head=CHANGE_HEAD)}")
    if found.note:
        print(found.note)
    print(f"{len(found.steps)} steps, {sessions.sessions} sessions")
    if output is not None:
        write_text_atomic(output, dumps(found.to_json()) + "\n")
    return 0 if found.first_bad else 1


def _history(storage: Storage, args: argparse.Namespace, pytest_args: list[str]) -> int:
    """The change points of this machine's runs on one branch (the checked-out one, where runs record it),
    printed, confirmed (``--confirm``) and written; 1 where ``--fail-above`` finds a regression."""
    if not is_repository(args.repository) and (args.since or args.confirm):
        raise StorageError(f"--since and --confirm read git: {args.repository} is not a git repository")
    history, branch, skipped = stored_history(storage, args.branch, args.repository)
    for reason in skipped:
        print(f"overheadbench: left out: {plain(reason)}")
    confirmed = {}
    for point in (p for p in history.change_points if p.regression and args.confirm):
        confirmed[point] = confirm(point, args.repository, BISECT_ROUNDS, pytest_args)
    print("\n".join(render_history(history, whose(storage.machine, branch), confirmed)))
    if args.json:
        write_text_atomic(args.json, dumps(history_document(history, storage.machine, branch, confirmed)) + "\n")
    if args.fail_above is None:
        return 0
    newer = (lambda commit: newer_than(args.repository, commit, args.since)) if args.since else None
    failing = regressions(history, args.fail_above, newer)
    print("\n".join(failing))
    return 1 if failing else 0


def _html(storage: Storage, references: Sequence[str], output: Path, branch: str | None) -> int:
    """The page of a storage folder (this machine's newest run and its branch's history) or of the
    runs named (the last one, and the history of them all)."""
    here = Path(".")
    if len(references) <= 1 and (not references or Path(references[0]).is_dir()):
        storage = Storage(Path(references[0])) if references else storage
        history, _, skipped = stored_history(storage, branch, here)
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
        return render_markdown(results, run.environment, figures, thresholds=run.gate, folded=fmt == "comment")
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


def _thresholds(text: str) -> Thresholds:
    """``--fail-above``, as ``--overhead-fail-above`` takes it (:mod:`overheadbench.core.thresholds`)."""
    try:
        return parse_thresholds(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


if __name__ == "__main__":
    sys.exit(main())
