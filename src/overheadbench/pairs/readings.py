"""A pair's reading in a stored run's history: its ratio's log with its processes' standard error,
the between-session spread its series leans on, its budget, and its link (its change over the base
tree where the run was linked)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..core.vocabulary import Role
from ..engine.readings import Reading, link_of
from ..engine.stats import SESSION_SD
from .comparing import reading
from .results import OverheadResult

COUNT_PRIOR_SD = 0.001
"""The between-session sd (of the log) a counted pair's series leans on (a time pair's is
:data:`~overheadbench.engine.stats.SESSION_SD`): counts are exact, but a 0.1% move is an
interpreter's, not the code's."""


def pair_readings(results: Sequence[OverheadResult], linked: str) -> list[Reading]:
    """The readings of a run's measured pairs (``linked``: the run's linked commit, empty: none)."""
    return [_pair_reading(r, linked) for r in results if r.measured and r.ratio > 0 and math.isfinite(r.ratio)]


def _pair_reading(result: OverheadResult, linked: str) -> Reading:
    estimate = reading(result)
    changes = [p.change for p in result.places if p.role is Role.BASE and p.change is not None] if linked else []
    figure = f"overhead ({result.mode.value}" + (f", {result.concurrency} callers)" if result.concurrency > 1 else ")")
    budget = result.pair.budget.max_overhead
    prior = COUNT_PRIOR_SD if result.mode.counted else SESSION_SD
    limit = None if budget is None else 1 + budget
    link, link_se = link_of([(c.old, c.new, c.se) for c in changes])
    return Reading(
        result.nodeid, figure, math.log(result.ratio), estimate.log_se, prior, limit, link=link, link_se=link_se
    )
