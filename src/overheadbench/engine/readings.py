"""What a history reads of a stored run (its :class:`RunRow`): each figure's log value with its standard error, the
spread between sessions its series leans on, its budget, and its link (its change over the run's
linked commit). Each kind's result gives its own (``series_reading`` of
:class:`~overheadbench.pairs.results.OverheadResult` and :class:`~overheadbench.transport.results.FigureResult`):
the index, the series and the page read readings, not kinds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any


@dataclass(frozen=True)
class Reading:
    """One figure of one run, as a series reads it: its log value and that log's standard error."""

    test: str
    figure: str
    """``overhead`` (a pair's ratio, with its mode) or a transport row's figure (``h2c c=10 p95``)."""
    log: float
    se: float
    prior_sd: float
    """The project's measured between-session sd of the figure's log, which a short series leans on
    (:func:`~overheadbench.engine.spread.between_sd`)."""
    limit: float | None
    """The budget on the value (a pair's ratio limit, 1 + max), where one was set."""
    higher_is_worse: bool = True
    ratio: bool = True
    """A pair's framework / baseline, shown as its overhead; else a transport figure in its unit."""
    link: float | None = None
    """The log change of the figure over the run's linked commit (:attr:`RunRow.linked`), measured
    in the run's own session; None: not linked."""
    link_se: float = 0.0
    interval: tuple[float, float] | None = None
    """The run's own interval of the value, as its reports list it (logs); a history's band is these
    (it was the log +- 1.96 standard errors of its processes, which a pair's listed interval, with its
    layout prior and every reading joined, can be several times as wide as). None: that band."""

    @property
    def key(self) -> tuple[str, str]:
        return self.test, self.figure

    @property
    def band(self) -> tuple[float, float]:
        """What a chart draws around the value: its interval, else 1.96 standard errors (logs)."""
        return self.interval or (self.log - Z95 * self.se, self.log + Z95 * self.se)


Z95 = NormalDist().inv_cdf(0.975)


def log_interval(low: float, high: float) -> tuple[float, float] | None:
    """An interval of a positive value as logs (None where an end is not above zero)."""
    return (math.log(low), math.log(high)) if 0 < low <= high and math.isfinite(high) else None


def link_of(changes: Sequence[tuple[float, float, float]]) -> tuple[float | None, float]:
    """A reading's link from its changes over the base tree, the linked commit (each its old, new and
    the standard error of their log ratio): the log of new / old and its standard error; none where the
    run is not linked or the figure was not measured there."""
    usable = [(old, new, se) for old, new, se in changes if old > 0 and new > 0 and math.isfinite(se)]
    if not usable:
        return None, 0.0
    old, new, se = usable[0]
    return math.log(new / old), se


@dataclass(frozen=True)
class RunRow:
    """What a history needs of one stored run: where it is, which commit it measured, and each figure."""

    path: str
    number: int
    """Its number in the storage folder (``0007_main.json``: 7): the order runs of one commit were stored in."""
    machine: str
    commit: str
    time: str
    branch: str
    dirty: bool
    readings: tuple[Reading, ...]
    linked: str = ""
    """The commit the run's session measured beside its own (its readings' links are over it)."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunRow:
        readings = tuple(
            Reading(**{**item, "interval": tuple(item["interval"]) if item.get("interval") else None})
            for item in data.pop("readings")
        )
        return cls(**data, readings=readings)
