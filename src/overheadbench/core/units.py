"""Quantities as users write them and as reports print them: durations, sizes, counts, fractions.

Every duration inside overheadbench is a float number of **seconds** and every size a number
of **bytes**; this module is the only place that turns text into either, and either (or a
per-call count, or a fraction) into text with three significant figures.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence


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


_UNITS_S = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_SECOND_LADDER = (("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0))
_DURATION = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([a-zA-Zµ]+)?\s*$")


class DurationError(ValueError):
    """A duration that does not parse; the message says what was given and what is accepted."""


def parse_duration(value: object) -> float:
    """Return ``value`` in seconds.

    Accepts a non-negative int/float (seconds) or a string with an optional unit:
    ``"2us"``, ``"1.5ms"``, ``"250 ns"``, ``"0.5s"``, ``"0.002"`` (seconds).
    """
    seconds = _quantity(value, _DURATION, _UNITS_S, DurationError, ("duration", "seconds", "ns, us, ms, s", "1.5ms"))
    if seconds < 0:
        raise DurationError(f"{value!r} is not a duration: it must not be negative")
    return seconds


def format_seconds(seconds: float, signed: bool = False) -> str:
    """Format a duration with three significant figures in ns, µs, ms or s."""
    return with_unit(seconds, _SECOND_LADDER, signed)


def format_fraction(fraction: float, signed: bool = False) -> str:
    """Format a fraction (0.312) as a percentage with one decimal ("31.2%")."""
    if math.isnan(fraction):
        return "n/a"
    return f"{fraction * 100:+.1f}%" if signed else f"{fraction * 100:.1f}%"


FACTOR_FROM = 10.0
"""A ratio (framework / baseline) from this up reads as a factor (``412x``), below it as the
overhead in percent (``31.2%``): "41,337%" is a figure nobody reads, "414x" is one everybody does."""


def as_factor(overhead: float) -> bool:
    """Whether an overhead (ratio - 1) prints as a factor of the baseline."""
    return 1 + overhead >= FACTOR_FROM


def format_factor(ratio: float) -> str:
    """A ratio as a factor with three significant figures: ``5x``, ``10.4x``, ``412x``, ``1,006x``."""
    if not math.isfinite(ratio):
        return "n/a"
    return f"{ratio:,.0f}x" if abs(ratio) >= 100 else f"{ratio:.3g}x"


def format_overhead(overhead: float, factor: bool | None = None) -> str:
    """An overhead (ratio - 1) as people read it: ``31.2%``, or ``412x`` from ``FACTOR_FROM`` up
    (``factor`` forces the unit, so an interval prints in its estimate's)."""
    if as_factor(overhead) if factor is None else factor:
        return format_factor(1 + overhead)
    return format_fraction(overhead)


def format_overheads(first: float, second: float) -> tuple[str, str]:
    """Two overheads shown side by side (old and new): one unit for both, a factor if either
    reads as one."""
    factor = any(as_factor(overhead) for overhead in (first, second) if math.isfinite(overhead))
    return format_overhead(first, factor), format_overhead(second, factor)


class BudgetError(ValueError):
    """An overhead budget that does not parse; the message says what was given and what is accepted."""


_FACTOR = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*[xX]\s*$")
BUDGET_FORMS = "a fraction (0.25 = 25% more) or a factor written as a string ('500x' = at most 500 times the baseline)"


def parse_overhead_budget(value: object) -> tuple[float, bool]:
    """``max``: a fraction above -1 (0.25; a negative one demands a speed-up), or a factor of at
    least 1 as a string (``"500x"``). Returns the budget as a fraction (``"500x"``: 499) and
    whether it was written as a factor (the report shows it as written)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value) or value <= -1:
            raise BudgetError(f"{value!r} is not a budget: a fraction must be finite and above -1; give {BUDGET_FORMS}")
        return float(value), False
    match = _FACTOR.match(value) if isinstance(value, str) else None
    if match is None:
        raise BudgetError(f"{value!r} is not a budget: give {BUDGET_FORMS}")
    factor = float(match.group(1))
    if not math.isfinite(factor) or factor == 0:
        raise BudgetError(f"{value!r} is not a budget: a factor must be a finite number above 0; give {BUDGET_FORMS}")
    if factor < 1:
        raise BudgetError(
            f"{value!r} is a factor below 1: the framework at most {factor:g} times the baseline's cost, a speed-up. "
            f"If that is what you mean, write it as a fraction: max={factor - 1:g}"
        )
    return factor - 1, True


_UNITS_B = {"b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "kib": 1024, "mib": 1024**2, "gib": 1024**3}
_BYTE_LADDER = (("B", 1), ("KiB", 1024), ("MiB", 1024**2), ("GiB", 1024**3))
_SIZE = re.compile(r"^\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([a-zA-Z]+)?\s*$")


class SizeError(ValueError):
    """A size that does not parse; the message says what was given and what is accepted."""


def parse_size(value: object) -> float:
    """Return ``value`` in bytes: a number (bytes) or a string with a unit, e.g. ``"2KiB"``, ``"1.5 MB"``.

    Negative sizes are allowed: a budget of extra bytes may demand that the framework
    path allocate less than the baseline.
    """
    return _quantity(value, _SIZE, _UNITS_B, SizeError, ("size", "bytes", "B, KB, MB, GB, KiB, MiB, GiB", "2KiB"))


def _quantity(
    value: object,
    pattern: re.Pattern[str],
    units: Mapping[str, float],
    error: type[ValueError],
    words: tuple[str, str, str, str],
) -> float:
    """A number (in the base unit: the first of ``units``) or a string of a number and an
    optional unit, or ``error`` saying what was given and what is accepted; ``words`` are the
    quantity's name, its base unit's name, the units listed, and an example."""
    noun, base, listing, example = words
    match = pattern.match(value) if isinstance(value, str) else None
    unit = (match.group(2) or next(iter(units))).lower() if match else ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    elif match and unit in units:
        number = float(match.group(1)) * units[unit]
    elif isinstance(value, str):
        raise error(
            f"{value!r} is not a {noun}: write a number of {base} or a number with one of the units {listing} "
            f"(e.g. {example!r})"
        )
    else:
        raise error(f"{value!r} is not a {noun} (use {base} or a string such as {example!r})")
    if not math.isfinite(number):
        raise error(f"{value!r} is not a {noun}: it must be finite")
    return number


def format_bytes(size: float, signed: bool = False) -> str:
    """Bytes with three significant figures in B, KiB, MiB or GiB (``"1.50 KiB"``, ``"+96 B"``)."""
    return with_unit(size, _BYTE_LADDER, signed, whole=True)


def format_count(count: float, signed: bool = False) -> str:
    """A per-call count (instructions, blocks): whole numbers as ``1,234``, others to one decimal,
    or two significant digits below one (0.031 blocks kept per call)."""
    if math.isnan(count):
        return "n/a"
    sign = "+" if signed else ""
    if abs(count - round(count)) <= 1e-9 or abs(count) >= 1000:
        return f"{count:{sign},.0f}"
    if abs(count) < 1:
        return f"{count:{sign}.2g}"
    return f"{count:{sign},.1f}"
