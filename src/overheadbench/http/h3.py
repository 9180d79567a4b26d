"""A small HTTP/3 client over aioquic, because httpx speaks HTTP/1.1 and HTTP/2 only.

One QUIC connection; each request is a QUIC stream, so requests from many tasks are
multiplexed as HTTP/2's are. It answers with :class:`H3Response`, which has the parts of an
``httpx.Response`` that the measurements read (``status_code``, ``http_version``,
``content``, ``headers``, ``json()``), so ``throughput``, ``latency`` and ``overhead.compare``
take it as they take httpx. ALPN is checked on the handshake and every response says which
protocol carried it (``HTTP/3`` only when QUIC negotiated ``h3``). asyncio only (aioquic's
own requirement).
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
from aioquic.quic.events import ConnectionTerminated, QuicEvent


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

    def quic_event_received(self, event: QuicEvent) -> None:
        if isinstance(event, ConnectionTerminated):
            for pending in self.pending.values():
                if not pending.future.done():
                    pending.future.set_exception(H3Error(f"QUIC connection closed: {event.reason_phrase}"))
            self.pending.clear()
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
        headers = [(b":method", method.encode()), (b":scheme", b"https"), (b":authority", authority.encode()),
                   (b":path", path.encode()), (b"content-length", str(len(content)).encode()),
                   *((name.lower().encode(), value.encode()) for name, value in extra)]  # fmt: skip
        self.h3.send_headers(stream_id, headers, end_stream=not content)
        if content:
            self.h3.send_data(stream_id, content, end_stream=True)
        pending = _Pending(asyncio.get_running_loop().create_future())
        self.pending[stream_id] = pending
        self.transmit()
        return await pending.future


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
