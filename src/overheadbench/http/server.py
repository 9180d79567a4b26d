"""A local HTTP server for one test: any ASGI app, HTTP/1.1 or h2c, in its own process.

Where it runs, and why: in a child process. On this 2-core machine the client (httpx,
~1 ms of CPU per request) is the bottleneck, and a server in the same process competes
with it: in the same event loop it reached 53–79% of the separate-process throughput at
concurrency ≥ 10, and in a thread (the GIL) it was the worst layout everywhere (SSE 4.2k
vs 7.5k chunks/s, h2c 407 vs 535–641 req/s). See docs/http.md.

Ready means ready: the parent binds 127.0.0.1 port 0 and listens before the child starts,
so the first request is queued, not refused; that request (over the chosen protocol) is
the readiness check. No sleeps, no fixed ports.
"""

from __future__ import annotations

import collections
import os
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import IO, Any

import httpx

PROTOCOLS = ("http1", "h2c")
HTTP_VERSION = {"http1": "HTTP/1.1", "h2c": "HTTP/2"}
START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 5.0
CLIENT_LIMITS = httpx.Limits(max_connections=200, max_keepalive_connections=200)
"""Enough connections for 100 requests in flight over HTTP/1.1 (httpx's default allows 100)."""


class ServerError(Exception):
    """The server could not start, or answered in a way a measurement cannot use."""


class ProtocolMismatch(ServerError):
    """A response came over another HTTP version than the server was asked for."""


@dataclass
class Server:
    """A running server: its URL, protocol, and clients configured for that protocol.

    Every response through :meth:`client` / :meth:`async_client` is checked: an "h2c"
    server whose response came over HTTP/1.1 raises :class:`ProtocolMismatch` (httpx with
    ``http2=True`` on an ``http://`` URL silently speaks HTTP/1.1). ``versions`` counts the
    versions seen.
    """

    app: str
    protocol: str
    url: str
    process: subprocess.Popen[bytes]
    log: IO[bytes]
    versions: collections.Counter[str] = field(default_factory=collections.Counter)
    _clients: list[Any] = field(default_factory=list)

    def client(self, **options: Any) -> httpx.Client:
        client = httpx.Client(event_hooks={"response": [self.check]}, **self._client_options(options))
        self._clients.append(client)
        return client

    def async_client(self, **options: Any) -> httpx.AsyncClient:
        async def check(response: httpx.Response) -> None:
            self.check(response)

        client = httpx.AsyncClient(event_hooks={"response": [check]}, **self._client_options(options))
        self._clients.append(client)
        return client

    def check(self, response: httpx.Response) -> None:
        """Count the response's HTTP version; fail loudly when it is not the server's protocol."""
        self.versions[response.http_version] += 1
        if response.http_version != HTTP_VERSION[self.protocol]:
            raise ProtocolMismatch(
                f"{self.url} was started for {self.protocol}, but a response came over {response.http_version}"
            )

    def stats(self) -> dict[str, int]:
        """The built-in app's request gauge (``/_stats``)."""
        with httpx.Client(base_url=self.url, http1=self.protocol == "http1", http2=self.protocol == "h2c") as client:
            stats: dict[str, int] = client.get("/_stats").json()
            return stats

    def output(self) -> str:
        """What the server process printed (errors, tracebacks)."""
        self.log.flush()
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def close(self) -> None:
        """Close the clients, then stop the server (end of file on its stdin); kill after 5 s."""
        for client in self._clients:
            if isinstance(client, httpx.Client):
                client.close()
        self._clients.clear()
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()

    def _client_options(self, options: dict[str, Any]) -> dict[str, Any]:
        defaults = {
            "base_url": self.url,
            "http1": self.protocol == "http1",
            "http2": self.protocol == "h2c",
            "limits": CLIENT_LIMITS,
            "timeout": 30.0,
        }
        return {**defaults, **options}


def start_server(app: str = "overheadbench.http.apps:app", protocol: str = "http1") -> Server:
    """Serve ``app`` (``"module:attribute"``) on 127.0.0.1, a free port, over ``protocol``.

    Returns once a first request has been answered over that protocol; raises
    :class:`ServerError` with the server's output if it cannot start within seconds.
    """
    if protocol not in PROTOCOLS:
        raise ServerError(f"protocol must be one of {', '.join(PROTOCOLS)}, not {protocol!r}")
    if not isinstance(app, str) or ":" not in app:
        raise ServerError(f"app must be given as 'module:attribute' (the server process imports it), not {app!r}")
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1024)
    port = listener.getsockname()[1]
    fd = listener.detach()  # the child owns it now; no socket object here may close a reused fd
    log = tempfile.TemporaryFile(prefix="overheadbench-server-")
    environ = dict(os.environ, PYTHONPATH=os.pathsep.join(path for path in sys.path if path))
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "overheadbench.http.child", app, str(fd)],
            stdin=subprocess.PIPE,
            stdout=log,
            stderr=subprocess.STDOUT,
            pass_fds=(fd,),
            env=environ,
        )
    finally:
        os.close(fd)
    server = Server(app, protocol, f"http://127.0.0.1:{port}", process, log)
    try:
        _wait_ready(server)
    except BaseException:
        server.close()
        raise
    return server


def _wait_ready(server: Server) -> None:
    try:
        with httpx.Client(
            base_url=server.url,
            http1=server.protocol == "http1",
            http2=server.protocol == "h2c",
            timeout=START_TIMEOUT_S,
        ) as client:
            server.check(client.get("/"))
    except httpx.HTTPError as exc:
        try:  # a crashing server resets the connection a moment before it has exited
            code: int | None = server.process.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            code = None
        state = f"exited with code {code}" if code is not None else "did not answer"
        raise ServerError(
            f"the server for {server.app} ({server.protocol}) {state} "
            f"({type(exc).__name__}: {exc}). Its output:\n{server.output()[-3000:]}"
        ) from None
