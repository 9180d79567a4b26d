"""The user's session's :class:`~overheadbench.engine.sampling.Replication`: each pair measured in
the session's replica pool, and the procedure for one pair (how many processes, how many rounds).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable

from ..engine.samples import CountSamples
from ..engine.sampling import Clock, InProcess, PairPlan, TooWide, calibrate
from ..engine.settings import Settings
from .pool import ReplicaPool, affordable, one_pair


class Replicas:
    """The user's session's :class:`~overheadbench.engine.sampling.Replication`: a pair with
    ``processes`` > 1 is measured in the session's pool, made on the first such pair
    (without ``make_pool``, every pair is measured in this process only)."""

    in_replica = False

    def __init__(self, make_pool: Callable[[], ReplicaPool] | None = None) -> None:
        self._make_pool = make_pool
        self._pool: ReplicaPool | None = None

    @property
    def started(self) -> int:
        """Replica processes started in this session."""
        return self._pool.started if self._pool is not None else 0

    def plan(self, nodeid: str, settings: Settings, rng: random.Random, clock_ns: Clock, too_wide: TooWide) -> PairPlan:
        if settings.processes == 1 or self._make_pool is None:
            return InProcess().plan(nodeid, settings, rng, clock_ns, too_wide)
        if self._pool is None:
            self._pool = self._make_pool()
        return pair_plan(settings, rng, clock_ns, self._pool, nodeid, too_wide)

    def count(self, nodeid: str, settings: Settings, calls_per_block: int) -> CountSamples:
        """Count a count-mode pair in one of the pool's replicas (count mode's callgrind pool)."""
        if self._make_pool is None:
            raise RuntimeError("no replica pool to count in")
        if self._pool is None:
            self._pool = self._make_pool()
        return self._pool.count(nodeid, calls_per_block, settings)

    def under(self, wrap: Callable[[ReplicaPool], ReplicaPool]) -> Replicas:
        """Another session's worth of replicas, each pool made as this one's, then ``wrap``-ped."""
        make = self._make_pool
        if make is None:
            raise RuntimeError("no replica pool to wrap")
        return Replicas(lambda: wrap(make()))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()


def pair_plan(
    settings: Settings, rng: random.Random, clock_ns: Clock, pool: ReplicaPool, nodeid: str, too_wide: TooWide
) -> PairPlan:
    """The controller's whole procedure for a pair, as one plan for the sampling drivers.

    This process only calibrates: it is no fresh process (it has run other tests), and its
    ratio was biased against the replicas' (+0.4 points on an A/A pair). ``processes``
    replicas are parked at the pair and sample in turn. Then, while ``too_wide`` (the
    interval is wider than the target) and fewer than ``max_processes`` have sampled,
    ``extra_processes`` more do, if that round is predicted to fit the time budget.

    The budget is counted from when the first processes are parked: their start-up is the
    session's (paid once, on the first pair), not this pair's, and counting it let the first
    pair of every session no further round (its A/A estimate then rested on 3 processes).
    A further round's own start-up or set-up is counted.

    The rule looks at the interval's *width* only, never at the verdict: adding processes
    while the verdict is undecided is optional stopping, which inflates the error rate.
    The width hardly depends on where the estimate lies, so the rule cannot steer it.
    """
    cap = max(settings.processes, settings.max_processes)
    with one_pair([pool]):
        pool.ensure(settings.processes, nodeid)
        started = clock_ns()
        sizes = yield from calibrate(settings)
        sampling_from = clock_ns()
        replicas = [pool.sample(index, sizes, settings) for index in range(settings.processes)]
        per_process_ns = (clock_ns() - sampling_from) / settings.processes
        while len(replicas) < cap and too_wide(replicas):
            want = min(cap, len(replicas) + settings.extra_processes)
            more = want - len(replicas)
            if not affordable(clock_ns() - started, per_process_ns * more, (pool,), more, settings.time_budget_s * 1e9):
                break
            pool.ensure(want, nodeid)
            replicas += [pool.sample(index, sizes, settings) for index in range(len(replicas), want)]
        return replicas


def under_callgrind(pool: ReplicaPool) -> ReplicaPool:
    """``pool`` with its replicas started under callgrind, to count
    (see :meth:`.relaunch.Invocation.under_callgrind`)."""
    return dataclasses.replace(pool, invocation=pool.invocation.under_callgrind())
