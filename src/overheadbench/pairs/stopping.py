"""When a pair's rounds stop: the width of its own interval, or, under a gate with other places,
whether every change is decided.

The rules are plain functions of the processes' samples so far, built here from the pair and
its settings and handed to the sampling plan (:func:`overheadbench.replicas.places.places_plan`),
which never judges anything itself.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.vocabulary import MAX_PROCESSES, Role
from ..engine.changes import Finding
from ..engine.looks import Looks
from ..engine.samples import ReplicaSamples
from ..engine.sampling import GateRounds, TooWide
from ..engine.settings import Settings
from ..engine.stats import CONFIDENCE, log_halfwidth
from .comparing import rounds_change
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


def gate_confidence(looks: Looks | None, settings: Settings) -> float:
    """The confidence of the interval a place's change is judged on: the gate's per look, or the
    usual one where no gate looks (:class:`~overheadbench.engine.looks.Looks`)."""
    if looks is None:
        return CONFIDENCE
    return looks.confidence(settings.processes, _most(settings))


def gate_rounds(pair: Pair, settings: Settings, looks: Looks | None) -> GateRounds | None:
    """The gate's rule for a pair measured at other places too (None without a gate): go on to
    the next look while a place's change is unknown at the threshold, read at the looks' confidence."""
    if looks is None:
        return None
    confidence = gate_confidence(looks, settings)

    def undecided(own: list[ReplicaSamples], others: Sequence[tuple[Role, list[ReplicaSamples]]]) -> bool:
        ratio = estimate(pair, own, settings).ratio
        for role, samples in others:
            other = estimate(pair, samples, settings).ratio
            old, new = role.old_new(own, samples)
            found = rounds_change(pair.nodeid, old, new, role.old_new(ratio, other), confidence)
            if found.finding(looks.threshold) == Finding.UNKNOWN:
                return True
        return False

    return GateRounds(tuple(looks.counts(settings.processes, _most(settings))), undecided)


def _most(settings: Settings) -> int:
    """The most processes per place a gate's looks may reach: four times the first round's."""
    return min(MAX_PROCESSES, 4 * settings.processes)
