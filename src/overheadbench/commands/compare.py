"""``overheadbench compare OLD [NEW]``: each test's change between two stored runs, or (one run) between
the places of the session it was measured in; exit 1 where the gate fails."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ..core.tables import fitted, plain
from ..core.thresholds import HELP_EXAMPLE, Thresholds
from ..engine.changes import Gate
from ..engine.findings import Finding
from ..engine.outcome import Gated, gate_sentence
from ..engine.settings import Policy
from ..history.figure_changes import compare_figures
from ..history.pair_changes import compare_runs
from ..report.pair_changes import pair_shown
from ..report.shown import Shown, render_changes
from ..report.terminal.summary import place_tables
from ..report.transport import figure_shown
from ..store.environment import differences_heading
from ..store.runs import Storage, read_run
from .arguments import Commands, thresholds


def add_parser(commands: Commands, anywhere: argparse.ArgumentParser) -> None:
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


def run(storage: Storage, args: argparse.Namespace) -> int:
    return _compare(storage, args.old, args.new, args.fail_above, args.unknown)


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
