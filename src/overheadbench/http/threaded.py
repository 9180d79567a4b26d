"""An async function run to its end from sync code, on asyncio in a thread of its own: a sync fixture or helper
may be called from inside a running event loop (an async test), where a new loop cannot start.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio

T = TypeVar("T")


def run_async(function: Callable[..., Awaitable[T]], *args: Any) -> T:
    """``anyio.run(function, *args)`` on asyncio, in a thread of its own: a sync fixture or
    helper may be called from inside a running event loop (an async test), where a new loop
    cannot start. Its error is raised here."""
    results: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(anyio.run(function, *args, backend="asyncio"))
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=run, name="overheadbench-async")
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return results[0]
