"""Where each pair is measured: the session's own replicas and those of every other *place*.

A place is a tree and an interpreter with its own replica pool: the session's (the reference),
the base tree of ``--overhead-against``, each ``--overhead-env`` interpreter. Each round, one
replica of every place samples the pair, in a random order (Abedi & Brecht's randomized
multiple interleaved trials): drift and periodic noise of the machine fall on every place
alike, so a change between places needs no between-session term. Every place gets the same
number of processes, the same block sizes (calibrated once, in this process; a place whose own
calibration is lopsided to them, a head ~360x its base, times in its own) and the same sampling
per process; each replica lays itself out at random.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Collection, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

import pytest

from ..core.vocabulary import Role
from ..engine.calibration import calibrate
from ..engine.counted_samples import CountSamples
from ..engine.profiles import Profiled
from ..engine.samples import BlockSizes, Clock, ReplicaSamples
from ..engine.sampling import InProcess, PairPlan, PlaceFigures, PlaceSamples, Sampled, Stopping
from ..engine.settings import Settings
from .environments import Environment
from .failures import NotInTree
from .moving import in_rounds, moved, one_pair
from .pool import ReplicaPool
from .relaunch import Invocation
from .transport import Question, TransportRounds, Turns, taking_turns, transport_rounds
from .trees import BaseTree

NOT_COMPARED = "not compared: measured in this process only (processes=1); other places are measured in replicas"


class Where(Protocol):
    """The seam a place kind implements: a place other than the session's own where every pair
    is measured too (a base tree, another interpreter today; a container image or another machine
    a plugin may add through ``pytest_overheadbench_places``, :mod:`overheadbench.hookspecs`)."""

    @property
    def name(self) -> str: ...

    @property
    def role(self) -> Role: ...

    def pool(self, own: ReplicaPool) -> ReplicaPool:
        """Its replica processes, made from the session's own pool (the same nodeids and timeout)."""
        ...

    def close(self) -> None:
        """Give back what it holds (a worktree, a container) at the end of the session."""
        ...


@dataclass(frozen=True)
class Place:
    """A place other than the session's own where every pair is measured too: a base tree
    (``--overhead-against``) or an interpreter (``--overhead-env``)."""

    name: str
    """How reports name it (a revision and its commit, a folder, an environment's name)."""
    role: Role
    python: str
    """Its interpreter."""
    tree: BaseTree | None = None
    """Its tree (``--overhead-against``), or None: this tree."""

    def pool(self, own: ReplicaPool) -> ReplicaPool:
        """This place's replica pool, made from the session's own: the same session, in this
        place's tree (checked out now if needed) and interpreter. A base tree's replicas check
        that they import the base's code, not the head's."""
        if self.tree is None:
            invocation = dataclasses.replace(own.invocation, python=self.python)
            return ReplicaPool(invocation, own.nodeids, own.timeout_s, place=f"the environment {self.name}")
        root = self.tree.open()
        invocation = own.invocation.in_tree(self.tree.map, self.python)
        trees = (str(self.tree.head_root), str(root))
        return ReplicaPool(invocation, own.nodeids, own.timeout_s, trees=trees, place=f"the base tree {root}")

    def close(self) -> None:
        if self.tree is not None:
            self.tree.close()


def session_pool(config: pytest.Config, nodeids: Sequence[str], timeout_s: float) -> ReplicaPool:
    """The session's own replica pool: each replica re-runs the user's command line, for ``nodeids``."""
    return ReplicaPool(Invocation.of(config), tuple(nodeids), timeout_s)


def places(against: BaseTree | None, envs: Sequence[Environment]) -> list[Place]:
    """The places other than the session's own where every pair is measured too: the base tree
    of ``--overhead-against``, or each ``--overhead-env`` (one session takes one of them)."""
    if against is not None:
        return [Place(against.name, Role.BASE, against.python, against)]
    return [Place(env.name, Role.ENVIRONMENT, env.python) for env in envs]


class Places:
    """The user's session's :class:`~overheadbench.engine.sampling.Replication`: a pair with
    ``processes`` > 1 is measured in the session's pool and every place's, made on the first
    such pair (without ``make_pool``, every pair is measured in this process only)."""

    in_replica = False

    def __init__(self, make_pool: Callable[[], ReplicaPool] | None = None, places: Sequence[Where] = ()) -> None:
        self._make_pool = make_pool
        self.places = tuple(places)
        self._pools: list[ReplicaPool] = []

    @property
    def started(self) -> int:
        """Replica processes started in this session, every place's."""
        return sum(pool.started for pool in self._pools)

    def plan(self, nodeid: str, settings: Settings, rng: random.Random, clock_ns: Clock, stop: Stopping) -> PairPlan:
        if settings.processes == 1 or self._make_pool is None:
            return self._in_process(nodeid, settings, rng, clock_ns, stop)
        return places_plan(settings, rng, clock_ns, self._all(), self.places, nodeid, stop)

    def _in_process(
        self, nodeid: str, settings: Settings, rng: random.Random, clock_ns: Clock, stop: Stopping
    ) -> PairPlan:
        sampled = yield from InProcess().plan(nodeid, settings, rng, clock_ns, stop)
        return Sampled(sampled.samples, [PlaceSamples(p.name, p.role, note=NOT_COMPARED) for p in self.places])

    def explain_places(self, nodeid: str, names: Collection[str]) -> dict[str, tuple[Profiled, Profiled]]:
        """The pair's two profiles from one new replica of each named place (its replicas of the pair
        have moved on), each beside those of one new replica of the session's own: both sides of a
        change profiled in processes started alike. (This process's own profiles, made after it ran
        other pairs, read a stack's every function up to twice as slow as a new replica's did: the
        injected function was outranked in 7 of 36 changes, validation/EXPLAIN.md.)"""
        if not self._pools:  # measured in this process only: no place measured it
            return {}
        pools = zip(self.places, self._pools[1:], strict=True)
        wanted = [(place, pool) for place, pool in pools if place.name in names]
        if not wanted:
            return {}

        def profiled(pool: ReplicaPool) -> Profiled:
            for each in self._pools:  # after the session's last pair its replicas are still ending
                each.quiet()
            return pool.explain(nodeid)

        own = profiled(self._pools[0])
        return {place.name: (own, profiled(pool)) for place, pool in wanted}

    def transport(self, nodeid: str, settings: Settings, rng: random.Random, rounds: int) -> TransportRounds:
        """A transport test run whole at every place, in rounds (:func:`~.transport.transport_rounds`)."""
        return transport_rounds(settings, rng, self._all(), self._figures(), nodeid, rounds)

    def turns(
        self, nodeid: str, settings: Settings, rng: random.Random, question: Question | None
    ) -> AbstractContextManager[Turns]:
        """A transport test's pairs at every other place, in turn with the session's (:class:`~.transport.Turns`)."""
        return taking_turns(self._all(), self._figures(), nodeid, settings, rng, question)

    def _figures(self) -> list[PlaceFigures]:
        """Every other place, as its figures will name it."""
        return [PlaceFigures(place.name, place.role) for place in self.places]

    def count(self, nodeid: str, settings: Settings, calls_per_block: int) -> CountSamples:
        """Count a count-mode pair in one of the session's own replicas (count mode's callgrind pool)."""
        return self._all()[0].count(nodeid, calls_per_block, settings).counts

    def count_places(self, nodeid: str, settings: Settings, calls_per_block: int) -> list[PlaceSamples]:
        """Count a count-mode pair in one replica of every other place, with the session's block
        size (counts are exact: one replica each)."""
        counted = []
        for place, pool in zip(self.places, self._all()[1:], strict=True):
            try:
                found = pool.count(nodeid, calls_per_block, settings)
                probe = (found.probe,) if found.probe is not None else ()
                counted.append(PlaceSamples(place.name, place.role, probe, counts=found.counts))
            except NotInTree as exc:
                if exc.failed:
                    raise
                counted.append(PlaceSamples(place.name, place.role, missing=True))
        return counted

    def under(self, wrap: Callable[[ReplicaPool], ReplicaPool]) -> Places:
        """Another session's worth of replicas of the same places, the session's own pool made as
        this one's, then ``wrap``-ped (the other places' pools follow it)."""
        make = self._make_pool
        if make is None:
            raise RuntimeError("no replica pool to wrap")
        return Places(lambda: wrap(make()), self.places)

    def _all(self) -> list[ReplicaPool]:
        """The session's own pool, then every place's, made on first use."""
        if not self._pools:
            if self._make_pool is None:
                raise RuntimeError("no replica pool")
            own = self._make_pool()
            self._pools.append(own)
            self._pools += [place.pool(own) for place in self.places]
        return self._pools

    def close(self) -> None:
        for pool in self._pools:
            pool.close()


def places_plan(
    settings: Settings,
    rng: random.Random,
    clock_ns: Clock,
    pools: Sequence[ReplicaPool],
    places: Sequence[Where],
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

    def __init__(self, settings: Settings, sizes: BlockSizes, taking: Sequence[ReplicaPool]) -> None:
        self.settings, self.sizes = settings, sizes
        self.at_place: dict[int, BlockSizes] = {id(taking[0]): sizes} if len(taking) == 1 else {}  # no other place

    def __call__(self, pool: ReplicaPool, index: int) -> ReplicaSamples:
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


def under_callgrind(pool: ReplicaPool) -> ReplicaPool:
    """``pool`` with its replicas started under callgrind, to count
    (see :meth:`.relaunch.Invocation.under_callgrind`)."""
    return dataclasses.replace(pool, invocation=pool.invocation.under_callgrind())


def affordable(
    elapsed_ns: float, sampling_ns: float, pools: Sequence[ReplicaPool], more: int, budget_ns: float
) -> bool:
    """Whether ``more`` processes per pool fit the pair's budget: what it took so far, their
    sampling, and the predicted time to bring them to the pair (start-up or set-up)."""
    return elapsed_ns + sampling_ns + sum(pool.round_ns(more) for pool in pools) <= budget_ns
