"""A quantity printed in the unit that fits it, with three significant figures.

Seconds (ns..s) and bytes (B..GiB) are printed the same way; :mod:`overheadbench.durations`
and :mod:`overheadbench.sizes` each give their ladder of units.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def with_unit(value: float, ladder: Sequence[tuple[str, float]], signed: bool = False, whole: bool = False) -> str:
    """``value`` (in the ladder's base unit) in the first unit where it is under 999.5, else the
    last; ``signed`` adds "+" to positive values; ``whole`` prints whole numbers without decimals
    (``2 KiB``, not ``2.00 KiB``)."""
    if math.isnan(value):
        return "n/a"
    sign = ("+" if value >= 0 else "-") if signed else ("-" if value < 0 else "")
    magnitude = abs(value)
    unit, scale = ladder[-1]
    for candidate, candidate_scale in ladder[:-1]:
        if round(magnitude / candidate_scale, 6) < 999.5:
            unit, scale = candidate, candidate_scale
            break
    return f"{sign}{_three_figures(magnitude / scale, whole)} {unit}"


def _three_figures(value: float, whole: bool) -> str:
    if value >= 100 or (whole and value == int(value)):
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"
