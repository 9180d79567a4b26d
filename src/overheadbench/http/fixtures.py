"""The ``asgi_server`` fixture: start servers for a test, stop them whatever the outcome; and a call on
them (a transport pair's) whose wrong server or bad option is the test's mistake (:func:`running`)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from ..core.errors import OverheadUsageError
from ..core.tables import said

if TYPE_CHECKING:
    from .server import Server

T = TypeVar("T")


def servers_elsewhere() -> list[int]:
    """Process ids of the servers running now (none unless the HTTP helpers were imported)."""
    server = sys.modules.get("overheadbench.http.server")
    return sorted({s.process.pid for s in server.SERVING.values() if s.process}) if server is not None else []


@pytest.fixture
def asgi_server() -> Iterator[Callable[..., Any]]:
    """Start an ASGI app on 127.0.0.1 (free port) in its own process: ``asgi_server(app,
    protocol="http1"|"h2c")`` returns a :class:`~overheadbench.http.server.Server`; ``app`` is
    ``"module:attribute"`` (default: the built-in echo/delay/SSE app); ``env`` adds to its
    process's environment (``env={"UPSTREAM_URL": upstream.url}``). Every server started
    is stopped at teardown, also when the test fails."""
    from .server import MissingExtra, start_server  # httpx and hypercorn load only for tests that serve

    servers: list[Any] = []

    def start(
        app: str = "overheadbench.http.apps:app", protocol: str = "http1", env: dict[str, str] | None = None
    ) -> Server:
        try:
            server = start_server(app, protocol, env)
        except MissingExtra as exc:  # what to install, not a traceback from inside the server module
            raise pytest.fail.Exception(said(f"asgi_server(protocol={protocol!r}): {exc}"), pytrace=False) from None
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def running(nodeid: str, call: str, servers: Sequence[Server], run: Callable[[], T]) -> T:
    """``run()``, with a wrong server, a bad option or a load that cannot run reported as
    the test's mistake (its name, the call, what is wrong), not as a traceback from inside."""
    from .connections import LoadError
    from .server import Server

    where = f"{nodeid}: transport.{call}()"
    for server in servers:
        if not isinstance(server, Server):
            raise OverheadUsageError(f"{where} takes servers started by asgi_server, not {type(server).__name__}")
    try:
        return run()
    except (ValueError, LoadError) as exc:
        raise OverheadUsageError(f"{where}: {exc}") from None
