"""A replica's end of its channel (:mod:`.channel`): messages out, commands in, and a beat while it works on an
order; the controller gone (end of file on the commands, a broken pipe on sending) ends its session.
"""

from __future__ import annotations

import os
import time

from .channel import ReplicaEnds
from .messages import (
    Message,
    Working,
    decode,
    encode,
)


class ControllerGone(Exception):
    """In a replica: the controller has finished or died, so this session stops."""


class ReplicaChannel:
    """The replica's end of its channel: messages out, commands in."""

    def __init__(self, ends: ReplicaEnds) -> None:
        self._out = os.fdopen(ends.messages_fd, "wb")
        self._in = os.fdopen(ends.commands_fd, "rb")
        self._beaten = 0.0

    def send(self, message: Message) -> None:
        try:
            self._out.write(encode(message))
            self._out.flush()
        except OSError:  # BrokenPipeError: the controller has gone
            raise ControllerGone("the overheadbench controller has gone") from None

    def beat(self, every_s: float) -> None:
        """Tell the controller this replica is still working on its order (:class:`~.messages.Working`),
        at most every ``every_s``."""
        now = time.monotonic()
        if now - self._beaten >= every_s:
            self._beaten = now
            self.send(Working())

    def receive(self) -> Message:
        line = self._in.readline()
        if not line:
            raise ControllerGone("the overheadbench controller has finished")
        return decode(line)
