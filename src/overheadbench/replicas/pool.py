"""The controller side: the pool of replica processes (the procedure for one pair is
:mod:`overheadbench.replicas.places`'s: every place of the session has a pool).

Why one pool for the whole session: a replica is a pytest process, ~0.35 s of CPU to start
(more with a suite's plugins and session fixtures). Started per pair, that cost landed on
every pair; a replica that stays and runs later pairs too pays it once.

Why replicas move only while the controller waits: replica processes working *at the same
time* as a timed block disturbed it (A/A sd 1.2–1.6 points with -5% outliers on 2 cores,
against 0.3 alone). So a replica sets up a pair's fixtures only when the controller has
reached that pair's ``compare`` and waits for it (:meth:`ReplicaPool.ensure`), samples only
when told to, one at a time (:meth:`ReplicaPool.sample`), and tears the pair down before the
controller goes on (:meth:`ReplicaPool.release`). Between pairs every replica is idle,
blocked on a pipe, holding only session- and module-scoped fixtures.

Why few processes first: every process sets up the pair's fixtures. A pair starts with
``processes`` replicas and gets ``extra_processes`` more per round only while the interval
is wider than the target, up to ``max_processes``; see
:func:`overheadbench.replicas.rounds.places_plan`.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

from ..core.scratch import owned_folder, remove_folder
from ..core.timeouts import not_counted
from ..engine.profiles import Profiled
from ..engine.samples import BlockSizes, ReplicaSamples
from ..engine.settings import Settings
from .channel import Channel, Pipes
from .failures import ReplicaError, missed_story
from .launch import launch, start_batch, write_work
from .messages import (
    Counted,
    Done,
    Explain,
    Explained,
    Figured,
    Go,
    Look,
    Looked,
    Message,
    Missed,
    Next,
    Samples,
    Take,
    Turn,
    Working,
)
from .process import ReplicaProcess, State, waited
from .relaunch import Invocation
from .talk import EXIT_GRACE_S, Talk

OWING = (State.STARTING, State.COLLECTING, State.MOVING, State.SAMPLING)
"""The states in which a replica owes the controller an answer."""
_A = TypeVar("_A", bound=Message)


@dataclass
class ReplicaPool:
    """Fresh runs of the user's session for a session's pairs: started on demand, kept for
    later pairs, moved and sampled one at a time, stopped when the session ends."""

    invocation: Invocation
    nodeids: tuple[str, ...]
    timeout_s: float = 60.0
    """Longest a replica may stay silent (setting a test up, sampling, tearing down)."""
    clock_ns: Callable[[], int] = time.perf_counter_ns
    started: int = 0
    """Replica processes started so far (for the session's report)."""
    _replicas: list[ReplicaProcess] = field(default_factory=list)
    _parked: list[ReplicaProcess] = field(default_factory=list)
    _move_per_two_ns: float = 0.0
    _start_per_two_ns: float = 0.0
    start_ns: float = 0.0
    """Wall time spent waiting for new replicas to start (import and collect), all pairs' so far."""
    _folder: Path | None = None
    """This pool's scratch folder: the replicas' work file and pytest cache."""
    _work: Path = Path()
    trees: tuple[str, str] | None = None
    """For the base tree's replicas: (the head tree, the base tree): they check their imports."""
    channel: Callable[[], Channel] = Pipes.open
    """What each replica is started with and talked to through (:mod:`.channel`: pipes; a place
    kind that starts its replicas elsewhere brings its own)."""
    place: str = ""
    """Which replicas these are, in messages (``the base tree /ci/base``, ``the environment
    py313``); empty: the session's own."""
    talk: Talk = field(init=False)
    """What is said to each replica and heard back (a replica that fails is dropped, its story raised)."""

    def __post_init__(self) -> None:
        self.talk = Talk(self.timeout_s, self.place, self._discard, self.invocation.directory)

    def round_ns(self, count: int) -> float:
        """Predicted wall time to have ``count`` more replicas parked at the current pair."""
        idle = sum(1 for replica in self._replicas if replica.state is State.IDLE)
        per_two = max(self._move_per_two_ns, self._start_per_two_ns if count > idle else 0.0)
        return per_two * math.ceil(count / 2)

    def ensure(self, count: int, nodeid: str) -> None:
        """Have ``count`` replicas parked at ``nodeid``'s ``compare``: move idle ones there,
        start the missing ones, and wait until all are parked (nothing else runs meanwhile).

        New replicas start a batch at a time, as many at once as this machine has cores
        (:func:`start_batch`): ten importing a heavy framework at once on two cores took over
        60 s each where one alone took 6 s. Each one's silence is counted from its own start
        (and, moving to the test, from when the one before it arrived), so
        ``overhead_replica_timeout`` bounds one replica's silence, never a queue's.
        """
        position = self._position(nodeid)
        if self.talk.current != nodeid:
            self.talk.current, self._parked = nodeid, []
        started_ns = self.clock_ns()
        moved: list[ReplicaProcess] = []
        for replica in list(self._replicas):
            if len(self._parked) + len(moved) >= count:
                break
            if replica.state is not State.IDLE or replica.position >= position:
                continue
            if replica.process.poll() is not None:  # died while idle: not this pair's failure
                self._discard(replica)
                continue
            replica.log_from = replica.log.tell()
            replica.position, replica.state = position, State.MOVING
            self.talk.send(replica, Next(nodeid))
            moved.append(replica)
        new = count - len(self._parked) - len(moved)
        if new > 0:
            starting_ns = self.clock_ns()
            with not_counted():  # a new process's start is the session's cost, not the pair's
                moved += self._start_batches(position, nodeid, new)
            self.start_ns += self.clock_ns() - starting_ns
        deadline = time.monotonic() + self.timeout_s
        for replica in moved:
            self.talk.wait_until(replica, nodeid, deadline, State.PARKED)
            self._parked.append(replica)
            deadline = time.monotonic() + self.timeout_s
        if moved:
            per_two = (self.clock_ns() - started_ns) / math.ceil(len(moved) / 2)
            self._move_per_two_ns = per_two
            if new > 0:
                self._start_per_two_ns = per_two

    def _start_batches(self, position: int, nodeid: str, count: int) -> list[ReplicaProcess]:
        """Start ``count`` replicas, at most :func:`start_batch` at a time: the next starts when
        the oldest one still starting has collected its session. Each one's silence is counted
        from its own start or last word."""
        started: list[ReplicaProcess] = []
        starting: list[tuple[ReplicaProcess, float]] = []
        batch = start_batch()
        while len(started) < count or starting:
            while len(started) < count and len(starting) < batch:
                replica = self._start(position)
                started.append(replica)
                starting.append((replica, time.monotonic() + self.timeout_s))
            replica, deadline = starting.pop(0)
            self.talk.wait_until(replica, nodeid, deadline, State.MOVING)
        return started

    def sample(self, index: int, sizes: BlockSizes, settings: Settings, own_sizes: bool = False) -> ReplicaSamples:
        """Let the ``index``-th parked replica sample the pair; return its samples (``own_sizes``:
        see :attr:`~.messages.Go.own_sizes`)."""
        go = Go(sizes.baseline, settings, sizes.framework, sizes.timer, own_sizes)
        return self._go(index, go, Samples).samples

    def figures(self, index: int, settings: Settings) -> list[Any]:
        """Let the ``index``-th parked replica run its transport test; return its figures (JSON)."""
        return self._go(index, Go(1, settings), Figured).figures

    def tell(self, order: Go | Take | Looked) -> Turn | Look | Figured:
        """Tell the replica taking turns (:attr:`~.messages.Go.turns`) ``order``: where it waits next, or its end."""
        message = self._go(0, order, (Turn, Look, Figured))
        if not isinstance(message, Figured):
            self._parked[0].state = State.TURNING
        return cast("Turn | Look | Figured", message)  # _go took nothing else

    def count(self, nodeid: str, calls_per_block: int, settings: Settings) -> Counted:
        """Count a count-mode pair in one replica (exact: one process is the whole answer), with its time probe."""
        return self._once(nodeid, Go(calls_per_block, settings), Counted)

    def explain(self, nodeid: str) -> Profiled:
        """The pair's two profiles, from one replica (the head's less these explain a change between places)."""
        return self._once(nodeid, Explain(), Explained).profiled

    def _once(self, nodeid: str, order: Go | Explain, answer: type[_A]) -> _A:
        """One replica moved to ``nodeid`` and told ``order``: its ``answer`` (it is released after)."""
        try:
            self.ensure(1, nodeid)
            return self._go(0, order, answer)
        finally:
            self.release()

    def _go(self, index: int, order: Go | Explain | Take | Looked, answer: type[_A] | tuple[type[_A], ...]) -> _A:
        """Send the ``index``-th parked replica ``order``, take its ``answer`` (a failure there raised as its story)."""
        replica = self._parked[index]
        replica.state = State.SAMPLING
        self.talk.send(replica, order)
        message = self.talk.receive(replica)
        while isinstance(message, Working):  # a long test's window or stream done: its silence starts again
            message = self.talk.receive(replica)
        if isinstance(message, Missed):  # its callables raised there: the test's story, with the traceback
            replica.state = State.LEAVING
            raise ReplicaError(missed_story(message, self.place))
        if not isinstance(message, answer):
            raise self.talk.fail(replica, f"answered {message!r} instead of what it was asked for")
        replica.state = State.PARKED
        return message

    def release(self) -> None:
        """End the pair in every replica and wait until each is idle between tests again.

        A replica that dies or hangs now is dropped quietly: the pair is measured, and the
        next pair gets a fresh process in its place. After the session's last pair the
        replicas are not waited for: they end their sessions (2-3 s for ten on two cores, which
        the last pair's time used to carry) while this one goes on; :meth:`close` reaps them.
        """
        deadline = time.monotonic() + self.timeout_s
        last = self.talk.current == self.nodeids[-1]
        for replica in list(self._replicas):
            if last and replica.state is State.PARKED:
                self.talk.send(replica, Done())
                replica.state = State.LEAVING
                continue
            with contextlib.suppress(ReplicaError):  # dropped: the next pair gets a fresh one
                self.talk.settle(replica, deadline)
        self._parked = []

    def quiet(self, grace_s: float = EXIT_GRACE_S) -> None:
        """Wait (up to ``grace_s``) for the replicas still ending their sessions after the last pair
        (:meth:`release` does not wait for them): a profile taken meanwhile shares the machine with
        them (an async pair's read 30 times slower while ten replicas ended theirs)."""
        waited([replica for replica in self._replicas if replica.state is State.LEAVING], grace_s)

    def abandon(self) -> None:
        """End at once the replicas that owe an answer (starting, moving to the pair, or
        sampling): the pair's time is up, and waiting for them is what its limit prevents."""
        owing = [replica for replica in self._replicas if replica.state in OWING]
        for replica in owing:  # all at once: their watchdogs' grace runs side by side
            replica.cut_lifeline()
        for replica in owing:
            self._discard(replica)

    def close(self, grace_s: float = EXIT_GRACE_S) -> None:
        """Tell every replica to stop, give them ``grace_s`` to end their session, then end
        what is left (its lifeline closes: its watchdog interrupts it, then it is killed); safe twice."""
        replicas = list(self._replicas)
        for replica in replicas:
            replica.commands.close()
        waited(replicas, grace_s)
        for replica in replicas:  # all at once: their watchdogs' grace runs side by side
            replica.cut_lifeline()
        for replica in replicas:
            self._discard(replica)
        self._replicas.clear()
        if self._folder is not None:
            remove_folder(self._folder)
            self._folder = None

    def _position(self, nodeid: str) -> int:
        try:
            return self.nodeids.index(nodeid)
        except ValueError:
            raise ReplicaError(
                f"{nodeid}: not among the session's timed @pytest.mark.overhead tests when the "
                f"session started (was the marker added at run time?); replicas cannot re-run it"
            ) from None

    def _start(self, position: int) -> ReplicaProcess:
        if self._folder is None:
            self._folder = owned_folder("replicas")
            self._work = write_work(self._folder, self.nodeids)
        head_root, own_root = self.trees or ("", "")
        replica = launch(self.invocation, self._folder, self._work, position, (head_root, own_root), self.channel)
        self.started += 1
        self._replicas.append(replica)
        return replica

    def _discard(self, replica: ReplicaProcess) -> None:
        """Stop a replica for good (its lifeline closes, its watchdog ends it) and free its pipes."""
        if replica in self._replicas:
            self._replicas.remove(replica)
        if replica in self._parked:
            self._parked.remove(replica)
        replica.stop()
