"""Repairs to hypercorn's HTTP/3 side (0.17-0.18), made in a server process serving HTTP/3 only
(:mod:`overheadbench.http.child`): aioquic is the ``h3`` extra's, so nothing else imports this.

hypercorn's HTTP/3 side
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
from typing import Any

import hypercorn.asyncio.run
import hypercorn.protocol.quic
from aioquic.quic.connection import QuicConnectionState
from aioquic.quic.events import ConnectionTerminated, QuicEvent, StopSendingReceived, StreamReset
from hypercorn.asyncio.udp_server import UDPServer
from hypercorn.protocol.events import Body, Data, Event, StreamClosed
from hypercorn.protocol.h3 import H3Protocol

CLOSED_STATES = (QuicConnectionState.DRAINING, QuicConnectionState.TERMINATED)
"""A connection in these states was closed by the client: what it still sends reaches no one."""
DATAGRAM_QUEUE = 1024
"""QUIC datagrams waiting for the server's loop (hypercorn's 10 lost a client's close)."""


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


def repair() -> None:
    """Put the repaired protocol and UDP server where hypercorn's serving code looks them up."""
    hypercorn.asyncio.run.UDPServer = QueuingUDPServer  # type: ignore[attr-defined]
    hypercorn.protocol.quic.H3Protocol = LeavingH3Protocol  # type: ignore[attr-defined]
