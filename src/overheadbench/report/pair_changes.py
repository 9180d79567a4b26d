"""A pair's changes as the reports show them: against the stored run (old, new), against each
other place of the session (base, head; this environment, that one) with each side's time per call,
in the terminal and in markdown, and the gate's outcome counted (the report's first section)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import replace

from ..core.tables import TERMINAL_WIDTH, laid_out, markdown_cell, markdown_code, markdown_table, plain
from ..core.thresholds import Thresholds
from ..core.units import format_overhead, format_overheads, format_seconds
from ..core.vocabulary import OVERHEAD, Side
from ..engine.changes import Change
from ..engine.findings import Finding
from ..pairs.comparing import per_call_change
from ..pairs.results import OverheadResult, PlaceResult
from .shown import SESSION_TERM, Shown, detects, render_changes


def pair_shown(change: Change) -> Shown:
    """A pair's change: its overhead on both sides."""
    return Shown(change.what, OVERHEAD, *format_overheads(change.old - 1, change.new - 1), change)


def places_of(results: Sequence[OverheadResult]) -> list[tuple[str, list[tuple[OverheadResult, PlaceResult]]]]:
    """Each other place of the session (by name, in the order first met), with every result
    measured there: (the session's own result, the place's)."""
    found: dict[str, list[tuple[OverheadResult, PlaceResult]]] = {}
    for result in results:
        for place in result.places:
            found.setdefault(place.name, []).append((result, place))
    return list(found.items())


def render_pair_places(results: Sequence[OverheadResult], thresholds: Thresholds) -> list[str]:
    """Every other place of the session: its change table, then each side's time per call on
    both (whether the bare path moved too), and the pairs that were not compared, with why."""
    lines: list[str] = []
    for name, measured in places_of(results):
        compared = [(own, place) for own, place in measured if place.change is not None and place.result is not None]
        if compared:
            sides = compared[0][1].sides
            reference = compared[0][1].role.reference(name)
            shown = [pair_shown(place.change) for _, place in compared if place.change is not None]
            lines += [*([""] if lines else []), *render_changes(shown, reference, thresholds, sides)]
            lines += ["", *laid_out(_per_call_rows(compared, thresholds.pairs))]
        missing = [(own, place) for own, place in measured if place.result is None]
        lines += [""] if missing and lines else []
        lines += [
            wrapped
            for own, place in missing
            for wrapped in textwrap.wrap(f"{plain(own.nodeid)}: {plain(place.note)}", TERMINAL_WIDTH)
        ]
    return lines


def _old_new(own: OverheadResult, place: PlaceResult) -> tuple[OverheadResult, OverheadResult]:
    """The two results of a place's change, old first (base then head; this environment, then that)."""
    assert place.result is not None
    return place.role.old_new(own, place.result)


def _per_call_rows(
    compared: Sequence[tuple[OverheadResult, PlaceResult]], threshold: float | None
) -> list[tuple[str, ...]]:
    """Each side's time per call at both places: whether the bare path moved too. Each change with
    its 95% interval, paired by round as the pair's own change is: a per-process time is bimodal
    for some code (6.7 or 10.6 µs a call, by layout), and an unchanged baseline read +57.8%, +23.9%
    and -31.9% in three sessions as bare numbers (issue 47)."""
    old_name, new_name = compared[0][1].sides
    header = ("test", f"baseline/call {old_name}", new_name, "change (95% CI)")
    rows: list[tuple[str, ...]] = [(*header, f"framework/call {old_name}", new_name, "change (95% CI)")]
    for own, place in compared:
        old, new = _old_new(own, place)
        rows.append(
            (
                plain(own.nodeid),
                format_seconds(old.baseline_s),
                format_seconds(new.baseline_s),
                per_call_shown(own, place, Side.BASELINE, threshold),
                format_seconds(old.framework_s),
                format_seconds(new.framework_s),
                per_call_shown(own, place, Side.FRAMEWORK, threshold),
            )
        )
    return rows


def per_call_shown(own: OverheadResult, place: PlaceResult, side: Side, threshold: float | None) -> str:
    """One side's change in time per call between a place and the session's own, by the gate's own
    rule: at the confidence the pair's change was read at, and shown as a change (no ``~``) only where
    the gate would call it one (past ``threshold``, or where no gate is set, an interval clear of
    zero): an identical baseline read -23.6% (95% CI -38.8..-4.5%) between two trees of one
    commit, shown as significant where the gate found the pair the same. The bare change and "no
    interval" where the processes do not pair up."""
    assert place.change is not None
    old, new = _old_new(own, place)
    change = per_call_change(own.nodeid, old, new, side)
    if change is None:
        value = old.baseline_s if side == Side.BASELINE else old.framework_s
        now = new.baseline_s if side == Side.BASELINE else new.framework_s
        return f"{100 * (now / value - 1):+.1f}% (no interval)" if value > 0 else ""
    change = replace(change, confidence=place.change.confidence)
    if threshold is None:
        return f"{change.moved()} ({change.evidence})"
    moved = change.finding(threshold) in (Finding.REGRESSED, Finding.IMPROVED)
    return f"{'' if moved else '~ '}{change.percent:+.1f}% ({change.evidence})"


GATE_ORDER = (Finding.REGRESSED, Finding.UNKNOWN, Finding.IMPROVED, Finding.SAME)
"""How the gate's outcomes are counted, worst first (a pair's worst over its other places)."""
GATE_ICON = {Finding.REGRESSED: "❌", Finding.UNKNOWN: "⚠", Finding.IMPROVED: "✅", Finding.SAME: "✅"}


def gate_findings(results: Sequence[OverheadResult], threshold: float) -> dict[str, Finding]:
    """Each gated pair's outcome at ``threshold``: the worst over its other places (or its change
    against the stored run)."""
    found: dict[str, Finding] = {}
    for result in results:
        changes = [place.change for place in result.places if place.change is not None]
        changes += [result.stored.change] if result.stored else []
        findings = [change.finding(threshold) for change in changes]
        if findings:
            found[result.nodeid] = min(findings, key=GATE_ORDER.index)
    return found


def markdown_gate(results: Sequence[OverheadResult], threshold: float) -> str:
    """The report's first section under a gate: its outcomes counted, worst first, and the pairs
    that failed it by name (the reviewer's question comes before the environment and the budgets)."""
    findings = gate_findings(results, threshold)
    if not findings:
        return ""
    counts = " · ".join(f"{GATE_ICON[f]} {sum(v == f for v in findings.values())} {f.value}" for f in GATE_ORDER)
    lines = ["## Gate", "", f"**{counts}** (changes of framework / baseline, gated at ±{threshold:g}%)"]
    by_id = {result.nodeid: result for result in results}
    for finding in (Finding.REGRESSED, Finding.UNKNOWN):
        named = [nodeid for nodeid, found in findings.items() if found == finding]
        if named:
            said = [f"- {markdown_code(n)}{_slowed(by_id[n]) if finding == Finding.REGRESSED else ''}" for n in named]
            lines += ["", f"{GATE_ICON[finding]} {finding.value}:", "", *said]
    return "\n".join(lines) + "\n"


def _slowed(result: OverheadResult) -> str:
    """What a regressed pair's reviewer wants first, in the comment's visible part: the function the
    change slowed most (what it added at a place, head less base), its share and its cost per call."""
    for place in result.places:
        if place.explain is not None and place.explain.rows:
            top = place.explain.rows[0]
            cost = place.explain.per_call(top.added)
            return f": the change slowed {markdown_code(top.where)} ({top.share:.0%} of what it added, {cost}/call)"
    return ""


def markdown_places(results: Sequence[OverheadResult], threshold: float | None = None) -> str:
    """The markdown section of each other place of the session: per pair, its overhead at both
    places, the change with its interval and outcome, and each side's time per call at both."""
    sections = []
    for name, measured in places_of(results):
        role = measured[0][1].role
        head = ("Test", *role.columns(name), "Change", "95% CI", "Detects")
        rows = [(*head, "Outcome", "Baseline/call", "Framework/call")]
        for own, place in measured:
            change = place.change
            if change is None or place.result is None:
                rows.append((own.nodeid, "", format_overhead(own.overhead), "", "", "", place.note, "", ""))
                continue
            old, new = _old_new(own, place)
            rows.append(
                (
                    own.nodeid,
                    *format_overheads(old.overhead, new.overhead),
                    change.moved(),
                    change.evidence,
                    detects(change),
                    change.finding(threshold).value if threshold is not None else "",
                    f"{format_seconds(old.baseline_s)} -> {format_seconds(new.baseline_s)}: "
                    f"{per_call_shown(own, place, Side.BASELINE, threshold)}",
                    f"{format_seconds(old.framework_s)} -> {format_seconds(new.framework_s)}: "
                    f"{per_call_shown(own, place, Side.FRAMEWORK, threshold)}",
                )
            )
        note = f"_Measured in the same session, {role.reading(markdown_cell(name))}._"
        sections.append(
            "\n".join([f"## {role.section(markdown_cell(name))}", "", *markdown_table(rows), "", note]) + "\n"
        )
    return "\n".join(sections)


def markdown_stored(results: Sequence[OverheadResult], threshold: float | None = None) -> str:
    """The markdown section of the comparison with a stored run (``--overhead-compare``): per
    pair, its overhead in both runs, the change with its interval, the spread between sessions it
    carries, and its outcome; labelled as what it is, two sessions, not paired."""
    compared = [result for result in results if result.stored]
    if not compared:
        return ""
    outcome = ("Outcome",) if threshold is not None else ()
    rows = [("Test", "Stored overhead", "This run", "Change", "95% CI", "Between sessions", "Detects", *outcome)]
    for result in compared:
        assert result.stored is not None
        change = result.stored.change
        old, new = format_overheads(change.old - 1, change.new - 1)
        between = change.between.describe() if change.between else ""
        found = (change.finding(threshold).value,) if threshold is not None else ()
        rows.append((result.nodeid, old, new, change.moved(), change.evidence, between, detects(change), *found))
    run = markdown_cell(compared[0].stored.run if compared[0].stored else "")
    note = f"_Separate sessions, not paired: {SESSION_TERM}_"
    return "\n".join([f"## Against the stored run {run}", "", *markdown_table(rows), "", note]) + "\n"
