"""A transport figure as measured and as judged: the reading of one row (its value, its interval
and the values it was made from), the result that carries the reading's check and its changes at
the session's other places, and their JSON (runs of older schemas read too).

Each figure comes with the interval it has (percentiles: order statistics; req/s: over windows
of the run; stream figures: over repeated streams; pairs: over rounds; CPU and errors are single
readings) and is judged as a :class:`~overheadbench.engine.checks.Check`, the pairs' judged
figure (:mod:`overheadbench.transport.verdict`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..core.jsonio import Fields
from ..core.vocabulary import Role
from ..engine.changes import Change, StoredChange, interval_estimate
from ..engine.checks import Check, Status, Unit, show
from ..engine.findings import Finding, detectable
from ..engine.readings import Reading as SeriesReading, link_of, log_interval
from .metrics import COMPARED, SPECS, WALL_CLOCK, FigureKey, Measure, Metric

REPORT_ATTRIBUTE = "overheadbench_figures"
"""The test report attribute carrying its judged figures' JSON (as
:data:`overheadbench.pairs.results.REPORT_ATTRIBUTE` carries a pair's)."""


@dataclass(frozen=True)
class Reading:
    """One measured figure of one row, with its interval (``low == high``: a single reading)."""

    row: str
    metric: Metric
    value: float
    low: float
    high: float
    interval: str
    """What ``low..high`` is, e.g. "95% CI over 10 windows"; "" for a single reading."""
    samples: tuple[float, ...] = ()
    """The values the interval was made from (windows' req/s, streams' times): the comparison's spread."""
    note: str = ""
    """Said after the verdict (failed requests: the first one's error)."""
    measure: Measure = Measure.FIGURE


@dataclass(frozen=True)
class FigurePlace:
    """The figure at another place of the session (a base tree, an environment), measured in
    rounds interleaved with the session's own: its change against the session's own, in the
    place's role's direction (:mod:`overheadbench.transport.across`)."""

    name: str
    role: Role
    change: Change
    gated: bool = True
    """False for a pair's side ([baseline], [framework]): on a busy runner one place's client and server
    ran a whole test a third slower than the other's, both sides alike, in 2 of 15 sessions on identical
    trees; the pair's ratio, which that cancels, is gated, each side's change only shown."""
    control: float | None = None
    """Percent: the pair's [baseline] side's change between the places where its interval excluded zero,
    which widened this change's interval by as much (:func:`~.across._controlled`; schema 23)."""

    def shown(self, threshold: float | None) -> bool:
        """Whether a change table shows it: a gated change always, one not gated only where the gate's
        own rule calls it a change (regressed or improved at ``threshold``; without one, significant)."""
        if self.gated:
            return True
        if threshold is None:
            return self.change.significant
        return self.change.finding(threshold) in (Finding.REGRESSED, Finding.IMPROVED)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "role": self.role,
            "change": self.change.to_json(),
            "gated": self.gated,
            "control": self.control,
        }

    @classmethod
    def from_json(cls, data: Any, path: str, what: str) -> FigurePlace:
        fields = Fields(data, path)
        change = fields.obj("change")
        assert change is not None
        found = Change.from_json(change.data, change.path, what)
        gated = "gated" not in fields.data or fields.flag("gated")  # schema 22; before it every change was gated
        control = fields.maybe_number("control")  # schema 23
        return cls(fields.text("name"), fields.choice("role", Role), found, gated, control)


@dataclass(frozen=True)
class FigureResult:
    """A reading of one test, judged: its :class:`~overheadbench.engine.checks.Check` (a limit of
    ``None``: shown and stored, not judged). The reading keeps this session's own interval (what a
    comparison with another run starts from); the check has the interval it was judged on."""

    nodeid: str
    reading: Reading
    check: Check
    places: tuple[FigurePlace, ...] = ()
    stored: StoredChange | None = None
    """Its change against the stored run the session compared with: computed once, where the
    figure is judged, and read by the gate, the terminal and the JSON."""

    @property
    def row(self) -> str:
        return self.reading.row

    @property
    def metric(self) -> Metric:
        return self.reading.metric

    @property
    def measure(self) -> Measure:
        return self.reading.measure

    @property
    def limit(self) -> float | None:
        return self.check.limit

    @property
    def checks(self) -> tuple[Check, ...]:
        """As a pair's: a figure is one check."""
        return (self.check,)

    @property
    def verdict(self) -> Status:
        return self.check.status

    @property
    def message(self) -> str:
        """The check's sentence, the reading's note, and what an inconclusive figure needs."""
        message = self.check.sentence() + (f" ({self.reading.note})" if self.reading.note and self.measured else "")
        if self.verdict == Status.INCONCLUSIVE and not self.check.contended:  # a contended one says why itself
            message += "; the interval contains the budget, so this run cannot tell: measure longer (duration, runs)"
        return message

    @property
    def key(self) -> FigureKey:
        """What identifies the figure across runs."""
        return (self.nodeid, self.reading.row, self.reading.metric, self.reading.measure)

    @property
    def measured(self) -> bool:
        return self.verdict != Status.UNMEASURED

    @property
    def detects(self) -> float:
        """A pair's change: the smallest change (percent) it could tell from zero, as a pair's
        ``detects`` says: half its judged interval (the rounds' own, with the spread between
        sessions); NaN for any other figure, or without an interval."""
        check = self.check
        if self.measure != Measure.CHANGE or check.low == check.high:
            return math.nan
        return detectable(check.low, check.high)

    def series_reading(self, linked: str) -> SeriesReading | None:
        """The figure as its stored run's history reads it (each kind gives its own readings): the
        row's own figure (``h2c c=10 p95``), its log with the standard error of its interval, its
        spread between sessions, its limit, and its link (its change over the base tree, where the
        run was ``linked`` to a commit); None where a series cannot follow it (a pair's change, or
        a value that is not positive)."""
        value = self.reading
        if not (self.measured and value.measure is Measure.FIGURE and value.value > 0 and value.metric in SPECS):
            return None
        changes = [p.change for p in self.places if p.role is Role.BASE] if linked else []
        spec = SPECS[value.metric]
        return SeriesReading(
            self.nodeid,
            f"{value.row} {value.metric.value}",
            math.log(value.value),
            interval_estimate(value.value, value.low, value.high).log_se,
            spec.session_sd,
            self.check.limit,
            not spec.floor,
            False,
            *link_of([(c.old, c.new, c.se) for c in changes]),
            log_interval(value.low, value.high),
        )

    def to_json(self) -> dict[str, Any]:
        """The row and figure, the values the interval was made from, and the check."""
        reading = self.reading
        return {
            "nodeid": self.nodeid,
            "row": reading.row,
            "metric": reading.metric,
            "measure": reading.measure,
            "ci": [reading.low, reading.high],
            "interval": reading.interval,
            "samples": list(reading.samples),
            "note": reading.note,
            "check": self.check.to_json(),
            "places": [place.to_json() for place in self.places],
            "stored": self.stored.to_json() if self.stored else None,
        }

    @classmethod
    def from_json(cls, data: Any, path: str = "figure") -> FigureResult:
        """A figure back from :meth:`to_json`, or from a run of schema 8 or older (the check's
        fields beside the figure's; before 10 the reading's interval was the check's)."""
        fields = Fields(data, path)
        metric = fields.choice("metric", Metric)
        measure = fields.choice("measure", Measure) if "measure" in fields.data else Measure.FIGURE
        row = fields.text("row")
        stored = fields.obj("check", optional=True)
        check = Check.from_json(stored.data, stored.path) if stored else _older_check(fields, row, metric)
        low, high, interval = check.low, check.high, "" if check.counted else check.interval
        if stored and "ci" in fields.data:  # this session's own interval (schema 10), beside the judged one
            low, high = fields.interval("ci")
            interval = fields.text("interval")
        samples = tuple(fields.samples("samples", signed=measure != Measure.FIGURE))
        note = fields.text("note", optional=True) or ""
        reading = Reading(row, metric, check.value, low, high, interval, samples, note, measure)
        nodeid = fields.text("nodeid")
        what = f"{nodeid}: {row} {metric}"
        places = (
            fields.items("places", lambda item, at: FigurePlace.from_json(item, at, what)) if "places" in data else []
        )
        stored = fields.obj("stored", optional=True) if "stored" in fields.data else None
        against = StoredChange.from_json(stored.data, stored.path, what) if stored else None
        return cls(nodeid, reading, check, tuple(places), against)


def compared_values(figure: FigureResult) -> tuple[float, float, float]:
    """The value and interval a change compares: the figure's own, a pair change's as a ratio."""
    reading = figure.reading
    shift = 1.0 if reading.measure == Measure.CHANGE else 0.0
    return reading.value + shift, reading.low + shift, reading.high + shift


def compared_text(figure: FigureResult, value: float) -> str:
    """A compared value (:func:`compared_values`) as the figure prints: a pair change's ratio as a
    ratio (``2.28x``, never ``+228.2%``: a gate's sentence read "stream total time +228.2% -> +253.3%"
    for 2.28x -> 2.53x), any other in the figure's unit."""
    return show(Unit.TIMES, value) if figure.measure == Measure.CHANGE else SPECS[figure.metric].show(value)


def comparable(figure: FigureResult) -> bool:
    """Whether a figure has a positive value to compare as a ratio."""
    value = compared_values(figure)[0]
    return (
        figure.measured
        and figure.metric in COMPARED
        and figure.measure != Measure.ADDED
        and value > 0
        and math.isfinite(value)
    )


def _older_check(fields: Fields, row: str, metric: Metric) -> Check:
    """The check of a figure stored before schema 9, from its value, interval, limit and verdict."""
    low, high = fields.interval("ci")
    interval = fields.text("interval")
    measured = fields.choice("verdict", Status) != Status.UNMEASURED
    return check_of(
        Reading(row, metric, fields.number("value"), low, high, interval), fields.maybe_number("limit"), measured
    )


CHANGE_UNIT = {Unit.SECONDS: Unit.SIGNED_SECONDS, Unit.COUNT: Unit.SIGNED_COUNT}


def check_of(reading: Reading, limit: float | None, measured: bool, core_share: float | None = None) -> Check:
    """The reading as a check against ``limit``, in the unit its measure prints in; ``core_share``
    (the judging process's share of a core) kept where the figure is absolute and on the wall clock."""
    spec, measure = SPECS[reading.metric], reading.measure
    unit = {Measure.FIGURE: spec.unit, Measure.CHANGE: Unit.SIGNED_FRACTION}.get(
        measure, CHANGE_UNIT.get(spec.unit, spec.unit)
    )
    what = f"{reading.row}: {spec.what}" + {Measure.CHANGE: " change", Measure.ADDED: " added"}.get(measure, "")
    name = reading.metric.value if measure == Measure.FIGURE else f"{measure}[{reading.metric.value}]"
    interval = reading.interval or "a single reading"
    return Check(
        name,
        what,
        limit,
        reading.value,
        reading.low,
        reading.high,
        unit,
        interval,
        counted=not reading.interval,
        floor=spec.floor,
        measured=measured,
        core_share=core_share if reading.metric in WALL_CLOCK and measure != Measure.CHANGE else None,
    )
