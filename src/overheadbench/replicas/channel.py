"""The channel between the controller and one replica: both ends, and how a replica is started with its own.

A replica has three ends: its messages to the controller, the controller's commands to it, and
its lifeline (never written: when the controller closes it or dies, the replica's watchdog ends
the replica, :mod:`.lifeline`). Today they are OS pipes whose replica ends the process inherits
(:class:`Pipes`); a place kind that starts its replicas elsewhere (a container, another machine)
brings another :class:`Channel`: what the replica's request names (:class:`ReplicaEnds`), what
the start needs (``spawn``), and the controller's ends the pool reads and writes
(:class:`ControllerEnds`); the replica wraps its ends in :class:`~.replica_channel.ReplicaChannel`. The
pool and the replica never open an end themselves.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import IO, Any, Protocol


@dataclass(frozen=True)
class ReplicaEnds:
    """The replica's ends, as its request carries them (descriptor numbers it inherited)."""

    messages_fd: int
    commands_fd: int
    lifeline_fd: int


@dataclass(frozen=True)
class ControllerEnds:
    """The controller's ends: messages to read (a descriptor ``select`` can wait on), commands to
    write, and the lifeline it closes when the replica must end."""

    messages_fd: int
    commands: IO[bytes]
    lifeline_fd: int


class Channel(Protocol):
    """One replica's channel, opened before it starts."""

    @property
    def replica(self) -> ReplicaEnds: ...

    @property
    def spawn(self) -> dict[str, Any]:
        """What starting the replica needs besides its command (``pass_fds`` for pipes)."""
        ...

    def started(self) -> ControllerEnds:
        """The replica has started: let go of its ends here, keep the controller's."""
        ...

    def close(self) -> None:
        """The replica never started: close every end."""
        ...


@dataclass(frozen=True)
class Pipes:
    """Three OS pipes: the replica inherits one end of each."""

    messages: tuple[int, int]
    commands: tuple[int, int]
    lifeline: tuple[int, int]

    @classmethod
    def open(cls) -> Pipes:
        return cls(os.pipe(), os.pipe(), os.pipe())

    @property
    def replica(self) -> ReplicaEnds:
        return ReplicaEnds(self.messages[1], self.commands[0], self.lifeline[0])

    @property
    def spawn(self) -> dict[str, Any]:
        return {"pass_fds": self._replica_fds}

    @property
    def _replica_fds(self) -> tuple[int, int, int]:
        return (self.messages[1], self.commands[0], self.lifeline[0])

    def started(self) -> ControllerEnds:
        for fd in self._replica_fds:
            os.close(fd)
        return ControllerEnds(self.messages[0], os.fdopen(self.commands[1], "wb"), self.lifeline[1])

    def close(self) -> None:
        for fd in (*self._replica_fds, self.messages[0], self.commands[1], self.lifeline[1]):
            os.close(fd)
