"""The pairs' end-of-session table, markdown and CSV: every figure read from the results, save
the concurrency table's growth from fewest to most callers, combined here from two levels'
intervals (the one figure no single result holds)."""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..core.tables import TERMINAL_WIDTH, by_file, laid_out, plain
from ..core.units import (
    as_factor,
    format_bytes,
    format_count,
    format_factor,
    format_fraction,
    format_overhead,
    format_seconds,
)
from ..core.vocabulary import Counter
from ..engine.checks import Status, Unit
from ..engine.counting import KEPT_SLACK_BLOCKS
from ..engine.samples import Figure, Side, Timer
from ..engine.settings import Mode
from ..engine.stats import SESSION_SD, Method
from ..pairs.results import OverheadResult
from ..pairs.verdict import overhead_units

STATUS_MARKS = {
    Status.PASS: "PASS",
    Status.FAIL: "FAIL",
    Status.INCONCLUSIVE: "INCONCLUSIVE",
    Status.UNJUDGED: "NOT JUDGED",
    Status.UNMEASURED: "NOT MEASURED",
}
COUNT_FOOTNOTE = (
    "count mode: the overhead is in executed {counter} per call, median over the repeats; "
    '"exact" = every repeat gave the same count, a..b = their range (the code is not deterministic)'
)
COUNTERS = {
    Counter.CALLGRIND: "machine instructions (callgrind: compiled code included; waiting, I/O and sleep not)",
    Counter.BYTECODE: "bytecode instructions (Python only: work in C or Rust extensions is not counted)",
}
"""What each counter counts, and what it cannot see."""
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
    return result.mode == Mode.TIME


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
    if overhead_units(result.overhead, result.pair.budget)[0] == Unit.FACTOR:
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

    def rate(value: float) -> str:
        if math.isnan(value):
            return "n/a"
        return f"{value / 1e6:.2f}M" if value >= 1e6 else f"{value / 1e3:.0f}k" if value >= 1e4 else f"{value:,.0f}"

    return " -> ".join(rate(value) for value in result.calls_per_s)


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
    rows += [(plain(r.nodeid), *(column_cell(c, r) for c in columns), STATUS_MARKS[r.verdict]) for r in results]
    return rows


def render_table(
    results: Sequence[OverheadResult], keys: Sequence[str] = TERMINAL_COLUMNS, width: int = TERMINAL_WIDTH
) -> list[str]:
    """The table as text lines, one table per file (each with the columns its pairs have), fitting
    ``width``, with footnotes for what needs explaining."""
    lines: list[str] = []
    for indexes in by_file([r.nodeid for r in results]).values():
        lines += [*([""] if lines else []), *laid_out(table_rows([results[i] for i in indexes], keys), width)]
    shown = {column.key for column in shown_columns(results, keys)}
    notes = [*([TIMES_NOTE] if {"baseline", "framework"} & shown else []), *interval_notes(results)]
    notes += footnotes(results, keys)
    if any(r.method == Method.WITHIN_PROCESS for r in results):
        notes.append(
            "* measured in one process only: the interval leaves out between-process "
            "variance and is optimistic (use overhead_processes >= 3)"
        )
    scaling = scaling_rows(results)
    if scaling:
        lines += ["", "overhead by concurrent callers:", *laid_out(scaling, width)]
    return lines + [wrapped for note in notes for wrapped in textwrap.wrap(note, width)]


def wall_cell(result: OverheadResult) -> str:
    """The pair's wall time, and of it the replicas' start-up where it waited for one: ``41.2s (start 33.0s)``."""
    wall = format_seconds(result.wall_s)
    return f"{wall} (start {format_seconds(result.start_s)})" if result.start_s >= 0.05 else wall


def interval_notes(results: Sequence[OverheadResult]) -> list[str]:
    """What the time intervals account for, as measured: their confidence, the processes and block
    pairs behind them, the spread between processes seen, the between-session prior, the clocks."""
    timed = [r for r in results if r.mode == Mode.TIME and r.measured]
    if not timed:
        return []
    confidences = sorted({f"{r.pair.confidence * 100:g}%" for r in timed})
    most = max(len(r.samples) for r in timed)
    pairs = sorted(len(s.baseline_ns) for r in timed for s in r.samples if s.baseline_ns)
    blocks = "" if not pairs else f" of {_span(pairs[0], pairs[-1], '{:,}')} block pairs each"
    notes = [f"intervals: {', '.join(confidences)} confidence, over {most} fresh process(es) per pair at most{blocks}"]
    spreads = sorted(r.between_sd for r in timed if math.isfinite(r.between_sd))
    if most > 1 and spreads:
        notes[0] += (
            f"; each process weighed by its own precision and the spread between processes (measured: "
            f"{_span(spreads[0], spreads[-1], '{:.1%}')} sd), plus {SESSION_SD:.1%} sd between sessions "
            f"(this machine kind's, docs/measurement.md)"
        )
    elif most > 1:  # a run stored before the spread was recorded
        notes[0] += f", with the spread between sessions ({SESSION_SD:.1%} sd)"
    if disagreed := sum(r.disagree for r in timed):
        notes.append(
            f"{disagreed} of {len(timed)} pair(s) had processes that disagreed beyond their own precision "
            "(code layout, a busy machine): their spread is in the interval"
        )
    notes += clock_notes(timed)
    return notes


def _span(low: float, high: float, shown: str) -> str:
    return shown.format(low) if low == high else f"{shown.format(low)}..{shown.format(high)}"


def clock_notes(timed: Sequence[OverheadResult]) -> list[str]:
    """Which clock the pairs were read on, and where the other one told another story."""
    on_cpu = [r for r in timed if r.timer == Timer.CPU]
    notes = []
    if on_cpu:
        rest = (
            "; the rest on the wall clock (they wait, or have concurrent callers)" if len(on_cpu) < len(timed) else ""
        )
        notes.append(
            f"clock: {len(on_cpu)} of {len(timed)} pair(s) never waited and were read on their thread's CPU time "
            f"(a busy machine's time slices do not bias it){rest}"
        )
    for r in timed:
        if r.clocks_disagree:
            ratio, low, high = r.other_ratio
            other = "wall clock" if r.timer == Timer.CPU else "CPU time"
            shown = [format_overhead(value - 1, as_factor(ratio - 1)) for value in (ratio, low, high)]
            notes.append(
                f"{plain(r.nodeid)}: the {other} read {shown[0]} ({shown[1]}..{shown[2]}), outside the "
                f"{r.timer} clock's interval (a busy machine charges its neighbours' time slices to the longer block)"
            )
    return notes


def footnotes(results: Sequence[OverheadResult], keys: Sequence[str] = COLUMN_KEYS) -> list[str]:
    """What the count columns mean, when the report shows them (terminal and markdown alike)."""
    lines = []
    shown = {column.key for column in shown_columns(results, keys)}
    counters = sorted({r.counts.counter for r in results if r.mode != Mode.TIME and r.counts is not None})
    if counters:
        lines.append(COUNT_FOOTNOTE.format(counter="; ".join(COUNTERS[counter] for counter in counters)))
    if {"peak", "kept"} & shown:
        calls = [r.counts.allocation_calls for r in results if r.counts and r.counts.has(Figure.PEAK_BYTES)]
        span = f"{min(calls):,}" if min(calls) == max(calls) else f"{min(calls):,}..{max(calls):,}"
        lines.append(ALLOCATION_FOOTNOTE.format(calls=span))
    return lines


def scaling_rows(results: Sequence[OverheadResult]) -> list[tuple[str, ...]]:
    """Tests measured at a list of concurrency levels: each level's overhead and interval, and
    the growth from the fewest callers to the most, in points (its half-width from both
    intervals, as independent estimates)."""
    tests: dict[str, dict[int, OverheadResult]] = {}
    for result in results:
        if result.pair.levelled and result.measured and result.mode == Mode.TIME:
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
