"""The change tables: each pair against the stored run (old, new) or the base tree (base, head),
in the terminal and in markdown, with the change of framework / baseline, its interval and its
outcome at the gate's threshold (:mod:`overheadbench.changes`)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from .changes import Change
from .comparison import compare_sides
from .results import OverheadResult
from .tables import TERMINAL_WIDTH, laid_out, markdown_cell, markdown_table, plain
from .units import format_fraction, format_seconds


def render_comparison(
    changes: Sequence[Change], reference: str, threshold: float | None = None, sides: Sequence[str] = ("old", "new")
) -> list[str]:
    """Each pair's overhead on both sides, the change of framework / baseline (head over base)
    with its 95% interval, and what it means at ``threshold`` percent; "~" marks a change whose
    interval contains zero. ``sides``: what the two columns are called (old/new, base/head)."""
    outcome = ("outcome",) if threshold is not None else ()
    rows = [("test", f"{sides[0]} ({plain(reference)})", sides[1], "change", "95% CI", *outcome)]
    rows += [
        (
            plain(c.what),
            format_fraction(c.old - 1),
            format_fraction(c.new - 1),
            c.moved(),
            c.evidence,
            *((c.finding(threshold).value,) if threshold is not None else ()),
        )
        for c in changes
    ]
    gate = f"; outcome at ±{threshold:g}%: see docs/ci.md" if threshold is not None else ""
    note = (
        f"change: of framework / baseline, {sides[1]} over {sides[0]}, in percent (a 230% pair and a 20% pair "
        f"alike); ~: not significant (the interval contains zero){gate}"
    )
    return [*laid_out(rows), *textwrap.wrap(note, TERMINAL_WIDTH)]


def render_against(results: Sequence[OverheadResult], threshold: float | None) -> list[str]:
    """``--overhead-against``: the change table, then each side's time per call, head over base
    (whether the bare path moved too), and the pairs that were not compared, with why."""
    compared = [(r, r.base) for r in results if r.base is not None]
    changes = [compare_sides(base, head) for head, base in compared]
    lines = render_comparison(changes, results[0].against, threshold, ("base", "head")) if changes else []
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
        ("Test", "Base overhead", "Head overhead", "Change", "95% CI", "Outcome", "Baseline/call", "Framework/call")
    ]
    for result in measured:
        base = result.base
        if base is None:
            rows.append((result.nodeid, "", format_fraction(result.overhead), "", "", result.base_note, "", ""))
            continue
        change = compare_sides(base, result)
        rows.append((
            result.nodeid, format_fraction(base.overhead), format_fraction(result.overhead), change.moved(),
            change.evidence, change.finding(threshold).value if threshold is not None else "",
            f"{format_seconds(base.baseline_s)} -> {format_seconds(result.baseline_s)}",
            f"{format_seconds(base.framework_s)} -> {format_seconds(result.framework_s)}",
        ))  # fmt: skip
    note = (
        f"_Measured against {measured[0].against} in the same session, replicas of both trees interleaved; the "
        f"change is of framework / baseline, head over base._"
    )
    return "\n".join([f"## Against {markdown_cell(measured[0].against)}", "", *markdown_table(rows), "", note]) + "\n"
