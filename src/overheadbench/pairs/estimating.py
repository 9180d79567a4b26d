"""A pair's ratio and its interval from its processes' samples: the one estimate that the verdict,
the stopping rules and the clocks' comparison all read."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..engine.samples import ReplicaSamples
from ..engine.settings import Settings
from ..engine.stats import Estimate, combine, replica_ratio
from .comparing import Compared, Figure, session_sd
from .pair import Pair


def estimate(
    pair: Pair,
    replicas: list[ReplicaSamples],
    settings: Settings,
    session: bool = True,
    other: bool = False,
    past: Sequence[Compared] = (),
) -> Estimate:
    """The pair's ratio and its interval from the replicas' paired blocks (the harness's own
    cost taken off both sides first when ``subtract_harness``); ``session``: the interval
    carries the between-session term that no process of one session can see, learned from
    ``past`` (this machine's stored results of the pair) where it holds enough of this figure,
    else the prior (:func:`~overheadbench.pairs.comparing.session_sd`); the stopping rule reads
    the width more processes can narrow. ``other``: on the clock the pair is not judged on (its
    blocks' other reading; no stored run holds that clock's ratio: the prior)."""
    offset_ns = harness_ns(replicas) * replicas[0].calls_per_block if settings.subtract_harness and not other else 0.0
    figure = Figure(pair.nodeid, pair.mode, pair.concurrency, replicas[0].timer)
    history = () if other else past
    return combine(
        [replica_ratio(*_times(r, other), offset_ns, pair.confidence) for r in replicas],
        pair.confidence,
        (lambda process_sd: session_sd(history, figure, process_sd)) if session else None,
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
