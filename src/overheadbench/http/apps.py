"""Built-in ASGI apps for transport measurements: echo, simulated work, an SSE streaming agent.

Plain ASGI (no framework), so a measurement of them is a measurement of the transport.
One app serves every endpoint; ``app`` is the instance a server process imports
(``"overheadbench.http.apps:app"``):

* ``GET /``: a small JSON body (what a load with no options asks for).
* ``POST /echo``: the request body back, as ``application/json``.
* ``GET|POST /delay?ms=N``: N ms of simulated work (an async sleep), then a small JSON body.
* ``GET /stream?chunks=10&size=100&delay_ms=0``: a server-sent-events stream of ``chunks``
  events of ``size`` payload bytes, one every ``delay_ms`` (the agent "thinks" before each).
* ``GET /batch?...``: the same bytes in one response, after the same total delay.
* ``GET /hold?n=N&timeout_ms=2000``: waits until N requests have been in flight at once since
  the last reset (or the timeout), then answers: the concurrency check's barrier.
* ``GET /_stats``: requests served, in flight now, most in flight at once;
  ``POST /_stats`` zeroes them (and answers the zeroed figures). This is how a concurrency level is verified on the
  server's side of the wire.
* ``GET /fail``: raises, so the server answers 500 (to see errors reported).

Sizes are bounded, so a typo in a query cannot take the server's memory: a request body over
``MAX_BODY_BYTES``, or a stream/batch over ``MAX_STREAM_BYTES`` in all (or events over
``MAX_EVENT_BYTES``) is answered ``413`` with a JSON body saying which limit. A request the
client gave up on (``http.disconnect``: the connection closed, or the stream reset) ends at once.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs

import anyio

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

MAX_BODY_BYTES = 16 * 2**20
MAX_EVENT_BYTES = 2**20
MAX_STREAM_BYTES = 64 * 2**20
MAX_CHUNKS = 1_000_000
WAITING_ROUTES = ("/stream", "/batch", "/delay", "/hold")
"""Routes that take time to answer: they end when their client leaves (the others answer at once)."""


class Disconnected(Exception):
    """The client went away before its request's body had arrived."""


class TooLarge(Exception):
    """A request asks for more than the app's limits allow (answered 413)."""


def sse_event(index: int, size: int) -> bytes:
    """One event: ``data: `` + ``size`` payload bytes (the index, zero-padded) + a blank line."""
    payload = str(index).encode().rjust(max(size, 1), b"0")[-max(size, 1) :]
    return b"data: " + payload + b"\n\n"


class AgentApp:
    """The built-in endpoints, with a gauge of requests in flight."""

    def __init__(self) -> None:
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._held: list[tuple[int, anyio.Event]] = []
        """The ``/hold`` requests waiting, each for its level of requests in flight together."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        self.requests += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        for level, reached in self._held:
            if self.max_in_flight >= level:
                reached.set()
        try:
            await self._route(scope, receive, send)
        except Disconnected:
            pass
        except TooLarge as exc:
            await _respond(send, 413, json.dumps({"error": str(exc)}).encode(), b"application/json")
        except ValueError as exc:  # a query value that is not a number
            await _respond(send, 400, json.dumps({"error": f"bad query: {exc}"}).encode(), b"application/json")
        finally:
            self.in_flight -= 1

    async def _route(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Read the whole request first, on every route: answering an h2c request before its
        # (even empty) body was read made hypercorn drop the connection (KeyError on the stream).
        body = await _body(receive)
        if scope["path"] in WAITING_ROUTES:  # the client may leave while it waits: then the request ends
            await _unless_disconnected(receive, self._answer(scope, send, body))
        else:
            await self._answer(scope, send, body)

    async def _answer(self, scope: Scope, send: Send, body: bytes) -> None:
        path, query = scope["path"], {k: v[-1] for k, v in parse_qs(scope["query_string"].decode()).items()}
        if path == "/echo":
            await _respond(send, 200, body, b"application/json")
        elif path == "/":
            await _respond(send, 200, b'{"app": "overheadbench"}', b"application/json")
        elif path == "/delay":
            await anyio.sleep(float(query.get("ms", "0")) / 1000)
            await _respond(
                send, 200, json.dumps({"slept_ms": float(query.get("ms", "0"))}).encode(), b"application/json"
            )
        elif path in ("/stream", "/batch"):
            chunks, size = _bounded_stream(int(query.get("chunks", "10")), int(query.get("size", "100")))
            await self._events(send, path == "/stream", chunks, size, float(query.get("delay_ms", "0")) / 1000)
        elif path == "/hold":
            await self._hold(int(query.get("n", "1")), float(query.get("timeout_ms", "2000")) / 1000)
            await _respond(send, 200, json.dumps({"max_in_flight": self.max_in_flight}).encode(), b"application/json")
        elif path == "/_stats":
            if scope["method"] == "POST":
                self.requests = self.max_in_flight = 0
            stats = {"requests": self.requests, "in_flight": self.in_flight, "max_in_flight": self.max_in_flight}
            await _respond(send, 200, json.dumps(stats).encode(), b"application/json")
        elif path == "/fail":
            raise RuntimeError("the /fail endpoint always raises")
        else:
            await _respond(send, 404, b'{"error": "not found"}', b"application/json")

    async def _hold(self, n: int, timeout_s: float) -> None:
        """Wait until ``n`` requests have been in flight together since the last
        ``POST /_stats`` (or the timeout): a barrier that proves a client really has ``n`` on
        the wire, however long it takes to send them. (Waiting for ``in_flight >= n`` itself
        would keep the others waiting once the first released one has left.) Woken by the
        request that brings the gauge to ``n``: no polling, no sleep."""
        if self.max_in_flight >= n:
            return
        waiter = (n, anyio.Event())
        self._held.append(waiter)
        try:
            with anyio.move_on_after(timeout_s):
                await waiter[1].wait()
        finally:
            self._held.remove(waiter)

    async def _events(self, send: Send, streaming: bool, chunks: int, size: int, delay_s: float) -> None:
        content_type = b"text/event-stream" if streaming else b"text/plain"
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", content_type), (b"cache-control", b"no-cache")],
            }
        )
        batch = []
        started = anyio.current_time()
        for index in range(chunks):
            if delay_s:
                # On a schedule, not sleep after sleep: each sleep overshot ~1 ms here and
                # 10 events "50 ms apart" took 512 ms, an artefact of the simulation.
                await anyio.sleep_until(started + (index + 1) * delay_s)
            if streaming:
                await send({"type": "http.response.body", "body": sse_event(index, size), "more_body": True})
            else:
                batch.append(sse_event(index, size))
        await send({"type": "http.response.body", "body": b"".join(batch), "more_body": False})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def _bounded_stream(chunks: int, size: int) -> tuple[int, int]:
    if not 0 <= chunks <= MAX_CHUNKS:
        raise TooLarge(f"chunks={chunks}: the built-in app streams 0..{MAX_CHUNKS:,} events")
    if not 0 <= size <= MAX_EVENT_BYTES:
        raise TooLarge(f"size={size}: an event's payload may be at most {MAX_EVENT_BYTES:,} bytes")
    if chunks * size > MAX_STREAM_BYTES:
        raise TooLarge(f"chunks x size = {chunks * size:,} bytes: a stream may be at most {MAX_STREAM_BYTES:,}")
    return chunks, size


async def _unless_disconnected(receive: Receive, answer: Awaitable[None]) -> None:
    """Await ``answer`` unless the client leaves first (``http.disconnect``: the connection
    closed, the stream was reset): then it is cancelled at once.

    Why: a server keeps calling an app whose client has gone, and ``send`` after a disconnect
    raises nothing, so a stream of 1 ms events dropped by its client ran on for its whole
    length (20 dropped streams: in flight 10 s+, the HTTP/1.1 server 60 -> 354 MB).
    """
    failed: list[Exception] = []
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            group.cancel_scope.cancel()

        group.start_soon(watch)
        try:
            await answer
        except Exception as exc:  # raised as itself (a 413, a 400), not wrapped in the group's ExceptionGroup
            failed.append(exc)
        group.cancel_scope.cancel()
    if failed:
        raise failed[0]


async def _body(receive: Receive) -> bytes:
    """The whole request body, at most ``MAX_BODY_BYTES`` (then :class:`TooLarge`, and the
    rest is not read); :class:`Disconnected` if the client went away first."""
    parts = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise Disconnected
        parts.append(message.get("body", b""))
        size += len(parts[-1])
        if size > MAX_BODY_BYTES:
            raise TooLarge(f"the request body is over {MAX_BODY_BYTES:,} bytes, the built-in app's limit")
        if not message.get("more_body"):
            return b"".join(parts)


async def _respond(send: Send, status: int, body: bytes, content_type: bytes) -> None:
    headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


app = AgentApp()
