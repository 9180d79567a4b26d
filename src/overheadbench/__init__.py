"""overheadbench: is the framework path's overhead over the bare path within budget?

Use ``@pytest.mark.overhead(max=0.25)`` and the ``overhead`` fixture; run ``pytest --overhead``.

The names below are the public API. They load their module on first use (a server process
imports :mod:`overheadbench.http.apps`, which runs this file; importing pytest, numpy and
the engine here cost every server start ~0.3 s); type checkers read the imports below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .core.lazy import lazy_attributes

if TYPE_CHECKING:
    from .core.errors import (
        CallableError,
        InstrumentError,
        MarkerError,
        OverheadChangeWarning,
        OverheadCountingWarning,
        OverheadHarnessWarning,
        OverheadInconclusiveWarning,
        OverheadMarkerWarning,
        OverheadPairWarning,
        OverheadTimedPathWarning,
        OverheadUsageError,
        StorageError,
    )
    from .core.units import DurationError, format_seconds, parse_duration
    from .engine.checks import Status
    from .engine.samples import Kind
    from .engine.settings import Mode
    from .pairs.fixture import OverheadFixture
    from .pairs.pair import Budget, Pair
    from .pairs.results import OverheadResult
    from .replicas import in_replica
    from .transport.figures import FigureResult, Metric
    from .transport.fixture import TransportFixture

__version__ = "0.2.0"
__all__ = [
    "Budget",
    "CallableError",
    "DurationError",
    "InstrumentError",
    "Kind",
    "MarkerError",
    "Mode",
    "FigureResult",
    "Metric",
    "OverheadChangeWarning",
    "OverheadCountingWarning",
    "OverheadFixture",
    "OverheadHarnessWarning",
    "OverheadInconclusiveWarning",
    "OverheadMarkerWarning",
    "OverheadPairWarning",
    "OverheadResult",
    "OverheadTimedPathWarning",
    "OverheadUsageError",
    "Pair",
    "Status",
    "StorageError",
    "TransportFixture",
    "format_seconds",
    "in_replica",
    "parse_duration",
]
_HOMES = {
    **dict.fromkeys(
        (
            "CallableError",
            "InstrumentError",
            "MarkerError",
            "OverheadChangeWarning",
            "OverheadCountingWarning",
            "OverheadHarnessWarning",
            "OverheadInconclusiveWarning",
            "OverheadMarkerWarning",
            "OverheadPairWarning",
            "OverheadTimedPathWarning",
            "OverheadUsageError",
            "StorageError",
        ),
        "core.errors",
    ),
    **dict.fromkeys(("DurationError", "format_seconds", "parse_duration"), "core.units"),
    "Kind": "engine.samples",
    "FigureResult": "transport.figures",
    "Metric": "transport.figures",
    "TransportFixture": "transport.fixture",
    "Mode": "engine.settings",
    "Status": "engine.checks",
    **dict.fromkeys(("Budget", "Pair"), "pairs.pair"),
    "OverheadFixture": "pairs.fixture",
    "OverheadResult": "pairs.results",
    "in_replica": "replicas",
}
__getattr__ = lazy_attributes(__name__, _HOMES)
