"""Local servers for any ASGI app (HTTP/1.1, h2c, HTTPS, HTTP/2 over TLS, HTTP/3), built-in
echo/delay/SSE apps, a lean load generator, and load and streaming measurements.

Names load on first use, so the pytest plugin (which registers the ``asgi_server``
fixture from here) does not import httpx and hypercorn into every test session.
"""

from __future__ import annotations

from ..core.lazy import lazy_attributes

_HOMES = {
    "LatencyStats": "load",
    "Throughput": "load",
    "alatency": "load",
    "latency": "load",
    "throughput": "recorder",
    "PROTOCOLS": "server",
    "ProtocolMismatch": "server",
    "Server": "server",
    "ServerError": "server",
    "start_server": "server",
    "EventTimer": "streaming",
    "StreamStats": "stream_stats",
    "astream": "streaming",
    "stream": "streaming",
    "Probe": "sweeps",
    "SizePoint": "sweeps",
    "concurrency_sweep": "sweeps",
    "in_flight_probe": "sweeps",
    "size_sweep": "sweeps",
    "serve_in_process": "inprocess",
    "H3Client": "h3",
}
__all__ = sorted(_HOMES)
__getattr__ = lazy_attributes(__name__, _HOMES)
