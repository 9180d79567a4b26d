"""An event loop of our own whose close is bounded: a task that will not end cannot hang the session.

``overhead.compare()`` runs async callables on a loop it starts (``anyio.run``). Closing a loop
cancels every task still on it and waits until each has ended, with no limit. A callable that
left a background task behind which swallows ``CancelledError`` (a leaked worker's
``except CancelledError: pass`` in a loop) never ends: the session sat in
``asyncio.Runner.close`` 150-200 s past a 15-20 s ``--overhead-pair-timeout`` until killed from
outside (issue 46), in the controller and in every replica. Here the close waits ``CLOSE_GRACE_S``
for the cancelled tasks, then abandons the ones still running (the loop is closed without them;
they are kept referenced so that nothing of theirs runs later, at garbage collection) and says
which: the test fails naming each task, where it was created and where it waits.

On asyncio only: trio's and anyio's other backends keep ``anyio.run``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio

from .errors import OverheadUsageError
from .timeouts import not_counted

T = TypeVar("T")
CLOSE_GRACE_S = 2.0
"""How long a closing loop waits for its cancelled tasks to end before abandoning them (one that ends when
cancelled takes milliseconds; the pair's limit plus this must stay well inside what a CI step allows)."""
_ABANDONED: list[asyncio.Task[Any]] = []
"""Tasks that would not end: held, never resumed, so that their loop's close leaves them be."""


class LoopWouldNotClose(OverheadUsageError):
    """Tasks left on the loop would not end when cancelled; the message names the test and them."""


def run(function: Callable[..., Awaitable[T]], *args: Any, backend: str, what: str) -> T:
    """``anyio.run(function, *args, backend=backend)``, closing an asyncio loop within ``CLOSE_GRACE_S``.

    Raises :class:`LoopWouldNotClose` (its message starting with ``what``, the test) if tasks had to
    be abandoned after ``function`` returned; if ``function`` raised (a pair's time limit, say),
    that exception goes on, its message followed by the abandoned tasks."""
    if backend != "asyncio":
        return anyio.run(function, *args, backend=backend)
    loop = asyncio.new_event_loop()
    stuck: list[str] = []
    try:
        return loop.run_until_complete(function(*args))
    except BaseException as exc:
        with not_counted():
            stuck = close_within(loop, CLOSE_GRACE_S)
        if stuck and exc.args and isinstance(exc.args[0], str):
            exc.args = (f"{exc.args[0]}; {would_not_end(stuck)}", *exc.args[1:])
        raise
    finally:
        if not loop.is_closed():
            with not_counted():
                stuck = close_within(loop, CLOSE_GRACE_S)
            if stuck:
                raise LoopWouldNotClose(f"{what}: {would_not_end(stuck)}")


def close_within(loop: asyncio.AbstractEventLoop, grace_s: float) -> list[str]:
    """Cancel every task on ``loop``, wait up to ``grace_s`` for them to end, close the loop;
    the tasks abandoned, described."""
    try:
        tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            loop.run_until_complete(asyncio.wait(tasks, timeout=grace_s))
        left = [task for task in tasks if not task.done()]
        _ABANDONED.extend(left)
        if not left:
            loop.run_until_complete(asyncio.wait_for(loop.shutdown_asyncgens(), grace_s))
        return [describe(task) for task in left]
    finally:
        loop.close()


def describe(task: asyncio.Task[Any]) -> str:
    """A task as its coroutine and where it waits: ``stubborn() at tests/test_x.py:12``."""
    coroutine = task.get_coro()
    name = getattr(coroutine, "__qualname__", repr(coroutine))
    frame = getattr(coroutine, "cr_frame", None)
    where = f" at {frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else ""
    return f"{name}(){where}"


def would_not_end(stuck: list[str]) -> str:
    """What a failed test says about the tasks abandoned."""
    return (
        f"a task the callables left on the event loop would not end when cancelled ({', '.join(stuck)}: does it "
        f"catch CancelledError and go on?); it was abandoned after {CLOSE_GRACE_S:g} s so the session could go on"
    )
