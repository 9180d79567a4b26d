"""A gate read more than once: while a measurement goes on because its change (or its budget) is still
undecided, each reading is a chance of a false alarm, and the looks' schedule and level keep the error rate
honest (Bonferroni's bound). The one schedule of every stopping rule that reads an interval again: a gated
pair's processes, a stream pair's rounds.
"""

from __future__ import annotations

from dataclasses import dataclass

from .stats import CONFIDENCE


@dataclass(frozen=True)
class Looks:
    """A gate read while a pair's rounds go on (``--overhead-against``, ``--overhead-env``): the
    rounds continue while a change is unknown at the threshold, so the gate looks at it more
    than once, and each look is a chance of a false alarm.

    The error rate stays honest by Bonferroni's bound, over the looks and over the session's
    gated pairs: each look reads an interval at ``1 - (1 - CONFIDENCE) / (looks x pairs)``, so
    a pair that did not move reads "regressed" (or "improved") with probability at most
    ``(1 - CONFIDENCE) / 2 / pairs`` whatever the looks found, and a session of ``pairs``
    identical pairs at most ``(1 - CONFIDENCE) / 2`` in all (the expected number of false alarms
    per suite). A change well inside the threshold is rarer still: the bound is for a change
    sitting right at it. The looks come at ``processes``, twice and four times as many
    (at most ``MAX_PROCESSES``): a few looks, far apart, keep the bound close to the truth.
    """

    threshold: float
    """Percent (the gate's ``--overhead-fail-above`` for pairs)."""
    pairs: int = 1
    """The session's gated pairs: the family whose false alarms are bounded together."""

    def counts(self, processes: int, most: int) -> list[int]:
        """The process counts (per place) at which the gate looks."""
        return look_counts(processes, most)

    def confidence(self, processes: int, most: int) -> float:
        """Of every look's interval (and the change the result keeps)."""
        return looks_confidence(len(self.counts(processes, most)) * max(self.pairs, 1))


LOOKS = 3
"""At most this many looks per pair (see :class:`Looks`)."""


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
