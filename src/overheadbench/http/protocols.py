"""The protocols a server speaks and a load is sent over, as one typed word.

A plain string worked until five protocols were compared as strings in six files; a
:class:`HttpProtocol` is still a ``str`` (``"h2c"`` in a job's JSON, a marker, a test id) and
says what it is: over TLS or in the clear, one request per connection or multiplexed.
"""

from __future__ import annotations

from ..core.vocabulary import Word


class HttpProtocol(Word):
    HTTP1 = "http1"
    """HTTP/1.1 in the clear."""
    H2C = "h2c"
    """HTTP/2 in the clear, by prior knowledge."""
    HTTPS = "https"
    """HTTP/1.1 over TLS."""
    H2 = "h2"
    """HTTP/2 over TLS (ALPN ``h2``)."""
    H3 = "h3"
    """HTTP/3 over QUIC."""

    @property
    def tls(self) -> bool:
        return self in (HttpProtocol.HTTPS, HttpProtocol.H2, HttpProtocol.H3)

    @property
    def multiplexed(self) -> bool:
        """Many requests in flight on one connection (HTTP/2 and HTTP/3)."""
        return self in (HttpProtocol.H2C, HttpProtocol.H2, HttpProtocol.H3)

    @property
    def version(self) -> str:
        """The HTTP version a response over it carries."""
        return {HttpProtocol.HTTP1: "HTTP/1.1", HttpProtocol.HTTPS: "HTTP/1.1", HttpProtocol.H3: "HTTP/3"}.get(
            self, "HTTP/2"
        )
