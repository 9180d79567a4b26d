"""The server process: ``python -m overheadbench.http.child APP FD [CERT KEY ALPN [QUIC_FD]]``
serves APP with hypercorn on the listening socket FD (inherited, bound by the parent to
127.0.0.1 port 0); with a certificate and key over TLS, offering only the ALPN protocols
given (comma-separated, so a client cannot silently fall back), and with QUIC_FD (a UDP
socket bound the same way) HTTP/3 too.

It stops when its standard input reaches end of file: the parent closes it to stop the
server, and if the parent dies the kernel closes it, so a server never outlives its test.

Repairs to hypercorn (0.17-0.18), made here in the server process only.

A connection whose client has left stayed for ``keep_alive_timeout`` (5 s): its task group
still held the idle timer, and only its end stopped that timer. Over TLS each such connection
holds CPython's 256 KiB TLS read buffer, so new connections at ~110/s kept ~550 alive: a server
grew by ~280 KB per connection (42 to 210 MB over 600), and glibc kept the freed memory
(``validation/tls_memory.py``). :class:`LeavingTCPServer` stops the timer once the
client has gone, and the connection ends at once.

Its HTTP/3 side and its UDP server are repaired too, in :mod:`overheadbench.http.quic_repairs`:
imported only for a server given QUIC_FD, since aioquic is the ``h3`` extra's.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from typing import Any

import hypercorn.asyncio.run
from hypercorn.asyncio import serve
from hypercorn.asyncio.tcp_server import TCPServer
from hypercorn.config import Config

from .listening import BACKLOG

KEEP_ALIVE_S = 120.0
"""How long an idle connection stays open (hypercorn's default, 5 s, closed a transport pair's
connections to one side while the other side's windows ran: its windows grow to 8 s for requests
of 0.3 s and more, and every later window of that side counted no request)."""
GRACEFUL_TIMEOUT_S = 0.2
"""Open streams get this long at shutdown (hypercorn's default, 3 s, made every stop slow)."""


class LeavingTCPServer(TCPServer):
    """hypercorn's TCP connection, ended as soon as its client has left."""

    async def _read_data(self) -> None:
        await super()._read_data()  # returns at the client's end of file, or a broken connection
        await self.idle_task.stop()


def load_app(spec: str) -> Any:
    """The object named by ``"module:attribute"`` (a dotted attribute path is allowed)."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"app {spec!r} must be given as 'module:attribute'")
    target: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        target = getattr(target, part)
    return target


def config_for(fd: int, tls: list[str] | None = None) -> Config:
    config = Config()
    config.bind = [f"fd://{fd}"]
    config.backlog = BACKLOG  # hypercorn listens again with its own (100): the same queue (listening.py)
    if tls:
        config.certfile, config.keyfile = tls[0], tls[1]
        config.alpn_protocols = tls[2].split(",")
        if len(tls) > 3:
            config.quic_bind = [f"fd://{tls[3]}"]
    config.keep_alive_max_requests = 2**62  # the default 1,000 broke long h2c runs mid-stream
    config.keep_alive_timeout = KEEP_ALIVE_S
    config.graceful_timeout = GRACEFUL_TIMEOUT_S
    config.accesslog = None
    return config


async def _stdin_closed() -> None:
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.buffer.read)


def main(argv: list[str]) -> None:
    spec, fd, *tls = argv
    hypercorn.asyncio.run.TCPServer = LeavingTCPServer  # type: ignore[attr-defined]
    if len(tls) > 3:  # QUIC_FD: HTTP/3
        from .quic_repairs import repair

        repair()
    app = load_app(spec)
    asyncio.run(serve(app, config_for(int(fd), tls), shutdown_trigger=_stdin_closed))


if __name__ == "__main__":
    main(sys.argv[1:])
