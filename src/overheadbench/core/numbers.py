"""Numbers as users give them, and the ranges a setting may take: parsed and checked once.

An option, the ini file, a marker keyword, ``compare(concurrency=...)`` and a transport
budget each read numbers; they used two parsers and checked the same range twice, in two
wordings (``--overhead-processes=0``: "must be between 1 and 32"; ``processes=0`` in a marker:
"must be a whole number from 1 to 32"). Each check here raises ``ValueError`` with the one
wording; the caller adds where the value came from (the option, the test and its keyword).
"""

from __future__ import annotations

import math

from .vocabulary import MAX_CONCURRENCY, MAX_PROCESSES


def parse_number(value: object, minimum: float | None = None, text: bool = True) -> float:
    """A finite number: an int or a float (never a bool) or, where ``text``, a string of one
    (``"1000"``, ``"1e3"``, ``"1,000"``, ``"1_000"``), at least ``minimum`` where given."""
    number = math.nan
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str) and text:
        try:
            number = float(value.replace(",", "").replace("_", ""))
        except ValueError:
            raise ValueError(f"{value!r} is not a number") from None
    else:
        raise ValueError(f"{value!r} is not a number")
    if minimum is not None and not (math.isfinite(number) and number >= minimum):
        raise ValueError(f"{value!r} is not a number >= {minimum:g}")
    if not math.isfinite(number):
        raise ValueError(f"{value!r} is not a finite number")
    return number


def check_processes(value: object) -> int:
    """A number of processes (the option, the ini file, a marker's ``processes``)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PROCESSES:
        raise ValueError(f"must be a whole number from 1 to {MAX_PROCESSES} (1 = measured in this process only)")
    return value


def check_fraction(value: object) -> float:
    """A confidence level (the option, the ini file, a marker's ``confidence``): strictly
    between 0 and 1 (0.95, not 95)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise ValueError("must be a number between 0 and 1 (e.g. 0.95)")
    return float(value)


def callers(value: object) -> bool:
    """Whether ``value`` is a number of concurrent callers (a marker's level, ``compare``'s
    ``concurrency``): whole, from 1 to ``MAX_CONCURRENCY``; each says how to give it right."""
    return not isinstance(value, bool) and isinstance(value, int) and 1 <= value <= MAX_CONCURRENCY
