"""The change table: each pair and transport figure against the stored run (old, new), or each
pair against the base tree (base, head), in the terminal and in markdown, with the change, its
interval and its outcome at the gate's threshold (:mod:`overheadbench.history.changes`)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from ..core.tables import TERMINAL_WIDTH, laid_out, markdown_cell, markdown_table, plain
from ..core.units import format_overhead, format_overheads, format_seconds
from ..engine.checks import Unit, show
from ..history.changes import Change
from ..history.pair_changes import compare_sides
from ..pairs.results import OverheadResult
from ..transport.figures import SPECS, FigureResult, Measure


@dataclass(frozen=True)
class Shown:
    """One change as the change table prints it: of which ``figure`` of which ``test``, and old
    and new as that figure prints them."""

    test: str
    figure: str
    old: str
    new: str
    change: Change


OVERHEAD = "overhead"
"""A pair's figure in the change table (the column is left out when every row is a pair)."""


def pair_shown(change: Change) -> Shown:
    """A pair's change: its overhead on both sides."""
    return Shown(change.what, OVERHEAD, *format_overheads(change.old - 1, change.new - 1), change)


def figure_shown(figure: FigureResult, change: Change) -> Shown:
    """A transport figure's change: its value on both sides, as the figure prints (a pair's
    ratio, framework / baseline, as a ratio)."""
    spec = SPECS[figure.metric]
    if figure.measure == Measure.CHANGE:
        old, new = show(Unit.TIMES, change.old), show(Unit.TIMES, change.new)
        return Shown(figure.nodeid, f"{figure.row} {spec.what} ratio", old, new, change)
    return Shown(figure.nodeid, f"{figure.row} {spec.what}", spec.show(change.old), spec.show(change.new), change)


def render_changes(
    changes: Sequence[Shown], reference: str, threshold: float | None = None, sides: Sequence[str] = ("old", "new")
) -> list[str]:
    """The one change table, pairs and transport figures alike: each figure on both sides, the
    change (head over base, in percent of the figure: of framework / baseline for a pair) with
    its 95% interval, and what it means at ``threshold`` percent; "~" marks a change whose
    interval contains zero. ``sides``: what the two columns are called (old/new, base/head)."""
    figures = any(c.figure != OVERHEAD for c in changes)
    outcome = ("outcome",) if threshold is not None else ()
    rows = [("test", *(("figure",) if figures else ()), f"{sides[0]} ({plain(reference)})", sides[1], "change",
             "95% CI", "detects", *outcome)]  # fmt: skip
    rows += [
        (plain(c.test), *((plain(c.figure),) if figures else ()), c.old, c.new, c.change.moved(), c.change.evidence,
         detects(c.change), *((c.change.finding(threshold).value,) if threshold is not None else ()))
        for c in changes
    ]  # fmt: skip
    gate = f"; outcome at ±{threshold:g}%: see docs/ci.md" if threshold is not None else ""
    note = (
        f"change: {sides[1]} over {sides[0]}, in percent of the figure (of framework / baseline for an overhead: a "
        f"230% pair and a 20% pair alike); ~: not significant (the interval contains zero); detects: the smallest "
        f"change this comparison could tell from zero{gate}"
    )
    return [*laid_out(rows), *textwrap.wrap(note, TERMINAL_WIDTH)]


def detects(change: Change) -> str:
    """``±2.1%``: the smallest change the comparison could tell from zero ("exact" for counts)."""
    return "exact" if change.exact else f"±{change.detectable:.1f}%"


def render_against(results: Sequence[OverheadResult], threshold: float | None) -> list[str]:
    """``--overhead-against``: the change table, then each side's time per call, head over base
    (whether the bare path moved too), and the pairs that were not compared, with why."""
    compared = [(r, r.base) for r in results if r.base is not None]
    changes = [compare_sides(base, head) for head, base in compared]
    shown = [pair_shown(change) for change in changes]
    lines = render_changes(shown, results[0].against, threshold, ("base", "head")) if changes else []
    if compared:
        lines += ["", *laid_out(_per_call_rows(compared))]
    missing = [r for r in results if r.base is None and r.against]
    lines += [""] if missing and lines else []
    lines += [f"{plain(r.nodeid)}: {plain(r.base_note)}" for r in missing]
    return lines


def _per_call_rows(compared: Sequence[tuple[OverheadResult, OverheadResult]]) -> list[tuple[str, ...]]:
    """Each side's time per call on both trees: whether the bare path moved too."""
    rows: list[tuple[str, ...]] = [
        ("test", "baseline/call base", "head", "change", "framework/call base", "head", "change")
    ]
    rows += [
        (plain(head.nodeid), format_seconds(base.baseline_s), format_seconds(head.baseline_s),
         f"{100 * (head.baseline_s / base.baseline_s - 1):+.1f}%", format_seconds(base.framework_s),
         format_seconds(head.framework_s), f"{100 * (head.framework_s / base.framework_s - 1):+.1f}%")
        for head, base in compared
    ]  # fmt: skip
    return rows


def markdown_against(results: Sequence[OverheadResult], threshold: float | None = None) -> str:
    """The markdown section of an ``--overhead-against`` run: per pair, base and head overhead,
    the change with its interval and outcome, and each side's time per call on both trees."""
    measured = [r for r in results if r.against]
    if not measured:
        return ""
    rows = [
        (
            "Test",
            "Base overhead",
            "Head overhead",
            "Change",
            "95% CI",
            "Detects",
            "Outcome",
            "Baseline/call",
            "Framework/call",
        )
    ]
    for result in measured:
        base = result.base
        if base is None:
            rows.append((result.nodeid, "", format_overhead(result.overhead), "", "", "", result.base_note, "", ""))
            continue
        change = compare_sides(base, result)
        rows.append((
            result.nodeid, *format_overheads(base.overhead, result.overhead), change.moved(),
            change.evidence, detects(change), change.finding(threshold).value if threshold is not None else "",
            f"{format_seconds(base.baseline_s)} -> {format_seconds(result.baseline_s)}",
            f"{format_seconds(base.framework_s)} -> {format_seconds(result.framework_s)}",
        ))  # fmt: skip
    note = (
        f"_Measured against {measured[0].against} in the same session, replicas of both trees interleaved; the "
        f"change is of framework / baseline, head over base._"
    )
    return "\n".join([f"## Against {markdown_cell(measured[0].against)}", "", *markdown_table(rows), "", note]) + "\n"
