"""``@pytest.mark.overhead(...)``: parsed and validated into a :class:`Budget`.

A bad marker must fail the test that carries it with a message naming the test and the
mistake, so everything a user can get wrong is checked here, before any measuring.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .durations import DurationError, format_fraction, format_seconds, parse_duration
from .sizes import SizeError, format_bytes, format_count, parse_size

MARKER_NAME = "overhead"
MARKER_HELP = (
    "overhead(max=None, max_abs=None, max_alloc=None, max_alloc_bytes=None, mode=None, confidence=None): "
    "fail when the framework callable given to the `overhead` fixture costs more than the baseline by more "
    "than `max` (a fraction: 0.25 = 25% more time, or more instructions with mode='count') or `max_abs` "
    "(seconds per call, or a string such as '2us'), or keeps more memory blocks (`max_alloc`) or needs more "
    "peak memory per call (`max_alloc_bytes`, bytes or a string such as '1KiB')"
)
TIME = "time"
COUNT = "count"
MODES = (TIME, COUNT)
_KEYWORDS = ("max", "max_abs", "max_alloc", "max_alloc_bytes", "mode", "confidence", "group", "work", "processes")
"""``group`` names the report table the test appears in (as pytest-benchmark's ``group``);
``work`` is the typical real work per call (``"500ms"`` for an LLM call), against which the
report shows the absolute overhead's share; ``mode`` overrides ``--overhead-mode`` for the test;
``processes`` overrides ``--overhead-processes`` (1: measured in the test's process only, for
a test whose fixtures hold something a second process cannot have at the same time)."""
MAX_PROCESSES = 32
"""Upper bound of every process count: each replica is a whole pytest session (~50-100 MB)
and sets up the pair's fixtures; beyond this the interval no longer narrows in any useful way."""
_BUDGETS = ("max", "max_abs", "max_alloc", "max_alloc_bytes")


class MarkerError(Exception):
    """The marker's arguments are wrong; the message names the test and the fix."""


@dataclass(frozen=True)
class Budget:
    """What the framework path may cost on top of the baseline.

    ``max_overhead`` is a fraction of the baseline's cost per call (0.25 = 25%; negative
    demands a speed-up): of its time, or of its instructions in count mode; ``max_abs_s``
    is extra seconds per call (a time budget: count mode cannot judge it); ``max_alloc`` is
    extra memory blocks kept per call and ``max_alloc_bytes`` extra peak bytes per call
    (both modes); ``confidence`` is the two-sided level of the interval the time verdict is
    made on (None: the session default). ``mode`` is "time", "count" or None (the session's).
    ``work_s`` is not a limit: the real work a call does in production, for the report's
    "impact" column (the absolute overhead as a share of it).
    """

    max_overhead: float | None = None
    max_abs_s: float | None = None
    confidence: float | None = None
    work_s: float | None = None
    max_alloc: float | None = None
    max_alloc_bytes: float | None = None
    mode: str | None = None
    processes: int | None = None
    """Not a limit: how many fresh processes measure the pair first (None: the session's)."""

    def describe(self, mode: str = TIME) -> str:
        """The budget as the report prints it, e.g. ``≤25.0%, ≤2.00 µs/call`` or ``≤25.0% instr``."""
        parts = []
        if self.max_overhead is not None:
            parts.append(f"≤{format_fraction(self.max_overhead)}" + (" instr" if mode == COUNT else ""))
        if self.max_abs_s is not None and mode == TIME:
            parts.append(f"≤{format_seconds(self.max_abs_s)}/call")
        if self.max_alloc is not None:
            parts.append(f"≤{format_count(self.max_alloc, signed=True)} blocks kept")
        if self.max_alloc_bytes is not None:
            parts.append(f"≤{format_bytes(self.max_alloc_bytes, signed=True)} peak")
        return ", ".join(parts)


def budget_from_marker(args: tuple[Any, ...], kwargs: dict[str, Any], nodeid: str) -> Budget:
    """Validate the marker's arguments and return the budget, or raise :class:`MarkerError`."""
    where = f"{nodeid}: @pytest.mark.overhead"
    if args:
        raise MarkerError(f"{where} takes keyword arguments only (e.g. max=0.25), got {args!r}")
    unknown = sorted(set(kwargs) - set(_KEYWORDS))
    if unknown:
        raise MarkerError(f"{where} got unknown argument(s) {', '.join(unknown)}; it accepts {', '.join(_KEYWORDS)}")
    if all(kwargs.get(key) is None for key in _BUDGETS):
        raise MarkerError(
            f"{where} needs a budget: max=0.25 (relative), max_abs='2us', max_alloc=0 or max_alloc_bytes='1KiB'"
        )
    mode = kwargs.get("mode")
    if mode is not None and mode not in MODES:
        raise MarkerError(f"{where}: mode must be 'time' or 'count', got {mode!r}")
    if mode == COUNT and all(kwargs.get(key) is None for key in _BUDGETS if key != "max_abs"):
        raise MarkerError(
            f"{where}: max_abs is a time budget, which mode='count' cannot judge; give max "
            f"(the instruction overhead), max_alloc or max_alloc_bytes, or drop mode='count'"
        )
    max_overhead = kwargs.get("max")
    if max_overhead is not None:
        if isinstance(max_overhead, bool) or not isinstance(max_overhead, (int, float)):
            raise MarkerError(f"{where}: max must be a number (a fraction: 0.25 = 25%), got {max_overhead!r}")
        if not math.isfinite(max_overhead) or max_overhead <= -1:
            raise MarkerError(f"{where}: max must be a finite fraction above -1, got {max_overhead!r}")
        max_overhead = float(max_overhead)
    max_abs_s = _duration(kwargs, "max_abs", where)
    confidence = kwargs.get("confidence")
    if confidence is not None:
        confidence = check_confidence(confidence, where)
    if kwargs.get("group") is not None and not isinstance(kwargs["group"], str):
        raise MarkerError(f"{where}: group must be a string, got {kwargs['group']!r}")
    work_s = _duration(kwargs, "work", where)
    if work_s is not None and work_s <= 0:
        raise MarkerError(f"{where}: work must be more than zero, got {kwargs['work']!r}")
    max_alloc = kwargs.get("max_alloc")
    if max_alloc is not None and (
        isinstance(max_alloc, bool) or not isinstance(max_alloc, (int, float)) or not math.isfinite(max_alloc)
    ):
        raise MarkerError(f"{where}: max_alloc must be a number of memory blocks per call (e.g. 0), got {max_alloc!r}")
    max_alloc_bytes = None
    if kwargs.get("max_alloc_bytes") is not None:
        try:
            max_alloc_bytes = parse_size(kwargs["max_alloc_bytes"])
        except SizeError as exc:
            raise MarkerError(f"{where}: max_alloc_bytes {exc}") from None
    processes = kwargs.get("processes")
    if processes is not None and (
        isinstance(processes, bool) or not isinstance(processes, int) or not 1 <= processes <= MAX_PROCESSES
    ):
        raise MarkerError(
            f"{where}: processes must be a whole number from 1 to {MAX_PROCESSES} (1 = measured in "
            f"this process only), got {processes!r}"
        )
    return Budget(
        max_overhead=max_overhead,
        max_abs_s=max_abs_s,
        confidence=confidence,
        work_s=work_s,
        max_alloc=None if max_alloc is None else float(max_alloc),
        max_alloc_bytes=max_alloc_bytes,
        mode=mode,
        processes=processes,
    )


def _duration(kwargs: dict[str, Any], key: str, where: str) -> float | None:
    """The marker's ``key`` as seconds (a number or a string such as "2us"), None if absent."""
    if kwargs.get(key) is None:
        return None
    try:
        return parse_duration(kwargs[key])
    except DurationError as exc:
        raise MarkerError(f"{where}: {key} {exc}") from None


def check_confidence(value: Any, where: str) -> float:
    """A confidence level is a number strictly between 0 and 1 (0.95, not 95)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise MarkerError(f"{where}: confidence must be a number between 0 and 1 (e.g. 0.95), got {value!r}")
    return float(value)
