"""The replica side: the plugin a replica process registers, and its channel.

A replica is the user's own pytest session, restarted by the controller (see
:mod:`.relaunch`) with ``OVERHEADBENCH_REPLICA`` in its environment. This plugin turns that
session into one the controller drives: it collects only the timed overhead tests, in the
controller's order; it runs a test only when told to (:class:`~.messages.Next`) and skips
the others *before* their fixtures are set up, so a replica sets up only the pairs it
measures; between tests it waits (:class:`~.messages.Idle`) holding no test's fixtures, only
session- and module-scoped ones, exactly as a sequential run holds them.

A replica must never outlive the controller: end of file on the command pipe (or a broken
pipe on sending) stops the session, and the watchdog :mod:`.lifeline` started before pytest
ends the process if the controller dies.
"""

from __future__ import annotations

import contextlib
import random
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ..core.timeouts import heard
from ..core.turns import At, turns
from ..engine.calibration import calibrate
from ..engine.counted_samples import CountSamples
from ..engine.profiles import Profiled
from ..engine.samples import Clock, ReplicaSamples
from ..engine.sampling import PairPlan, Sampled, Stopping, replica_plan
from ..engine.settings import Settings
from . import messages
from .launch import ReplicaRequest
from .messages import (
    Collected,
    Counted,
    Done,
    Explain,
    Explained,
    Figured,
    Go,
    Idle,
    Look,
    Looked,
    Message,
    Missed,
    Next,
    Ready,
    Samples,
    Take,
    Turn,
)
from .own_imports import imported_from_head
from .relaunch import absolute_nodeid
from .replica_channel import ControllerGone, ReplicaChannel

SKIP_REASON = "overheadbench replica: this replica does not measure this test"
ENDED_AT_TURN = "overheadbench replica: the controller ended the test between its rounds"
BEATS_PER_SILENCE = 6
"""How often at most a replica working on an order says so: this many times within the controller's
silence limit for replicas (``replica_timeout_s``, 60 s by default: every 10 s)."""


def order_like(items: list[Any], nodeids: tuple[str, ...] | list[str]) -> tuple[list[Any], list[Any]]:
    """``items`` kept and reordered as ``nodeids`` lists them, and the rest (to deselect).

    A replica must meet the pairs in the controller's order, whatever order its own
    collection produced (pytest-randomly, a conftest that reorders).
    """
    position = {nodeid: index for index, nodeid in enumerate(nodeids)}
    kept = sorted((item for item in items if item.nodeid in position), key=lambda item: position[item.nodeid])
    return kept, [item for item in items if item.nodeid not in position]


class Turning:
    """A replica's rounds and looks of a transport test taking turns (:attr:`~.messages.Go.turns`):
    each round waits for the controller's :class:`~.messages.Take`, each look for its
    :class:`~.messages.Looked`; a :class:`~.messages.Done` instead ends the test there."""

    def __init__(self, plugin: ReplicaPlugin) -> None:
        self.plugin = plugin

    @property
    def taking(self) -> bool:
        order = self.plugin.order
        return self.plugin.sampling and order is not None and order.turns

    @property
    def asks(self) -> bool:
        order = self.plugin.order
        return self.taking and order is not None and order.looks

    def turn(self) -> None:
        if self.taking:
            self._answer(Turn(), Take)

    def look(self, at: At, wanted: bool, affordable: bool) -> bool:
        answer = self._answer(Look(at.row, at.rounds), Looked)
        return isinstance(answer, Looked) and answer.more

    def _answer(self, said: Turn | Look, expected: type) -> Message:
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("overheadbench replica: a transport round taking turns off the main thread")
        self.plugin.channel.send(said)
        command = self.plugin.channel.receive()
        if isinstance(command, Done):
            self.plugin.sampling = False
            pytest.skip(ENDED_AT_TURN)
        if not isinstance(command, expected):
            raise RuntimeError(f"overheadbench replica: expected {expected.__name__}, got {command!r}")
        return command


class ReplicaPlugin:
    """Registered in a replica process only; see the module docstring."""

    def __init__(self, config: pytest.Config, request: ReplicaRequest) -> None:
        self.nodeids = request.nodeids()
        self.channel = ReplicaChannel(request.ends)
        self.target: str | None = self.nodeids[0]
        """The test to run next; None: wait for the controller to name one."""
        self.parked_at: str | None = None
        """The test whose ``compare`` this replica reached (its outcome is then ours)."""
        self.sampling = False
        """Between :class:`~.messages.Go` and sending the samples: a failure now is the pair's."""
        self.order: Go | None = None
        """The order being worked on (its settings say how often to say so)."""
        self.explaining: str | None = None
        """The test whose profiles the controller asked for (:class:`~.messages.Explain`), until sent."""
        self.trees = (Path(request.head_root), Path(request.own_root)) if request.head_root else None
        self.collected: set[str] = set()
        self.collect_errors: list[pytest.CollectReport] = []
        # the selection: the tests' files, as paths that work from any directory (one argument
        # per node id made collection quadratic in a large suite); the tests are picked out of
        # them below. The user's paths already chose the conftests.
        files = dict.fromkeys(nodeid.partition("::")[0] for nodeid in self.nodeids)
        here = [file for file in files if (config.rootpath / file).exists()]  # the base tree may lack some
        config.args[:] = [absolute_nodeid(file, config.rootpath) for file in here] or [str(config.rootpath)]
        self._layout = _random_layout()
        self._hearing = contextlib.ExitStack()
        self._hearing.enter_context(heard(self._working))
        self._hearing.enter_context(turns(Turning(self)))
        self.channel.send(messages.Configured())

    def pytest_unconfigure(self) -> None:
        self._hearing.close()

    def _working(self) -> None:
        """Progress in the main thread while an order is owed: a long test's window or stream done."""
        if self.sampling and self.order is not None and threading.current_thread() is threading.main_thread():
            self.channel.beat(self.order.settings.replica_timeout_s / BEATS_PER_SILENCE)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        kept, rest = order_like(items, self.nodeids)
        if rest:
            config.hook.pytest_deselected(items=rest)
        items[:] = kept
        self.collected = {item.nodeid for item in kept}
        self.channel.send(Collected())
        if self.target not in self.collected:  # a test the base tree does not have (or cannot collect)
            self._not_here()

    def _not_here(self) -> None:
        """Tell the controller this tree has no such test (or its file did not collect), then
        wait for a test it has."""
        assert self.target is not None
        errors = [r for r in self.collect_errors if self.target.startswith(r.nodeid)]
        report = "\n".join(_report_text(r) for r in errors)
        self.channel.send(Missed(self.target, "collect", "failed" if errors else "missing", report))
        self.target = None

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collect_errors.append(report)

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
        if command.nodeid not in self.collected:
            self.target = command.nodeid
            self._not_here()
            return self._next_target()
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
        if self.sampling and report.failed:  # the pair's callables raised: the controller waits for samples
            self.sampling = False
            self.channel.send(Missed(report.nodeid, "sampling", "failed", _report_text(report)))
            self.target = None
        elif self.parked_at != self.target and (report.failed or report.skipped or report.when == "teardown"):
            outcome = report.outcome if report.when != "teardown" or report.failed else "ended"
            self.channel.send(Missed(report.nodeid, report.when, outcome, _report_text(report)))
            self.target = None
        elif report.when == "teardown":
            self.target = None
            self.parked_at = None

    in_replica = True

    def plan(
        self, nodeid: str, settings: Settings, rng: random.Random, clock_ns: Clock, stop: Stopping | None = None
    ) -> PairPlan:
        """The replica's procedure for a pair (a :class:`~overheadbench.engine.sampling.Replication`'s):
        park, sample when told to (with the controller's settings for the pair, not ``settings``, nor the
        controller's ``stop``), park until the controller has finished the pair. No samples when told
        the pair is done."""
        command = self.park(nodeid)
        if command is None:
            return Sampled([])
        sizes = command.sizes
        if command.own_sizes:
            sizes = sizes.at_place((yield from calibrate(command.settings)))
        samples = yield from replica_plan(command.settings, rng, clock_ns, sizes)
        self.finish(Samples(samples))
        return Sampled([samples])

    def park(self, nodeid: str) -> Go | None:
        """Park at the pair's ``compare`` and wait: the controller's :class:`~.messages.Go` (its
        block size and settings), or None when it ends the pair unmeasured or asks for its profiles
        instead (:meth:`asked_to_explain`). A replica of the base tree first checks where its
        project's modules came from."""
        self.parked_at = nodeid
        if self.trees is not None and (story := imported_from_head(*self.trees)):
            self.channel.send(Missed(nodeid, "imports", "failed", story))
            return None
        self.channel.send(Ready(nodeid))
        command = self.channel.receive()
        if isinstance(command, Explain):
            self.sampling, self.explaining = True, nodeid
        if not isinstance(command, Go):
            return None
        self.sampling, self.order = True, command
        return command

    def asked_to_explain(self, nodeid: str) -> Callable[[Profiled], None] | None:
        return self._explained if self.explaining == nodeid else None

    def _explained(self, profiled: Profiled) -> None:
        self.explaining = None
        self.finish(Explained(profiled))

    def deliver_counts(self, counts: CountSamples, probe: ReplicaSamples | None = None) -> None:
        """A replica of the base tree, in count mode: send the pair's counts and its time probe (see :meth:`park`)."""
        self.finish(Counted(counts, probe))

    def finish(self, result: Samples | Counted | Figured | Explained) -> None:
        """Send the pair's samples or counts and park until the controller ends the pair."""
        self.sampling = False
        self.channel.send(result)
        if not isinstance(self.channel.receive(), Done):
            raise RuntimeError("overheadbench replica: expected the end of the pair")


def _random_layout() -> list[bytearray]:
    """Memory held for the replica's life, of a random size, allocated before the tests are
    imported: it moves where their code and objects land, so that no one layout (fixed by what
    the session imported before them) biases every replica alike, and the spread between the
    replicas' medians carries the layout effect instead of hiding it."""
    rng = random.Random()
    return [bytearray(rng.randrange(16, 2048)) for _ in range(rng.randrange(1, 512))]


def _report_text(report: pytest.TestReport | pytest.CollectReport) -> str:
    """The test's traceback (or skip reason) and its captured output, as pytest shows them."""
    parts = [report.longreprtext.strip()] if report.longreprtext else []
    parts += [f"----- {title} -----\n{content.rstrip()}" for title, content in report.sections if content.strip()]
    return "\n".join(parts)
