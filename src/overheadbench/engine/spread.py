"""A series' spread between sessions: how far its stored runs' values move from session to session
beyond their own intervals, read from their successive differences (:func:`spread`), robustly where
one far run must not move it. The one reading of it a session's interval, a comparison with a stored
run and ``history`` share (:mod:`overheadbench.engine.shifts`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

PRIOR_RUNS = 4
"""How many differences the project's measured between-session spread counts as, beside a series' own."""
MEDIAN_ABSOLUTE = NormalDist().inv_cdf(0.75)
"""A standard normal's median absolute value (0.6745): a robust spread's scale."""


KEPT_DIFFERENCES = 0.9
"""The share of successive differences, the smallest, that the between-session spread is read
from before the steps are known: a step makes one large difference, which the largest tenth (at
least one) leaves out. Once the search has taken the steps out, every difference within a segment counts."""


def between_sd(y: np.ndarray, own: np.ndarray, prior_sd: float) -> float:
    """The between-session sd of a series' log values from all its successive differences (:func:`spread`)."""
    return spread(np.diff(y), own, prior_sd)[0]


def spread(
    differences: np.ndarray, own: np.ndarray, prior_sd: float, robust: bool = False, trimmed: bool = True
) -> tuple[float, float]:
    """The between-session sd of a series from its successive log ``differences`` (the smallest
    :data:`KEPT_DIFFERENCES` of them, or all where not ``trimmed``; each holds two runs' variance),
    less the runs' ``own`` variance, pooled with ``prior_sd`` as if it were :data:`PRIOR_RUNS` more differences (a short
    series leans on the project's measured spread, a long one on its own; a NaN prior: none), and
    its degrees of freedom, the differences kept; fewer than two differences: the prior, taken as known.
    ``robust``: from the differences' median instead, which one run far from the rest (two large
    differences of six: a pipeline read 32x in one session of ten, 550-640x in the rest) cannot move:
    the scale values are winsorised at, before the steps are known."""
    if differences.size < 2:
        return prior_sd, math.inf
    ordered = np.sort(np.abs(differences))
    kept = max(1, math.floor(KEPT_DIFFERENCES * ordered.size)) if trimmed else ordered.size
    if robust:
        rms = float(np.median(ordered)) / MEDIAN_ABSOLUTE
    else:
        rms = math.sqrt(float(np.mean(ordered[:kept] ** 2))) / _trimmed_rms(kept / ordered.size)
    own_sd2 = max(rms**2 / 2 - float(np.median(own)), 0.0)
    if not math.isfinite(prior_sd):
        return math.sqrt(own_sd2), float(kept)
    return math.sqrt((kept * own_sd2 + PRIOR_RUNS * prior_sd**2) / (kept + PRIOR_RUNS)), float(kept)


def _trimmed_rms(share: float) -> float:
    """The root mean square of a standard normal's smallest ``share`` in absolute value."""
    if share >= 1.0:
        return 1.0
    q = NormalDist().inv_cdf((1 + share) / 2)
    return math.sqrt(1 - 2 * q * NormalDist().pdf(q) / share)


@dataclass(frozen=True)
class SessionTerm:
    """The spread between sessions a change between separate runs carries: the standard
    deviation of the figure's log on this machine, and how many stored runs it was learned from
    (0: the prior, before there are ``MIN_HISTORY``)."""

    sd: float
    runs: int = 0
    clocks: str = ""
    """``wall->cpu`` where the two runs read the figure on different clocks (a busy machine charges a
    wall-clock block with its neighbours' time slices): a change the clocks may make, not the code."""

    def describe(self) -> str:
        """``1.2% sd (8 runs)`` or ``3.1% sd (prior)``: what a reader is told the interval carries."""
        clocks = f"; clocks {self.clocks}" if self.clocks else ""
        return f"{self.sd:.1%} sd ({f'{self.runs} runs' if self.runs else 'prior'}){clocks}"
