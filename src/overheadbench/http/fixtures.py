"""The ``asgi_server`` fixture: start servers for a test, stop them whatever the outcome."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from ..core.tables import said

if TYPE_CHECKING:
    from .server import Server


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
