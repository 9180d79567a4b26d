"""Sweeps against a :class:`~overheadbench.http.server.Server`: concurrency levels (verified
on the server's side) and message sizes.

The load itself is the lean generator's (:mod:`overheadbench.http.loadgen`). The probe that
verifies a level uses httpx: one httpx client with 50–100 HTTP/1.1 requests in flight spent
2.3–3.9 ms of CPU per request on the reference machine (docs/http.md; a known httpcore pool cost
that grows with the pool), so its HTTP/1.1 requests go over clients of at most 5 in flight each,
and h2c multiplexes up to 20 streams over each client's one connection.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import httpx

from .load import LatencyStats, Throughput, alatency
from .server import HTTP_VERSION, Server

PER_CLIENT = {"HTTP/1.1": 5, "HTTP/2": 20, "HTTP/3": 20}
"""Requests in flight per httpx client, by the HTTP version spoken."""
HOLD_TIMEOUT_MS = 2000


class ConcurrencyNotReached(AssertionError):
    """The server never had the requested number of requests in flight at once."""


@dataclass(frozen=True)
class SizePoint:
    size: int
    latency: LatencyStats


def _clients(server: Server, concurrency: int, per_client: int | None) -> list[httpx.AsyncClient]:
    return [
        server.async_client()
        for _ in range(math.ceil(concurrency / (per_client or PER_CLIENT[HTTP_VERSION[server.protocol]])))
    ]


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


def concurrency_sweep(
    server: Server,
    levels: Sequence[int] = (1, 10, 50, 100),
    *,
    verify: bool | None = None,
    **options: Any,
) -> list[Throughput]:
    """Lean load (:func:`~overheadbench.http.loadrun.load`, keywords passed on) at each
    concurrency level. ``verify`` (default: for the built-in app, over every protocol but
    HTTP/3) first sends that many requests to the ``/hold`` barrier and raises
    :class:`ConcurrencyNotReached` when the server never had them all in flight at once."""
    from .loadrun import load
    from .server import BUILTIN_APP, run_async

    check = verify if verify is not None else server.app == BUILTIN_APP and server.protocol != "h3"
    results = []
    for level in levels:
        seen = run_async(in_flight_probe, server, level) if check else None
        if seen is not None and seen < level:
            raise ConcurrencyNotReached(
                f"asked for {level} requests in flight, the server saw at most {seen} "
                f"at once ({server.protocol}); the client serialises them"
            )
        results.append(load(server, concurrency=level, **options))
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
