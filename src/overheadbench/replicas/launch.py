"""Starting one replica process: its channel, its environment, its output file (the one place a
replica is spawned, as pyperf's ``Manager.spawn_worker`` is; a new place kind starts here).

The channel (:mod:`.channel`: pipes today) is opened first; the replica finds its ends by what
its :class:`ReplicaRequest` names, and the controller keeps the other ends.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from ..engine.harness import PLAIN_ENV, plain_for_replicas
from ..engine.valgrind import SCRATCH_ENV
from .channel import Channel, Pipes, ReplicaEnds
from .lifeline import REPLICA_ENV
from .process import ReplicaProcess
from .relaunch import Invocation


@dataclass(frozen=True)
class ReplicaRequest:
    """What a replica is asked to do, passed as JSON in ``OVERHEADBENCH_REPLICA``.

    The node ids themselves are in a file (:func:`write_work`), not here: Linux caps one
    environment string at 128 KiB, and a suite of ~1,450 overhead tests of ordinary ids (or 14
    of 10,000 characters) made every replica's start fail with "Argument list too long".
    """

    work: str
    """The file of the timed overhead tests' node ids, in the controller's order (its rootdir
    is the replica's: the same command line in the same directory)."""
    first: int
    """The index there of the test to measure first (those before it are not run)."""
    messages_fd: int
    commands_fd: int
    lifeline_fd: int
    """The replica's ends of its channel (:class:`~.channel.ReplicaEnds`), flat in the JSON: the
    lifeline's watchdog reads its end before the replica's plugin starts (:mod:`.lifeline`)."""
    head_root: str = ""
    """In a replica of the base tree (``--overhead-against``): the head tree, whose project
    modules this replica must not import; its own tree is ``own_root``."""
    own_root: str = ""

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> ReplicaRequest | None:
        raw = environ.get(REPLICA_ENV)
        return cls(**json.loads(raw)) if raw else None

    @property
    def ends(self) -> ReplicaEnds:
        return ReplicaEnds(self.messages_fd, self.commands_fd, self.lifeline_fd)

    def nodeids(self) -> tuple[str, ...]:
        """The tests this replica may run, the first one first."""
        return tuple(json.loads(Path(self.work).read_text(encoding="utf-8"))[self.first :])


def write_work(folder: Path, nodeids: tuple[str, ...]) -> Path:
    """The file a :class:`ReplicaRequest` names: ``nodeids`` as a JSON list, in ``folder``."""
    path = folder / "work.json"
    path.write_text(json.dumps(nodeids), encoding="utf-8")
    return path


def launch(
    invocation: Invocation,
    folder: Path,
    work: Path,
    position: int,
    trees: tuple[str, str],
    channel: Callable[[], Channel] = Pipes.open,
) -> ReplicaProcess:
    """Start one replica of ``invocation`` (its scratch ``folder``, the ``work`` file of node ids,
    the test to go to first; ``trees``: (head, own) for a base tree's replica, else empty) on a
    ``channel`` opened for it."""
    opened = channel()
    ends = opened.replica
    request = ReplicaRequest(str(work), position, ends.messages_fd, ends.commands_fd, ends.lifeline_fd, *trees)
    extra = {REPLICA_ENV: request.to_env(), SCRATCH_ENV: str(folder), PLAIN_ENV: plain_for_replicas()}
    log = tempfile.TemporaryFile(prefix="overheadbench-replica-")
    try:
        process = subprocess.Popen(
            invocation.command(folder / "cache"),
            cwd=invocation.directory,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=invocation.environ(os.environ, extra),
            start_new_session=True,  # a process group of its own, ended with it (ReplicaProcess.end_group)
            **opened.spawn,
        )
    except BaseException:
        opened.close()
        log.close()
        raise
    return ReplicaProcess(process, log, opened.started(), position)


def start_batch() -> int:
    """How many replicas start at once: this process's usable cores (at least one). Ten replicas
    importing a heavy framework at once on two cores each took over 60 s to start (one alone: 6 s)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)
