"""One replica process as the controller holds it: its pipes, its output, and what it is
doing (its :class:`State`, whose words the pool's messages use: "sent nothing for 60 s while
sampling"). The pool (:mod:`.pool`) drives many of them through each pair.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
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
