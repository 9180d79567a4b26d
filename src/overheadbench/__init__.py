"""overheadbench: is the framework path's overhead over the bare path within budget?

Use ``@pytest.mark.overhead(max=0.25)`` and the ``overhead`` fixture; run ``pytest --overhead``.
The names below load their module on first use (see :mod:`overheadbench.lazy`).
"""

from __future__ import annotations

from .lazy import lazy_attributes

__version__ = "0.1.0"
_HOMES = {
    "Budget": "marker",
    "CallableError": "sampling",
    "DurationError": "durations",
    "MarkerError": "marker",
    "OverheadFixture": "fixture",
    "OverheadHarnessWarning": "fixture",
    "OverheadResult": "results",
    "OverheadUsageError": "fixture",
    "ReplicaSamples": "sampling",
    "Settings": "options",
    "format_seconds": "durations",
    "in_replica": "replicas",
    "parse_duration": "durations",
}
__all__ = sorted(_HOMES)
__getattr__ = lazy_attributes(__name__, _HOMES)
