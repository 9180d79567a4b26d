"""A small HTTP/3 client over aioquic, because httpx speaks HTTP/1.1 and HTTP/2 only.

One QUIC connection; each request is a QUIC stream, so requests from many tasks are
multiplexed as HTTP/2's are. It answers with :class:`H3Response`, which has the parts of an
``httpx.Response`` that the measurements read (``status_code``, ``http_version``,
``content``, ``headers``, ``json()``), so ``throughput``, ``latency`` and ``overhead.compare``
take it as they take httpx. ALPN is checked on the handshake and every response says which
protocol carried it (``HTTP/3`` only when QUIC negotiated ``h3``). asyncio only (aioquic's
own requirement).

A request cancelled before its answer ended asks the server to stop sending it
(STOP_SENDING, which QUIC retransmits until acknowledged), and closing waits, briefly, for the
server's reset of each such stream: the connection's close is a single datagram that a server
flooding the client can lose, and then its streams would run on to the QUIC idle timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from aioquic.asyncio.client import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, H3Event, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import ConnectionTerminated, QuicEvent, StreamReset

H3_REQUEST_CANCELLED = 0x10C  # RFC 9114 section 8.1
STOPPED_STREAMS_WAIT_S = 1.0  # the most a close waits for the server to reset stopped streams


class H3Error(Exception):
    """The QUIC connection could not be made or was lost, or did not negotiate HTTP/3."""


@dataclass
class H3Response:
    status_code: int
    headers: dict[str, str]
    content: bytes
    http_version: str = "HTTP/3"

    def json(self) -> Any:
        return json.loads(self.content)


@dataclass
class _Pending:
    future: asyncio.Future[H3Response]
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    body: list[bytes] = field(default_factory=list)


class _Protocol(QuicConnectionProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.h3 = H3Connection(self._quic)
        self.pending: dict[int, _Pending] = {}
        self.stopped: set[int] = set()  # streams asked to stop, their server's reset not yet received
        self.all_reset = asyncio.Event()
        self.all_reset.set()

    def quic_event_received(self, event: QuicEvent) -> None:
        if isinstance(event, ConnectionTerminated):
            for pending in self.pending.values():
                if not pending.future.done():
                    pending.future.set_exception(H3Error(f"QUIC connection closed: {event.reason_phrase}"))
            self.pending.clear()
            self.stopped.clear()
        if isinstance(event, StreamReset):
            self.stopped.discard(event.stream_id)
        if not self.stopped:
            self.all_reset.set()
        for h3_event in self.h3.handle_event(event):
            self._h3_event(h3_event)

    def _h3_event(self, event: H3Event) -> None:
        if not isinstance(event, (HeadersReceived, DataReceived)) or event.stream_id not in self.pending:
            return
        pending = self.pending[event.stream_id]
        if isinstance(event, HeadersReceived):
            headers = {name.decode(): value.decode() for name, value in event.headers}
            pending.status = int(headers.pop(":status", "0"))
            pending.headers.update(headers)
        else:
            pending.body.append(event.data)
        if event.stream_ended:
            del self.pending[event.stream_id]
            pending.future.set_result(H3Response(pending.status, pending.headers, b"".join(pending.body)))

    async def request(
        self, method: str, authority: str, path: str, content: bytes, extra: Sequence[tuple[str, str]] = ()
    ) -> H3Response:
        stream_id = self._quic.get_next_available_stream_id()
        headers = [
            (b":method", method.encode()),
            (b":scheme", b"https"),
            (b":authority", authority.encode()),
            (b":path", path.encode()),
            (b"content-length", str(len(content)).encode()),
            *((name.lower().encode(), value.encode()) for name, value in extra),
        ]
        self.h3.send_headers(stream_id, headers, end_stream=not content)
        if content:
            self.h3.send_data(stream_id, content, end_stream=True)
        pending = _Pending(asyncio.get_running_loop().create_future())
        self.pending[stream_id] = pending
        self.transmit()
        try:
            return await pending.future
        except asyncio.CancelledError:
            self._stop(stream_id)
            raise

    def _stop(self, stream_id: int) -> None:
        """Ask the server to stop sending a stream whose request was cancelled."""
        if self.pending.pop(stream_id, None) is None:
            return
        try:
            self._quic.stop_stream(stream_id, H3_REQUEST_CANCELLED)
        except ValueError:  # the stream is already gone on this side: nothing to stop
            return
        self.stopped.add(stream_id)
        self.all_reset.clear()
        self.transmit()

    async def reset_by_server(self) -> None:
        """Wait until the server has reset every stopped stream, or for a bounded time."""
        with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
            await asyncio.wait_for(self.all_reset.wait(), STOPPED_STREAMS_WAIT_S)


class H3Client:
    """``async with H3Client(host, port, cadata=...) as client: await client.get("/echo")``."""

    def __init__(self, host: str, port: int, *, cadata: bytes | None = None, server_name: str = "localhost") -> None:
        self.host, self.port, self.server_name = host, port, server_name
        self.configuration = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN, server_name=server_name)
        if cadata is not None:
            self.configuration.load_verify_locations(cadata=cadata)
        self.configuration.verify_mode = ssl.CERT_REQUIRED
        self._stack = contextlib.AsyncExitStack()
        self._protocol: _Protocol | None = None

    async def __aenter__(self) -> H3Client:
        try:
            connection = connect(self.host, self.port, configuration=self.configuration, create_protocol=_Protocol)
            protocol = await self._stack.enter_async_context(connection)
        except (ConnectionError, OSError) as exc:
            raise H3Error(f"no QUIC connection to {self.host}:{self.port}: {exc}") from None
        assert isinstance(protocol, _Protocol)
        self._protocol = protocol
        alpn = protocol._quic.tls.alpn_negotiated
        if alpn not in H3_ALPN:
            await self.aclose()
            raise H3Error(f"{self.host}:{self.port} negotiated ALPN {alpn!r}, not HTTP/3 ({', '.join(H3_ALPN)})")
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._protocol is not None:
            await self._protocol.reset_by_server()
        await self._stack.aclose()
        self._protocol = None

    async def request(
        self, method: str, path: str, content: bytes = b"", headers: Sequence[tuple[str, str]] = ()
    ) -> H3Response:
        if self._protocol is None:
            raise H3Error("the client is not connected: use it as `async with H3Client(...) as client`")
        return await self._protocol.request(method, f"{self.server_name}:{self.port}", path, content, headers)

    async def get(self, path: str) -> H3Response:
        return await self.request("GET", path)

    async def post(self, path: str, content: bytes = b"") -> H3Response:
        return await self.request("POST", path, content)
