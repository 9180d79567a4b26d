"""One pair's rounds over the places (:func:`places_plan`): its replicas moved to the pair, calibrated once here,
then each round one process of every place sampled in a random order, and more rounds while an interval is
too wide or, under a gate, while a change is unknown at its next look. The places themselves are
:mod:`.places`'s.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from typing import Protocol

from ..core.vocabulary import Role
from ..engine.calibration import calibrate
from ..engine.samples import BlockSizes, Clock, ReplicaSamples
from ..engine.sampling import PairPlan, PlaceSamples, Sampled, Stopping
from ..engine.settings import Settings
from .moving import Pool, in_rounds, moved, one_pair


class SamplingPool(Pool, Protocol):
    """What a pair's rounds ask of a place's replica pool (:class:`~.pool.ReplicaPool`)."""

    start_ns: float
    """What starting its replicas took so far."""

    def sample(self, index: int, sizes: BlockSizes, settings: Settings, own_sizes: bool = False) -> ReplicaSamples: ...

    def round_ns(self, count: int) -> float:
        """What bringing ``count`` processes to the pair is predicted to take (start-up or set-up)."""
        ...


class Placed(Protocol):
    """What the rounds read of a place (:class:`~.places.Where`)."""

    @property
    def name(self) -> str: ...

    @property
    def role(self) -> Role: ...


def places_plan(
    settings: Settings,
    rng: random.Random,
    clock_ns: Clock,
    pools: Sequence[SamplingPool],
    places: Sequence[Placed],
    nodeid: str,
    stop: Stopping,
) -> PairPlan:
    """The controller's whole procedure for a pair, as one plan for the sampling drivers: the
    session's own pool first, then one per place.

    Every other place's replicas are moved to the pair first: a place without the test is found
    before anything is timed (the pair is measured without it; one where it does not collect
    fails the test with that place's error). This process only calibrates: it is no fresh
    process (it has run other tests), and its ratio was biased against the replicas' (+0.4
    points on an A/A pair). ``processes`` rounds follow, each sampling one replica of every
    place in a random order. Then, while ``too_wide`` for any place (its interval is wider than
    the target) and fewer than ``max_processes`` rounds have run, ``extra_processes`` more do,
    if they are predicted to fit the time budget (one budget per place).

    The budget is counted from when the first processes are parked: their start-up is the
    session's (paid once, on the first pair), not this pair's. A further round's own start-up
    or set-up is counted.

    The rule looks at the intervals' *width* only, never at a verdict or a change: adding
    processes while the verdict is undecided is optional stopping, which inflates the error
    rate. The width hardly depends on where the estimate lies, so the rule cannot steer it.

    Under a gate (``stop.gate``), the rule is the gate's instead: rounds go on to its next look (twice
    the processes) while a place's change is unknown at the threshold, within the pair's ceiling
    (``max_time_s`` per place), and stop once every change is decided. That *is* stopping on the
    change, so each look reads a wider interval (:class:`~overheadbench.pairs.across.Looks`):
    the error rate over all the looks stays the one stated.
    """
    start_ns = sum(pool.start_ns for pool in pools)
    with one_pair(pools):
        taking, present = moved(pools, settings.processes, nodeid)
        found = [
            PlaceSamples(place.name, place.role, missing=not here) for place, here in zip(places, present, strict=True)
        ]
        started = clock_ns()
        sizes = yield from calibrate(settings)
        samples: list[list[ReplicaSamples]] = [[] for _ in taking]
        sampling_from = clock_ns()

        sample = _Sampler(settings, sizes, taking)
        in_rounds(rng, taking, samples, settings.processes, sample)
        per_round_ns = (clock_ns() - sampling_from) / settings.processes
        roles = [place.role for place, here in zip(places, present, strict=True) if here]
        while further := _further(stop, settings, samples, roles, len(taking)):
            more, limit_ns = further
            if not affordable(clock_ns() - started, per_round_ns * more, taking, more, limit_ns):
                break
            for pool in taking:
                pool.ensure(len(samples[0]) + more, nodeid)
            in_rounds(rng, taking, samples, more, sample)
        taken = iter(samples[1:])
        others = [p if p.missing else dataclasses.replace(p, samples=tuple(next(taken))) for p in found]
        return Sampled(samples[0], others, (sum(pool.start_ns for pool in pools) - start_ns) / 1e9)


class _Sampler:
    """Samples one process of a place. Every place's first process calibrates too, the session's
    included (each place's first process runs the same calls before it samples); a lopsided place
    keeps its own sizes, and the place's later processes take the sizes its first used."""

    def __init__(self, settings: Settings, sizes: BlockSizes, taking: Sequence[SamplingPool]) -> None:
        self.settings, self.sizes = settings, sizes
        self.at_place: dict[int, BlockSizes] = {id(taking[0]): sizes} if len(taking) == 1 else {}  # no other place

    def __call__(self, pool: SamplingPool, index: int) -> ReplicaSamples:
        if id(pool) in self.at_place:
            return pool.sample(index, self.at_place[id(pool)], self.settings)
        found = pool.sample(index, self.sizes, self.settings, own_sizes=True)
        self.at_place[id(pool)] = BlockSizes(found.calls_per_block, found.framework_calls, self.sizes.timer)
        return found


def _further(
    stop: Stopping, settings: Settings, samples: list[list[ReplicaSamples]], roles: Sequence[Role], places: int
) -> tuple[int, float] | None:
    """How many more rounds, within how much time (ns, every place's): the gate's next look while a
    change is unknown (within the ceiling), else more processes while an interval is too wide
    (within the time budget); None: stop."""
    done, gate = len(samples[0]), stop.gate
    if gate is not None and places > 1:
        later = [look for look in gate.looks if look > done]
        if not later or not gate.undecided(samples[0], list(zip(roles, samples[1:], strict=True))):
            return None
        return later[0] - done, places * settings.max_time_s * 1e9
    cap = max(settings.processes, settings.max_processes)
    if done < cap and any(stop.too_wide(place) for place in samples):
        return min(cap, done + settings.extra_processes) - done, places * settings.time_budget_s * 1e9
    return None


def affordable(
    elapsed_ns: float, sampling_ns: float, pools: Sequence[SamplingPool], more: int, budget_ns: float
) -> bool:
    """Whether ``more`` processes per pool fit the pair's budget: what it took so far, their
    sampling, and the predicted time to bring them to the pair (start-up or set-up)."""
    return elapsed_ns + sampling_ns + sum(pool.round_ns(more) for pool in pools) <= budget_ns
