"""What the session asks of each kind of measured test: a pair (:mod:`overheadbench.pairs.kind`)
and a transport test (:mod:`overheadbench.transport.kind`) implement it whole, so the session
knows neither: it registers each kind as a plugin (the kind's pytest fixture, and the hook that
puts what the kind kept of a test on its report: :class:`CarriedOnReport`) and judges every test
by every kind once it ran.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Generator
from typing import Any, Protocol, TypeVar

import pytest

StoredT = TypeVar("StoredT", contravariant=True)
"""What a kind reads of the session's stored runs (each kind says what, as a protocol)."""


class MeasuredKind(Protocol[StoredT]):
    """One kind of measured test: its marker, its tests, its fixture, its judgement and what it carries."""

    @property
    def marker(self) -> str:
        """The marker that makes a test this kind's."""
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

    def apply(self, item: pytest.Item, stored: StoredT | None) -> None:
        """Judge the test once it ran (against ``stored`` where the session uses storage), and fail
        or warn it."""
        ...

    def carried(self, item: pytest.Item) -> dict[str, Any]:
        """What the test's call report carries for the reporter (JSON only: it travels from xdist
        workers), by report attribute; empty where the kind measured nothing in the test."""
        ...


PURPOSE_ATTRIBUTE = "overheadbench_purpose"


def purpose(item: pytest.Item) -> str:
    """What the test's budget is for: the first paragraph of its docstring, on one line."""
    doc = inspect.getdoc(getattr(item, "obj", None)) or ""
    return " ".join(doc.split("\n\n")[0].split())


class CarriedOnReport(ABC):
    """A measured kind's hook: what the kind kept of a test (its ``carried``), and the test's
    purpose, put on the test's call report as extra attributes, which pytest serialises (so they
    travel from xdist workers); the reporter gathers them."""

    @abstractmethod
    def carried(self, item: pytest.Item) -> dict[str, Any]:
        """What the kind kept of the test, by report attribute (see :meth:`MeasuredKind.carried`)."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        carried = self.carried(item) if call.when == "call" else {}
        for name, value in carried.items():
            setattr(report, name, value)
        if carried:
            setattr(report, PURPOSE_ATTRIBUTE, purpose(item))
        return report
