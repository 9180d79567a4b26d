"""A time limit on a pair: a hung callable, here or in a replica, must not hang the session.

The limit is a ``SIGALRM`` timer, as pytest-timeout's signal method: it interrupts the main
thread wherever it is, even blocked in a system call, and :class:`PairTimeout` unwinds from
there. It derives from ``BaseException`` so that a framework's ``except Exception`` (a retry
middleware, say) cannot swallow it. Where there is no ``SIGALRM`` (Windows), off the main
thread, or when another plugin already handles the signal, no limit is set.

Why :func:`waiting_on`: the controller spends most of a replicated pair blocked on a replica's
answer, so that is where the limit usually strikes; the message must then name what never
answered (a replica sampling the pair), not guess at the callables' first calls, which
returned here. Why :func:`not_counted`: starting replica processes is the session's cost,
paid by whichever pair needs a new one (the first, or the one after a replica was ended);
counted, it made a healthy pair fail its limit because the pair before it hung. That start
keeps its own bound, the replicas' silence limit.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_WAITING: list[str] = []
"""What the main thread is blocked on now, innermost last (see :func:`waiting_on`)."""
_RUNNING: list[bool] = []
"""A limit of this module is armed (the timer is ours to pause)."""


class PairTimeout(BaseException):
    """The pair took longer than its time limit; the message names the test and the way out."""


@contextmanager
def time_limit(seconds: float, message: Callable[[str | None], str]) -> Iterator[None]:
    """Raise :class:`PairTimeout` if the block runs longer than ``seconds``; its message is
    ``message(waiting)``, made when the limit strikes, with what the block was then waiting
    on (:func:`waiting_on`), or None."""
    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, signal.SIG_IGN, None)
    ):
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise PairTimeout(message(_WAITING[-1] if _WAITING else None))

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    _RUNNING.append(True)
    try:
        yield
    finally:
        _RUNNING.pop()
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextmanager
def waiting_on(what: str) -> Iterator[None]:
    """Say what the block is blocked on (``"a replica process ... sampling the pair"``), for
    the message of a limit that strikes meanwhile."""
    _WAITING.append(what)
    try:
        yield
    finally:
        _WAITING.pop()


@contextmanager
def not_counted() -> Iterator[None]:
    """Time the running limit does not count: the timer is stopped, and restarted after with
    what was left of it (nothing happens where no limit of this module runs)."""
    if not _RUNNING or threading.current_thread() is not threading.main_thread():
        yield
        return
    left_s, _ = signal.getitimer(signal.ITIMER_REAL)
    signal.setitimer(signal.ITIMER_REAL, 0)
    try:
        yield
    finally:
        if left_s > 0:
            signal.setitimer(signal.ITIMER_REAL, left_s)
