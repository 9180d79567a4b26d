"""Count mode's machine-instruction counter: the replica processes that count, started under
callgrind.

Only a process valgrind started can count machine instructions, and valgrind slows what it
runs (start-up ~4x without instrumentation, the counted calls ~50x), so the user's session
stays as it is and each count-mode pair is counted by one replica of it started under
``valgrind --tool=callgrind`` (:func:`overheadbench.instruments.callgrind.wrapper`), kept for
the session's later count-mode pairs like any replica. Under ``--overhead-against`` the base
tree's pair is counted by such a replica of the base tree. The replicas run with a fixed hash
seed (``PYTHONHASHSEED=0``): a dict's or a set's layout, and so the instructions that walk it,
would otherwise move from process to process.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from ..instruments import callgrind
from ..samples import CountSamples
from ..scratch import owned_folder, remove_folder
from ..settings import Settings
from .duet import Duet
from .pool import ReplicaPool
from .replication import Replicas

HASH_SEED = "0"


class CallgrindReplicas:
    """This session's counting replicas: made on the first count-mode pair, with one folder for
    every replica's counter dumps, removed at the end."""

    def __init__(self, make_pool: Callable[[], ReplicaPool], duet: Duet | None = None) -> None:
        """``duet``: the session's ``--overhead-against`` pools, whose base tree and sides are shared."""
        self._make_pool = make_pool
        self._folder: Path | None = None
        self.pools: Replicas | Duet = (
            Duet(self._under_callgrind, duet.make_base, duet.sides) if duet else Replicas(self._under_callgrind)
        )

    @property
    def started(self) -> int:
        return self.pools.started

    def count(self, nodeid: str, settings: Settings, calls_per_block: int) -> CountSamples:
        """Count a pair in this tree's counting replica."""
        return self.pools.count(nodeid, settings, calls_per_block)

    def count_base(self, nodeid: str, settings: Settings, calls_per_block: int) -> None:
        """Count a pair in the base tree's counting replica (``--overhead-against``), into ``sides``."""
        if not isinstance(self.pools, Duet):
            raise RuntimeError("no base tree to count in")
        self.pools.count_base(nodeid, settings, calls_per_block)

    def close(self) -> None:
        self.pools.close()
        if self._folder is not None:
            remove_folder(self._folder)
            self._folder = None

    def _under_callgrind(self) -> ReplicaPool:
        """The session's pool, its replicas started under callgrind (the base's is made from it)."""
        pool = self._make_pool()
        if self._folder is None:
            self._folder = owned_folder("callgrind")
        invocation = dataclasses.replace(
            pool.invocation,
            wrapper=callgrind.wrapper(self._folder),
            env=((callgrind.FOLDER_ENV, str(self._folder)), ("PYTHONHASHSEED", HASH_SEED)),
        )
        return dataclasses.replace(pool, invocation=invocation)
