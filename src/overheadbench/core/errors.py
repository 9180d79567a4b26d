"""The errors and warnings a user of the plugin meets in a test, catches or filters.

Errors that belong to one part live with it: ``PairTimeout`` (:mod:`overheadbench.core.timeouts`),
``ReplicaError`` (:mod:`overheadbench.replicas.failures`), ``ShapeError``
(:mod:`overheadbench.core.jsonio`), ``DurationError`` and ``SizeError``
(:mod:`overheadbench.core.units`), ``ServerError`` and ``ProtocolMismatch``
(:mod:`overheadbench.http.server`), ``LoadError`` (:mod:`overheadbench.http.loadgen`), ``H3Error``
(:mod:`overheadbench.http.h3`) and ``PlotUnavailable`` (:mod:`overheadbench.report.files.plots`).

Each error's message names the test (or the file, or the option) and the fix; the plugin
turns them into a failed test or a usage error, never a traceback from deep inside.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .tables import WARNING_WIDTH, fitted

if TYPE_CHECKING:
    import pytest


class Said(Exception):
    """An error whose message a user reads in the terminal: its lines fitted to it (:func:`~.tables.fitted`)."""

    def __init__(self, message: str = "") -> None:
        super().__init__(fitted(message))


class OverheadWarning(UserWarning):
    """Every warning of the plugin: its message's lines fitted to the terminal (a warning's single line ran
    to 200-300 characters), as :class:`Said` errors are."""

    def __init__(self, message: str = "") -> None:
        super().__init__(fitted(message, WARNING_WIDTH))


def usage(message: str) -> pytest.UsageError:
    """An option or ini value is wrong: pytest prints ``ERROR: `` and the message (fitted, as :class:`Said`)."""
    import pytest  # here: a server process imports this module, and pytest costs it ~0.3 s

    return pytest.UsageError(fitted(message))


class MarkerError(Said):
    """The marker's arguments are wrong; the message names the test and the fix."""


class NotCountable(MarkerError):
    """The session's count mode meets a pair measured under concurrent callers (a time
    measurement): the test is skipped, saying so, rather than failed for a choice it did not make."""


class OverheadUsageError(Said):
    """The ``overhead`` fixture was used wrongly; the message names the test and the fix."""


class CallableError(Exception):
    """A user's callable raised while being measured; ``side`` says which one."""

    def __init__(self, side: str, error: BaseException) -> None:
        super().__init__(f"the {side} callable raised {type(error).__name__}: {error}")
        self.side = side


class InstrumentError(Exception):
    """An instrument (a counter, a tracer) could not measure: not the user's callable's fault."""


class StorageError(Exception):
    """A stored run cannot be found, read, validated or written; the message names the file."""


class OverheadInconclusiveWarning(OverheadWarning):
    """An inconclusive verdict, reported as a warning because ``overhead_inconclusive=warn``."""


class OverheadPrecisionWarning(OverheadWarning):
    """A pair's budget or gate threshold is tighter than what it can detect here: its verdicts
    near the line read inconclusive or unknown however often it runs, until precision is bought."""


PRECISION = (
    "precision is bought with a longer time budget (--overhead-time-budget, the marker's work), more processes "
    "(--overhead-processes, the marker's processes) or exact counts (mode='count')"
)
"""What an :class:`OverheadPrecisionWarning` advises: its budget's line, or its gate's threshold."""


class OverheadHarnessWarning(OverheadWarning):
    """The measuring loop's own cost is a large share of the baseline's time per call."""


class OverheadConcurrencyWarning(OverheadWarning):
    """A sweep's level was not all in flight at once within the barrier's wait: measured anyway,
    its shortfall on its row (a serialising client, or a busy machine)."""


class OverheadMarkerWarning(OverheadWarning):
    """A marker argument that is valid but probably not what was meant (``max=25``: 2,500%)."""


class OverheadPairWarning(OverheadWarning):
    """The pair's two sides look unlike each other (their first calls returned values of
    different types): they may not do the same work (a dict against a str, say)."""


class OverheadCountingWarning(OverheadWarning):
    """Count mode counted this process only, while the pair's requests were served by another."""


class OverheadChangeWarning(OverheadWarning):
    """A change against the stored run or the base tree that this session cannot tell from the
    gate's threshold (its interval contains it); fails instead under ``overhead_compare_unknown=fail``."""


class OverheadTimedPathWarning(OverheadWarning):
    """Something sits in a pair's timed path that production does not have and that cannot be
    taken out while it is timed (a ``sys.monitoring`` tool's per-code events); see
    :mod:`overheadbench.engine.timed_path`."""


def deprecated(where: str, replacement: str) -> str:
    """The one sentence every deprecated option or ini key is reported with (options and gate
    options alike), naming what replaces it."""
    return fitted(f"{where}: deprecated since overheadbench 0.2.0, to be removed in 0.3: {replacement}", WARNING_WIDTH)
