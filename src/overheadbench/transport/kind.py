"""Transport tests as a measured kind (:class:`~overheadbench.engine.kind.MeasuredKind`): the
``transport`` fixture, and each test's figures judged, measured at every other place of the
session, gated, and carried to the report.

Under ``--overhead-against`` or ``--overhead-env`` a transport test's pairs run at every place
beside its own run, round by round in turn, and a test with figures outside a pair runs again in
rounds at every place after it (:mod:`overheadbench.transport.across`): in a replica it parks at its
fixture until told to run, and sends its figures and rounds instead of judging them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

import pytest

from ..core.errors import MarkerError
from ..core.jsonio import strict
from ..core.tables import plain, said
from ..core.xdist import original_nodeid
from ..engine.changes import Gate
from ..engine.outcome import KindHooks, conclude
from ..engine.sampling import PlaceFigures
from ..engine.settings import Settings
from ..replicas.messages import Figured
from ..replicas.replica import ReplicaPlugin
from .across import (
    PLACE_ROUNDS,
    QUICK_PLACE_ROUNDS,
    PlacedRounds,
    Question,
    pair_sides,
    unknown_changes,
    unpaired,
    whole_rounds,
    with_places,
)
from .limits import MARKER_HELP, MARKER_NAME, limits_from_marker
from .metrics import FigureKey, Limits
from .outcome import figures_outcome
from .results import REPORT_ATTRIBUTE, FigureResult

FIXTURE_NAME = "transport"
_FIGURES = pytest.StashKey[list[dict[str, Any]]]()
_TURNS = pytest.StashKey["Turned"]()
REPLICA_SKIP = "overheadbench replica process: measured for the controller"


def transported(item: pytest.Item) -> bool:
    """A transport test: marked, or using the fixture."""
    return item.get_closest_marker(MARKER_NAME) is not None or FIXTURE_NAME in getattr(item, "fixturenames", ())


@runtime_checkable
class Fixture(Protocol):
    """What is read of a test's transport fixture (:class:`~overheadbench.transport.fixture.TransportFixture`)."""

    nodeid: str
    measuring: bool
    rng: random.Random
    paired: list[Any]
    """Its pairs' rounds as other places compare them (:func:`~.pairing.pair_rounds`)."""
    levels: dict[str, float]
    """The confidence of each row read at looks (a stream pair's and its sides')."""

    def judged(self, session_sd: Callable[[FigureKey], float | None] | None = None) -> list[FigureResult]: ...


class Turned(Protocol):
    """The other places' replicas taking turns with a test's run (:class:`~overheadbench.replicas.transport.Turns`)."""

    def finish(self) -> list[PlaceFigures]: ...


class Rounds(Protocol):
    """Where a transport test's rounds run (:class:`~overheadbench.replicas.places.Places`)."""

    def transport(self, nodeid: str, settings: Settings, rng: random.Random, rounds: int) -> Any: ...

    def turns(
        self, nodeid: str, settings: Settings, rng: random.Random, question: Question | None
    ) -> AbstractContextManager[Turned]: ...


class StoredFigures(Protocol):
    """What a transport test reads of the stored runs (:class:`~overheadbench.history.figure_changes.StoredFigures`)."""

    @property
    def gate(self) -> Gate: ...

    def session_sd(self, key: FigureKey) -> float | None: ...

    def with_changes(self, figures: Sequence[FigureResult]) -> list[FigureResult]: ...


class Stored(Protocol):
    """The session's stored runs (:class:`~overheadbench.history.gate.StoredRuns`): the figures' side of them."""

    @property
    def figures(self) -> StoredFigures: ...


class Session(Protocol):
    """What the kind reads of the session as it runs (:class:`~overheadbench.measurer.SessionState`)."""

    @property
    def stored(self) -> Stored | None:
        """The session's stored runs, read when it started (None: it uses no storage)."""
        ...


class TransportKind(KindHooks):
    """The transport fixture's maker and its tests' judge, for one session (or one replica)."""

    marker = MARKER_NAME
    marker_help = MARKER_HELP

    def __init__(
        self,
        make: Callable[[str, Limits, Settings, bool], Fixture],
        session: Session,
        settings: Settings,
        measuring: bool,
        replica: ReplicaPlugin | None = None,
        places: Rounds | None = None,
        gate: Gate | None = None,
        quick: bool = False,
    ) -> None:
        self.make, self.session = make, session
        self.settings, self.measuring = settings, measuring
        """``make(nodeid, limits, settings, measuring)``: the test's fixture."""
        self.replica, self.places = replica, places
        self.rounds = QUICK_PLACE_ROUNDS if quick else PLACE_ROUNDS
        """Rounds at every place of a transport test (the quick profile's fewer)."""
        self.gate = gate
        """The figures' gate against the other places (an unknown change is shown, not warned)."""

    def measures(self, item: pytest.Item) -> bool:
        return transported(item)

    def replicated(self, item: pytest.Item) -> bool:
        """A transport test goes to the pool: under other places its rounds run in replicas."""
        return transported(item)

    @pytest.fixture(name=FIXTURE_NAME)
    def transport_fixture(self, request: pytest.FixtureRequest) -> Iterator[Any]:
        """Measure transport rows (``transport.load``, ``sweep``, ``stream``) and judge their
        figures against ``@pytest.mark.transport(...)`` and each call's own budgets."""
        fixture = self.fixture(request)
        if self.places is None or not fixture.measuring:
            yield fixture
            return
        gate = self.gate
        question = unknown_changes(gate) if gate is not None and gate.threshold is not None else None
        turning = self.places.turns(fixture.nodeid, self.settings, fixture.rng, question)  # the other places' pairs
        with turning as turned:
            request.node.stash[_TURNS] = turned
            yield fixture

    def fixture(self, request: pytest.FixtureRequest) -> Any:
        mark = request.node.get_closest_marker(MARKER_NAME)
        nodeid = original_nodeid(request.node)
        try:
            limits = limits_from_marker(mark.args, mark.kwargs, nodeid) if mark else {}
        except MarkerError as exc:
            raise pytest.fail.Exception(said(str(exc)), pytrace=False) from None
        settings, measuring = self.settings, self.measuring
        if self.replica is not None:  # a replica runs a transport test only in another place's rounds, when told
            orders = self.replica.park(nodeid)
            if orders is None:
                pytest.skip(REPLICA_SKIP)
            settings, measuring = orders.settings, True
        return self.make(nodeid, limits, settings, measuring)

    def apply(self, item: pytest.Item) -> None:
        """Judge the test's transport figures (at every place too), carry them on its report, and
        fail or warn; in a replica, send them to the controller instead."""
        fixture = getattr(item, "funcargs", {}).get(FIXTURE_NAME)
        if not isinstance(fixture, Fixture):
            if item.get_closest_marker(MARKER_NAME) is not None:
                pytest.fail(
                    f"{plain(item.nodeid)}: marked @pytest.mark.transport but never used the transport fixture",
                    pytrace=False,
                )
            return
        stored = self.session.stored.figures if fixture.measuring and self.session.stored else None
        figures = fixture.judged(stored.session_sd if stored else None)
        if self.replica is not None and fixture.measuring:
            self.replica.finish(Figured([strict(figure.to_json()) for figure in figures], fixture.paired))
            pytest.skip(REPLICA_SKIP)
        if self.places is not None and fixture.measuring:  # the test at every place
            figures = self._placed(item, fixture, figures)
        if stored:  # each figure's change against the stored run, once, here: the figure carries it
            figures = stored.with_changes(figures)
        if fixture.measuring:
            item.stash[_FIGURES] = [strict(figure.to_json()) for figure in figures]
        changes = [(figure, figure.stored.change) for figure in figures if figure.stored]
        gate = stored.gate if stored else self.gate
        policy = self.settings.inconclusive
        conclude(item, figures_outcome(fixture.nodeid, figures, policy, changes, gate))

    def _placed(self, item: pytest.Item, fixture: Fixture, figures: list[FigureResult]) -> list[FigureResult]:
        """``figures`` with their changes at every other place: the pairs' from the rounds taken in
        turn, the others' from the test run whole in rounds there (only where it has such figures)."""
        assert self.places is not None
        sources: list[PlacedRounds] = [(fixture.paired, item.stash[_TURNS].finish())]
        if unpaired(figures, fixture.paired):
            rounds = self.places.transport(fixture.nodeid, self.settings, fixture.rng, self.rounds)
            sources.append(whole_rounds(*rounds))
        return with_places(figures, *sources, levels=fixture.levels, sides=pair_sides(fixture.paired))

    def carried(self, item: pytest.Item) -> dict[str, Any]:
        figures = item.stash.get(_FIGURES, None)
        return {} if figures is None else {REPORT_ATTRIBUTE: figures}
