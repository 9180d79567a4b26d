"""The session's overhead pairs: their fixture, and their results judged and carried.

Beside :mod:`overheadbench.transport_tests`, the other measured kind, in the same shape: a maker
of the test's fixture (given by the session, which holds the replicas and the instruments) and a
judge of the test once it ran, found by the session through its marker
(:class:`overheadbench.session.OverheadSession`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import pytest

from .core.errors import OverheadOutputWarning
from .core.jsonio import strict
from .core.tables import plain
from .engine.changes import Gate, Looks, StoredChange
from .engine.settings import Settings
from .http.fixtures import servers_elsewhere
from .outcome import conclude, pair_outcome
from .pairs.explaining import write_flame
from .pairs.marker import MARKER_NAME, pair_for
from .pairs.pair import Pair
from .pairs.results import OverheadResult

FIXTURE_NAME = "overhead"
RESULT_KEY = pytest.StashKey[dict[str, Any]]()


class Stored(Protocol):
    """What a pair reads of the stored runs (:class:`~overheadbench.history.gate.StoredRuns`)."""

    @property
    def gate(self) -> Gate: ...

    def stored_change(self, result: OverheadResult) -> StoredChange | None: ...


class Fixture(Protocol):
    """What is read of a test's overhead fixture (:class:`~overheadbench.pairs.fixture.OverheadFixture`)."""

    @property
    def result(self) -> OverheadResult | None: ...


class PairTests:
    """The overhead fixture's maker and its pairs' judge, for one session (or one replica)."""

    def __init__(
        self,
        make: Callable[[Pair, Looks | None], Fixture],
        settings: Settings,
        counted_elsewhere: bool = False,
        gate: Gate | None = None,
    ) -> None:
        self.make, self.settings = make, settings
        """``make(pair, looks)``: the test's fixture."""
        self.counted_elsewhere = counted_elsewhere
        """A count-mode pair is counted in replicas: at the session's other places, or under valgrind."""
        self.gate = gate
        """The pairs' gate against the session's other places (None: none)."""
        self.marked: Sequence[pytest.Item] = ()
        self._gated: int | None = None

    def replicated(self, item: pytest.Item) -> bool:
        """Whether the test's pair is measured in replica processes (its nodeid goes to the pool)."""
        try:
            pair = pair_for(item, self.settings)
        except (pytest.fail.Exception, pytest.skip.Exception):
            return False
        return pair is not None and (pair.replicated or (self.counted_elsewhere and pair.mode.counted))

    def gated_pairs(self) -> int:
        """The session's pairs a gate reads at other places (the family of :class:`Looks`)."""
        if self._gated is None:
            self._gated = sum(1 for item in self.marked if self.replicated(item))
        return self._gated

    def fixture(self, request: pytest.FixtureRequest) -> Fixture:
        item = request.node
        pair = pair_for(item, self.settings)
        if pair is None:
            pytest.fail(
                f"{plain(item.nodeid)}: the overhead fixture needs a budget: add "
                f"@pytest.mark.overhead(max=0.25) (or max_abs='2us') to the test",
                pytrace=False,
            )
        threshold = self.gate.threshold if self.gate else None
        return self.make(pair, None if threshold is None else Looks(threshold, self.gated_pairs()))

    def apply(self, item: pytest.Item, stored: Stored | None) -> None:
        """Carry the pair's result on the test's report, and do what its verdict (and its change
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
        if stored:  # the change against the stored run, once, here: the result carries it to every reader
            result.stored = stored.stored_change(result)
        gate = stored.gate if stored else self.gate
        settings = self.settings
        outcome = pair_outcome(result, settings.inconclusive, settings.subtract_harness, gate, servers_elsewhere())
        result.outcome, result.failed = outcome.overall, outcome.failure is not None
        item.stash[RESULT_KEY] = strict(result.to_json())  # travels on the call's report (also from xdist workers)
        if unwritten := write_flame(settings.flame, result):  # an output's failure, never the test's
            item.warn(OverheadOutputWarning(plain(unwritten)))
        conclude(item, outcome)
