"""``--overhead-against``: every pair measured by replicas of both trees, interleaved.

Each round, one replica of the head tree and one of the base tree sample the pair, in a
random order (Abedi & Brecht's randomized multiple interleaved trials): drift and periodic
noise of the machine then fall on both sides alike, and the change needs no between-session
term. Both sides get the same number of processes, the same block size (calibrated once, in
this process) and the same sampling per process; each replica lays itself out at random.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from ..engine.samples import BlockSizes, CountSamples, ReplicaSamples
from ..engine.sampling import Clock, InProcess, PairPlan, TooWide, calibrate
from ..engine.settings import Settings
from .failures import NotInTree
from .pool import ReplicaPool, affordable, one_pair
from .trees import BaseSide


@dataclass
class Duet:
    """The user's session's :class:`~overheadbench.engine.sampling.Replication` under ``--overhead-against``."""

    make_head: Callable[[], ReplicaPool]
    make_base: Callable[[ReplicaPool], ReplicaPool]
    """The base tree's pool, made from the head's (the same session, in the other tree)."""
    sides: dict[str, BaseSide] = field(default_factory=dict)
    """The base's side of each pair measured so far, by node id."""
    _head: ReplicaPool | None = None
    _base: ReplicaPool | None = None

    in_replica = False

    @property
    def started(self) -> int:
        return sum(pool.started for pool in (self._head, self._base) if pool is not None)

    def plan(self, nodeid: str, settings: Settings, rng: random.Random, clock_ns: Clock, too_wide: TooWide) -> PairPlan:
        if settings.processes == 1:
            return InProcess().plan(nodeid, settings, rng, clock_ns, too_wide)
        return self._duet(nodeid, settings, rng, clock_ns, too_wide, *self._pools())

    def _duet(
        self,
        nodeid: str,
        settings: Settings,
        rng: random.Random,
        clock_ns: Clock,
        too_wide: TooWide,
        head_pool: ReplicaPool,
        base_pool: ReplicaPool,
    ) -> PairPlan:
        """Like :func:`~overheadbench.replicas.replication.pair_plan`, for two pools: the base's
        replicas are moved to the pair first (a test the base does not have is found before
        anything is timed), then each round samples one replica of each tree in random order;
        further rounds while either side's interval is wider than the target, within the
        (doubled) time budget. A pair the base does not have is measured on the head alone."""
        cap = max(settings.processes, settings.max_processes)
        pools = (head_pool, base_pool)
        with one_pair(pools):
            try:
                base_pool.ensure(settings.processes, nodeid)
            except NotInTree as exc:
                self.sides[nodeid] = BaseSide(missing=not exc.failed, note="" if not exc.failed else str(exc))
                if exc.failed:
                    raise
                head_pool.ensure(settings.processes, nodeid)
                sizes = yield from calibrate(settings)
                return [head_pool.sample(index, sizes, settings) for index in range(settings.processes)]
            head_pool.ensure(settings.processes, nodeid)
            started = clock_ns()
            sizes = yield from calibrate(settings)
            head: list[ReplicaSamples] = []
            base: list[ReplicaSamples] = []
            sampling_from = clock_ns()
            self._rounds(rng, sizes, settings, head_pool, base_pool, head, base, settings.processes)
            per_process_ns = (clock_ns() - sampling_from) / settings.processes
            while len(head) < cap and (too_wide(head) or too_wide(base)):
                more = min(cap, len(head) + settings.extra_processes) - len(head)
                budget_ns = 2 * settings.time_budget_s * 1e9
                if not affordable(clock_ns() - started, per_process_ns * more, pools, more, budget_ns):
                    break
                for pool in pools:
                    pool.ensure(len(head) + more, nodeid)
                self._rounds(rng, sizes, settings, head_pool, base_pool, head, base, more)
            self.sides[nodeid] = BaseSide(tuple(base))
            return head

    def count(self, nodeid: str, settings: Settings, calls_per_block: int) -> CountSamples:
        """Count a count-mode pair in one replica of the head tree (count mode's callgrind pools)."""
        return self._pools()[0].count(nodeid, calls_per_block, settings)

    def under(self, wrap: Callable[[ReplicaPool], ReplicaPool]) -> Duet:
        """Pools of both trees made as this duet's, then ``wrap``-ped; sharing its base sides."""
        make_head, make_base = self.make_head, self.make_base
        return Duet(lambda: wrap(make_head()), lambda head: wrap(make_base(head)), self.sides)

    def count_base(self, nodeid: str, settings: Settings, calls_per_block: int) -> None:
        """Count a count-mode pair in one replica of the base tree, with the head's block size,
        once the head has counted it."""
        try:
            self.sides[nodeid] = BaseSide(counts=self._pools()[1].count(nodeid, calls_per_block, settings))
        except NotInTree as exc:
            self.sides[nodeid] = BaseSide(missing=not exc.failed, note=str(exc) if exc.failed else "")
            if exc.failed:
                raise

    def _pools(self) -> tuple[ReplicaPool, ReplicaPool]:
        """Both trees' pools, made on first use."""
        if self._head is None:
            self._head = self.make_head()
        if self._base is None:
            self._base = self.make_base(self._head)
        return self._head, self._base

    @staticmethod
    def _rounds(
        rng: random.Random,
        sizes: BlockSizes,
        settings: Settings,
        head_pool: ReplicaPool,
        base_pool: ReplicaPool,
        head: list[ReplicaSamples],
        base: list[ReplicaSamples],
        count: int,
    ) -> None:
        """``count`` rounds: the next replica of each tree, in a random order each round."""
        for _ in range(count):
            index = len(head)
            sides = [(head_pool, head), (base_pool, base)]
            rng.shuffle(sides)
            for pool, into in sides:
                into.append(pool.sample(index, sizes, settings))

    def close(self) -> None:
        for pool in (self._head, self._base):
            if pool is not None:
                pool.close()
