"""The lean load workers' connections (:mod:`.loadgen`): what a worker sends (:class:`Job`), and one fixed
request spoken directly over each protocol on asyncio: HTTP/1.1 with a prebuilt request and llhttp's response
parser (httptools), HTTP/2 through the ``h2`` state machine, both in the clear or over TLS (ALPN checked on
every connection), and HTTP/3 through :class:`~overheadbench.http.h3.H3Client`.
"""

from __future__ import annotations

import asyncio
import base64
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import httptools

from .protocols import HttpProtocol
from .recorder import ConnectionGone

STREAMS_PER_CONNECTION = 50
"""HTTP/2 and HTTP/3 streams per connection (h2load's ``-m`` does the same job)."""


MAX_BODY = 65_535
"""A request body must fit HTTP/2's initial flow-control window (the lean client sends it at once)."""


class LoadError(Exception):
    """A worker could not connect, or its connection did not speak the protocol asked for."""


class _Gone(LoadError, ConnectionGone):
    """The connection closed under a request: its worker stops (:class:`~overheadbench.http.recorder.Recorder`)."""


class Connection(Protocol):
    """One open connection of a lean worker: send the job's request on it, close it."""

    async def send(self) -> int:
        """Send the request and wait for the whole response: its status."""
        ...

    async def close(self) -> None: ...


@dataclass(frozen=True)
class Job:
    """What one worker sends: ``concurrency`` requests in flight for ``duration_s``."""

    protocol: HttpProtocol
    port: int
    method: str
    path: str
    body_b64: str
    concurrency: int
    duration_s: float
    warmup: int
    cadata: str | None = None
    host: str = "127.0.0.1"
    headers: tuple[tuple[str, str], ...] = (("content-type", "application/json"),)
    """Sent with every request (lower-case names), besides the protocol's own."""

    @property
    def body(self) -> bytes:
        return base64.b64decode(self.body_b64)


class _H1(asyncio.Protocol):
    """One HTTP/1.1 keep-alive connection, one request at a time. Responses are parsed by
    llhttp (httptools, uvicorn's parser): Content-Length, chunked, no body for 204, 304 and
    1xx (an interim response is skipped: the final one follows); a response to ``HEAD`` has no
    body whatever its headers say, which llhttp cannot be told, so it ends at its headers and
    the connection takes a fresh parser for the next one."""

    def __init__(self, request: bytes, head: bool = False) -> None:
        self.request, self.head = request, head
        self.parser = httptools.HttpResponseParser(self)
        self.transport: asyncio.Transport | None = None
        self.waiter: asyncio.Future[int] | None = None
        self.gone: _Gone | None = None
        """Why the connection closed, once it has (a server's keep-alive timeout while it sat idle)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(_Gone(f"an HTTP/1.1 response that does not parse ({exc})"))
            assert self.transport is not None
            self.transport.close()

    def on_headers_complete(self) -> None:
        """llhttp's callback: a (final) response to HEAD ends here."""
        status = self.parser.get_status_code()
        if self.head and status >= 200:
            self.parser = httptools.HttpResponseParser(self)
            self._done(status)

    def on_message_complete(self) -> None:
        """llhttp's callback: a whole response (an interim 1xx one is not the answer)."""
        status = self.parser.get_status_code()
        if status >= 200:
            self._done(status)

    def _done(self, status: int) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(status)

    def _fail(self, error: Exception) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(error)

    def connection_lost(self, exc: Exception | None) -> None:
        self.gone = _Gone(f"the server closed the connection ({exc or 'EOF'})")
        self._fail(self.gone)

    async def send(self) -> int:
        assert self.transport is not None
        if self.gone is not None:  # closed between requests: a request written now would wait forever
            raise self.gone
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(self.request)
        return await self.waiter

    async def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


class _H2(asyncio.Protocol):
    """One HTTP/2 connection carrying many streams."""

    def __init__(self, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        import h2.config
        import h2.connection

        config = h2.config.H2Configuration(
            client_side=True,
            header_encoding=None,
            # the request is built here once, and a response's headers are only read for
            # ":status": h2's per-frame header checks would be a third of the client's CPU
            validate_outbound_headers=False,
            normalize_outbound_headers=False,
            validate_inbound_headers=False,
            normalize_inbound_headers=False,
        )
        self.h2 = h2.connection.H2Connection(config)
        self.headers, self.body = headers, body
        self.streams: dict[int, tuple[asyncio.Future[int], list[int]]] = {}
        self.transport: asyncio.Transport | None = None
        self.gone: _Gone | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.h2.initiate_connection()
        transport.write(self.h2.data_to_send())

    def data_received(self, data: bytes) -> None:
        import h2.events

        for event in self.h2.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived) and event.stream_id in self.streams:
                self.streams[event.stream_id][1].append(int(dict(event.headers)[b":status"]))
            elif isinstance(event, h2.events.DataReceived):
                self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded) and event.stream_id in self.streams:
                future, status = self.streams.pop(event.stream_id)
                future.set_result(status[0] if status else 0)
            elif isinstance(event, h2.events.StreamReset) and event.stream_id in self.streams:
                self.streams.pop(event.stream_id)[0].set_exception(LoadError(f"stream reset ({event.error_code!r})"))
            elif isinstance(event, h2.events.ConnectionTerminated):
                self._fail(_Gone(f"the server ended the connection ({event.error_code!r})"))
        assert self.transport is not None
        self.transport.write(self.h2.data_to_send())

    def connection_lost(self, exc: Exception | None) -> None:
        self.gone = _Gone(f"the server closed the connection ({exc or 'EOF'})")
        self._fail(self.gone)

    def _fail(self, error: Exception) -> None:
        for future, _ in self.streams.values():
            if not future.done():
                future.set_exception(error)
        self.streams.clear()

    async def send(self) -> int:
        assert self.transport is not None
        if self.gone is not None:  # as :meth:`_H1.send`
            raise self.gone
        stream_id = self.h2.get_next_available_stream_id()
        self.h2.send_headers(stream_id, self.headers, end_stream=not self.body)
        if self.body:
            self.h2.send_data(stream_id, self.body, end_stream=True)
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self.streams[stream_id] = (future, [])
        self.transport.write(self.h2.data_to_send())
        return await future

    async def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


def _tls_context(job: Job, alpn: str) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cadata=job.cadata)
    context.set_alpn_protocols([alpn])
    return context


async def _open(job: Job, count: int) -> list[Connection]:
    """``count`` connections for the job, each checked for the protocol it speaks."""
    loop = asyncio.get_running_loop()
    authority = f"{job.host}:{job.port}".encode()
    if job.protocol == HttpProtocol.H3:
        from .h3 import H3Client

        clients = [H3Client(job.host, job.port, cadata=(job.cadata or "").encode() or None) for _ in range(count)]
        for client in clients:
            await client.__aenter__()
        return [_H3Sender(client, job) for client in clients]
    tls = job.protocol.tls
    alpn = "h2" if job.protocol == HttpProtocol.H2 else "http/1.1"
    body = job.body
    extra = [(name.lower().encode(), value.encode()) for name, value in job.headers]
    if job.protocol.multiplexed:
        headers = [
            (b":method", job.method.encode()),
            (b":scheme", b"https" if tls else b"http"),
            (b":authority", authority),
            (b":path", job.path.encode()),
            (b"content-length", str(len(body)).encode()),
            *extra,
        ]
        factory: Callable[[], asyncio.Protocol] = lambda: _H2(headers, body)  # noqa: E731
    else:
        lines = "".join(f"{name.decode()}: {value.decode()}\r\n" for name, value in extra)
        request = (
            f"{job.method} {job.path} HTTP/1.1\r\nHost: {authority.decode()}\r\n"
            f"Content-Length: {len(body)}\r\n{lines}\r\n"
        ).encode() + body
        head = job.method.upper() == "HEAD"
        factory = lambda: _H1(request, head)  # noqa: E731
    connections: list[Connection] = []
    for _ in range(count):
        transport, connection = await loop.create_connection(
            factory, job.host, job.port, ssl=_tls_context(job, alpn) if tls else None
        )
        if tls:
            negotiated = transport.get_extra_info("ssl_object").selected_alpn_protocol()
            if negotiated != alpn:
                transport.close()
                raise LoadError(f"{job.protocol}: the server negotiated ALPN {negotiated!r}, not {alpn!r}")
        assert isinstance(connection, (_H1, _H2))
        connections.append(connection)
    return connections


@dataclass
class _H3Sender:
    client: Any
    job: Job

    async def send(self) -> int:
        response = await self.client.request(self.job.method, self.job.path, self.job.body, self.job.headers)
        if response.http_version != "HTTP/3":
            raise LoadError(f"h3: a response came over {response.http_version}")
        return int(response.status_code)

    async def close(self) -> None:
        await self.client.aclose()


async def connect(job: Job) -> list[Connection]:
    """The job's connections (one per request in flight, or enough multiplexed ones), warmed up."""
    count = -(-job.concurrency // STREAMS_PER_CONNECTION) if job.protocol.multiplexed else job.concurrency
    connections = await _open(job, count)

    async def warm(connection: Connection, requests: int) -> None:
        for _ in range(requests):
            await connection.send()

    # the connections side by side, each its share in turn: one after another, 20 requests of
    # 0.4 s kept a pair's workers 16 s from ready
    await asyncio.gather(*(warm(c, len(range(i, job.warmup, count))) for i, c in enumerate(connections)))
    return connections
