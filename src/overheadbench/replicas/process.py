"""One replica process as the controller holds it: its pipes, its output, and what it is
doing (its :class:`State`, whose words the pool's messages use: "sent nothing for 60 s while
sampling"). The pool (:mod:`.pool`) drives many of them through each pair.
"""

from __future__ import annotations

import os
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

    def cut_lifeline(self) -> None:
        """Close the replica's lifeline (its watchdog interrupts it, then ends it); safe twice."""
        if self.lifeline_fd >= 0:
            os.close(self.lifeline_fd)
            self.lifeline_fd = -1
