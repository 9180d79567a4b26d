"""The pairs' columns and cells, shared by the terminal table (:mod:`overheadbench.report.terminal.summary`),
the markdown tables (:mod:`overheadbench.report.files.markdown`) and the CSV: every figure read from the
results, save the concurrency table's growth from fewest to most callers, combined here from two
levels' intervals (the one figure no single result holds).

Why the tables live with their medium: this module sits on the results alone, so the reports that
compose it stay within the package's seven import floors."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.tables import markdown_table, plain
from ..core.units import (
    format_bytes,
    format_count,
    format_factor,
    format_fraction,
    format_seconds,
)
from ..core.vocabulary import Figure, Side
from ..engine.checks import Overall
from ..engine.combining import Method
from ..engine.counting import KEPT_SLACK_BLOCKS
from ..pairs.results import OverheadResult

STATUS_MARKS = {
    Overall.PASS: "PASS",
    Overall.FAIL: "FAIL",
    Overall.REGRESSED: "REGRESSED",
    Overall.UNKNOWN: "UNKNOWN",
    Overall.INCONCLUSIVE: "INCONCLUSIVE",
    Overall.UNJUDGED: "NOT JUDGED",
    Overall.UNMEASURED: "NOT MEASURED",
}
"""The terminal table's status: a pair's one outcome, its budgets' verdict and every gate's finding."""
COUNT_FOOTNOTE = (
    "count mode: the overhead is in executed {counter} per call, median over the repeats; "
    '"exact" = every repeat gave the same count, a..b = their range (the code is not deterministic)'
)
ALLOCATION_FOOTNOTE = (
    "memory (tracemalloc): peak = the most extra memory a call held at once; blocks kept = memory "
    "blocks a call left allocated, read over blocks of {calls} calls; a block keeping up to "
    f"{KEPT_SLACK_BLOCKS} (bounded state: a cache, a pending buffer) reads as none, so the figure's resolution is "
    f"{KEPT_SLACK_BLOCKS} / calls per block"
)
COUNTED_FIGURES = (Figure.INSTRUCTIONS, Figure.PEAK_BYTES, Figure.KEPT_BLOCKS, Figure.KEPT_BYTES)


@dataclass(frozen=True)
class Column:
    """A report column: its headers (terminal, markdown), its cell for one result, and for
    which results it applies (a table shows it only if some result has the figure, so a
    time-only run prints no count columns)."""

    key: str
    """Its name in ``--overhead-columns``."""
    header: str
    markdown: str
    cell: Callable[[OverheadResult], str]
    shown: Callable[[OverheadResult], bool] = lambda result: True


def _timed(result: OverheadResult) -> bool:
    return not result.mode.counted


def _counted(figure: Figure) -> Callable[[OverheadResult], bool]:
    return lambda result: result.counts is not None and result.counts.has(figure)


def percent(fraction: float) -> str:
    """``31.5``, or ``2493`` from 1,000% up (a tenth of a point there is noise and width)."""
    if math.isnan(fraction):
        return "n/a"
    return f"{fraction * 100:.0f}" if abs(fraction) >= 10 else f"{fraction * 100:.1f}"


def overhead_cell(result: OverheadResult) -> str:
    """``31.5% (30.5..32.7)``: the overhead and its interval, in percent, or ``412x (407x..418x)``
    from 10x up (:data:`~overheadbench.core.units.FACTOR_FROM`) or where the budget was written as a
    factor (the unit its budgets row prints); in count mode ``25.0% instr (exact)`` when every
    repeat agreed."""
    low, high = result.ci
    if result.pair.budget.as_factor(result.overhead):
        figure, low_text, high_text = (format_factor(1 + value) for value in (result.overhead, low, high))
        unit = ""
    else:
        figure, low_text, high_text = (percent(value) for value in (result.overhead, low, high))
        unit = "%"
    if result.method == Method.COUNTED:
        spread = "exact" if low == high else f"{low_text}..{high_text}"
        return f"{figure}{unit} instr ({spread})"
    text = f"{figure}{unit} ({low_text}..{high_text})"
    return text + ("*" if result.method == Method.WITHIN_PROCESS else "")


def detects_cell(result: OverheadResult) -> str:
    """``±2.1%``: the smallest change of framework / baseline this pair's interval could tell
    from zero; ``exact`` where every count agreed."""
    if result.method == Method.COUNTED and result.ci[0] == result.ci[1]:
        return "exact"
    return f"±{format_fraction(result.detectable)}"


def sides_cell(figure: Figure, show: Callable[..., str]) -> Callable[[OverheadResult], str]:
    """``1,234 -> 1,500 (+266)``: each side's median per call, and their difference (its
    range when the repeats disagreed)."""

    def cell(result: OverheadResult) -> str:
        counts = result.counts
        assert counts is not None
        middle, low, high = (show(value, signed=True) for value in counts.difference(figure))
        difference = middle if low == high else f"{low}..{high}"  # a range only where it shows
        baseline, framework = (show(counts.median(side, figure)) for side in (Side.BASELINE, Side.FRAMEWORK))
        return f"{baseline} -> {framework} ({difference})"

    return cell


def impact(result: OverheadResult) -> str:
    """``0.03% of 500 ms``: the absolute overhead against the real work per call, if declared."""
    if result.impact is None or result.pair.work_s is None:
        return ""
    return f"{100 * result.impact:.2g}% of {format_seconds(result.pair.work_s)}"


def _concurrent(result: OverheadResult) -> bool:
    return result.pair.concurrency > 1 or result.pair.levelled


def calls_cell(result: OverheadResult) -> str:
    """``1.23M -> 988k``: calls per second of both sides, all callers together."""

    def rate(seconds: float) -> str:
        if not seconds > 0:
            return "n/a"
        value = 1 / seconds
        return f"{value / 1e6:.2f}M" if value >= 1e6 else f"{value / 1e3:.0f}k" if value >= 1e4 else f"{value:,.0f}"

    return " -> ".join(rate(seconds) for seconds in (result.baseline_s, result.framework_s))


COLUMNS = (
    Column("callers", "callers", "Callers", lambda r: str(r.pair.concurrency), _concurrent),
    Column("baseline", "baseline", "Baseline/call", lambda r: format_seconds(r.baseline_s), _timed),
    Column("framework", "framework", "Framework/call", lambda r: format_seconds(r.framework_s), _timed),
    Column("overhead", "overhead (CI)", "Overhead (interval)", overhead_cell),
    Column("abs", "abs/call", "Abs/call", lambda r: format_seconds(r.abs_overhead_s, signed=True), _timed),
    Column("calls", "calls/s", "Calls/s", calls_cell, lambda r: _timed(r) and _concurrent(r)),
    Column("harness", "harness/call", "Harness/call", lambda r: format_seconds(r.harness_s), _timed),
    Column(
        "instructions",
        "instructions",
        "Instructions/call",
        sides_cell(Figure.INSTRUCTIONS, format_count),
        _counted(Figure.INSTRUCTIONS),
    ),
    Column(
        "peak",
        "peak memory/call",
        "Peak memory/call",
        sides_cell(Figure.PEAK_BYTES, format_bytes),
        _counted(Figure.PEAK_BYTES),
    ),
    Column(
        "kept",
        "blocks kept/call",
        "Blocks kept/call",
        sides_cell(Figure.KEPT_BLOCKS, format_count),
        _counted(Figure.KEPT_BLOCKS),
    ),
    Column("budget", "budget", "Budget", lambda r: r.pair.budget.describe(r.mode)),
    Column("detects", "detects", "Detects", detects_cell, lambda r: r.measured),
    Column("procs", "procs", "Processes", lambda r: str(len(r.samples)), _timed),
    Column("wall", "wall", "Wall", lambda r: wall_cell(r)),
    Column("impact", "impact", "Impact on real work", impact, lambda r: r.impact is not None),
)
COLUMN_KEYS = tuple(column.key for column in COLUMNS)
TERMINAL_COLUMNS = ("callers", "baseline", "framework", "overhead", "calls", "instructions", "budget")
"""The terminal table's columns by default (with the test and its status): what fits 120 columns
(each file's table shows those its pairs have)."""
TIMES_NOTE = "baseline, framework: time per call (median); overhead: framework / baseline - 1, with its interval"


def shown_columns(results: Sequence[OverheadResult], keys: Sequence[str] = COLUMN_KEYS) -> list[Column]:
    """The columns named by ``keys``, in that order, that some result has a figure for."""
    by_key = {column.key: column for column in COLUMNS}
    return [by_key[key] for key in keys if any(by_key[key].shown(r) for r in results)]


def column_cell(column: Column, result: OverheadResult) -> str:
    return column.cell(result) if column.shown(result) else ""


def table_rows(results: Sequence[OverheadResult], keys: Sequence[str] = TERMINAL_COLUMNS) -> list[tuple[str, ...]]:
    """The header row, then one row per measured pair: test, the chosen columns that apply, status."""
    columns = shown_columns(results, keys)
    rows = [("test", *(c.header for c in columns), "status")]
    rows += [(plain(r.nodeid), *(column_cell(c, r) for c in columns), STATUS_MARKS[r.overall]) for r in results]
    return rows


def wall_cell(result: OverheadResult) -> str:
    """The pair's wall time, and of it the replicas' start-up where it waited for one: ``41.2s (start 33.0s)``."""
    wall = format_seconds(result.wall_s)
    return f"{wall} (start {format_seconds(result.start_s)})" if result.start_s >= 0.05 else wall


def footnotes(results: Sequence[OverheadResult], keys: Sequence[str] = COLUMN_KEYS) -> list[str]:
    """What the count columns mean, when the report shows them (terminal and markdown alike)."""
    lines = []
    shown = {column.key for column in shown_columns(results, keys)}
    counters = sorted({r.counts.counter for r in results if r.mode.counted and r.counts is not None})
    if counters:
        lines.append(COUNT_FOOTNOTE.format(counter="; ".join(counter.counts for counter in counters)))
    if {"peak", "kept"} & shown:
        calls = [r.counts.allocation_calls for r in results if r.counts and r.counts.has(Figure.PEAK_BYTES)]
        span = f"{min(calls):,}" if min(calls) == max(calls) else f"{min(calls):,}..{max(calls):,}"
        lines.append(ALLOCATION_FOOTNOTE.format(calls=span))
    return lines


def environment_lines(env: dict[str, Any]) -> list[str]:
    """The environment as a two-column markdown table (Python, OS, CPU, commit, packages, date)."""
    return markdown_table([("", ""), *environment_rows(env)], code_first=False)


def environment_rows(env: dict[str, Any]) -> list[tuple[str, str]]:
    """The environment, what and which (Python, OS, CPU, commit, packages, date)."""
    machine, commit = env.get("machine_info") or {}, env.get("commit_info") or {}
    cpu = (machine.get("cpu") or {}).get("brand_raw") or machine.get("processor") or "?"
    packages = ", ".join(f"{name} {version}" for name, version in (env.get("packages") or {}).items() if version)
    rows = [
        ("Python", f"{machine.get('python_implementation', '?')} {machine.get('python_version', '?')}"),
        ("OS", f"{machine.get('system', '?')} {machine.get('release', '')} {machine.get('machine', '')}".strip()),
        ("CPU", f"{cpu} ({env.get('cpu_count', '?')} cores)"),
        (
            "Commit",
            f"{commit.get('id', '?')}{' (dirty)' if commit.get('dirty') else ''} on {commit.get('branch', '?')}",
        ),
        ("Packages", packages or "?"),
        ("Date", str(env.get("datetime", "?"))),
    ]
    return rows


def scaling_rows(results: Sequence[OverheadResult]) -> list[tuple[str, ...]]:
    """Tests measured at a list of concurrency levels: each level's overhead and interval, and
    the growth from the fewest callers to the most, in points (its half-width from both
    intervals, as independent estimates)."""
    tests: dict[str, dict[int, OverheadResult]] = {}
    for result in results:
        if result.pair.levelled and result.measured and not result.mode.counted:
            tests.setdefault(_unlevelled(result.nodeid, result.pair.concurrency), {})[result.pair.concurrency] = result
    levels = sorted({level for rows in tests.values() for level in rows})
    if not tests:
        return []
    header = ("test", *(f"c={level}" for level in levels), "growth (points)")
    rows = [header]
    for name, by_level in tests.items():
        cells = [overhead_cell(by_level[level]) if level in by_level else "" for level in levels]
        fewest, most = by_level[min(by_level)], by_level[max(by_level)]
        half = math.hypot(*(100 * (r.ci[1] - r.ci[0]) / 2 for r in (fewest, most)))
        growth = 100 * (most.overhead - fewest.overhead)
        rows.append((plain(name), *cells, f"{growth:+.1f} ± {half:.1f}" if len(by_level) > 1 else ""))
    return rows


def _unlevelled(nodeid: str, level: int) -> str:
    """The test's id without its ``c=N`` parameter (``t[retry-c=8]`` -> ``t[retry]``)."""
    stripped = re.sub(rf"(\[|-)c={level}(?=-|\])", lambda match: "[" if match.group(1) == "[" else "", nodeid)
    return stripped.replace("[-", "[").replace("[]", "")
