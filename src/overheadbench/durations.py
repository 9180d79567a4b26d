"""Durations as users write them ("2us", "1.5ms", 0.002) and as reports print them.

Every duration inside overheadbench is a float number of **seconds**; this module is
the only place that turns text into seconds and seconds into text.
"""

from __future__ import annotations

import math
import re

from .units import with_unit

_UNITS_S = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
}
_LADDER = (("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0))
_DURATION = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(ns|us|µs|ms|s)?\s*$")


class DurationError(ValueError):
    """A duration that does not parse; the message says what was given and what is accepted."""


def parse_duration(value: object) -> float:
    """Return ``value`` in seconds.

    Accepts a non-negative int/float (seconds) or a string with an optional unit:
    ``"2us"``, ``"1.5ms"``, ``"250 ns"``, ``"0.5s"``, ``"0.002"`` (seconds).
    """
    if isinstance(value, bool):
        raise DurationError(f"{value!r} is not a duration (use seconds or a string such as '1.5ms')")
    if isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str):
        match = _DURATION.match(value)
        if not match:
            raise DurationError(
                f"{value!r} is not a duration: write a number of seconds or a number with "
                f"one of the units {', '.join(u for u in _UNITS_S if u != 'µs')} (e.g. '1.5ms')"
            )
        seconds = float(match.group(1)) * _UNITS_S[match.group(2) or "s"]
    else:
        raise DurationError(f"{value!r} is not a duration (use seconds or a string such as '1.5ms')")
    if not math.isfinite(seconds) or seconds < 0:
        raise DurationError(f"{value!r} is not a duration: it must be finite and not negative")
    return seconds


def format_seconds(seconds: float, signed: bool = False) -> str:
    """Format a duration with three significant figures in ns, µs, ms or s."""
    return with_unit(seconds, _LADDER, signed)


def format_fraction(fraction: float, signed: bool = False) -> str:
    """Format a fraction (0.312) as a percentage with one decimal ("31.2%")."""
    if math.isnan(fraction):
        return "n/a"
    return f"{fraction * 100:+.1f}%" if signed else f"{fraction * 100:.1f}%"
