"""The server process: ``python -m overheadbench.http.child APP FD [CERT KEY ALPN [QUIC_FD]]``
serves APP with hypercorn on the listening socket FD (inherited, bound by the parent to
127.0.0.1 port 0); with a certificate and key over TLS, offering only the ALPN protocols
given (comma-separated, so a client cannot silently fall back), and with QUIC_FD (a UDP
socket bound the same way) HTTP/3 too.

It stops when its standard input reaches end of file: the parent closes it to stop the
server, and if the parent dies the kernel closes it, so a server never outlives its test.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from typing import Any

from hypercorn.asyncio import serve
from hypercorn.config import Config

GRACEFUL_TIMEOUT_S = 0.2
"""Open streams get this long at shutdown (hypercorn's default, 3 s, made every stop slow)."""


def load_app(spec: str) -> Any:
    """The object named by ``"module:attribute"`` (a dotted attribute path is allowed)."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"app {spec!r} must be given as 'module:attribute'")
    target: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        target = getattr(target, part)
    return target


def config_for(fd: int, tls: list[str] | None = None) -> Config:
    config = Config()
    config.bind = [f"fd://{fd}"]
    if tls:
        config.certfile, config.keyfile = tls[0], tls[1]
        config.alpn_protocols = tls[2].split(",")
        if len(tls) > 3:
            config.quic_bind = [f"fd://{tls[3]}"]
    config.keep_alive_max_requests = 2**62  # the default 1,000 broke long h2c runs mid-stream
    config.graceful_timeout = GRACEFUL_TIMEOUT_S
    config.accesslog = None
    return config


async def _stdin_closed() -> None:
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.buffer.read)


def main(argv: list[str]) -> None:
    spec, fd, *tls = argv
    app = load_app(spec)
    asyncio.run(serve(app, config_for(int(fd), tls), shutdown_trigger=_stdin_closed))


if __name__ == "__main__":
    main(sys.argv[1:])
