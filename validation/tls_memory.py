"""A TLS server's memory over many new connections, per protocol and per interpreter (issue 37, part 4).

    python validation/tls_memory.py --connections 600
    for v in 3.10 3.11 3.12 3.13; do /path/to/venv-$v/bin/python validation/tls_memory.py; done

One server per protocol (``http1``, ``h2c`` in the clear; ``https``, ``h2`` over TLS), started
as the suite starts them (:func:`overheadbench.http.start_server`, under the interpreter that
runs this script). Each gets ``--warmup`` connections first, then ``--connections`` more, each
a new connection (a new client) with one plain GET. The server's resident memory (VmRSS from
``/proc``) is read after the warm-up, after the connections, and again after ``--rest`` seconds
idle; the growth per connection is (after - warm) / connections. With ``--trim`` the server
process is asked to run ``malloc_trim(0)`` (glibc) at the end, which tells memory the
allocator still holds from memory the program still references. Linux only.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time

import httpx

from overheadbench.http import start_server
from overheadbench.http.protocols import HttpProtocol
from overheadbench.http.server import HTTP_VERSION
from overheadbench.http.tls import client_tls_context


def rss_kb(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def connect(url: str, protocol: str, count: int) -> None:
    """``count`` new connections, one GET each."""
    http2 = HTTP_VERSION[HttpProtocol(protocol)] != "HTTP/1.1"
    for _ in range(count):
        with httpx.Client(base_url=url, http1=not http2, http2=http2, verify=client_tls_context()) as client:
            client.get("/").raise_for_status()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=600)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--rest", type=float, default=2.0)
    parser.add_argument("--protocols", default="http1,h2c,https,h2")
    args = parser.parse_args()
    print(f"python {platform.python_version()} ({sys.executable}), OpenSSL: {__import__('ssl').OPENSSL_VERSION}")
    for protocol in args.protocols.split(","):
        server = start_server(protocol=protocol)
        try:
            assert server.process is not None
            pid = server.process.pid
            connect(server.url, protocol, args.warmup)
            warm = rss_kb(pid)
            started = time.perf_counter()
            connect(server.url, protocol, args.connections)
            seconds = time.perf_counter() - started
            after = rss_kb(pid)
            time.sleep(args.rest)
            rested = rss_kb(pid)
        finally:
            server.close()
        per = (after - warm) / args.connections
        print(
            f"{protocol:6} RSS {warm / 1024:6.1f} MB warm -> {after / 1024:6.1f} MB after {args.connections} "
            f"connections ({per:6.1f} KB per connection; {rested / 1024:6.1f} MB after {args.rest:g} s idle; "
            f"{args.connections / seconds:5.0f} connections/s)"
        )


if __name__ == "__main__":
    main()
