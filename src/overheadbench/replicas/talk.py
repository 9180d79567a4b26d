"""What the controller says to a replica and hears back, one message a line (:mod:`.messages`):
a replica that exits, stays silent past its time or talks nonsense is dropped, and its story
(what happened, its own output for this test) raised as a :class:`~.failures.ReplicaError`.
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from ..core.exits import exit_story
from ..core.timeouts import progressed, waiting_on
from .failures import SAMPLING_SILENCE, SLOW_FIXTURES, SLOW_START, ReplicaError, missed_error, which
from .messages import (
    Collected,
    Configured,
    Counted,
    Done,
    Explained,
    Idle,
    Message,
    Missed,
    ProtocolError,
    Ready,
    Samples,
    decode,
    encode,
)
from .process import ReplicaProcess, State

EXIT_GRACE_S = 5.0
SILENCES = {State.SAMPLING: SAMPLING_SILENCE, State.STARTING: SLOW_START, State.COLLECTING: SLOW_START}
"""Why a replica may be silent so long, by what it was doing (else: slow fixtures)."""
QUOTED_LINES = 40


@dataclass
class Talk:
    """One pool's talk with its replicas: ``timeout_s`` of silence at most, ``place`` naming them
    in messages, ``drop`` stopping one for good, ``current`` the test they are moved to."""

    timeout_s: float
    place: str
    drop: Callable[[ReplicaProcess], None]
    directory: Path
    """The session's invocation folder (a missed test's path is told from it)."""
    current: str = ""

    def wait_until(self, replica: ReplicaProcess, nodeid: str, deadline: float, until: State) -> None:
        """Receive until ``replica`` has collected its session (``until`` MOVING) or is parked
        at ``nodeid`` (``until`` PARKED)."""
        while replica.state not in (until, State.PARKED):
            message = self.receive(replica, deadline=deadline)
            if isinstance(message, Configured) and replica.state is State.STARTING:
                replica.state = State.COLLECTING
                deadline = time.monotonic() + self.timeout_s  # its silence counts from its last word
            elif isinstance(message, Collected) and replica.state in (State.STARTING, State.COLLECTING):
                replica.state = State.MOVING
                if until is State.PARKED:
                    deadline = time.monotonic() + self.timeout_s
            elif isinstance(message, Ready) and message.nodeid == nodeid:
                replica.state = State.PARKED
            elif isinstance(message, Missed):
                replica.state = State.LEAVING
                raise missed_error(message, self.directory, self.place)
            else:
                self.fail(replica, f"answered {message!r} while {replica.state.value} ({nodeid})")

    def settle(self, replica: ReplicaProcess, deadline: float) -> None:
        """Bring ``replica`` to idle: end a parked pair, take samples still coming, wait."""
        while replica.state is not State.IDLE:
            if replica.state in (State.PARKED, State.TURNING):
                self.send(replica, Done())
                replica.state = State.LEAVING
            message = self.receive(replica, quiet=True, deadline=deadline)
            if isinstance(message, Idle):
                replica.state = State.IDLE
            elif isinstance(message, (Ready, Samples, Counted, Explained)):
                replica.state = State.PARKED
            elif isinstance(message, Missed):
                replica.state = State.LEAVING

    def send(self, replica: ReplicaProcess, message: Message) -> None:
        try:
            replica.commands.write(encode(message))
            replica.commands.flush()
        except BrokenPipeError:
            self.fail(replica, exit_story(self.exit_code(replica)))

    def receive(self, replica: ReplicaProcess, quiet: bool = False, deadline: float | None = None) -> Message:
        """The replica's next message; a replica that exits, stays silent past ``deadline``
        (default: ``timeout_s`` from now) or talks nonsense is dropped (quietly, or raising
        :class:`ReplicaError` with its story)."""
        deadline = time.monotonic() + self.timeout_s if deadline is None else deadline
        with waiting_on(f"a replica {which(self.place)} was {replica.state.value}"):
            while b"\n" not in replica.buffer:
                readable, _, _ = select.select([replica.messages_fd], [], [], max(0.0, deadline - time.monotonic()))
                if not readable:
                    hint = SILENCES.get(replica.state, SLOW_FIXTURES)
                    silent = f"sent nothing for {self.timeout_s:g} s while {replica.state.value} ({hint})"
                    self.fail(replica, silent, quiet=quiet)
                chunk = os.read(replica.messages_fd, 1 << 16)
                if not chunk:
                    story = exit_story(self.exit_code(replica))
                    self.fail(replica, f"{story} while {replica.state.value}", quiet=quiet)
                replica.buffer += chunk
        line, _, replica.buffer = replica.buffer.partition(b"\n")
        progressed()  # a replica spoke: the pair is not silent
        try:
            return decode(line)
        except ProtocolError as exc:
            self.fail(replica, str(exc), quiet=quiet)

    def exit_code(self, replica: ReplicaProcess) -> int | None:
        try:
            return replica.process.wait(timeout=EXIT_GRACE_S)
        except subprocess.TimeoutExpired:
            return None

    def fail(self, replica: ReplicaProcess, what: str, quiet: bool = False) -> NoReturn:
        """Drop a replica that cannot go on and raise its story: what happened, and its own
        output since it was sent to this test (its traceback, if it printed one)."""
        replica.log.seek(replica.log_from)
        output = replica.log.read().decode(errors="replace").strip().splitlines()
        self.drop(replica)
        tail = "\n".join(output[-QUOTED_LINES:])
        raise ReplicaError(
            f"{self.current}: a replica {which(self.place)} {what}."
            + (f" Its output for this test ended:\n{tail}" if tail and not quiet else "")
        )
