"""A pair's silence limit: a hung callable, here or in a replica, must not hang the session, and a
slow but moving pair must not be ended for its length.

The limit measures **silence, not length**: it strikes when the pair made no progress for its
span (``overhead_pair_timeout``), where progress is a block timed here, a replica's message, or a
block of a profile (:func:`progressed`). A fixed limit on the whole pair ended healthy pairs once
pairs gathered blocks until enough were undisturbed (beside 4 busy loops the default 120 s ended an
agent SDK's pair whose replicas were answering); a pair's length is bounded by its own ceiling
(``max_time_s``, the stopping rule's), not by this.

The limit is a ``SIGALRM`` timer, as pytest-timeout's signal method: it interrupts the main
thread wherever it is, even blocked in a system call, and :class:`PairTimeout` unwinds from
there. It derives from ``BaseException`` so that a framework's ``except Exception`` (a retry
middleware, say) cannot swallow it. Where there is no ``SIGALRM`` (Windows), off the main
thread, or when another plugin already handles the signal, no limit is set. Progress moves the
timer on, at most every :data:`REARM_SHARE`-th of the span (a syscall per block would be paid by
every pair). The sampling profiler takes ``SIGALRM`` for itself while it samples, so it asks
:func:`check_silence` at each sample: a callable that blocks only while profiled is ended too.

Why :func:`waiting_on`: the controller spends most of a replicated pair blocked on a replica's
answer, so that is where the limit usually strikes; the message must then name what never
answered (a replica sampling the pair), not guess at the callables' first calls, which
returned here. Why :func:`not_counted`: starting replica processes is the session's cost,
paid by whichever pair needs a new one (the first, or the one after a replica was ended);
counted, it made a healthy pair fail its limit because the pair before it hung. That start
keeps its own bound, the replicas' silence limit.

Why the handler checks the clock before it raises: a tick can be handled late. The kernel may
deliver ``SIGALRM`` to any thread; its C handler only flags it, and the main thread runs the
Python handler at its next check, which can come after the sampler gave the signal back. Such
a tick read as the pair's limit ended a healthy in-loop async pair while it was explained ("no
progress for 120 s"), so the handler raises only when the silence really ran out, and otherwise
sets the timer to what is left.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

REARM_SHARE = 20
"""Progress re-arms the timer once this share of the span has passed since it last did."""


class PairTimeout(BaseException):
    """The pair was silent longer than its limit; the message names the test and the way out."""


@dataclass(eq=False)  # a limit is itself: "in _RUNNING" asks whether this one still runs
class _Limit:
    span_s: float
    message: Callable[[str | None], str]
    last: float
    """When the pair last progressed (``time.monotonic``)."""
    lent: bool = False
    """``SIGALRM`` is lent to other code now (:func:`lent`): progress is counted, the timer left alone."""


_WAITING: list[str] = []
"""What the main thread is blocked on now, innermost last (see :func:`waiting_on`)."""
_RUNNING: list[_Limit] = []
"""The limit armed now (the timer is ours to pause and re-arm)."""


def _ours() -> bool:
    return bool(_RUNNING) and threading.current_thread() is threading.main_thread()


def _expired() -> PairTimeout:
    return PairTimeout(_RUNNING[-1].message(_WAITING[-1] if _WAITING else None))


@contextmanager
def time_limit(seconds: float, message: Callable[[str | None], str]) -> Iterator[None]:
    """Raise :class:`PairTimeout` if the block makes no progress for ``seconds``; its message is
    ``message(waiting)``, made when the limit strikes, with what the block was then waiting
    on (:func:`waiting_on`), or None."""
    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, signal.SIG_IGN, None)
    ):
        yield
        return

    limit = _Limit(seconds, message, time.monotonic())

    def expire(signum: int, frame: Any) -> None:
        if limit not in _RUNNING or limit.lent:
            return  # a late tick (the sampler's, or of a limit ended): see the module's docstring
        left_s = limit.span_s - (time.monotonic() - limit.last)
        if left_s > 0:  # a late tick, not silence: the pair progressed since
            signal.setitimer(signal.ITIMER_REAL, left_s)
            return
        raise _expired()

    previous = signal.signal(signal.SIGALRM, expire)
    _RUNNING.append(limit)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        _RUNNING.pop()  # first: a tick handled from here on is a stray, ignored
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


_HEARING: list[Callable[[], None]] = []
"""Who else is told of progress (:func:`heard`): a replica tells its controller it is still working."""


@contextmanager
def heard(listener: Callable[[], None]) -> Iterator[None]:
    """Call ``listener`` at each :func:`progressed` within the block (it throttles itself)."""
    _HEARING.append(listener)
    try:
        yield
    finally:
        _HEARING.remove(listener)


def progressed() -> None:
    """The pair moved on (a block timed, a replica's message, a profile's block, a transport window
    or stream): its silence starts again. Cheap where no limit runs, and between re-arms (a clock read)."""
    for listener in _HEARING:
        listener()
    if not _RUNNING:
        return
    limit, now = _RUNNING[-1], time.monotonic()
    if now - limit.last < limit.span_s / REARM_SHARE or not _ours():
        return
    limit.last = now
    if not limit.lent and signal.getitimer(signal.ITIMER_REAL)[0] > 0:  # not paused (:func:`not_counted`)
        signal.setitimer(signal.ITIMER_REAL, limit.span_s)


def check_silence(before: Callable[[], None] | None = None) -> None:
    """Raise :class:`PairTimeout` if the running limit's silence has passed its span: for code that
    holds ``SIGALRM`` itself meanwhile (the sampling profiler asks at each sample). ``before`` runs
    first: the sampler stops its timer there, or its next tick would raise again while this error's
    message is made and unwinds."""
    if _RUNNING and time.monotonic() - _RUNNING[-1].last > _RUNNING[-1].span_s and _ours():
        if before is not None:
            before()
        raise _expired()


class lent:  # noqa: N801 (a context manager used as a function is, as contextlib's)
    """``SIGALRM`` lent to other code for the block (the sampling profiler's timer): the pair's timer
    is taken down, progress still counted (:func:`check_silence` tells the borrower when to stop);
    after, the timer is set to what is left of the silence (at once, if none is), unless the block
    ends by the limit itself.

    A class, not a generator: a borrower that failed to give the signal back left a suspended
    generator whose ``finally`` ran when it was collected, arming the timer at a moment when no
    handler was installed, and the default action of ``SIGALRM`` killed the session."""

    def __init__(self) -> None:
        self._limit: _Limit | None = None
        self._left_s = 0.0

    def __enter__(self) -> None:
        if not _ours():
            return
        self._limit = _RUNNING[-1]
        self._left_s, _ = signal.setitimer(signal.ITIMER_REAL, 0)
        self._limit.lent = True

    def __exit__(self, kind: type[BaseException] | None, *rest: Any) -> None:
        limit, self._limit = self._limit, None
        if limit is None:
            return
        limit.lent = False
        if self._left_s > 0 and limit in _RUNNING and not (kind and issubclass(kind, PairTimeout)):
            signal.setitimer(signal.ITIMER_REAL, max(limit.span_s - (time.monotonic() - limit.last), 1e-6))


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
    if not _ours():
        yield
        return
    left_s, _ = signal.getitimer(signal.ITIMER_REAL)
    signal.setitimer(signal.ITIMER_REAL, 0)
    started = time.monotonic()
    try:
        yield
    finally:
        _RUNNING[-1].last += time.monotonic() - started  # the paused time is not silence either
        if left_s > 0:
            signal.setitimer(signal.ITIMER_REAL, left_s)
