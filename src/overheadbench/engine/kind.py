"""What the session asks of each kind of measured test: a pair (:mod:`overheadbench.pairs.kind`)
and a transport test (:mod:`overheadbench.transport.kind`) implement it whole, so the session
knows neither: it registers each kind as a plugin, whose own hooks
(:class:`~overheadbench.engine.outcome.KindHooks`) judge each of its tests once it ran and put
what the kind kept on the test's report.
"""

from __future__ import annotations

from typing import Any, Protocol

import pytest


class MeasuredKind(Protocol):
    """One kind of measured test: its marker, its tests, its fixture, its judgement and what it carries."""

    @property
    def marker(self) -> str:
        """The marker that makes a test this kind's."""
        ...

    @property
    def marker_help(self) -> str:
        """The marker's line in ``pytest --markers`` (registered with the kind)."""
        ...

    def measures(self, item: pytest.Item) -> bool:
        """Whether the test is this kind's (marked, or using its fixture): a timed test, which runs
        on one xdist worker, one at a time."""
        ...

    def replicated(self, item: pytest.Item) -> bool:
        """Whether the test is measured in replica processes too (its node id goes to the pool)."""
        ...

    def fixture(self, request: pytest.FixtureRequest) -> Any:
        """The test's fixture object (the kind's pytest fixture returns it)."""
        ...

    def apply(self, item: pytest.Item) -> None:
        """Judge the test once it ran (against the session's stored runs where it uses storage),
        and fail or warn it."""
        ...

    def carried(self, item: pytest.Item) -> dict[str, Any]:
        """What the test's call report carries for the reporter (JSON only: it travels from xdist
        workers), by report attribute; empty where the kind measured nothing in the test."""
        ...
