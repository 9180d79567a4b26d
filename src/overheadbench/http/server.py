"""A local HTTP server for one test: any ASGI app, over HTTP/1.1, h2c, HTTPS, HTTP/2 over TLS
or HTTP/3 (:class:`~overheadbench.http.protocols.HttpProtocol`), in its own process.

Where it runs, and why: in a child process. On the reference machine (2 cores, docs/http.md) the client (httpx,
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
import math
import os
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import anyio
import httpx

from ..core.scratch import remove_folder
from .listening import bound
from .protocols import HttpProtocol
from .threaded import run_async
from .tls import ALPN, EXTRAS, authority, client_tls_context, installed, tls_files

PROTOCOLS = tuple(HttpProtocol)
"""HTTP/1.1 and HTTP/2 (prior knowledge) in the clear; HTTP/1.1 and HTTP/2 over TLS; HTTP/3 over QUIC."""
HTTP_VERSION = {protocol: protocol.version for protocol in HttpProtocol}
BUILTIN_APP = "overheadbench.http.apps:app"
START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 5.0
SERVING: dict[int, Server] = {}
"""Servers running in other processes now, in the order they started, by ``id(server)``
(count mode warns of them; a load reads the CPU of each)."""
CLIENT_LIMITS = httpx.Limits(max_connections=200, max_keepalive_connections=200)
"""Enough connections for 100 requests in flight over HTTP/1.1 (httpx's default allows 100)."""


class ServerError(Exception):
    """The server could not start, or answered in a way a measurement cannot use."""


class MissingExtra(ServerError):
    """A protocol was asked for whose extra is not installed (:data:`EXTRAS`)."""


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
    protocol: HttpProtocol
    url: str
    process: subprocess.Popen[bytes] | None
    """The server's process; None when it is served in this process's event loop
    (:func:`~overheadbench.http.inprocess.serve_in_process`)."""
    log: IO[bytes] | None
    versions: collections.Counter[str] = field(default_factory=collections.Counter)
    quic_port: int | None = None
    """The UDP port HTTP/3 is served on (``h3`` only; ``url``'s port is its TCP listener)."""
    tls_folder: Path | None = None
    """Where the certificate and key were written, on a system without in-memory files
    (:func:`tls_files`); removed once the server has started."""
    _clients: list[Any] = field(default_factory=list)

    @property
    def tls(self) -> bool:
        return self.protocol in ALPN

    def client(self, **options: Any) -> httpx.Client:
        """An httpx client for this protocol (``h3``: HTTP/2 over the TLS listener; httpx has no HTTP/3)."""
        client = httpx.Client(event_hooks={"response": [self.check]}, **self._client_options(options))
        self._clients.append(client)
        return client

    def async_client(self, **options: Any) -> Any:
        """An ``httpx.AsyncClient`` for this protocol; for ``h3`` an
        :class:`~overheadbench.http.h3.H3Client` over QUIC (use it with ``async with``)."""
        if self.protocol == "h3":
            from .h3 import H3Client

            assert self.quic_port is not None
            return H3Client("127.0.0.1", self.quic_port, cadata=authority().cert_pem.bytes())

        async def check(response: httpx.Response) -> None:
            self.check(response)

        client = httpx.AsyncClient(event_hooks={"response": [check]}, **self._client_options(options))
        self._clients.append(client)
        return client

    @property
    def name(self) -> str:
        """The app and its protocol, e.g. ``gateway:app (http1)``: what a row calls this server."""
        return f"{self.app} ({self.protocol})"

    def cpu_s(self) -> float:
        """CPU seconds (user + system) the server process has used, from the OS (``/proc`` on
        Linux; NaN elsewhere, and for a server in this process, whose CPU is the client's too)."""
        return process_cpu_s(self.process.pid) if self.process is not None else math.nan

    def check(self, response: httpx.Response) -> None:
        """Count the response's HTTP version; fail loudly when it is not the server's protocol.
        Over TLS the version is what ALPN negotiated, so this checks ALPN on every response
        (an ``h3`` server's httpx clients speak HTTP/2 to its TCP listener)."""
        self.versions[response.http_version] += 1
        expected = "HTTP/2" if self.protocol == "h3" else HTTP_VERSION[self.protocol]
        if response.http_version != expected:
            raise ProtocolMismatch(
                f"{self.url} was started for {self.protocol}, but a response came over {response.http_version}"
            )

    def stats(self) -> dict[str, int]:
        """The built-in app's request gauge (``/_stats``)."""
        with httpx.Client(**self._client_options({})) as client:
            stats: dict[str, int] = client.get("/_stats").json()
            return stats

    def output(self) -> str:
        """What the server process printed (errors, tracebacks)."""
        if self.log is None:
            return ""
        self.log.flush()
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def close(self) -> None:
        """Close the clients, then stop the server (end of file on its stdin); kill after 5 s."""
        for client in self._clients:
            if isinstance(client, httpx.Client):
                client.close()
        self._clients.clear()
        SERVING.pop(id(self), None)
        if self.process is None or self.log is None:
            return
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        self.forget_key()

    def forget_key(self) -> None:
        """Remove the certificate and private key from disk, where :func:`tls_files` had to
        write them: the server read them when it started."""
        if self.tls_folder is not None:
            remove_folder(self.tls_folder)
            self.tls_folder = None

    def _client_options(self, options: dict[str, Any]) -> dict[str, Any]:
        http2 = HTTP_VERSION[self.protocol] != "HTTP/1.1"
        defaults = {
            "base_url": self.url,
            "http1": not http2,
            "http2": http2,
            "limits": CLIENT_LIMITS,
            "timeout": 30.0,
            "verify": client_tls_context() if self.tls else True,
        }
        return {**defaults, **options}


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid``, from ``/proc/PID/stat`` (NaN where there is none)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return math.nan
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _check_extra(protocol: str) -> None:
    """A protocol whose extra is not installed is refused, naming the extra, before any process starts."""
    extra, modules = EXTRAS.get(protocol, ("", ()))
    missing = [module for module in modules if not installed(module)]
    if missing:
        raise MissingExtra(
            f"protocol {protocol!r} needs {' and '.join(missing)}, which the default install leaves out: "
            f"pip install 'overheadbench[{extra}]'"
        )


def start_server(app: str = BUILTIN_APP, protocol: str = "http1", env: dict[str, str] | None = None) -> Server:
    """Serve ``app`` (``"module:attribute"``) on 127.0.0.1, a free port, over ``protocol``
    (one of :data:`PROTOCOLS`; the TLS ones with a certificate for 127.0.0.1 and localhost
    from :func:`authority`).

    ``env`` is added to the server process's environment (a gateway's upstream URL); a
    ``PYTHONPATH`` there comes first on the server's path, this process's path after it.
    Returns once a first request has been answered over that protocol; raises
    :class:`ServerError` with the server's output if it cannot start within seconds.
    """
    if protocol not in PROTOCOLS:
        raise ServerError(f"protocol must be one of {', '.join(PROTOCOLS)}, not {protocol!r}")
    if not isinstance(app, str) or ":" not in app:
        raise ServerError(f"app must be given as 'module:attribute' (the server process imports it), not {app!r}")
    _check_extra(protocol)
    extra = dict(env or {})
    path = os.pathsep.join([*filter(None, [extra.pop("PYTHONPATH", "")]), *(entry for entry in sys.path if entry)])
    environ = {**os.environ, **extra, "PYTHONPATH": path}
    sockets = [bound(socket.SOCK_STREAM)] + ([bound(socket.SOCK_DGRAM)] if protocol == "h3" else [])
    ports = [sock.getsockname()[1] for sock in sockets]
    fds = [sock.detach() for sock in sockets]  # the child owns them now; no socket object here may close a reused fd
    arguments = [app, str(fds[0])]
    tls_folder: Path | None = None
    pem_fds: list[int] = []
    if protocol in ALPN:
        certificate = authority().issue_cert("127.0.0.1", "localhost")
        pems = {"cert.pem": certificate.cert_chain_pems[0].bytes(), "key.pem": certificate.private_key_pem.bytes()}
        paths, pem_fds, tls_folder = tls_files(pems)
        arguments += [*paths, ALPN[protocol], *map(str, fds[1:])]
    log = tempfile.TemporaryFile(prefix="overheadbench-server-")
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "overheadbench.http.child", *arguments],
            stdin=subprocess.PIPE,
            stdout=log,
            stderr=subprocess.STDOUT,
            pass_fds=[*fds, *pem_fds],
            env=environ,
        )
    finally:
        for fd in [*fds, *pem_fds]:
            os.close(fd)
    scheme = "https" if protocol in ALPN else "http"
    server = Server(
        app, HttpProtocol(protocol), f"{scheme}://127.0.0.1:{ports[0]}", process, log, tls_folder=tls_folder
    )
    server.quic_port = ports[1] if protocol == "h3" else None
    SERVING[id(server)] = server
    try:
        _wait_ready(server, process)
    except BaseException:
        server.close()
        raise
    finally:
        server.forget_key()
    return server


async def _h3_ready(server: Server) -> None:
    with anyio.fail_after(START_TIMEOUT_S):
        async with server.async_client() as client:
            await client.get("/")


def _wait_ready(server: Server, process: subprocess.Popen[bytes]) -> None:
    try:
        with httpx.Client(**server._client_options({"timeout": START_TIMEOUT_S})) as client:
            server.check(client.get("/"))
        if server.protocol == "h3":
            run_async(_h3_ready, server)
    except ServerError:
        raise
    except Exception as exc:  # an HTTP, QUIC or time-out error: the server did not answer
        # (not only httpx's errors: under load httpcore's own ReadError once got through httpx)
        try:  # a crashing server resets the connection a moment before it has exited
            code: int | None = process.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            code = None
        state = f"exited with code {code}" if code is not None else "did not answer"
        raise ServerError(
            f"the server for {server.app} ({server.protocol}) {state} "
            f"({type(exc).__name__}: {exc}). Its output:\n{server.output()[-3000:]}"
        ) from None
