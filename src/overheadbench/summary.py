"""The end of the session in the terminal: which sections, in which order, with which lines.

The plugin only writes what this composes (``pytest_terminal_summary`` stays thin), so the
whole summary is plain Python that a test can call: transport tables and their comparison,
the pairs' table, the session's facts (replicas, the quick profile, what was written, what was
saved), the comparison with a stored run, and GitHub annotations.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .change_report import render_against, render_comparison
from .changes import Change
from .figure_report import render_figure_changes, render_figures
from .figures import FigureResult
from .github import annotation
from .report import render_table
from .results import OverheadResult
from .tables import plain

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
class Compared:
    """What a comparison with a stored run found, for the summary."""

    name: str
    changes: Sequence[Change] = ()
    figure_changes: Sequence[tuple[FigureResult, Change]] = ()
    saved: Path | None = None
    threshold: float | None = None
    """The pairs' gate, in percent (None: changes shown, not gated)."""
    figure_threshold: float | None = None


def session_summary(
    results: Sequence[OverheadResult],
    figures: Sequence[FigureResult],
    compared: Compared | None,
    columns: Sequence[str],
    *,
    measuring: bool,
    replicas_started: int,
    quick: bool,
    written: Sequence[Path],
    remeasured: Sequence[str] = (),
    annotations: Sequence[tuple[str, int, str]] = (),
    against: bool = False,
    threshold: float | None = None,
) -> list[Section]:
    """The sections the terminal shows at the end of a session. ``compared``: the stored run
    compared with and what was saved; ``written``: the output files written; ``annotations``:
    (file, line, message) of each failed test, under GitHub Actions; ``against``: the pairs were
    measured against a base tree too, gated at ``threshold`` percent."""
    sections: list[Section] = []
    if figures:
        sections.append(Section("transport figures (server in its own process)", render_figures(figures)))
    if compared and compared.figure_changes:
        lines = render_figure_changes(compared.figure_changes, compared.name, compared.figure_threshold)
        sections.append(Section(f"transport: compared with {plain(compared.name)}", lines))
    if results:
        sections.append(Section("overhead: framework vs baseline", render_table(results, columns)))
    elif measuring and not figures:
        sections.append(Section("overhead: no pair was measured"))
    facts = Section(None)
    if results and replicas_started:
        facts.lines.append(f"replica processes started in this session: {replicas_started}")
    if results and quick:
        facts.lines.append(QUICK_NOTE)
    facts.lines += [f"overhead results written to {path}" for path in written]
    if remeasured:
        facts.lines.append(
            f"measured more than once in this session (re-run by a plugin such as pytest-rerunfailures), the last "
            f"measurement kept: {', '.join(map(plain, remeasured))}. Re-measuring until a budget passes is optional "
            f"stopping; fix the noise (docs/measurement.md) rather than re-run"
        )
    sections.append(facts)
    if compared and compared.changes:
        lines = render_comparison(compared.changes, compared.name, compared.threshold)
        sections.append(Section(f"overhead: compared with {plain(compared.name)}", lines))
    if against and results:
        section = f"overhead: against {plain(results[0].against)} (measured in this session, interleaved)"
        sections.append(Section(section, render_against(results, threshold)))
    if compared and compared.saved:
        sections.append(Section(None, [f"overhead run saved to {compared.saved}"]))
    if annotations:
        sections.append(Section(None, [annotation(file, line, _TITLE, message) for file, line, message in annotations]))
    return [section for section in sections if section.title is not None or section.lines]


_TITLE = "over budget"
"""The GitHub annotation's title for a test that failed its budget (a pair or a transport figure)."""
