"""Memory sizes as users write them ("2KiB", "1.5 MB", 512), and sizes and per-call counts
as reports print them.

Every size inside overheadbench is a number of **bytes**; this module is the only place
that turns text into bytes and bytes (or counts of instructions and blocks) into text, as
:mod:`overheadbench.durations` does for seconds.
"""

from __future__ import annotations

import math
import re

from .units import with_unit

_UNITS_B = {"b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "kib": 1024, "mib": 1024**2, "gib": 1024**3}
_LADDER = (("B", 1), ("KiB", 1024), ("MiB", 1024**2), ("GiB", 1024**3))
_SIZE = re.compile(r"^\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([a-zA-Z]+)?\s*$")


class SizeError(ValueError):
    """A size that does not parse; the message says what was given and what is accepted."""


def parse_size(value: object) -> float:
    """Return ``value`` in bytes: a number (bytes) or a string with a unit, e.g. ``"2KiB"``, ``"1.5 MB"``.

    Negative sizes are allowed: a budget of extra bytes may demand that the framework
    path allocate less than the baseline.
    """
    if isinstance(value, bool):
        raise SizeError(f"{value!r} is not a size (use bytes or a string such as '2KiB')")
    if isinstance(value, (int, float)):
        size = float(value)
    elif isinstance(value, str):
        match = _SIZE.match(value)
        unit = (match.group(2) or "b").lower() if match else ""
        if not match or unit not in _UNITS_B:
            raise SizeError(
                f"{value!r} is not a size: write a number of bytes or a number with one of the units "
                f"B, KB, MB, GB, KiB, MiB, GiB (e.g. '2KiB')"
            )
        size = float(match.group(1)) * _UNITS_B[unit]
    else:
        raise SizeError(f"{value!r} is not a size (use bytes or a string such as '2KiB')")
    if not math.isfinite(size):
        raise SizeError(f"{value!r} is not a size: it must be finite")
    return size


def format_bytes(size: float, signed: bool = False) -> str:
    """Bytes with three significant figures in B, KiB, MiB or GiB (``"1.50 KiB"``, ``"+96 B"``)."""
    return with_unit(size, _LADDER, signed, whole=True)


def format_count(count: float, signed: bool = False) -> str:
    """A per-call count (instructions, blocks): whole numbers as ``1,234``, others to one decimal."""
    if math.isnan(count):
        return "n/a"
    text = f"{count:+,.0f}" if signed else f"{count:,.0f}"
    if abs(count - round(count)) > 1e-9 and abs(count) < 1000:
        text = f"{count:+,.1f}" if signed else f"{count:,.1f}"
    return text
