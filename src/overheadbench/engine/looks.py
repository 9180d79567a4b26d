"""A gate read more than once: while a measurement goes on because its change (or its budget) is still
undecided, each reading is a chance of a false alarm, and the looks' schedule and level keep the error rate
honest (Bonferroni's bound). The one schedule of every stopping rule that reads an interval again: a gated
pair's processes, a stream pair's rounds.
"""

from __future__ import annotations

from .stats import CONFIDENCE

LOOKS = 3
"""At most this many looks per pair (see :class:`~overheadbench.pairs.across.Looks`)."""


def look_counts(first: int, most: int) -> list[int]:
    """Where a measurement that goes on while undecided is read: at ``first`` (processes, rounds),
    twice and four times as many, at most ``most`` and ``LOOKS`` looks. The one schedule of every
    stopping rule that reads an interval more than once (a gated pair, a stream pair's budgets)."""
    found = [first]
    while found[-1] * 2 <= most and len(found) < LOOKS:
        found.append(found[-1] * 2)
    if found[-1] < most and len(found) < LOOKS:
        found.append(most)
    return found


def looks_confidence(readings: int) -> float:
    """The confidence each of ``readings`` intervals is read at so that all of them together err
    at most as one read at ``CONFIDENCE`` would (Bonferroni's bound): looking again while
    undecided is optional stopping, honest only at this price."""
    return 1 - (1 - CONFIDENCE) / max(readings, 1)
