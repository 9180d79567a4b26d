"""``@pytest.mark.overhead(...)``: parsed and validated into a :class:`Budget`.

A bad marker must fail the test that carries it with a message naming the test and the
mistake, so everything a user can get wrong is checked here, before any measuring.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .durations import DurationError, format_fraction, format_seconds, parse_duration

MARKER_NAME = "overhead"
MARKER_HELP = (
    "overhead(max=None, max_abs=None, confidence=None): fail when the framework callable "
    "given to the `overhead` fixture is slower than the baseline by more than `max` "
    "(a fraction: 0.25 = 25%) or `max_abs` (seconds per call, or a string such as '2us')"
)
_KEYWORDS = ("max", "max_abs", "confidence", "group", "work")
"""``group`` names the report table the test appears in (as pytest-benchmark's ``group``);
``work`` is the typical real work per call (``"500ms"`` for an LLM call), against which the
report shows the absolute overhead's share."""


class MarkerError(Exception):
    """The marker's arguments are wrong; the message names the test and the fix."""


@dataclass(frozen=True)
class Budget:
    """What the framework path may cost on top of the baseline.

    ``max_overhead`` is a fraction of the baseline's time per call (0.25 = 25%; negative
    demands a speed-up); ``max_abs_s`` is extra seconds per call; ``confidence`` is the
    two-sided level of the interval the verdict is made on (None: the session default).
    ``work_s`` is not a limit: the real work a call does in production, for the report's
    "impact" column (the absolute overhead as a share of it).
    """

    max_overhead: float | None = None
    max_abs_s: float | None = None
    confidence: float | None = None
    work_s: float | None = None

    def describe(self) -> str:
        """The budget as the report prints it, e.g. ``≤25.0%, ≤2.00 µs``."""
        parts = []
        if self.max_overhead is not None:
            parts.append(f"≤{format_fraction(self.max_overhead)}")
        if self.max_abs_s is not None:
            parts.append(f"≤{format_seconds(self.max_abs_s)}/call")
        return ", ".join(parts)


def budget_from_marker(args: tuple[Any, ...], kwargs: dict[str, Any], nodeid: str) -> Budget:
    """Validate the marker's arguments and return the budget, or raise :class:`MarkerError`."""
    where = f"{nodeid}: @pytest.mark.overhead"
    if args:
        raise MarkerError(f"{where} takes keyword arguments only (e.g. max=0.25), got {args!r}")
    unknown = sorted(set(kwargs) - set(_KEYWORDS))
    if unknown:
        raise MarkerError(
            f"{where} got unknown argument(s) {', '.join(unknown)}; "
            f"it accepts {', '.join(_KEYWORDS)}"
        )
    if kwargs.get("max") is None and kwargs.get("max_abs") is None:
        raise MarkerError(f"{where} needs a budget: max=0.25 (relative) and/or max_abs='2us'")
    max_overhead = kwargs.get("max")
    if max_overhead is not None:
        if isinstance(max_overhead, bool) or not isinstance(max_overhead, (int, float)):
            raise MarkerError(
                f"{where}: max must be a number (a fraction: 0.25 = 25%), got {max_overhead!r}"
            )
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
    return Budget(max_overhead=max_overhead, max_abs_s=max_abs_s, confidence=confidence, work_s=work_s)


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
