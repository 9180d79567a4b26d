"""Overhead pairs as a measured kind (:class:`~overheadbench.engine.kind.MeasuredKind`): the
``overhead`` fixture, and each pair's result judged and carried to the report.

The kind reads the test's marker into its pair and makes its fixture from the session's shared
parts (:class:`Parts`, which :class:`~overheadbench.pairs.fixture.FixtureParts` is: the replicas,
the instruments, the explainer); once the test ran it judges the result
(:func:`~overheadbench.pairs.outcome.pair_outcome`) and puts its JSON on the test's report.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import pytest

from ..core.jsonio import strict
from ..core.tables import plain
from ..engine.changes import Gate, StoredChange
from ..engine.outcome import KindHooks, conclude
from ..engine.settings import Settings
from ..http.fixtures import servers_elsewhere
from .across import PlaceGate, StoredGate
from .marker import MARKER_HELP, MARKER_NAME, pair_for
from .outcome import Judge, pair_outcome
from .pair import Pair
from .results import REPORT_ATTRIBUTE, OverheadResult

FIXTURE_NAME = "overhead"
_RESULT = pytest.StashKey[dict[str, Any]]()


class StoredPairs(Protocol):
    """What a pair reads of the stored runs (:class:`~overheadbench.history.pair_changes.StoredPairs`)."""

    @property
    def gate(self) -> Gate: ...

    @property
    def history(self) -> Sequence[OverheadResult]:
        """This machine's stored results: each pair's spread between sessions."""
        ...

    def stored_change(self, result: OverheadResult) -> StoredChange | None: ...


class Stored(Protocol):
    """The session's stored runs (:class:`~overheadbench.history.gate.StoredRuns`): the pairs' side of them."""

    @property
    def pairs(self) -> StoredPairs: ...


class Fixture(Protocol):
    """What is read of a test's overhead fixture (:class:`~overheadbench.pairs.fixture.OverheadFixture`)."""

    @property
    def result(self) -> OverheadResult | None: ...


class Parts(Protocol):
    """What the session's pairs share (:class:`~overheadbench.pairs.fixture.FixtureParts`): its
    settings, and each test's fixture made of them and the test's pair."""

    @property
    def settings(self) -> Settings: ...

    def fixture(self, pair: Pair, past: Sequence[OverheadResult]) -> Fixture: ...


class Session(Protocol):
    """What the kind reads of the session as it runs (:class:`~overheadbench.measurer.SessionState`)."""

    @property
    def stored(self) -> Stored | None:
        """The session's stored runs, read when it started (None: it uses no storage)."""
        ...


class PairKind(KindHooks):
    """The overhead fixture's maker and its pairs' judge, for one session (or one replica)."""

    marker = MARKER_NAME
    marker_help = MARKER_HELP

    def __init__(
        self,
        parts: Parts,
        session: Session,
        counted_elsewhere: bool = False,
        gate: PlaceGate | None = None,
    ) -> None:
        self.parts, self.session = parts, session
        self.settings = parts.settings
        self.counted_elsewhere = counted_elsewhere
        """A count-mode pair is counted in replicas: at the session's other places, or under valgrind."""
        self.gate = gate
        """The pairs' gate against the session's other places (None: none)."""
        self._gated: int | None = None

    def measures(self, item: pytest.Item) -> bool:
        return item.get_closest_marker(MARKER_NAME) is not None

    def replicated(self, item: pytest.Item) -> bool:
        """Whether the test's pair is measured in replica processes (its nodeid goes to the pool)."""
        try:
            pair = pair_for(item, self.settings)
        except (pytest.fail.Exception, pytest.skip.Exception):
            return False
        return pair is not None and (pair.replicated or (self.counted_elsewhere and pair.mode.counted))

    def gated_pairs(self, items: Sequence[pytest.Item]) -> int:
        """The session's pairs (of its collected ``items``) a gate reads at other places (the family of
        :class:`~overheadbench.pairs.across.Looks`)."""
        if self._gated is None:
            self._gated = sum(1 for item in items if self.measures(item) and self.replicated(item))
        return self._gated

    @pytest.fixture(name=FIXTURE_NAME)
    def overhead_fixture(self, request: pytest.FixtureRequest, overhead_concurrency: int | None) -> Any:
        """Measure a baseline-versus-framework pair: ``overhead.compare(baseline=..., framework=...)``."""
        return self.fixture(request)

    def fixture(self, request: pytest.FixtureRequest) -> Fixture:
        item = request.node
        pair = pair_for(item, self.settings)
        if pair is None:
            pytest.fail(
                f"{plain(item.nodeid)}: the overhead fixture needs a budget: add "
                f"@pytest.mark.overhead(max=0.25) (or max_abs='2us') to the test",
                pytrace=False,
            )
        if self.gate is not None:  # the strategies' gate too (:func:`~overheadbench.session.pair_kind`)
            self.gate.pairs = self.gated_pairs(request.session.items)
        stored = self.session.stored
        return self.parts.fixture(pair, stored.pairs.history if stored else ())

    def apply(self, item: pytest.Item) -> None:
        """Keep the pair's result for the test's report, and do what its verdict (and its change
        against the stored run or the session's other places) says to the test."""
        if item.get_closest_marker(MARKER_NAME) is None:
            return
        fixture = getattr(item, "funcargs", {}).get(FIXTURE_NAME)
        result = getattr(fixture, "result", None)
        if result is None:
            pytest.fail(
                f"{plain(item.nodeid)}: marked @pytest.mark.overhead but never called "
                f"overhead.compare(baseline, framework)",
                pytrace=False,
            )
        if not result.measured:
            return
        stored = self.session.stored.pairs if self.session.stored else None
        if stored:  # the change against the stored run, once, here: the result carries it to every reader
            result.stored = stored.stored_change(result)
        judge: Judge | None = self.gate if self.gate else StoredGate(stored.gate) if stored else None
        settings = self.settings
        outcome = pair_outcome(result, settings.inconclusive, settings.subtract_harness, judge, servers_elsewhere())
        result.outcome, result.failed = outcome.overall, outcome.failure is not None
        item.stash[_RESULT] = strict(result.to_json())
        conclude(item, outcome)

    def carried(self, item: pytest.Item) -> dict[str, Any]:
        result = item.stash.get(_RESULT, None)
        return {} if result is None else {REPORT_ATTRIBUTE: result}
