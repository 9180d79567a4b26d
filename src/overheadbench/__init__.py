"""overheadbench: is the framework path's overhead over the bare path within budget?

Use ``@pytest.mark.overhead(max=0.25)`` and the ``overhead`` fixture; run ``pytest --overhead``.

The names below are the public API. They load their module on first use (a server process
imports :mod:`overheadbench.http.apps`, which runs this file; importing pytest, numpy and
the engine here cost every server start ~0.3 s); type checkers read the imports below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy import lazy_attributes

if TYPE_CHECKING:
    from .checks import Status
    from .errors import (
        CallableError,
        InstrumentError,
        MarkerError,
        OverheadChangeWarning,
        OverheadCountingWarning,
        OverheadHarnessWarning,
        OverheadInconclusiveWarning,
        OverheadMarkerWarning,
        OverheadTimedPathWarning,
        OverheadUsageError,
        StorageError,
    )
    from .figures import FigureResult, Metric
    from .fixture import OverheadFixture
    from .pair import Budget, Pair
    from .replicas import in_replica
    from .results import OverheadResult
    from .samples import Kind
    from .settings import Mode
    from .transport import TransportFixture
    from .units import DurationError, format_seconds, parse_duration

__version__ = "0.1.0"
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
            "OverheadTimedPathWarning",
            "OverheadUsageError",
            "StorageError",
        ),
        "errors",
    ),
    **dict.fromkeys(("DurationError", "format_seconds", "parse_duration"), "units"),
    "Kind": "samples",
    "FigureResult": "figures",
    "Metric": "figures",
    "TransportFixture": "transport",
    "Mode": "settings",
    "Status": "checks",
    **dict.fromkeys(("Budget", "Pair"), "pair"),
    "OverheadFixture": "fixture",
    "OverheadResult": "results",
    "in_replica": "replicas",
}
__getattr__ = lazy_attributes(__name__, _HOMES)
