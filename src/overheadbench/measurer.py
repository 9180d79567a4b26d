"""The session's measuring plugin: its measured tests found and grouped, the stored runs read
where the session uses storage, what the machinery raised in a test said in its own words, and
the replica processes closed at the end. Each measured kind judges its own tests and puts what
it kept on their reports (:class:`~overheadbench.engine.outcome.KindHooks`).

It runs in the user's session, in each xdist worker and in each replica process alike; the
reporting plugin (:mod:`overheadbench.report.reporter`) runs in the user's session only.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from functools import cache, partial
from typing import Any, Generic, Protocol, TypeVar

import pytest

from .core.errors import OverheadUsageError
from .core.tables import fitted, plain, said
from .core.timeouts import PairTimeout
from .core.xdist import WORKER_REPLICAS, group_timed_tests, original_nodeid, remember_nodeids
from .engine.harness import Harness
from .engine.kind import MeasuredKind
from .engine.sampling import Replication
from .engine.timed_path import AppLogging
from .replicas.failures import ReplicaError, WrongTree
from .store.environment import environment

S = TypeVar("S")
"""The session's stored runs (:class:`~overheadbench.history.gate.StoredRuns`), as its kinds read them."""


@dataclass
class SessionState(Generic[S]):
    """What the session learns as it runs, shared by its plugins and its fixtures' makers."""

    environment: Callable[[], dict[str, Any]]
    """This machine and interpreter (read once, on first use)."""
    marked: list[pytest.Item] = field(default_factory=list)
    """The measured tests, in their final order (replicas re-run them in it)."""
    replicated: tuple[str, ...] = ()
    """The node ids of the tests measured in replica processes (the pool's)."""
    stored: S | None = None
    """This session's stored runs, where it uses storage (read when it starts)."""

    @classmethod
    def of(cls, config: pytest.Config) -> SessionState[S]:
        return cls(cache(partial(environment, config)))


class Pools(Protocol):
    """Replica processes of the session (:class:`~overheadbench.replicas.places.Places`)."""

    @property
    def started(self) -> int: ...

    def close(self) -> None: ...


class Closing(Protocol):
    """Another place of the session (:class:`~overheadbench.replicas.places.Where`): its tree removed at the end."""

    def close(self) -> None: ...


P = TypeVar("P", bound=Pools, covariant=True)


@dataclass(frozen=True)
class SessionParts(Generic[P]):
    """Where the session's pairs get their samples, and what the timed path is kept clean of."""

    places: Sequence[Closing]
    """The other places every pair is measured at (the base tree, each environment, a plugin's)."""
    replicas: P
    counting: P | None
    """Count mode's callgrind replicas (None: counted in this process)."""
    replication: Replication
    app_logging: AppLogging
    harness: Harness


@dataclass(frozen=True)
class MeasuringOptions:
    """What the measuring plugin reads of the options: whether it measures, and what implied it."""

    measuring: bool
    implied_by: str | None = None


class Measurer(Generic[S]):
    """The measuring plugin of one session (or one xdist worker, or one replica)."""

    def __init__(
        self,
        config: pytest.Config,
        asked: MeasuringOptions,
        measured: SessionParts[Pools],
        state: SessionState[S],
        kinds: Sequence[MeasuredKind],
        load_stored: Callable[[], S | None],
    ) -> None:
        self.config, self.asked = config, asked
        self.measured, self.state = measured, state
        self.kinds = tuple(kinds)
        """Each measured kind (each a plugin that judges its own tests)."""
        self.load_stored = load_stored
        """The session's stored runs (None: it uses no storage, or this is a replica)."""

    def started(self) -> int:
        """Replica processes this process started (counting ones included)."""
        counting = self.measured.counting
        return self.measured.replicas.started + (counting.started if counting else 0)

    def pytest_report_header(self) -> str | None:
        if self.asked.implied_by:
            return f"overheadbench: measuring (--overhead implied by {self.asked.implied_by})"
        return None

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.state.stored = self.load_stored()

    @pytest.hookimpl(wrapper=True)
    def pytest_collection(self) -> Generator[None, object, object]:
        """Import the tests with the root logger as the code under test leaves it (AppLogging),
        noting the import finders and warning filters around them (Harness)."""
        with self.measured.app_logging.importing(self.asked.measuring), self.measured.harness.importing():
            return (yield)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        remember_nodeids(items)

    @pytest.hookimpl(trylast=True, specname="pytest_collection_modifyitems")
    def pytest_collection_modifyitems_last(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """Remember the measured tests, in their final order, and which are measured in replicas."""
        marked = [item for item in items if any(kind.measures(item) for kind in self.kinds)]
        self.state.marked = marked
        replicated = [item for item in marked if any(kind.replicated(item) for kind in self.kinds)]
        self.state.replicated = tuple(original_nodeid(item) for item in replicated)
        if self.asked.measuring:
            group_timed_tests(config, marked)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        """Outside every kind's own judging (:class:`~overheadbench.engine.outcome.KindHooks`): what
        the test or a kind raised about the session's machinery fails the test in its own words."""
        try:
            return (yield)
        except WrongTree as exc:
            pytest.exit(fitted(f"overheadbench: {plain(str(exc))}"), returncode=pytest.ExitCode.USAGE_ERROR)
        except (OverheadUsageError, ReplicaError, PairTimeout) as exc:
            raise pytest.fail.Exception(said(str(exc)), pytrace=False) from None  # it says it all

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        measured = self.measured
        for pools in (measured.replicas, measured.counting or measured.replicas):  # closing twice is safe
            pools.close()
        for place in measured.places:
            place.close()
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:
            workeroutput[WORKER_REPLICAS] = self.started()  # to the controller's pytest_testnodedown
