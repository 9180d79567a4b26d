"""What a change means against a threshold: regressed, improved, same or unknown (:class:`Finding`), read off
its interval's ends in the figure's bad direction (:func:`finding_of`); and the smallest change an interval can
tell from zero (:func:`detectable`). The change itself is :mod:`.changes`'s.
"""

from __future__ import annotations

import math

from ..core.vocabulary import Word


class Finding(Word):
    """What a change means against the threshold."""

    REGRESSED = "regressed"
    IMPROVED = "improved"
    SAME = "same"
    UNKNOWN = "unknown"

    @property
    def unsettled(self) -> bool:
        """Not cleared by the gate: regressed, or unknown at the threshold (what is explained, what a
        bisection cannot call good). Whether that fails or warns is the gate's
        (:meth:`.changes.Gate.fails`, :meth:`.changes.Gate.warns`)."""
        return self in (Finding.REGRESSED, Finding.UNKNOWN)


def finding_of(worse: tuple[float, float], threshold: float) -> Finding:
    """An interval's finding at ``threshold`` percent, its ends in the figure's bad direction."""
    low, high = worse
    if low > threshold:
        return Finding.REGRESSED
    if high < -threshold:
        return Finding.IMPROVED
    if -threshold <= low and high <= threshold:
        return Finding.SAME
    return Finding.UNKNOWN


def detectable(low: float, high: float) -> float:
    """The smallest change (percent) an interval of a change (``low..high``, fractions: -0.05..0.12)
    could tell from zero: its half-width on the log scale it is read on."""
    if not (math.isfinite(low) and math.isfinite(high)) or low <= -1:
        return math.nan
    return 100 * (math.sqrt((1 + high) / (1 + low)) - 1)
