"""A replica measuring a long test says it is working (issue 68): an SDK's streams at 8 in flight
measured minutes in a base tree's replica, which sent nothing until its figures, and the gate of
identical trees failed on the replicas' silence limit in 3 sessions of 3."""

from __future__ import annotations

import io
import os
import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest

from overheadbench.core.timeouts import heard, progressed
from overheadbench.engine.settings import Settings
from overheadbench.http.streaming import EventTimer
from overheadbench.replicas.failures import ReplicaError
from overheadbench.replicas.messages import Figured, Working, encode
from overheadbench.replicas.pool import ReplicaPool
from overheadbench.replicas.process import State


def parked_pool(timeout_s: float) -> tuple[ReplicaPool, int]:
    """A pool of one parked replica whose messages come through a pipe this test writes."""
    read_fd, write_fd = os.pipe()
    replica: Any = SimpleNamespace(
        messages_fd=read_fd, buffer=b"", state=State.PARKED, commands=io.BytesIO(), log=io.BytesIO(), log_from=0
    )
    pool = ReplicaPool(SimpleNamespace(directory="."), ("t.py::test_streams",), timeout_s)  # type: ignore[arg-type]
    pool._parked = [replica]
    return pool, write_fd


def speak(fd: int, beats: int, every_s: float) -> None:
    def run() -> None:
        for _ in range(beats):
            time.sleep(every_s)
            os.write(fd, encode(Working()))
        os.write(fd, encode(Figured([{"figure": 1}])))

    threading.Thread(target=run, daemon=True).start()


def test_a_replica_that_says_it_is_working_outlasts_the_silence_limit() -> None:
    pool, fd = parked_pool(timeout_s=1.0)
    speak(fd, beats=20, every_s=0.1)  # two seconds of work, twice the limit
    assert pool.figures(0, Settings()) == [{"figure": 1}]


def test_a_silent_replica_is_still_ended_at_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    pool, _ = parked_pool(timeout_s=0.2)
    monkeypatch.setattr(pool.talk, "fail", lambda replica, what, quiet=False: (_ for _ in ()).throw(ReplicaError(what)))
    with pytest.raises(ReplicaError, match="sent nothing for 0.2 s"):
        pool.figures(0, Settings())


def test_a_stream_measured_is_progress() -> None:
    heard_of: list[int] = []
    with heard(lambda: heard_of.append(1)):
        timer = EventTimer(iter(range(0, 10_000, 10)).__next__)
        timer.start()
        timer.read(b"data: a\n\n")
        timer.arrived()
        timer.stats()
        progressed()
    assert len(heard_of) == 2
    progressed()
    assert len(heard_of) == 2  # no longer listening
