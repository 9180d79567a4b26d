"""Sweeps against a :class:`~overheadbench.http.server.Server`: concurrency levels (verified
on the server's side) and message sizes.

The load itself is the lean generator's (:mod:`overheadbench.http.loadgen`). The probe that
verifies a level uses httpx: one httpx client with 50–100 HTTP/1.1 requests in flight spent
2.3–3.9 ms of CPU per request on the reference machine (docs/http.md; a known httpcore pool cost
that grows with the pool), so its HTTP/1.1 requests go over clients of at most 5 in flight each,
and h2c multiplexes up to 20 streams over each client's one connection.

Why the barrier's wait scales: every HTTP/1.1 request in flight is a connection of its own, so
c=300 over https is 300 TLS handshakes before the last request reaches the barrier; with two
busy loops on one core that took longer than a fixed 2 s (3 of 3 sweeps "not reached", 299 of
300), and the error blamed the client. The wait is the measured cost of one connection and
request times the connections the level needs (``HOLD_SAFETY`` over it), between
``HOLD_MIN_S`` and ``HOLD_MAX_S``; a level still not reached is measured anyway and carries its
shortfall (:attr:`~overheadbench.http.load.Throughput.in_flight_seen`), a row's note and a
warning, not an error of the whole sweep. A probe that fails (the file descriptors run out,
connections refused) closes every connection it opened before it says so, and says which
limit: a failed c=1,000 sweep kept 177-295 sockets into the next test until a ``gc.collect()``,
held by its exception's frames.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import gc
import math
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import httpx

from ..core.errors import OverheadConcurrencyWarning
from .connections import LoadError
from .load import LatencyStats, Throughput, alatency
from .server import HTTP_VERSION, Server

PER_CLIENT = {"HTTP/1.1": 5, "HTTP/2": 20, "HTTP/3": 20}
"""Requests in flight per httpx client, by the HTTP version spoken."""
HOLD_MIN_S = 2.0
"""The barrier's shortest wait: a client that puts its requests on the wire at once needs far less."""
HOLD_MAX_S = 60.0
"""The barrier's longest wait, however slow a connection was to make."""
HOLD_SAFETY = 3.0
"""The wait over the measured cost of the level's connections (a busy machine's cost moves)."""


@dataclass(frozen=True)
class Probe:
    """What the ``/hold`` barrier saw for one level: the most requests in flight at once, and how
    long the barrier waited for them."""

    level: int
    seen: int
    wait_s: float

    @property
    def reached(self) -> bool:
        return self.seen >= self.level


@dataclass(frozen=True)
class SizePoint:
    size: int
    latency: LatencyStats


def _clients(server: Server, concurrency: int, per_client: int | None) -> list[httpx.AsyncClient]:
    return [
        server.async_client()
        for _ in range(math.ceil(concurrency / (per_client or PER_CLIENT[HTTP_VERSION[server.protocol]])))
    ]


async def in_flight_probe(server: Server, concurrency: int, per_client: int | None = None) -> Probe:
    """Send ``concurrency`` requests to the ``/hold`` barrier at once: the most the server had in
    flight. Each request is held until all are in flight (or the wait passes), so the answer is
    ``concurrency`` exactly when the client really puts that many on the wire, however slowly it
    sends them; a client that serialises them stops at the deadline. The wait scales with the
    level's connections and the measured cost of one (see the module's docstring)."""
    clients = _clients(server, concurrency, per_client)
    problem = ""
    try:
        started = time.perf_counter()
        await clients[0].post("/_stats")  # a fresh connection and a request: what one costs now
        wait_s = hold_wait_s(time.perf_counter() - started, _connections(server, concurrency, len(clients)))

        async def one(index: int) -> None:
            await clients[index % len(clients)].get(f"/hold?n={concurrency}&timeout_ms={wait_s * 1000:.0f}")

        with anyio.move_on_after(2 * wait_s):  # bounded even for a serialising client
            async with anyio.create_task_group() as group:
                for index in range(concurrency):
                    group.start_soon(one, index)
        seen = int((await clients[0].get("/_stats")).json()["max_in_flight"])
    except Exception as exc:  # noqa: BLE001  (said below, outside this block: its frames hold the sockets)
        problem = probe_failure(exc, concurrency, server.protocol)
    finally:
        for client in clients:
            with contextlib.suppress(Exception):
                await client.aclose()
    if problem:
        gc.collect()  # the failed requests' frames, and the sockets they hold, are garbage now: free them
        raise LoadError(problem)
    return Probe(concurrency, seen, wait_s)


def hold_wait_s(connection_s: float, connections: int) -> float:
    """How long the barrier waits: ``HOLD_SAFETY`` times ``connections`` made at ``connection_s`` each
    (one after another, the worst case), within ``HOLD_MIN_S``..``HOLD_MAX_S``."""
    return min(HOLD_MAX_S, max(HOLD_MIN_S, HOLD_SAFETY * connection_s * connections))


def _connections(server: Server, concurrency: int, clients: int) -> int:
    """Connections the probe opens: one per request over HTTP/1.1, one per client when multiplexed."""
    return clients if HTTP_VERSION[server.protocol] != "HTTP/1.1" else concurrency


def probe_failure(exc: BaseException, level: int, protocol: str) -> str:
    """What a failed probe says: the file-descriptor limit by name where that was it, else the first error."""
    leaves = list(_leaves(exc))
    if any(_out_of_descriptors(leaf) for leaf in leaves):
        return (
            f"the check of {level} requests in flight ({protocol}) ran out of file descriptors (EMFILE): this "
            f"process may open {_descriptor_limit()} (ulimit -n), and the level needs about {level} connections "
            f"besides the session's own files; raise the limit or lower the level"
        )
    first = leaves[0] if leaves else exc
    return f"the check of {level} requests in flight ({protocol}) failed: {type(first).__name__}: {first}"


def _descriptor_limit() -> str:
    """This process's soft limit on open files, as the message says it (no such limit on Windows)."""
    try:
        import resource
    except ImportError:
        return "only so many files"
    return str(resource.getrlimit(resource.RLIMIT_NOFILE)[0])


def _leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions an exception group holds, flattened (the exception itself otherwise; a group
    is known by its ``exceptions``: Python 3.10 has the backport's class, not the builtin)."""
    inner = getattr(exc, "exceptions", None)
    if isinstance(inner, (list, tuple)):
        return [leaf for one in inner for leaf in _leaves(one)]
    return [exc]


def _out_of_descriptors(exc: BaseException | None) -> bool:
    """Whether ``exc``, or what caused it, is EMFILE (httpx wraps the OS error in its own)."""
    while exc is not None:
        if getattr(exc, "errno", None) == errno.EMFILE or "Too many open files" in str(exc):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def concurrency_sweep(
    server: Server,
    levels: Sequence[int] = (1, 10, 50, 100),
    *,
    verify: bool | None = None,
    **options: Any,
) -> list[Throughput]:
    """Lean load (:func:`~overheadbench.http.loadrun.load`, keywords passed on) at each
    concurrency level. ``verify`` (default: for the built-in app, over every protocol but
    HTTP/3) first sends that many requests to the ``/hold`` barrier (:func:`in_flight_probe`); a
    level the server never had all in flight at once is loaded anyway, its shortfall kept on its
    result (``in_flight_seen``) and warned about (:class:`~overheadbench.core.errors.OverheadConcurrencyWarning`)."""
    from .loadrun import load
    from .server import BUILTIN_APP
    from .threaded import run_async

    check = verify if verify is not None else server.app == BUILTIN_APP and server.protocol != "h3"
    results = []
    for level in levels:
        probe = run_async(in_flight_probe, server, level) if check else None
        result = load(server, concurrency=level, **options)
        if probe is not None:
            result = dataclasses.replace(result, in_flight_seen=probe.seen, in_flight_wait_s=probe.wait_s)
            if not probe.reached:
                warnings.warn(OverheadConcurrencyWarning(result.shortfall), stacklevel=2)
        results.append(result)
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
