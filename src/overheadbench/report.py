"""The end-of-session table: formatting only, every figure read from the results."""

from __future__ import annotations

from typing import Sequence

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


def render_table(results: Sequence[OverheadResult]) -> list[str]:
    """The table as text lines, columns padded; a footnote explains ``*`` intervals."""
    rows = [HEADERS, *table_rows(results)]
    widths = [max(len(row[column]) for row in rows) for column in range(len(HEADERS))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    confidences = sorted({f"{r.confidence * 100:g}%" for r in results})
    lines.append(f"intervals: {', '.join(confidences)} confidence, over {max(len(r.samples) for r in results)} "
                 f"fresh process(es) per pair at most")
    if any(r.method == WITHIN_PROCESS for r in results):
        lines.append("* measured in one process only: the interval leaves out between-process "
                     "variance and is optimistic (use overhead_processes >= 3)")
    return lines
