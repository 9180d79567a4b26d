"""overheadbench: is the framework path's overhead over the bare path within budget?

Use ``@pytest.mark.overhead(max=0.25)`` and the ``overhead`` fixture; run ``pytest --overhead``.
"""

from __future__ import annotations

from .durations import DurationError, format_seconds, parse_duration
from .fixture import OverheadFixture, OverheadHarnessWarning, OverheadUsageError
from .marker import Budget, MarkerError
from .options import Settings
from .results import OverheadResult
from .sampling import CallableError, ReplicaSamples

__version__ = "0.1.0"
__all__ = [
    "Budget",
    "CallableError",
    "DurationError",
    "MarkerError",
    "OverheadFixture",
    "OverheadHarnessWarning",
    "OverheadResult",
    "OverheadUsageError",
    "ReplicaSamples",
    "Settings",
    "format_seconds",
    "parse_duration",
]
