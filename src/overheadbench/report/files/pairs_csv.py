"""The pairs as CSV: one row per pair, in seconds, fractions, counts and bytes per call, for a
spreadsheet (``overheadbench report --format csv``); nothing formatted."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ...core.tables import plain
from ...core.vocabulary import Side
from ...pairs.results import OverheadResult
from ..pairs import COUNTED_FIGURES

CSV_HEADERS = (
    "group",
    "test",
    "baseline_s",
    "framework_s",
    "overhead",
    "ci_low",
    "ci_high",
    "abs_overhead_s",
    "budget_max",
    "budget_max_abs_s",
    "verdict",
    "outcome",
    "processes",
    "mode",
    "concurrency",
    *(f"{side}_{figure}" for figure in COUNTED_FIGURES for side in (Side.BASELINE, Side.FRAMEWORK)),
)


def csv_rows(results: Sequence[OverheadResult]) -> list[tuple[Any, ...]]:
    """One row per pair, in seconds, fractions, counts and bytes per call (no formatting),
    headed by ``CSV_HEADERS``; a figure that was not measured is empty."""
    rows = [
        (
            plain(r.pair.group or ""),
            plain(r.nodeid),
            r.baseline_s,
            r.framework_s,
            r.overhead,
            r.ci[0],
            r.ci[1],
            r.abs_overhead_s,
            r.pair.budget.max_overhead,
            r.pair.budget.max_abs_s,
            r.verdict,
            r.overall,
            len(r.samples),
            r.mode,
            r.pair.concurrency,
            *_count_cells(r),
        )
        for r in results
    ]
    return [CSV_HEADERS, *(tuple("" if isinstance(v, float) and math.isnan(v) else v for v in row) for row in rows)]


def _count_cells(result: OverheadResult) -> list[float | str]:
    counts = result.counts
    return [
        counts.median(side, figure) if counts is not None and counts.has(figure) else ""
        for figure in COUNTED_FIGURES
        for side in (Side.BASELINE, Side.FRAMEWORK)
    ]
