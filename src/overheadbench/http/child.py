"""The server process: ``python -m overheadbench.http.child APP FD [CERT KEY ALPN [QUIC_FD]]``
serves APP with hypercorn on the listening socket FD (inherited, bound by the parent to
127.0.0.1 port 0); with a certificate and key over TLS, offering only the ALPN protocols
given (comma-separated, so a client cannot silently fall back), and with QUIC_FD (a UDP
socket bound the same way) HTTP/3 too.

It stops when its standard input reaches end of file: the parent closes it to stop the
server, and if the parent dies the kernel closes it, so a server never outlives its test.

Three repairs to hypercorn (0.17-0.18), made here in the server process only.

A connection whose client has left stayed for ``keep_alive_timeout`` (5 s): its task group
still held the idle timer, and only its end stopped that timer. Over TLS each such connection
holds CPython's 256 KiB TLS read buffer, so new connections at ~110/s kept ~550 alive: a server
grew by ~280 KB per connection (42 to 210 MB over 600), and glibc kept the freed memory
(``benchmarks/validation/tls_memory.py``). :class:`LeavingTCPServer` stops the timer once the
client has gone, and the connection ends at once.

Its HTTP/3 side
never tells an app that its client left (a QUIC connection closed, a stream reset), so a
stream dropped by its client ran on to its end, buffering (20 dropped 1 ms streams: in
flight 15 s+ and growing). Worse, the connection's own end never came while the app kept
sending: every send restarts the QUIC timer, which starved the timer that ends a closed
connection. :class:`LeavingH3Protocol` passes a reset, a client's request to stop sending
(STOP_SENDING, which aioquic answers with a reset), a terminated connection and a connection the
client has closed (draining) on as ``http.disconnect``, as hypercorn's HTTP/1.1 and HTTP/2 sides
do.

Its UDP server queued at most 10 datagrams and threw the rest away: a client acknowledging a
stream flood filled that queue, so its request to stop a stream, and its one close datagram,
were lost (CI: 20 dropped streams still in flight 5 s later). :class:`QueuingUDPServer` queues
:data:`DATAGRAM_QUEUE` of them, what the kernel's default receive buffer holds and more.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from typing import Any

import hypercorn.asyncio.run
import hypercorn.protocol.quic
from aioquic.quic.connection import QuicConnectionState
from aioquic.quic.events import ConnectionTerminated, QuicEvent, StopSendingReceived, StreamReset
from hypercorn.asyncio import serve
from hypercorn.asyncio.tcp_server import TCPServer
from hypercorn.asyncio.udp_server import UDPServer
from hypercorn.config import Config
from hypercorn.protocol.events import Body, Data, Event, StreamClosed
from hypercorn.protocol.h3 import H3Protocol

CLOSED_STATES = (QuicConnectionState.DRAINING, QuicConnectionState.TERMINATED)
"""A connection in these states was closed by the client: what it still sends reaches no one."""
GRACEFUL_TIMEOUT_S = 0.2
"""Open streams get this long at shutdown (hypercorn's default, 3 s, made every stop slow)."""
DATAGRAM_QUEUE = 1024
"""QUIC datagrams waiting for the server's loop (hypercorn's 10 lost a client's close)."""


class LeavingTCPServer(TCPServer):
    """hypercorn's TCP connection, ended as soon as its client has left."""

    async def _read_data(self) -> None:
        await super()._read_data()  # returns at the client's end of file, or a broken connection
        await self.idle_task.stop()


class LeavingH3Protocol(H3Protocol):
    """hypercorn's HTTP/3 protocol, telling each stream's app when its client has left."""

    async def handle(self, quic_event: QuicEvent) -> None:
        await super().handle(quic_event)
        if isinstance(quic_event, ConnectionTerminated):
            await self._left(list(self.streams))
        elif isinstance(quic_event, (StreamReset, StopSendingReceived)):
            await self._left([quic_event.stream_id])

    async def stream_send(self, event: Event) -> None:
        quic, now = self.connection._quic, self.context.time()
        timer = quic.get_timer()
        if timer is not None and timer <= now:  # due, and starved by the sends' restarts of it
            quic.handle_timer(now)
        if isinstance(event, (Body, Data)) and self._closed_by_client():
            await self._left(list(self.streams))
            return
        await super().stream_send(event)

    def _closed_by_client(self) -> bool:
        # aioquic keeps the state private; if that ever changes, only this early end is lost
        return getattr(self.connection._quic, "_state", None) in CLOSED_STATES

    async def _left(self, stream_ids: list[int]) -> None:
        for stream_id in stream_ids:
            stream = self.streams.pop(stream_id, None)
            if stream is not None:
                await stream.handle(StreamClosed(stream_id=stream_id))


class QueuingUDPServer(UDPServer):
    """hypercorn's UDP server, its queue of datagrams large enough to keep a client's close."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.protocol_queue = asyncio.Queue(DATAGRAM_QUEUE)


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
    if tls:
        config.certfile, config.keyfile = tls[0], tls[1]
        config.alpn_protocols = tls[2].split(",")
        if len(tls) > 3:
            config.quic_bind = [f"fd://{tls[3]}"]
    config.keep_alive_max_requests = 2**62  # the default 1,000 broke long h2c runs mid-stream
    config.graceful_timeout = GRACEFUL_TIMEOUT_S
    config.accesslog = None
    return config


async def _stdin_closed() -> None:
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.buffer.read)


def main(argv: list[str]) -> None:
    spec, fd, *tls = argv
    hypercorn.asyncio.run.TCPServer = LeavingTCPServer  # type: ignore[attr-defined]
    hypercorn.asyncio.run.UDPServer = QueuingUDPServer  # type: ignore[attr-defined]
    hypercorn.protocol.quic.H3Protocol = LeavingH3Protocol  # type: ignore[attr-defined]
    app = load_app(spec)
    asyncio.run(serve(app, config_for(int(fd), tls), shutdown_trigger=_stdin_closed))


if __name__ == "__main__":
    main(sys.argv[1:])
