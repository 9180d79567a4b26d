"""The controller side: the pool of replica processes (the procedure for one pair is
:mod:`overheadbench.replicas.replication`'s).

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
:func:`overheadbench.replicas.replication.pair_plan`.
"""

from __future__ import annotations

import math
import os
import select
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import IO, NoReturn, TypeVar

from ..core.exits import exit_story
from ..core.scratch import owned_folder, remove_folder
from ..engine.samples import CountSamples, ReplicaSamples
from ..engine.settings import Settings
from ..engine.valgrind import SCRATCH_ENV
from .lifeline import REPLICA_ENV
from .messages import Counted, Done, Go, Idle, Message, Missed, Next, ProtocolError, Ready, Samples, decode, encode
from .relaunch import Invocation
from .replica import ReplicaRequest, write_work

EXIT_GRACE_S = 5.0
_Answer = TypeVar("_Answer", Samples, Counted)
QUOTED_LINES = 40
EXCLUSIVE_HINT = (
    "A replica is a fresh run of this test's own session while this process still holds its fixtures: a fixture "
    "that holds an exclusive resource (a fixed port, a file, a lock) cannot be set up there at the same time. "
    "Measure this test in this process only with @pytest.mark.overhead(..., processes=1) (or "
    "--overhead-processes=1 for the session), or make the resource per process (port 0, tmp_path)."
)


class ReplicaError(Exception):
    """A replica could not measure the pair; the message names the test and quotes the replica."""


class NotInTree(ReplicaError):
    """The replica's tree has no such test (``failed``: its file did not collect there)."""

    def __init__(self, message: str, failed: bool) -> None:
        super().__init__(message)
        self.failed = failed


class WrongTree(ReplicaError):
    """A replica of the base tree imported the head tree's code: no pair can be compared."""


class State(Enum):
    MOVING = "moving to a test"
    PARKED = "parked at compare"
    SAMPLING = "sampling"
    LEAVING = "ending a test"
    IDLE = "idle between tests"


SILENCE_HINTS = {
    State.SAMPLING: "a callable that never returns? Each side is called in blocks; a slow but finishing "
    "pair may raise overhead_replica_timeout",
}
"""Why a replica may stay silent, by what it was doing (default: slow fixtures)."""
SLOW_FIXTURES = "raise overhead_replica_timeout if its fixtures are that slow"


@dataclass(eq=False)
class _Replica:
    process: subprocess.Popen[bytes]
    log: IO[bytes]
    messages_fd: int
    commands: IO[bytes]
    lifeline_fd: int
    """The write end of the lifeline pipe: never written, closed when the replica must die."""
    position: int
    """Index (in the pool's node ids) of the test it was last sent to."""
    state: State = State.MOVING
    log_from: int = 0
    """Where its output for the current test starts in ``log``."""
    buffer: bytes = b""


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
    _replicas: list[_Replica] = field(default_factory=list)
    _parked: list[_Replica] = field(default_factory=list)
    _current: str = ""
    _move_per_two_ns: float = 0.0
    _start_per_two_ns: float = 0.0
    _folder: Path | None = None
    """This pool's scratch folder: the replicas' work file and pytest cache."""
    _work: Path = Path()
    trees: tuple[str, str] | None = None
    """For the base tree's replicas: (the head tree, the base tree): they check their imports."""

    def round_ns(self, count: int) -> float:
        """Predicted wall time to have ``count`` more replicas parked at the current pair."""
        idle = sum(1 for replica in self._replicas if replica.state is State.IDLE)
        per_two = max(self._move_per_two_ns, self._start_per_two_ns if count > idle else 0.0)
        return per_two * math.ceil(count / 2)

    def ensure(self, count: int, nodeid: str) -> None:
        """Have ``count`` replicas parked at ``nodeid``'s ``compare``: move idle ones there,
        start the missing ones, and wait until all are parked (nothing else runs meanwhile)."""
        position = self._position(nodeid)
        if self._current != nodeid:
            self._current, self._parked = nodeid, []
        started_ns, new = self.clock_ns(), 0
        moved: list[_Replica] = []
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
            self._send(replica, Next(nodeid))
            moved.append(replica)
        while len(self._parked) + len(moved) < count:
            moved.append(self._start(position))
            new += 1
        deadline = time.monotonic() + self.timeout_s  # they move together: one silence limit for all
        for replica in moved:
            self._await_ready(replica, nodeid, deadline)
            self._parked.append(replica)
        if moved:
            per_two = (self.clock_ns() - started_ns) / math.ceil(len(moved) / 2)
            self._move_per_two_ns = per_two
            if new:
                self._start_per_two_ns = per_two

    def sample(self, index: int, calls_per_block: int, settings: Settings) -> ReplicaSamples:
        """Let the ``index``-th parked replica sample the pair; return its samples."""
        return self._go(index, calls_per_block, settings, Samples).samples

    def count(self, nodeid: str, calls_per_block: int, settings: Settings) -> CountSamples:
        """Count a count-mode pair in one replica (counts are exact: one process is the whole answer)."""
        try:
            self.ensure(1, nodeid)
            return self._go(0, calls_per_block, settings, Counted).counts
        finally:
            self.release()

    def _go(self, index: int, calls_per_block: int, settings: Settings, answer: type[_Answer]) -> _Answer:
        replica = self._parked[index]
        replica.state = State.SAMPLING
        self._send(replica, Go(calls_per_block, settings))
        message = self._receive(replica)
        if isinstance(message, Missed):  # its callables raised there: the test's story, with the traceback
            replica.state = State.LEAVING
            raise ReplicaError(self._missed_story(message))
        if not isinstance(message, answer):
            raise self._fail(replica, f"answered {message!r} instead of its {answer.__name__.lower()}")
        replica.state = State.PARKED
        return message

    def release(self) -> None:
        """End the pair in every replica and wait until each is idle between tests again.

        A replica that dies or hangs now is dropped quietly: the pair is measured, and the
        next pair gets a fresh process in its place.
        """
        deadline = time.monotonic() + self.timeout_s
        for replica in list(self._replicas):
            try:
                self._settle(replica, deadline)
            except ReplicaError:
                pass
        self._parked = []

    def close(self, grace_s: float = EXIT_GRACE_S) -> None:
        """Tell every replica to stop, give them ``grace_s`` to end their session, then end
        what is left (its lifeline closes: its watchdog interrupts it, then it is killed); safe twice."""
        replicas = list(self._replicas)
        for replica in replicas:
            replica.commands.close()
        deadline = time.monotonic() + grace_s
        for replica in replicas:
            try:
                replica.process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        for replica in replicas:  # all at once: their watchdogs' grace runs side by side
            _cut_lifeline(replica)
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

    def _start(self, position: int) -> _Replica:
        if self._folder is None:
            self._folder = owned_folder("replicas")
            self._work = write_work(self._folder, self.nodeids)
        messages_read, messages_write = os.pipe()
        commands_read, commands_write = os.pipe()
        lifeline_read, lifeline_write = os.pipe()
        head_root, own_root = self.trees or ("", "")
        request = ReplicaRequest(
            str(self._work), position, messages_write, commands_read, lifeline_read, head_root, own_root
        )
        extra = {REPLICA_ENV: request.to_env(), SCRATCH_ENV: str(self._folder)}
        log = tempfile.TemporaryFile(prefix="overheadbench-replica-")
        child_ends = (messages_write, commands_read, lifeline_read)
        try:
            process = subprocess.Popen(
                self.invocation.command(self._folder / "cache"),
                cwd=self.invocation.directory,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                pass_fds=child_ends,
                env=self.invocation.environ(os.environ, extra),
            )
        except BaseException:
            for fd in (messages_read, commands_write, lifeline_write):
                os.close(fd)
            log.close()
            raise
        finally:
            for fd in child_ends:
                os.close(fd)
        self.started += 1
        replica = _Replica(process, log, messages_read, os.fdopen(commands_write, "wb"), lifeline_write, position)
        self._replicas.append(replica)
        return replica

    def _await_ready(self, replica: _Replica, nodeid: str, deadline: float) -> None:
        while replica.state is not State.PARKED:
            message = self._receive(replica, deadline=deadline)
            if isinstance(message, Ready) and message.nodeid == nodeid:
                replica.state = State.PARKED
            elif isinstance(message, Missed):
                replica.state = State.LEAVING
                raise self._missed(message)
            else:
                self._fail(replica, f"answered {message!r} while moving to {nodeid}")

    def _missed(self, missed: Missed) -> ReplicaError:
        """The error for a replica that did not reach the pair: the base tree's own kinds, or the test's story."""
        if missed.when == "imports":
            return WrongTree(missed.report)
        if missed.when == "collect":
            what = "does not collect there:\n" + missed.report if missed.outcome == "failed" else "has no such test"
            return NotInTree(
                f"{missed.nodeid}: the tree of {self.invocation.directory} {what}", missed.outcome == "failed"
            )
        return ReplicaError(self._missed_story(missed))

    def _missed_story(self, missed: Missed) -> str:
        where = {
            "setup": "while setting the test up",
            "call": "while running the test, before its pair was ready to sample",
            "teardown": "without reaching overhead.compare",
            "sampling": "while sampling the pair (a callable raised)",
        }.get(missed.when, missed.when)
        which = f"of the base tree {self.trees[1]}" if self.trees else "process (a fresh run of this test's session)"
        story = f"{missed.nodeid}: in a replica {which} the test {missed.outcome} {where}:\n{missed.report}"
        return story + (f"\n{EXCLUSIVE_HINT}" if missed.when == "setup" and missed.outcome == "failed" else "")

    def _settle(self, replica: _Replica, deadline: float) -> None:
        """Bring ``replica`` to idle: end a parked pair, take samples still coming, wait."""
        while replica.state is not State.IDLE:
            if replica.state is State.PARKED:
                self._send(replica, Done())
                replica.state = State.LEAVING
            message = self._receive(replica, quiet=True, deadline=deadline)
            if isinstance(message, Idle):
                replica.state = State.IDLE
            elif isinstance(message, (Ready, Samples, Counted)):
                replica.state = State.PARKED
            elif isinstance(message, Missed):
                replica.state = State.LEAVING

    def _send(self, replica: _Replica, message: Message) -> None:
        try:
            replica.commands.write(encode(message))
            replica.commands.flush()
        except BrokenPipeError:
            self._fail(replica, exit_story(self._exit_code(replica)))

    def _receive(self, replica: _Replica, quiet: bool = False, deadline: float | None = None) -> Message:
        """The replica's next message; a replica that exits, stays silent past ``deadline``
        (default: ``timeout_s`` from now) or talks nonsense is dropped (quietly, or raising
        :class:`ReplicaError` with its story)."""
        deadline = time.monotonic() + self.timeout_s if deadline is None else deadline
        while b"\n" not in replica.buffer:
            readable, _, _ = select.select([replica.messages_fd], [], [], max(0.0, deadline - time.monotonic()))
            if not readable:
                self._fail(replica, f"sent nothing for {self.timeout_s:g} s while {replica.state.value} "
                           f"({SILENCE_HINTS.get(replica.state, SLOW_FIXTURES)})", quiet=quiet)  # fmt: skip
            chunk = os.read(replica.messages_fd, 1 << 16)
            if not chunk:
                self._fail(replica, f"{exit_story(self._exit_code(replica))} while {replica.state.value}", quiet=quiet)
            replica.buffer += chunk
        line, _, replica.buffer = replica.buffer.partition(b"\n")
        try:
            return decode(line)
        except ProtocolError as exc:
            self._fail(replica, str(exc), quiet=quiet)

    def _exit_code(self, replica: _Replica) -> int | None:
        try:
            return replica.process.wait(timeout=EXIT_GRACE_S)
        except subprocess.TimeoutExpired:
            return None

    def _fail(self, replica: _Replica, what: str, quiet: bool = False) -> NoReturn:
        """Drop a replica that cannot go on and raise its story: what happened, and its own
        output since it was sent to this test (its traceback, if it printed one)."""
        replica.log.seek(replica.log_from)
        output = replica.log.read().decode(errors="replace").strip().splitlines()
        self._discard(replica)
        tail = "\n".join(output[-QUOTED_LINES:])
        raise ReplicaError(
            f"{self._current}: a replica process (a fresh run of this test's session) {what}."
            + (f" Its output for this test ended:\n{tail}" if tail and not quiet else "")
        )

    def _discard(self, replica: _Replica) -> None:
        """Stop a replica for good (its lifeline closes, its watchdog ends it) and free its pipes."""
        if replica in self._replicas:
            self._replicas.remove(replica)
        if replica in self._parked:
            self._parked.remove(replica)
        _cut_lifeline(replica)
        if replica.process.poll() is None:
            try:
                replica.process.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                replica.process.kill()
                replica.process.wait()
        if not replica.commands.closed:
            try:
                replica.commands.close()
            except BrokenPipeError:
                pass
        os.close(replica.messages_fd)
        replica.log.close()


def _cut_lifeline(replica: _Replica) -> None:
    """Close the replica's lifeline (its watchdog interrupts it, then ends it); safe twice."""
    if replica.lifeline_fd >= 0:
        os.close(replica.lifeline_fd)
        replica.lifeline_fd = -1


def affordable(
    elapsed_ns: float, sampling_ns: float, pools: Sequence[ReplicaPool], more: int, budget_ns: float
) -> bool:
    """Whether ``more`` processes per pool fit the pair's budget: what it took so far, their
    sampling, and the predicted time to bring them to the pair (start-up or set-up)."""
    return elapsed_ns + sampling_ns + sum(pool.round_ns(more) for pool in pools) <= budget_ns
