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


class State(Enum):
    STARTING = "starting (importing Python, pytest, the session's plugins and conftest files)"
    COLLECTING = "collecting the session (importing its test files)"
    MOVING = "moving to a test"
    PARKED = "parked at compare"
    SAMPLING = "sampling"
    LEAVING = "ending a test"
    IDLE = "idle between tests"


@dataclass(eq=False)
class ReplicaProcess:
    """A replica process and its ends of the pipes."""

    process: subprocess.Popen[bytes]
    log: IO[bytes]
    messages_fd: int
    commands: IO[bytes]
    lifeline_fd: int
    """The write end of the lifeline pipe: never written, closed when the replica must die."""
    position: int
    """Index (in the pool's node ids) of the test it was last sent to."""
    state: State = State.STARTING
    log_from: int = 0
    """Where its output for the current test starts in ``log``."""
    buffer: bytes = b""

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
        if self.lifeline_fd >= 0:
            os.close(self.lifeline_fd)
            self.lifeline_fd = -1
