"""When a pair is explained, how long that may take, and where its flame graph goes.

A failing or inconclusive pair is explained without being asked (what a person reads next is
*where* the overhead goes); with ``--overhead-explain`` every measured pair is. Explaining
runs each side once more, in this process, under its strategy's profiler for about
:data:`EXPLAIN_S` (:mod:`overheadbench.instruments.functions`): one more stage of the pair
(:func:`profile_stage`). The explanation is the result's ``explain``
(:mod:`overheadbench.engine.attribution`); with ``--overhead-flame DIR`` the session also writes
its added cost to ``DIR/<test>.folded`` (:func:`flame_path`), one output among the others.

The policy, the gate's threshold, where the other places' profiles come from and, in a replica,
where its own profiles go, are held by one :class:`Explainer`, built once beside the strategy;
the fixture asks it for the pair's explaining stage once.

A change between places (``--overhead-against``, ``--overhead-env``) that the gate reads as
regressed or unknown (every one, with ``--overhead-explain``) is explained too: one new replica
of that place and one of the session's own profile the pair the same way and send their profiles
back; what each function adds at the new place less what it adds at the old
(:func:`~overheadbench.engine.attribution.explain_change`) is the change's explanation, which the
place's result carries.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Callable, Collection, Generator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..core.vocabulary import Side
from ..engine.attribution import explain, explain_change
from ..engine.checks import Status
from ..engine.profiles import Profiled, Profiler
from ..engine.samples import Kind
from ..instruments import Block, Stage
from ..replicas.failures import ReplicaError
from .results import OverheadResult

EXPLAIN_S = 0.25
"""Each side's profiled calls last about this long (doubling chunks: at most about twice)."""
EXPLAINED = (Status.FAIL, Status.INCONCLUSIVE)
"""Verdicts explained without ``--overhead-explain``."""


class PlaceProfiles(Protocol):
    """Where the other places' profiles of a pair come from (:class:`~overheadbench.replicas.places.Places`)."""

    def explain_places(self, nodeid: str, names: Collection[str]) -> dict[str, tuple[Profiled, Profiled]]:
        """The pair's profiles at each of these other places, each beside the session's own place's."""
        ...


class Orders(Protocol):
    """In a replica, the controller's orders (:class:`~overheadbench.replicas.replica.ReplicaPlugin`)."""

    def asked_to_explain(self, nodeid: str) -> Callable[[Profiled], None] | None:
        """Where the pair's profiles go, if the controller asked for them instead of its samples."""
        ...


class Unsettling(Protocol):
    """What the explainer asks the gate at the other places (:class:`~overheadbench.pairs.across.PlaceGate`)."""

    def unsettled(self, result: OverheadResult) -> list[str]:
        """The places whose change the gate reads as regressed or unknown."""
        ...


Done = Callable[[OverheadResult, str], None]
"""Given the explained result, and why a change at another place could not be explained ("": it was)."""


@dataclass(frozen=True)
class Explainer:
    """Whether and how a pair is explained, for one session (or one replica): every pair
    (``--overhead-explain``) or only those failing, inconclusive, or whose change at another
    place the ``gate`` reads as regressed or unknown; the other places' profiles
    from ``places``; in a replica, its profiles sent where ``orders`` say."""

    every: bool = False
    gate: Unsettling | None = None
    places: PlaceProfiles | None = None
    orders: Orders | None = None

    def stage(
        self,
        nodeid: str,
        result: OverheadResult | None,
        profiler: Profiler,
        kind: Kind,
        sides: tuple[Any, Any],
        done: Done,
    ) -> Stage | None:
        """The pair's explaining stage, if it is explained (``result`` None: a replica, which
        profiles only when the controller asks for the pair's profiles)."""
        if result is None:
            send = self.orders.asked_to_explain(nodeid) if self.orders is not None else None
            return None if send is None else profile_stage(profiler, kind, sides, EXPLAIN_S, send)
        if not self.wanted(result):
            return None
        names = self.unsettled(result)

        def keep(own: Profiled) -> None:
            why_not = ""
            try:
                elsewhere = self.places.explain_places(nodeid, names) if self.places and names else {}
            except ReplicaError as exc:  # a replica failing while profiling costs the explanation, not the result
                elsewhere, why_not = {}, f"{nodeid}: its change was not explained (its result stands): {exc}"
            done(explained(result, profiler, own, elsewhere), why_not)

        return profile_stage(profiler, kind, sides, EXPLAIN_S, keep)

    def unsettled(self, result: OverheadResult) -> list[str]:
        """The other places whose change ``result`` explains: every one with ``--overhead-explain``,
        else those the gate reads as regressed or unknown (no gate: none)."""
        if self.every:
            return [place.name for place in result.places if place.change is not None]
        return self.gate.unsettled(result) if self.gate is not None else []

    def wanted(self, result: OverheadResult) -> bool:
        """Whether ``result`` is explained: every measured pair with ``--overhead-explain``, else a failing or
        inconclusive one, or one whose change at another place the gate reads as regressed or unknown."""
        return result.measured and (self.every or result.verdict in EXPLAINED or bool(self.unsettled(result)))


def explained(
    result: OverheadResult, profiler: Profiler, own: Profiled, places: Mapping[str, tuple[Profiled, Profiled]]
) -> OverheadResult:
    """``result`` with its explanation (this process's profiles: the framework side's against the
    baseline's), and each of ``places``'s change explained by its pair of profiles (the session's own
    place's, the other place's): what the new side's framework path adds per function beyond the old
    side's (the base tree then the head; this environment then that one)."""
    unit, exact = profiler.unit, profiler.exact
    changes = [
        dataclasses.replace(
            place,
            explain=explain_change(*place.role.old_new(*places[place.name]), unit, exact, profiler.note),
        )
        if place.name in places
        else place
        for place in result.places
    ]
    return dataclasses.replace(result, explain=explain(own, unit, exact, profiler.note), places=changes)


EXPLAIN_ROUNDS = 8
"""A sampled profile's rounds: each side profiled this many times, in turn, for its share of the time."""


def profile_stage(
    profiler: Profiler, kind: Kind, sides: tuple[Any, Any], budget_s: float, keep: Callable[[Profiled], None]
) -> Stage:
    """A pair's last stage when it is explained : each side (the baseline, the
    framework) run under ``profiler`` for about ``budget_s``, by the same drivers as every other
    stage, in alternating rounds where the profile is sampled (:data:`EXPLAIN_ROUNDS`: paired, as
    the pair's blocks are; see :mod:`overheadbench.engine.attribution`); ``keep`` gets the two profiles."""
    rounds = 1 if profiler.exact else EXPLAIN_ROUNDS

    def block(fn: Callable[[], Any]) -> Block:
        if kind == Kind.ASYNC:
            return lambda calls: profiler.asynchronous(fn, budget_s / rounds)
        return lambda calls: profiler.sync(fn, budget_s / rounds)

    def plan() -> Generator[tuple[Side, int], Any, Profiled]:
        profiles = []
        for _ in range(rounds):
            baseline = yield Side.BASELINE, 1
            profiles.append(Profiled(*baseline, *(yield Side.FRAMEWORK, 1)))
        return Profiled.merged(profiles)

    baseline, framework = sides
    return Stage(plan(), {Side.BASELINE: block(baseline), Side.FRAMEWORK: block(framework)}, keep)


FLAME_NAME_CHARS = 120
"""A flame file's name keeps this much of its test id (a file name holds at most 255 bytes)."""


def flame_path(folder: str, nodeid: str) -> Path:
    """The folded-stacks file of a test: its node id with what a file name cannot hold replaced,
    cut to :data:`FLAME_NAME_CHARS`, and a digest of the whole id (``a/b`` and ``a_b`` read alike
    once replaced, and two long ids alike once cut: each test keeps a file of its own)."""
    readable = re.sub(r"[^A-Za-z0-9._=-]+", "_", nodeid).strip("_")[:FLAME_NAME_CHARS]
    return Path(folder) / f"{readable}-{hashlib.sha256(nodeid.encode()).hexdigest()[:8]}.folded"
