"""When a pair's rounds stop: the width of its own interval (under a gate with other places, also
whether every change is decided: :meth:`overheadbench.pairs.across.PlaceGate.rounds`).

The rules are plain functions of the processes' samples so far, built here from the pair and
its settings and handed to the sampling plan (:func:`overheadbench.replicas.rounds.places_plan`),
which never judges anything itself.
"""

from __future__ import annotations

from ..engine.samples import ReplicaSamples
from ..engine.sampling import TooWide
from ..engine.settings import Settings
from ..engine.stats import log_halfwidth
from .estimating import estimate
from .pair import Pair


def halfwidth(pair: Pair, replicas: list[ReplicaSamples], settings: Settings) -> float:
    """Half the width of the interval so far, relative to the ratio (the replicas' stopping rule
    reads it, and nothing of the verdict): ±1% reads alike on a 20% pair and a 230% one, as the
    gate's changes do."""
    return log_halfwidth(*estimate(pair, replicas, settings, session=False).overhead_ci)


def too_wide(pair: Pair, settings: Settings) -> TooWide:
    """Whether the pair's interval over these processes is still wider than the target."""

    def wide(replicas: list[ReplicaSamples]) -> bool:
        return halfwidth(pair, replicas, settings) > settings.target_halfwidth

    return wide
