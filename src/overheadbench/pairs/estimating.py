"""A pair's ratio and its interval from its processes' samples: the one estimate that the verdict,
the stopping rules and the clocks' comparison all read."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..core.units import as_factor, format_overhead
from ..engine.process_ratio import mean_ratio, replica_ratio
from ..engine.samples import ReplicaSamples, Timer
from ..engine.settings import Settings
from ..engine.stats import Estimate, SessionRule, combine, prior_session
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
    every: bool = False,
    mean: bool = False,
) -> Estimate:
    """The pair's ratio and its interval from the replicas' paired blocks (the harness's own
    cost taken off both sides first when ``subtract_harness``, for each process's own block size: a
    process whose calls got faster than calibration's sized its blocks anew,
    :func:`~overheadbench.engine.sampling.outgrown`); ``session``: the interval
    carries the between-session term that no process of one session can see: ``between``'s
    for the pair's clock (learned from this machine's stored runs of the pair,
    :func:`~overheadbench.pairs.comparing.between_sessions`), else the prior; the stopping rule
    reads the width more processes can narrow. ``other``: on the clock the pair is not judged on
    (its blocks' other reading; no stored run holds that clock's ratio: the prior); ``every``: from
    every block pair, disturbed or not; ``mean``: each process's ratio of its blocks' means rather
    than its median pair ratio (:func:`~overheadbench.engine.process_ratio.mean_ratio`)."""
    loop_ns = harness_ns(replicas) if settings.subtract_harness and not other else 0.0
    rule = prior_session if between is None or other else between(replicas[0].timer)
    per_process = mean_ratio if mean else replica_ratio
    return combine(
        [per_process(*_times(r, other, every), loop_ns * r.calls_per_block, pair.confidence) for r in replicas],
        pair.confidence,
        rule if session else None,
    )


def _times(samples: ReplicaSamples, other: bool, every: bool = False) -> tuple[list[int], list[int]]:
    """A process's blocks on the pair's clock (``every``: all of them, disturbed or not), or on the other one."""
    if other:
        return samples.other_baseline_ns, samples.other_framework_ns
    return (samples.baseline_ns, samples.framework_ns) if every else samples.estimated_pairs()


@dataclass(frozen=True)
class Judged:
    """The interval a pair's budgets are judged on (of the ratio), and why it spans more than the
    estimate's own (empty when it does not)."""

    low: float
    high: float
    widened: str = ""


def judged_interval(pair: Pair, replicas: list[ReplicaSamples], settings: Settings, found: Estimate) -> Judged:
    """The estimate's interval, joined with every other reading of the same blocks that misses it:
    all the pairs where the figure was read from the undisturbed ones, the other clock, and the
    ratio of the blocks' means (a pause every 500 calls costs the mean call what the median pair
    leaves out: 1.71x on average, 1.85x in the typical pair). A pass
    or a fail then holds on every reading, never on one of them: a cold-started baseline read
    -96% on CPU time from its undisturbed blocks and passed a 5% budget while the wall clock read
    -68%, and the truth was +120%."""
    low, high, reasons = found.low, found.high, []
    means = estimate(pair, replicas, settings, mean=True)
    readings = [
        ("the other clock", other_clock(pair, replicas, settings)),
        ("the blocks' mean", (means.ratio, means.low, means.high)),
    ]
    if any(r.reads_subset for r in replicas):
        every = estimate(pair, replicas, settings, every=True)
        readings.insert(0, ("every block pair", (every.ratio, every.low, every.high)))
    for what, (ratio, other_low, other_high) in readings:
        if not (math.isfinite(other_low) and math.isfinite(other_high)):
            continue
        if other_high < found.low or other_low > found.high:
            low, high = min(low, other_low), max(high, other_high)
            reasons.append(_reading(what, replicas, ratio, other_low, other_high))
    return Judged(low, high, "; ".join(reasons))


def _reading(what: str, replicas: list[ReplicaSamples], ratio: float, low: float, high: float) -> str:
    if what == "the other clock":
        what = f"the {replicas[0].other_timer} clock"
    shown = [format_overhead(value - 1, as_factor(ratio - 1)) for value in (ratio, low, high)]
    return f"{what} read {shown[0]} ({shown[1]}..{shown[2]})"


def other_clock(pair: Pair, replicas: list[ReplicaSamples], settings: Settings) -> tuple[float, float, float]:
    """The ratio and its interval on the other clock, where every process read it."""
    if not all(r.other_baseline_ns for r in replicas):
        return (math.nan, math.nan, math.nan)
    found = estimate(pair, replicas, settings, other=True)
    return found.ratio, found.low, found.high


def harness_ns(replicas: list[ReplicaSamples]) -> float:
    """The measuring loop's own cost per call, the median over the processes."""
    return float(np.median([r.harness_ns_per_call for r in replicas]))
