"""The change table, kind-neutral: each change (a pair's overhead, a transport figure) on both
sides, the change with its interval and its outcome at the gate's threshold
(:mod:`overheadbench.engine.changes`). Each kind shows its own changes as :class:`Shown` rows
(:mod:`overheadbench.report.pair_changes`, :mod:`overheadbench.report.transport`)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from ..core.tables import TERMINAL_WIDTH, laid_out, plain
from ..core.thresholds import UNGATED, Thresholds
from ..core.vocabulary import OVERHEAD
from ..engine.changes import Change


@dataclass(frozen=True)
class Shown:
    """One change as the change table prints it: of which ``figure`` of which ``test``, and old
    and new as that figure prints them."""

    test: str
    figure: str
    old: str
    new: str
    change: Change

    @property
    def pair(self) -> bool:
        """A pair's overhead (else a transport figure)."""
        return self.figure == OVERHEAD


"""A pair's figure in the change table (the column is left out when every row is a pair)."""

SESSION_TERM = (
    "each interval adds twice this machine's spread between sessions (between "
    "sessions: learned from its stored runs of the test, or before there are 3 a prior measured under load; "
    "docs/baselines.md). One session measuring both sides (--overhead-against, --overhead-env) needs no such term."
)
"""What a comparison of separate sessions carries, said under the terminal's table and the markdown's alike."""
SEPARATE_SESSIONS = f"separate sessions, not paired: {SESSION_TERM}"

CLOCKS_DIFFER = (
    "clocks wall->cpu (or cpu->wall): the two runs read the test on different clocks; on a busy machine the wall "
    "clock charges a block with its neighbours' time slices, so such a change may be the clocks', not the code's "
    "(docs/measurement.md)"
)


def render_changes(
    changes: Sequence[Shown],
    reference: str,
    thresholds: Thresholds = UNGATED,
    sides: Sequence[str] = ("old", "new"),
) -> list[str]:
    """The one change table, pairs and transport figures alike: each figure on both sides, the
    change (head over base, in percent of the figure: of framework / baseline for a pair) with
    its 95% interval, and what it means at its kind's threshold (percent); "~" marks a change whose
    interval contains zero. ``sides``: what the two columns are called (old/new, base/head)."""
    figures = any(not c.pair for c in changes)
    limits = sorted({limit for c in changes if (limit := thresholds.pick(c.pair)) is not None})
    outcome = ("outcome",) if limits else ()
    separate = any(c.change.between is not None for c in changes)
    between = ("between sessions",) if separate else ()
    old = f"{sides[0]} ({plain(reference)})" if reference else sides[0]
    levels = sorted({c.change.confidence for c in changes if " at " in c.change.evidence})
    interval = "interval" if levels else "95% CI"  # a row read at another level says it
    header = ("test", *(("figure",) if figures else ()), old, sides[1], "change", interval, *between, "detects")
    rows = [(*header, *outcome)]
    rows += [
        (
            plain(c.test),
            *((plain(c.figure),) if figures else ()),
            c.old,
            c.new,
            c.change.moved(),
            c.change.evidence,
            *((c.change.between.describe() if c.change.between else "",) if separate else ()),
            detects(c.change),
            *((_outcome(c, thresholds),) if limits else ()),
        )
        for c in changes
    ]
    gate = f"; outcome at ±{' / '.join(f'{limit:g}%' for limit in limits)}: see docs/ci.md" if limits else ""
    marks = " or ".join(f"'at {level:.2%}'" for level in levels)
    looked = (
        f"; an interval marked {marks} is read at that level (95% otherwise): the gate looked again while a change "
        "was unknown, or gated a test's figures together, each at a stricter level"
        if levels
        else ""
    )
    note = (
        f"change: {sides[1]} over {sides[0]}, in percent of the figure (of framework / baseline for an overhead: a "
        f"230% pair and a 20% pair alike); ~: not significant (the interval contains zero); detects: the smallest "
        f"change this comparison could tell from zero{looked}{gate}"
    )
    heading = textwrap.wrap(SEPARATE_SESSIONS, TERMINAL_WIDTH) if separate else []
    if any(c.change.between and c.change.between.clocks for c in changes):
        heading += textwrap.wrap(CLOCKS_DIFFER, TERMINAL_WIDTH)
    return [*heading, *laid_out(rows), *textwrap.wrap(note, TERMINAL_WIDTH)]


def _outcome(shown: Shown, thresholds: Thresholds) -> str:
    limit = thresholds.pick(shown.pair)
    return "" if limit is None else shown.change.finding(limit).value


def detects(change: Change) -> str:
    """``±2.1%``: the smallest change the comparison could tell from zero ("exact" for counts)."""
    return "exact" if change.exact else f"±{change.detectable:.1f}%"
