"""The replica side: the plugin a replica process registers, its channel and its watchdog.

A replica is the user's own pytest session, restarted by the controller (see
:mod:`.relaunch`) with ``OVERHEADBENCH_REPLICA`` in its environment. This plugin turns that
session into one the controller drives: it collects only the timed overhead tests, in the
controller's order; it runs a test only when told to (:class:`~.messages.Next`) and skips
the others *before* their fixtures are set up, so a replica sets up only the pairs it
measures; between tests it waits (:class:`~.messages.Idle`) holding no test's fixtures, only
session- and module-scoped ones, exactly as a sequential run holds them.

A replica must never outlive the controller, however the controller dies: end of file on
the command pipe (or a broken pipe on sending) stops the session, and a watchdog thread
blocked on a "lifeline" pipe that the controller never writes interrupts the replica when
the pipe closes and ends the process shortly after, even one stuck in a fixture.
"""

from __future__ import annotations

import _thread
import json
import os
import random
import threading
import time
from collections.abc import Callable, Generator, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import pytest

from ..samples import ReplicaSamples
from ..sampling import Request, replica_plan
from .messages import Done, Go, Idle, Message, Missed, Next, Ready, Samples, decode, encode
from .relaunch import absolute_nodeid

REPLICA_ENV = "OVERHEADBENCH_REPLICA"
WATCHDOG_GRACE_S = 0.5
"""After the controller dies, the replica gets this long to stop by itself (a
KeyboardInterrupt tears its fixtures down) before the watchdog ends the process."""
EXIT_CONTROLLER_GONE = 70
SKIP_REASON = "overheadbench replica: this replica does not measure this test"


class ControllerGone(Exception):
    """In a replica: the controller has finished or died, so this session stops."""


def in_replica() -> bool:
    """Whether this process is an overheadbench replica (a fresh re-run of a pair's test).

    For a test or fixture that must behave differently there, e.g. not write a shared file.
    """
    return REPLICA_ENV in os.environ


@dataclass(frozen=True)
class ReplicaRequest:
    """What a replica is asked to do, passed as JSON in ``OVERHEADBENCH_REPLICA``."""

    nodeids: tuple[str, ...]
    """The timed overhead tests, in the controller's order (its rootdir is the replica's: the
    same command line in the same directory)."""
    first: str
    """The test to measure first."""
    messages_fd: int
    commands_fd: int
    lifeline_fd: int

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> ReplicaRequest | None:
        raw = environ.get(REPLICA_ENV)
        if not raw:
            return None
        data = json.loads(raw)
        return cls(**{**data, "nodeids": tuple(data["nodeids"])})


class ReplicaChannel:
    """The replica's end of the two pipes."""

    def __init__(self, request: ReplicaRequest) -> None:
        self._out = os.fdopen(request.messages_fd, "wb")
        self._in = os.fdopen(request.commands_fd, "rb")

    def send(self, message: Message) -> None:
        try:
            self._out.write(encode(message))
            self._out.flush()
        except OSError:  # BrokenPipeError: the controller has gone
            raise ControllerGone("the overheadbench controller has gone") from None

    def receive(self) -> Message:
        line = self._in.readline()
        if not line:
            raise ControllerGone("the overheadbench controller has finished")
        return decode(line)


def watch_controller(
    lifeline_fd: int, grace_s: float = WATCHDOG_GRACE_S, exit_process: Callable[[int], Any] = os._exit
) -> threading.Thread:
    """Start a daemon thread that ends this process when ``lifeline_fd`` reaches end of file.

    Blocked in ``read`` it costs nothing while pairs are timed (no polling).
    """

    def watch() -> None:
        while os.read(lifeline_fd, 1):
            pass
        _thread.interrupt_main()
        time.sleep(grace_s)
        exit_process(EXIT_CONTROLLER_GONE)

    thread = threading.Thread(target=watch, name="overheadbench-lifeline", daemon=True)
    thread.start()
    return thread


def order_like(items: list[Any], nodeids: tuple[str, ...] | list[str]) -> tuple[list[Any], list[Any]]:
    """``items`` kept and reordered as ``nodeids`` lists them, and the rest (to deselect).

    A replica must meet the pairs in the controller's order, whatever order its own
    collection produced (pytest-randomly, a conftest that reorders).
    """
    position = {nodeid: index for index, nodeid in enumerate(nodeids)}
    kept = sorted((item for item in items if item.nodeid in position), key=lambda item: position[item.nodeid])
    return kept, [item for item in items if item.nodeid not in position]


class ReplicaPlugin:
    """Registered in a replica process only; see the module docstring."""

    def __init__(self, config: pytest.Config, request: ReplicaRequest) -> None:
        self.request = request
        self.channel = ReplicaChannel(request)
        self.target: str | None = request.first
        """The test to run next; None: wait for the controller to name one."""
        self.parked_at: str | None = None
        """The test whose ``compare`` this replica reached (its outcome is then ours)."""
        # the selection, as paths that work from any directory; the user's paths already chose the conftests
        config.args[:] = [absolute_nodeid(nodeid, config.rootpath) for nodeid in request.nodeids]
        watch_controller(request.lifeline_fd)
        self._layout = _random_layout()

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        kept, rest = order_like(items, self.request.nodeids)
        if rest:
            config.hook.pytest_deselected(items=rest)
        items[:] = kept

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """Run the test the controller named; skip others before any fixture is set up."""
        if self.target is None:
            self.target = self._next_target()
        if item.nodeid != self.target:
            pytest.skip(SKIP_REASON)

    def _next_target(self) -> str:
        try:
            self.channel.send(Idle())
            command = self.channel.receive()
        except ControllerGone as exc:
            pytest.exit(str(exc), returncode=0)
        if not isinstance(command, Next):
            raise RuntimeError(f"overheadbench replica: expected a test to run, got {command!r}")
        return command.nodeid

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Any:
        try:
            return (yield)
        except ControllerGone as exc:
            pytest.exit(str(exc), returncode=0)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Tell the controller when the test it sent this replica to ended before ``compare``."""
        if report.nodeid != self.target:
            return
        if self.parked_at != self.target and (report.failed or report.skipped or report.when == "teardown"):
            outcome = report.outcome if report.when != "teardown" or report.failed else "ended"
            self.channel.send(Missed(report.nodeid, report.when, outcome, _report_text(report)))
            self.target = None
        elif report.when == "teardown":
            self.target = None
            self.parked_at = None

    in_replica = True

    def plan(
        self, nodeid: str, settings: Any, rng: random.Random, clock_ns: Callable[[], int], too_wide: Any = None
    ) -> Generator[Request, int, list[ReplicaSamples]]:
        """The replica's procedure for a pair (a :class:`~overheadbench.fixture.Replication`'s):
        park, sample when told to (with the controller's settings for the pair), park until
        the controller has finished the pair. No samples when told the pair is done."""
        self.parked_at = nodeid
        self.channel.send(Ready(nodeid))
        command = self.channel.receive()
        if not isinstance(command, Go):
            return []
        samples = yield from replica_plan(command.settings, rng, clock_ns, command.calls_per_block)
        self.channel.send(Samples(samples))
        if not isinstance(self.channel.receive(), Done):
            raise RuntimeError("overheadbench replica: expected the end of the pair")
        return [samples]


def _random_layout() -> list[bytearray]:
    """Memory held for the replica's life, of a random size, allocated before the tests are
    imported: it moves where their code and objects land, so that no one layout (fixed by what
    the session imported before them) biases every replica alike, and the spread between the
    replicas' medians carries the layout effect instead of hiding it."""
    rng = random.Random()
    return [bytearray(rng.randrange(16, 2048)) for _ in range(rng.randrange(1, 512))]


def _report_text(report: pytest.TestReport) -> str:
    """The test's traceback (or skip reason) and its captured output, as pytest shows them."""
    parts = [report.longreprtext.strip()] if report.longreprtext else []
    parts += [f"----- {title} -----\n{content.rstrip()}" for title, content in report.sections if content.strip()]
    return "\n".join(parts)
