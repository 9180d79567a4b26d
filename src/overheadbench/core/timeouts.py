"""A time limit on a pair measured in this process: a hung callable must not hang the session.

The limit is a ``SIGALRM`` timer, as pytest-timeout's signal method: it interrupts the main
thread wherever it is, even blocked in a system call, and :class:`PairTimeout` unwinds from
there. It derives from ``BaseException`` so that a framework's ``except Exception`` (a retry
middleware, say) cannot swallow it. Where there is no ``SIGALRM`` (Windows), off the main
thread, or when another plugin already handles the signal, no limit is set.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


class PairTimeout(BaseException):
    """The pair took longer than its time limit; the message names the test and the way out."""


@contextmanager
def time_limit(seconds: float, message: Callable[[], str]) -> Iterator[None]:
    """Raise :class:`PairTimeout` (with ``message()``, made when it expires) if the block runs
    longer than ``seconds``."""
    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, signal.SIG_IGN, None)
    ):
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise PairTimeout(message())

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
