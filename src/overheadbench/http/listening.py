"""The sockets a server listens on: bound by the parent to 127.0.0.1, a free port, before its
server starts (ready means ready: a client may connect the moment the port is known), and
queueing as many connections as a sweep makes at once.

One place for both kinds of server, in a process of its own (:mod:`overheadbench.http.server`)
and in the test's event loop (:mod:`overheadbench.http.inprocess`), and for the server process's
config (:mod:`overheadbench.http.child`), which must say the same backlog: hypercorn listens again
on a socket it is given, with its own ``backlog`` (100), so a sweep's 300 connections made at once
over https queued past it (issue 46).
"""

from __future__ import annotations

import socket

BACKLOG = 1024
"""Connections a listening socket queues before the server accepts them (the kernel caps it at
``net.core.somaxconn``)."""


def bound(kind: int) -> socket.socket:
    """A socket of ``kind`` bound to 127.0.0.1 on a free port; a stream socket listening, with
    ``TCP_NODELAY`` set for the connections it accepts (hypercorn sets it on the sockets it binds
    itself, not on one passed as ``fd://``; accepted connections inherit it on Linux)."""
    sock = socket.socket(socket.AF_INET, kind)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        if kind == socket.SOCK_STREAM:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.listen(BACKLOG)
    except BaseException:
        sock.close()
        raise
    return sock
