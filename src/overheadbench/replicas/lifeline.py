"""How a replica process starts and dies with its controller; imports nothing but the
standard library (the replica runs this file before pytest, see :meth:`.relaunch.Invocation.command`).

A replica must never outlive the controller, however the controller dies (``SIGKILL``
included, which runs no cleanup). The controller holds the write end of a "lifeline" pipe
and never writes it; the kernel closes it when the controller dies. A watchdog thread in the
replica, blocked in ``read`` on the other end (no polling, nothing while pairs are timed),
interrupts the replica at end of file and ends the process shortly after, even one stuck in a
fixture.

Why the watchdog starts here, before pytest is even imported: started from the replica's
plugin, it ran only once pytest had loaded the user's plugins and conftests, and a replica
killed while still starting outlived its controller by 1.6–3.3 s on this loaded machine. The
replica's command runs :func:`boot`, which starts the watchdog within milliseconds and then
runs pytest as the user's session was run.
"""

from __future__ import annotations

import _thread
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

REPLICA_ENV = "OVERHEADBENCH_REPLICA"
"""The replica's request (:class:`~overheadbench.replicas.replica.ReplicaRequest`), as JSON."""
WATCHDOG_GRACE_S = 0.5
"""After the controller dies, the replica gets this long to stop by itself (a
KeyboardInterrupt tears its fixtures down) before the watchdog ends the process."""
EXIT_CONTROLLER_GONE = 70


def in_replica() -> bool:
    """Whether this process is an overheadbench replica (a fresh re-run of a pair's test).

    For a test or fixture that must behave differently there, e.g. not write a shared file.
    """
    return REPLICA_ENV in os.environ


def watch_controller(
    lifeline_fd: int, grace_s: float = WATCHDOG_GRACE_S, exit_process: Callable[[int], Any] = os._exit
) -> threading.Thread:
    """Start a daemon thread that ends this process when ``lifeline_fd`` reaches end of file."""

    def watch() -> None:
        while os.read(lifeline_fd, 1):
            pass
        _thread.interrupt_main()
        time.sleep(grace_s)
        exit_process(EXIT_CONTROLLER_GONE)

    thread = threading.Thread(target=watch, name="overheadbench-lifeline", daemon=True)
    thread.start()
    return thread


def boot(module_run: bool) -> None:
    """The replica's entry point: watch the controller, then run pytest on ``sys.argv``.

    ``module_run``: the user started ``python -m pytest`` (the working directory stays on
    ``sys.path``), not the ``pytest`` script (it does not), so imports resolve alike.
    """
    watch_controller(int(json.loads(os.environ[REPLICA_ENV])["lifeline_fd"]))
    if not module_run:
        del sys.path[0]
    import pytest

    sys.exit(pytest.console_main())
