"""A pair's ratio and its interval from its processes' samples: the one estimate that the verdict,
the stopping rules and the clocks' comparison all read."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..engine.samples import ReplicaSamples, Timer
from ..engine.settings import Settings
from ..engine.stats import Estimate, SessionRule, combine, prior_session, replica_ratio
from .pair import Pair

Between = Callable[[Timer], SessionRule]
"""A pair's between-session rule on the clock it was read on (a stored history is of one clock):
:func:`~overheadbench.pairs.comparing.between_sessions`."""


def estimate(
    pair: Pair,
    replicas: list[ReplicaSamples],
    settings: Settings,
    session: bool = True,
    other: bool = False,
    between: Between | None = None,
) -> Estimate:
    """The pair's ratio and its interval from the replicas' paired blocks (the harness's own
    cost taken off both sides first when ``subtract_harness``); ``session``: the interval
    carries the between-session term that no process of one session can see: ``between``'s
    for the pair's clock (learned from this machine's stored runs of the pair,
    :func:`~overheadbench.pairs.comparing.between_sessions`), else the prior; the stopping rule
    reads the width more processes can narrow. ``other``: on the clock the pair is not judged on
    (its blocks' other reading; no stored run holds that clock's ratio: the prior)."""
    offset_ns = harness_ns(replicas) * replicas[0].calls_per_block if settings.subtract_harness and not other else 0.0
    rule = prior_session if between is None or other else between(replicas[0].timer)
    return combine(
        [replica_ratio(*_times(r, other), offset_ns, pair.confidence) for r in replicas],
        pair.confidence,
        rule if session else None,
    )


def _times(samples: ReplicaSamples, other: bool) -> tuple[list[int], list[int]]:
    """A process's blocks on the pair's clock, or on the other one."""
    if other:
        return samples.other_baseline_ns, samples.other_framework_ns
    return samples.estimated_pairs()


def other_clock(pair: Pair, replicas: list[ReplicaSamples], settings: Settings) -> tuple[float, float, float]:
    """The ratio and its interval on the other clock, where every process read it."""
    if not all(r.other_baseline_ns for r in replicas):
        return (math.nan, math.nan, math.nan)
    found = estimate(pair, replicas, settings, other=True)
    return found.ratio, found.low, found.high


def harness_ns(replicas: list[ReplicaSamples]) -> float:
    """The measuring loop's own cost per call, the median over the processes."""
    return float(np.median([r.harness_ns_per_call for r in replicas]))
