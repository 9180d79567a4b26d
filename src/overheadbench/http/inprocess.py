"""A server in the test's own event loop: what count mode can count.

``asgi_server`` runs the app in another process, which is the right layout for timing (the
client and server do not share a core's GIL) and the wrong one for counting: count mode
counts the instructions of the test's thread, so a pair whose difference is on the server's
side (a framework's dependency injection, middleware) counts only the client and reads as
no overhead. Served here instead, hypercorn runs as a task of the test's own asyncio loop:
while an async pair awaits its request, the server's handling of it runs in the same thread
and is counted with it.

``async with serve_in_process("module:app") as server:`` (asyncio only; HTTP/1.1 or h2c)
gives a :class:`~overheadbench.http.server.Server` without a process: ``async_client()``
works as for a served one.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import sniffio
from hypercorn.asyncio import serve

from .child import config_for, load_app
from .listening import bound
from .protocols import HttpProtocol
from .server import START_TIMEOUT_S, Server, ServerError

IN_PROCESS = ("http1", "h2c")


@asynccontextmanager
async def serve_in_process(app: str, protocol: str = "http1") -> AsyncIterator[Server]:
    """Serve ``app`` (``"module:attribute"``) on 127.0.0.1 (a free port) in this event loop
    until the block ends; the server is stopped also when the block raises."""
    if protocol not in IN_PROCESS:
        raise ServerError(f"an in-process server speaks {' or '.join(IN_PROCESS)}, not {protocol!r}")
    library = sniffio.current_async_library()
    if library != "asyncio":
        raise ServerError(f"serve_in_process runs hypercorn's asyncio server in this event loop, not in {library}")
    listener = bound(socket.SOCK_STREAM)
    port = listener.getsockname()[1]
    stop = asyncio.Event()
    task = asyncio.ensure_future(serve(load_app(app), config_for(listener.detach()), shutdown_trigger=stop.wait))
    server = Server(app, HttpProtocol(protocol), f"http://127.0.0.1:{port}", None, None)
    try:
        async with server.async_client(timeout=START_TIMEOUT_S) as client:
            await client.get("/")
        yield server
    finally:
        stop.set()
        await asyncio.wait_for(task, START_TIMEOUT_S)
