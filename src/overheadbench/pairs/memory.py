"""A pair's memory, judged in both modes: its allocation figures as the verdict's sentence says them (peak
memory, blocks kept per call, with what a kept-blocks figure can resolve) and its allocation budgets' checks
(``max_alloc``, ``max_alloc_bytes``), each over the repeats' range.
"""

from __future__ import annotations

from ..core.units import format_bytes, format_count
from ..core.vocabulary import Figure, Side
from ..engine.checks import Check, Unit
from ..engine.counted_samples import CountSamples
from ..engine.counting import kept_resolution
from .pair import Budget


def allocation_figures(counts: CountSamples | None) -> str:
    """``; peak memory 96 B -> 352 B, blocks kept 0 -> 1 per call`` (empty without counts)."""
    if counts is None or not counts.has(Figure.PEAK_BYTES):
        return ""
    peak = [format_bytes(counts.median(side, Figure.PEAK_BYTES)) for side in (Side.BASELINE, Side.FRAMEWORK)]
    kept = [format_count(counts.median(side, Figure.KEPT_BLOCKS)) for side in (Side.BASELINE, Side.FRAMEWORK)]
    precision = _kept_precision(counts)
    return f"; peak memory {peak[0]} -> {peak[1]}, blocks kept {kept[0]} -> {kept[1]} per call ({precision})"


def _kept_precision(counts: CountSamples) -> str:
    """What a kept-blocks figure can tell: ``resolution 0.031/call over blocks of 4,096 calls``."""
    calls = counts.allocation_calls
    return f"resolution {format_count(kept_resolution(calls))}/call over blocks of {calls:,} call{'s' * (calls != 1)}"


def allocation_checks(counts: CountSamples | None, budget: Budget) -> list[Check]:
    """The allocation budgets (both modes): extra blocks kept, extra peak bytes, per call."""
    if counts is None or not counts.has(Figure.PEAK_BYTES):
        return []
    kept = (
        "max_alloc",
        "extra memory blocks kept per call",
        budget.max_alloc,
        Figure.KEPT_BLOCKS,
        Unit.SIGNED_COUNT,
        _kept_precision(counts),
    )
    peak = (
        "max_alloc_bytes",
        "extra peak memory per call",
        budget.max_alloc_bytes,
        Figure.PEAK_BYTES,
        Unit.SIGNED_BYTES,
        "",
    )
    return [
        Check(
            name,
            what,
            limit,
            *counts.difference(figure),
            unit,
            repeats_said(counts, figure),
            counted=True,
            precision=precision,
        )
        for name, what, limit, figure, unit, precision in (kept, peak)
        if limit is not None
    ]


def repeats_said(counts: CountSamples, figure: Figure) -> str:
    return f"range over {counts.repeats(figure)} repeats"
