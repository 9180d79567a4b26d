"""Sweeps against a :class:`~overheadbench.http.server.Server`: concurrency levels (verified
on the server's side) and message sizes.

Concurrency over HTTP/1.1: one httpx client with 50–100 requests in flight spent 2.3–3.9 ms
of CPU per request here and fell to ~400 req/s, below its own sequential rate (a known
httpcore pool cost that grows with the pool). Spread over clients of 20 in flight it still
cost 1.7 ms/request (572 req/s at 100), over clients of 5 it cost 1.05 ms (948 req/s). So
HTTP/1.1 requests go over clients of at most 5 in flight each; h2c multiplexes up to 20
streams over each client's one connection (1,103 req/s at 100 in flight).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import anyio
import httpx

from .load import LatencyStats, Throughput, alatency, throughput
from .server import Server

PER_CLIENT = {"http1": 5, "h2c": 20}
HOLD_TIMEOUT_MS = 2000


class ConcurrencyNotReached(AssertionError):
    """The server never had the requested number of requests in flight at once."""


@dataclass(frozen=True)
class SizePoint:
    size: int
    latency: LatencyStats


def _clients(server: Server, concurrency: int, per_client: int | None) -> list[httpx.AsyncClient]:
    return [server.async_client() for _ in range(math.ceil(concurrency / (per_client or PER_CLIENT[server.protocol])))]


async def in_flight_probe(server: Server, concurrency: int, per_client: int | None = None) -> int:
    """Send ``concurrency`` requests to the ``/hold`` barrier at once and return the most the
    server had in flight: each request is held until all are in flight (or 2 s pass), so
    the answer is ``concurrency`` exactly when the client really puts that many on the wire,
    however slowly it sends them; a client that serialises them stops at the deadline."""
    clients = _clients(server, concurrency, per_client)
    try:
        await clients[0].post("/_stats")

        async def one(index: int) -> None:
            await clients[index % len(clients)].get(f"/hold?n={concurrency}&timeout_ms={HOLD_TIMEOUT_MS}")

        with anyio.move_on_after(2 * HOLD_TIMEOUT_MS / 1000):  # bounded even for a serialising client
            async with anyio.create_task_group() as group:
                for index in range(concurrency):
                    group.start_soon(one, index)
        return int((await clients[0].get("/_stats")).json()["max_in_flight"])
    finally:
        for client in clients:
            await client.aclose()


async def concurrency_sweep(
    server: Server,
    levels: Sequence[int] = (1, 10, 50, 100),
    *,
    path: str = "/echo",
    body: bytes = b'{"message": "hello"}',
    duration_s: float = 1.0,
    per_client: int | None = None,
    verify: bool = True,
) -> list[Throughput]:
    """Throughput and latency at each concurrency level, over the built-in app (or any app
    with ``/_stats`` and ``/delay`` when ``verify``). Raises :class:`ConcurrencyNotReached`
    when the server never saw a level's requests in flight together."""
    results = []
    for level in levels:
        seen = await in_flight_probe(server, level, per_client) if verify else None
        if seen is not None and seen < level:
            raise ConcurrencyNotReached(
                f"asked for {level} requests in flight, the server saw at most {seen} "
                f"at once ({server.protocol}); the client serialises them"
            )
        clients = _clients(server, level, per_client)
        rotation = itertools.cycle(clients)
        try:
            result = await throughput(
                lambda: next(rotation).post(path, content=body),  # noqa: B023  (awaited within this iteration)
                concurrency=level,
                duration_s=duration_s,
            )
        finally:
            for client in clients:
                await client.aclose()
        results.append(replace(result, server_max_in_flight=seen))
    return results


async def size_sweep(
    server: Server, sizes: Sequence[int] = (100, 10_000, 1_000_000), *, count: int = 200, max_s: float = 10.0
) -> list[SizePoint]:
    """Sequential echo latency for each body size (the same bytes go both ways)."""
    points = []
    async with server.async_client() as client:
        for size in sizes:
            body = b"x" * size
            points.append(
                SizePoint(
                    size,
                    await alatency(
                        lambda: client.post("/echo", content=body),  # noqa: B023  (awaited within this iteration)
                        count=count,
                        warmup=5,
                        max_s=max_s,
                    ),
                )
            )
    return points
