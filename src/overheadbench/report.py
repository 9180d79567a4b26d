"""The end-of-session table: formatting only, every figure read from the results."""

from __future__ import annotations

from typing import Sequence

from .comparison import Change
from .durations import format_fraction, format_seconds
from .results import OverheadResult
from .stats import WITHIN_PROCESS

HEADERS = ("test", "baseline/call", "framework/call", "overhead (CI)", "abs/call", "harness/call", "budget", "status")
STATUS_MARKS = {"pass": "PASS", "fail": "FAIL", "inconclusive": "INCONCLUSIVE"}


def table_rows(results: Sequence[OverheadResult]) -> list[tuple[str, ...]]:
    """One row per measured pair, in the order of ``HEADERS``."""
    rows = []
    for result in results:
        low, high = result.ci
        interval = f"{format_fraction(result.overhead)} ({format_fraction(low)}..{format_fraction(high)})"
        if result.method == WITHIN_PROCESS:
            interval += "*"
        rows.append((
            result.nodeid,
            format_seconds(result.baseline_s),
            format_seconds(result.framework_s),
            interval,
            format_seconds(result.abs_overhead_s, signed=True),
            format_seconds(result.harness_s),
            result.budget.describe(),
            STATUS_MARKS.get(result.verdict, result.verdict),
        ))
    return rows


def padded(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows as text lines with padded columns, a rule under the first (the headers)."""
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return lines


def render_comparison(changes: Sequence[Change], old_name: str) -> list[str]:
    """Old and new overhead per test; "~" marks a change that is not significant (p >= 0.05)."""
    rows = [("test", f"old ({old_name})", "new", "change", "p")]
    rows += [(c.nodeid, format_fraction(c.old), format_fraction(c.new),
              f"{'' if c.significant else '~ '}{c.delta_points:+.1f} points", f"{c.p_value:.3g}") for c in changes]
    return padded(rows)


def render_table(results: Sequence[OverheadResult]) -> list[str]:
    """The table as text lines, columns padded; a footnote explains ``*`` intervals."""
    lines = padded([HEADERS, *table_rows(results)])
    confidences = sorted({f"{r.confidence * 100:g}%" for r in results})
    lines.append(f"intervals: {', '.join(confidences)} confidence, over {max(len(r.samples) for r in results)} "
                 f"fresh process(es) per pair at most")
    if any(r.method == WITHIN_PROCESS for r in results):
        lines.append("* measured in one process only: the interval leaves out between-process "
                     "variance and is optimistic (use overhead_processes >= 3)")
    return lines
