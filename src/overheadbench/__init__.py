"""overheadbench: is the framework path's overhead over the bare path within budget?

Use ``@pytest.mark.overhead(max=0.25)`` and the ``overhead`` fixture; run ``pytest --overhead``.

The names below are the public API. They load their module on first use (a server process
imports :mod:`overheadbench.http.apps`, which runs this file; importing pytest, numpy and
the engine here cost every server start ~0.3 s): ``_HOMES`` says where each lives, and ``__all__``
is its keys. Type checkers read the imports below (``X as X``: re-exported), which tests/test_docs.py holds to
``_HOMES``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .core.lazy import lazy_attributes

if TYPE_CHECKING:
    from .core.errors import (
        CallableError as CallableError,
        InstrumentError as InstrumentError,
        MarkerError as MarkerError,
        OverheadChangeWarning as OverheadChangeWarning,
        OverheadCountingWarning as OverheadCountingWarning,
        OverheadHarnessWarning as OverheadHarnessWarning,
        OverheadInconclusiveWarning as OverheadInconclusiveWarning,
        OverheadMarkerWarning as OverheadMarkerWarning,
        OverheadPairWarning as OverheadPairWarning,
        OverheadPrecisionWarning as OverheadPrecisionWarning,
        OverheadTimedPathWarning as OverheadTimedPathWarning,
        OverheadUsageError as OverheadUsageError,
        OverheadWarning as OverheadWarning,
        StorageError as StorageError,
    )
    from .core.units import (
        DurationError as DurationError,
        format_seconds as format_seconds,
        parse_duration as parse_duration,
    )
    from .engine.checks import Status as Status
    from .engine.samples import Kind as Kind
    from .engine.settings import Mode as Mode
    from .pairs.fixture import OverheadFixture as OverheadFixture
    from .pairs.pair import Budget as Budget, Pair as Pair
    from .pairs.results import OverheadResult as OverheadResult
    from .replicas import in_replica as in_replica
    from .transport.fixture import TransportFixture as TransportFixture
    from .transport.metrics import Metric as Metric
    from .transport.results import FigureResult as FigureResult

__version__ = "0.3.0.dev0"
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
            "OverheadPrecisionWarning",
            "OverheadTimedPathWarning",
            "OverheadUsageError",
            "OverheadWarning",
            "StorageError",
        ),
        "core.errors",
    ),
    **dict.fromkeys(("DurationError", "format_seconds", "parse_duration"), "core.units"),
    "Kind": "engine.samples",
    "FigureResult": "transport.results",
    "Metric": "transport.metrics",
    "TransportFixture": "transport.fixture",
    "Mode": "engine.settings",
    "Status": "engine.checks",
    **dict.fromkeys(("Budget", "Pair"), "pairs.pair"),
    "OverheadFixture": "pairs.fixture",
    "OverheadResult": "pairs.results",
    "in_replica": "replicas",
}
__all__ = sorted(_HOMES)
__getattr__ = lazy_attributes(__name__, _HOMES)
