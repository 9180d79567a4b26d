"""The end of the session in the terminal: which sections, in which order, with which lines.

The plugin only writes what this composes (``pytest_terminal_summary`` stays thin), so the
whole summary is plain Python that a test can call: transport tables and their comparison,
the pairs' table, the session's facts (replicas, the quick profile, what was written, what was
saved), the comparison with a stored run, and GitHub annotations.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ...core.tables import TERMINAL_WIDTH, by_file, laid_out, plain
from ...core.thresholds import UNGATED, Thresholds
from ...core.vocabulary import OVERHEAD, Role
from ...engine.changes import REGRESSED_MARK
from ...engine.combining import PROCESS_SD, Method
from ...store.runs import Run
from ..explanations import passing_explanations
from ..files.github import Failure, annotation
from ..pair_changes import places_of, render_pair_places
from ..pair_notes import interval_notes, wider_than
from ..pairs import TERMINAL_COLUMNS, TIMES_NOTE, footnotes, scaling_rows, shown_columns, table_rows
from ..shown import Shown, render_changes
from ..transport import figure_places, render_figure_places, render_figures

QUICK_NOTE = (
    "quick profile (--overhead-quick): fewer processes and less time per pair, so "
    "intervals are wider; inconclusive verdicts warn instead of failing"
)


@dataclass
class Section:
    """Lines under a separator titled ``title`` (None: no separator, lines only)."""

    title: str | None
    lines: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class StoredComparison:
    """What a comparison with a stored run found, for the summary."""

    name: str
    changes: Sequence[Shown] = ()
    """Each pair's change (:func:`~overheadbench.report.pair_changes.pair_shown`)."""
    figure_changes: Sequence[Shown] = ()
    """Each transport figure's (:func:`~overheadbench.report.transport.figure_shown`)."""
    saved: Path | None = None
    thresholds: Thresholds = Thresholds()
    """The gate, in percent (a kind's None: its changes shown, not gated)."""
    link: str = ""
    """What ``--overhead-link`` linked the saved run to, said beside where it was saved (empty: not asked)."""


@dataclass(frozen=True)
class SessionFacts:
    """What the session did beside its results, as the summary says it."""

    measuring: bool
    replicas_started: int = 0
    quick: bool = False
    written: Sequence[str] = ()
    """The output files written (and what each replaced)."""
    remeasured: Sequence[str] = ()
    annotations: Sequence[Failure] = ()
    """Each failed test, under GitHub Actions."""
    against: str | None = None
    """Where the base tree was, when the pairs were measured against one."""
    thresholds: Thresholds = UNGATED
    """The gate at other places (a base tree, environments), in percent."""
    target: float | None = None
    """The interval's half-width the pairs aimed at (those that stayed wider are named)."""
    unmeasured: int = 0
    """The overhead tests a session without ``--overhead`` ran once each (said in one line: a CI job
    that lost the flag still passes, and would go unnoticed)."""


def session_summary(
    run: Run, compared: StoredComparison | None, columns: Sequence[str], facts: SessionFacts
) -> list[Section]:
    """The sections the terminal shows at the end of a session (``run``: what it measured).
    ``compared``: the stored run compared with and what was saved."""
    results, figures = run.results, run.figures
    sections: list[Section] = []
    if figures:
        sections.append(Section("transport figures (server in its own process)", render_figures(figures)))
    if compared and compared.figure_changes:
        lines = render_changes(compared.figure_changes, compared.name, compared.thresholds)
        sections.append(Section(f"transport: compared with {plain(compared.name)}", lines))
    if results:
        sections.append(Section("overhead: framework vs baseline", render_table(run, columns)))
    elif facts.measuring and not figures:
        sections.append(Section("overhead: no pair was measured"))
    sections += [Section(heading, lines) for heading, lines in passing_explanations(results)]
    sections.append(Section(None, _facts(run, facts)))
    if compared and compared.changes:
        changed = render_changes(compared.changes, compared.name, compared.thresholds)
        sections.append(Section(f"overhead: compared with {plain(compared.name)}", changed))
    if placed := _places(run, facts):
        sections.append(placed)
    if compared and compared.saved:
        link = f" ({compared.link})" if compared.link else ""
        sections.append(Section(None, [f"overhead run saved to {compared.saved}{link}"]))
    if facts.annotations:
        found = facts.annotations
        sections.append(
            Section(None, [annotation(f.path, f.line, title(f.message, f.kind, f.test), f.message) for f in found])
        )
    return [section for section in sections if section.title is not None or section.lines]


def _facts(run: Run, facts: SessionFacts) -> list[str]:
    """The lines under the table: replicas, the quick profile, wide intervals, re-measured pairs, files."""
    results, lines = run.results, list[str]()
    if facts.unmeasured and not facts.measuring:
        lines.append(
            f"{facts.unmeasured} overhead test(s) ran once as functional checks; add --overhead to measure them"
        )
    if results and facts.replicas_started:
        lines.append(f"replica processes started in this session: {facts.replicas_started}")
    if results and facts.quick:
        lines.append(QUICK_NOTE)
    if facts.target is not None and (wide := wider_than(results, facts.target)):
        named = ", ".join(map(plain, wide[:NAMED])) + (f" and {len(wide) - NAMED} more" if len(wide) > NAMED else "")
        lines.append(
            f"{len(wide)} interval(s) still wider than the ±{facts.target:.0%} target (the time budget allowed no "
            f"further processes; --overhead-time-budget buys more): {named}"
        )
    if facts.remeasured:
        lines.append(
            f"measured more than once in this session (re-run by a plugin such as pytest-rerunfailures), the last "
            f"measurement kept: {', '.join(map(plain, facts.remeasured))}. Re-measuring until a budget passes is "
            f"optional stopping; fix the noise (docs/measurement.md) rather than re-run"
        )
    wrapped = [  # prose wrapped; a test id is never broken: a reader copies it
        part
        for line in lines
        for part in textwrap.wrap(line, TERMINAL_WIDTH, break_long_words=False, break_on_hyphens=False)
    ]
    return wrapped + [f"overhead results written to {path}" for path in facts.written]  # whole: a path to copy


def _places(run: Run, facts: SessionFacts) -> Section | None:
    """The changes at the session's other places (a base tree, environments), if it had any: the
    transport figures' tables, then the pairs'."""
    place_names = [*(name for name, _ in places_of(run.results)), *figure_places(run.figures)]
    names = "; ".join(dict.fromkeys(plain(name) for name in place_names))
    if not names:
        return None
    where = [plain(facts.against)] if facts.against else []
    roles = [place.role for result in run.results for place in result.places]
    under = Role.ENVIRONMENT in [*roles, *(place.role for figure in run.figures for place in figure.places)]
    title = f"overhead: against {names} (measured in this session, interleaved)"
    if under:
        title = f"overhead: under {names} (measured in this session, interleaved with this environment)"
    return Section(title, [*place_tables(run, facts.thresholds), *where])


def place_tables(run: Run, thresholds: Thresholds) -> list[str]:
    """Every other place's change tables, gated at ``thresholds``: the transport figures', then the
    pairs' (with each side's time per call, and the pairs not compared there)."""
    figure_lines = render_figure_places(run.figures, thresholds)
    pair_lines = render_pair_places(run.results, thresholds)
    return [*figure_lines, *([""] if figure_lines and pair_lines else []), *pair_lines]


NAMED = 8
"""Pairs named in the line about intervals wider than the target (the rest are counted)."""


def title(message: str, kind: str = OVERHEAD, test: str = "") -> str:
    """The GitHub annotation's title for a failed test, one wording per kind: ``overhead
    regressed`` or ``transport regressed`` (against the stored run or the base tree), else
    ``overhead over budget`` or ``transport over budget``; then the test, parameters included
    (`` in test_x[c=64]``), which the annotation's line alone does not tell."""
    words = f"{kind} {'regressed' if REGRESSED_MARK in message else 'over budget'}"
    return f"{words} in {test}" if test else words


def render_table(run: Run, keys: Sequence[str] = TERMINAL_COLUMNS, width: int = TERMINAL_WIDTH) -> list[str]:
    """The run's pairs as text lines, one table per file (each with the columns its pairs have),
    fitting ``width``, with footnotes for what needs explaining."""
    results, lines = run.results, list[str]()
    for indexes in by_file([r.nodeid for r in results]).values():
        lines += [*([""] if lines else []), *laid_out(table_rows([results[i] for i in indexes], keys), width)]
    shown = {column.key for column in shown_columns(results, keys)}
    notes = [*([TIMES_NOTE] if {"baseline", "framework"} & shown else []), *interval_notes(results)]
    notes += footnotes(results, keys)
    if any(r.method == Method.WITHIN_PROCESS for r in results):
        notes.append(
            "* measured in one process only: the interval carries a prior for the layout another process "
            f"would have ({PROCESS_SD:.1%} sd) instead of measuring it (overhead_processes >= 3 measures it)"
        )
    scaling = scaling_rows(results)
    if scaling:
        lines += ["", "overhead by concurrent callers:", *laid_out(scaling, width)]
    return lines + [wrapped for note in notes for wrapped in textwrap.wrap(note, width)]
