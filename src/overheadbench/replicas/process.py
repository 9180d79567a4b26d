"""One replica process as the controller holds it: its pipes, its output, and what it is
doing (its :class:`State`, whose words the pool's messages use: "sent nothing for 60 s while
sampling"). The pool (:mod:`.pool`) drives many of them through each pair.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import IO

from .channel import ControllerEnds


class State(Enum):
    STARTING = "starting (importing Python, pytest, the session's plugins and conftest files)"
    COLLECTING = "collecting the session (importing its test files)"
    MOVING = "moving to a test"
    PARKED = "parked at compare"
    SAMPLING = "sampling"
    TURNING = "waiting for its turn"
    LEAVING = "ending a test"
    IDLE = "idle between tests"


@dataclass(eq=False)
class ReplicaProcess:
    """A replica process and its ends of the pipes."""

    process: subprocess.Popen[bytes]
    log: IO[bytes]
    ends: ControllerEnds
    """The controller's ends of its channel (:mod:`.channel`)."""
    position: int
    """Index (in the pool's node ids) of the test it was last sent to."""
    state: State = State.STARTING
    log_from: int = 0
    """Where its output for the current test starts in ``log``."""
    buffer: bytes = b""
    _lifeline_cut: bool = False
    """The lifeline's end is never written: closed (once) when the replica must die."""

    @property
    def messages_fd(self) -> int:
        return self.ends.messages_fd

    @property
    def commands(self) -> IO[bytes]:
        return self.ends.commands

    def end_group(self) -> None:
        """Kill what is left of the replica's process group once it has ended: a fixture's
        subprocess that outlived its test (a server never stopped) was left by every replica, one
        orphan each. Its group outlives it only while such a process is in it, so its id is not
        anyone else's; a child that left the group (``setsid``) is its own."""
        if not hasattr(os, "killpg"):  # Windows: no process groups of this kind
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    def cut_lifeline(self) -> None:
        """Close the replica's lifeline (its watchdog interrupts it, then ends it); safe twice."""
        if not self._lifeline_cut:
            os.close(self.ends.lifeline_fd)
            self._lifeline_cut = True

    def stop(self) -> None:
        """Stop it for good: its lifeline closes (its watchdog ends it; killed if it has not ended
        within a second), its process group is ended, its pipes and log are freed."""
        self.cut_lifeline()
        if self.process.poll() is None:
            try:
                self.process.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.end_group()
        if not self.commands.closed:
            try:
                self.commands.close()
            except BrokenPipeError:
                pass
        os.close(self.messages_fd)
        self.log.close()


def waited(replicas: Sequence[ReplicaProcess], grace_s: float) -> bool:
    """Wait up to ``grace_s`` in all for each of ``replicas`` to end its session; whether all did."""
    deadline = time.monotonic() + grace_s
    for replica in replicas:
        try:
            replica.process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return False
    return True
