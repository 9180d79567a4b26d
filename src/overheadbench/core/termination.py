"""``SIGTERM`` handled as ``SIGINT`` is: pytest stops, tears fixtures down and runs its cleanup.

Why: ``SIGTERM`` is what CI cancellation, ``timeout`` and container shutdown send, and by
default it ends Python at once: no fixture teardown, no ``pytest_sessionfinish``, so replica
processes, scratch folders and servers were left to the watchdogs and to the next session.
Raised as :class:`KeyboardInterrupt` in the main thread, it takes pytest's Ctrl-C path.

A second ``SIGTERM`` during that cleanup ends the process at once (the previous handler is
back), as a second Ctrl-C would be expected to. A handler the user or another plugin set is
left alone.
"""

from __future__ import annotations

import ctypes
import signal
import sys
import threading
from types import FrameType
from typing import Any

_previous: list[Any] = []


def install_sigterm() -> bool:
    """Handle ``SIGTERM`` as an interrupt, where nobody else handles it; whether it was installed."""
    if threading.current_thread() is not threading.main_thread() or _previous:
        return False
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return False
    _previous.append(signal.signal(signal.SIGTERM, _interrupt))
    return True


def uninstall_sigterm() -> None:
    """Put the previous handler back, if :func:`install_sigterm` replaced it (and ours is still there)."""
    if _previous and signal.getsignal(signal.SIGTERM) is _interrupt:
        signal.signal(signal.SIGTERM, _previous.pop())
    _previous.clear()


def _interrupt(signum: int, frame: FrameType | None) -> None:
    uninstall_sigterm()  # a second SIGTERM ends the process at once
    raise KeyboardInterrupt(f"{signal.Signals(signum).name} received")


def ended_with_parent() -> None:
    """In a child process, before its work: receive ``SIGTERM`` when its parent dies, however it
    dies (Linux's ``prctl(PR_SET_PDEATHSIG)``; elsewhere nothing): a bisection's step session, and a
    history's readers, which sat blocked on their pipe for good once ``history`` was killed."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG = 1
