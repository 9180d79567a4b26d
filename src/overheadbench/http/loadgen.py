"""Lean load generation: one fixed request, sent back to back from worker processes, as wrk
and h2load do, so the load generator is not what limits the figure.

httpx costs ~1 ms of client CPU per request here (1.4 ms over h2c), which capped every
throughput figure at ~600–1,000 req/s against a server that wrk drives at ~5,000. The
workers here speak the protocol directly on asyncio: HTTP/1.1 with a prebuilt request and a
small response parser (one connection per concurrent request, as wrk), HTTP/2 through the
``h2`` state machine (streams multiplexed over connections of at most ``STREAMS_PER_CONNECTION``),
both in the clear or over TLS (ALPN checked on every connection), and HTTP/3 through
:class:`~overheadbench.http.h3.H3Client`. Each worker measures its own requests' latency and
its own CPU; :func:`overheadbench.http.loadrun.load` starts them, releases them together and merges
what they report.

Run as ``python -m overheadbench.http.loadgen``: it reads its :class:`Job` as one JSON line on
stdin, connects and warms up, prints ``ready``, waits for ``go``, runs, and prints its result
as one JSON line.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import ssl
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from .load import DRAIN_S

STREAMS_PER_CONNECTION = 50
"""HTTP/2 and HTTP/3 streams per connection (h2load's ``-m`` does the same job)."""
MAX_BODY = 65_535
"""A request body must fit HTTP/2's initial flow-control window (the lean client sends it at once)."""
_CONTENT_LENGTH = re.compile(rb"\r\ncontent-length:[ \t]*(\d+)", re.IGNORECASE)
_CHUNKED = re.compile(rb"\r\ntransfer-encoding:[^\r]*chunked", re.IGNORECASE)


class LoadError(Exception):
    """A worker could not connect, or its connection did not speak the protocol asked for."""


@dataclass(frozen=True)
class Job:
    """What one worker sends: ``concurrency`` requests in flight for ``duration_s``."""

    protocol: str
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
    """One HTTP/1.1 keep-alive connection, one request at a time."""

    def __init__(self, request: bytes) -> None:
        self.request = request
        self.buffer = b""
        self.transport: asyncio.Transport | None = None
        self.waiter: asyncio.Future[int] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        status = self._complete()
        if status is not None and self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(status)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(LoadError(f"the server closed the connection ({exc or 'EOF'})"))

    def _complete(self) -> int | None:
        """The status once a whole response is buffered (Content-Length or chunked), else None."""
        head_end = self.buffer.find(b"\r\n\r\n")
        if head_end < 0:
            return None
        head, body_start = self.buffer[:head_end], head_end + 4
        length = _CONTENT_LENGTH.search(head)
        if length:
            end = body_start + int(length.group(1))
        elif _CHUNKED.search(head):
            end = _chunked_end(self.buffer, body_start)
            if end < 0:
                return None
        else:
            raise LoadError("a response without Content-Length or chunked encoding (the lean client needs one)")
        if len(self.buffer) < end:
            return None
        self.buffer = self.buffer[end:]
        return int(head[9:12])

    async def send(self) -> int:
        assert self.transport is not None
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(self.request)
        return await self.waiter


def _chunked_end(data: bytes, position: int) -> int:
    """Where a chunked body that starts at ``position`` ends, or -1 if it has not all arrived."""
    while True:
        line_end = data.find(b"\r\n", position)
        if line_end < 0:
            return -1
        size = int(data[position:line_end].split(b";")[0], 16)
        if size == 0:
            trailer_end = data.find(b"\r\n\r\n", line_end)
            return -1 if trailer_end < 0 else trailer_end + 4
        position = line_end + 2 + size + 2
        if position > len(data):
            return -1


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
                self._fail(LoadError(f"the server ended the connection ({event.error_code!r})"))
        assert self.transport is not None
        self.transport.write(self.h2.data_to_send())

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(LoadError(f"the server closed the connection ({exc or 'EOF'})"))

    def _fail(self, error: Exception) -> None:
        for future, _ in self.streams.values():
            if not future.done():
                future.set_exception(error)
        self.streams.clear()

    async def send(self) -> int:
        assert self.transport is not None
        stream_id = self.h2.get_next_available_stream_id()
        self.h2.send_headers(stream_id, self.headers, end_stream=not self.body)
        if self.body:
            self.h2.send_data(stream_id, self.body, end_stream=True)
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self.streams[stream_id] = (future, [])
        self.transport.write(self.h2.data_to_send())
        return await future


def _tls_context(job: Job, alpn: str) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cadata=job.cadata)
    context.set_alpn_protocols([alpn])
    return context


async def _open(job: Job, count: int) -> list[Any]:
    """``count`` connections for the job, each checked for the protocol it speaks."""
    loop = asyncio.get_running_loop()
    authority = f"{job.host}:{job.port}".encode()
    if job.protocol == "h3":
        from .h3 import H3Client

        clients = [H3Client(job.host, job.port, cadata=(job.cadata or "").encode() or None) for _ in range(count)]
        for client in clients:
            await client.__aenter__()
        return [_H3Sender(client, job) for client in clients]
    tls = job.protocol in ("https", "h2")
    alpn = "h2" if job.protocol == "h2" else "http/1.1"
    body = job.body
    extra = [(name.lower().encode(), value.encode()) for name, value in job.headers]
    if job.protocol in ("h2c", "h2"):
        headers = [(b":method", job.method.encode()), (b":scheme", b"https" if tls else b"http"),
                   (b":authority", authority), (b":path", job.path.encode()),
                   (b"content-length", str(len(body)).encode()), *extra]  # fmt: skip
        factory: Callable[[], asyncio.Protocol] = lambda: _H2(headers, body)  # noqa: E731
    else:
        lines = "".join(f"{name.decode()}: {value.decode()}\r\n" for name, value in extra)
        request = (
            f"{job.method} {job.path} HTTP/1.1\r\nHost: {authority.decode()}\r\n"
            f"Content-Length: {len(body)}\r\n{lines}\r\n"
        ).encode() + body
        factory = lambda: _H1(request)  # noqa: E731
    connections = []
    for _ in range(count):
        transport, connection = await loop.create_connection(
            factory, job.host, job.port, ssl=_tls_context(job, alpn) if tls else None
        )
        if tls:
            negotiated = transport.get_extra_info("ssl_object").selected_alpn_protocol()
            if negotiated != alpn:
                transport.close()
                raise LoadError(f"{job.protocol}: the server negotiated ALPN {negotiated!r}, not {alpn!r}")
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


async def run(job: Job, ready: Callable[[], Awaitable[None]] | None = None) -> dict[str, Any]:
    """Connect, warm up, await ``ready()`` (the parent's release), then keep ``job.concurrency``
    requests in flight until the deadline; count the ones finished by then."""
    multiplexed = job.protocol in ("h2c", "h2", "h3")
    count = -(-job.concurrency // STREAMS_PER_CONNECTION) if multiplexed else job.concurrency
    connections = await _open(job, count)
    for index in range(job.warmup):
        await connections[index % count].send()
    if ready is not None:
        await ready()
    latencies: list[int] = []
    finished: list[int] = []
    errors: list[str] = []
    started = time.perf_counter_ns()
    deadline = started + int(job.duration_s * 1e9)
    cpu_started = time.process_time()
    late = 0

    async def worker(connection: Any) -> None:
        nonlocal late
        while (start := time.perf_counter_ns()) < deadline:
            try:
                status = await connection.send()
            except (LoadError, OSError) as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
                return
            end = time.perf_counter_ns()
            if end > deadline:
                late += 1
            elif status < 400:
                latencies.append(end - start)
                finished.append(end - started)
            else:
                errors.append(f"status {status}")

    tasks = [asyncio.ensure_future(worker(connections[index % count])) for index in range(job.concurrency)]
    _, pending = await asyncio.wait(tasks, timeout=job.duration_s + DRAIN_S)
    for task in pending:
        task.cancel()
    cpu_s = time.process_time() - cpu_started
    for connection in connections:
        await _close(connection)
    return {
        "latencies_ns": latencies,
        "finished_ns": finished,
        "errors": len(errors),
        "first_error": errors[0] if errors else "",
        "served": len(latencies) + late,
        "cpu_s": cpu_s,
        "duration_ns": min(time.perf_counter_ns(), deadline) - started,
    }


async def _close(connection: Any) -> None:
    if isinstance(connection, _H3Sender):
        await connection.client.aclose()
    elif connection.transport is not None:
        connection.transport.close()


async def _serve_parent() -> None:
    loop = asyncio.get_running_loop()
    job = Job(**json.loads(await loop.run_in_executor(None, sys.stdin.readline)))

    async def ready() -> None:
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        await loop.run_in_executor(None, sys.stdin.readline)

    try:
        result = await run(job, ready)
    except Exception as exc:  # reported to the parent, which raises it with the worker's words
        result = {"fatal": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(_serve_parent())
