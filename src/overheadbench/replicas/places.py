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
from ..engine.counted_samples import CountSamples
from ..engine.profiles import Profiled
from ..engine.samples import Clock
from ..engine.sampling import InProcess, PairPlan, PlaceFigures, PlaceSamples, Sampled, Stopping
from ..engine.settings import Settings
from .environments import Environment
from .failures import NotInTree
from .pool import ReplicaPool
from .relaunch import Invocation
from .rounds import places_plan
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


def under_callgrind(pool: ReplicaPool) -> ReplicaPool:
    """``pool`` with its replicas started under callgrind, to count
    (see :meth:`.relaunch.Invocation.under_callgrind`)."""
    return dataclasses.replace(pool, invocation=pool.invocation.under_callgrind())
