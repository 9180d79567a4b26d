"""What one streamed response measured (:class:`StreamStats`) and the shapes a stream is asked
in, apart from the client that streams it (:mod:`.streaming`).

Why apart: the transport kind's figures, rows and fixture name these types in every session and
every replica process, and the client imports httpx (~0.06 s of CPU per process); httpx is
imported when a test first streams.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class StreamStats:
    """One streamed response. Times in seconds from the request being sent."""

    events: int
    bytes: int
    reads: int
    first_event_s: float
    total_s: float
    gap_p50_s: float
    gap_p95_s: float
    last_event_id: str = ""

    @property
    def events_per_s(self) -> float:
        return self.events / self.total_s if self.total_s > 0 else float("nan")


REQUEST_KEYS = ("method", "headers", "json", "content")
"""What a streamed request may say besides its URL (:func:`~.streaming.stream`'s keywords)."""


StreamSide = tuple[Any, str] | tuple[Any, str, Mapping[str, Any]] | Callable[[], Any]
"""One side of a stream pair: ``(client, url)``, ``(client, url, {"method": "POST", "json": ...})``
(any of ``REQUEST_KEYS``), or a zero-argument callable that starts an SDK's stream (:func:`~.streaming.aevents`)."""
