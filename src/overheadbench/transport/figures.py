"""Transport and streaming figures with budgets: what is measured, its limit, its verdict.

A transport budget is on a figure of one measured row ("h2c c=100"): a latency percentile's
ceiling, a req/s floor, a time-to-first-event ceiling, an events/s floor, a concurrency-scaling
floor, CPU per request ceilings, an error count. A row is one target's figures
(:attr:`Measure.FIGURE`), or a transport pair's: the framework side against the baseline side,
measured in one session with their windows interleaved, as a change (``max``: framework /
baseline - 1) or an added cost (``max_abs``: framework - baseline), each with its paired interval
(:mod:`overheadbench.transport.pairing`).

Each figure comes with the interval it has (percentiles: order statistics; req/s: over windows
of the run; stream figures: over repeated streams; pairs: over rounds; CPU and errors are single
readings) and is judged as a :class:`~overheadbench.engine.checks.Check`, the pairs' judged
figure: pass only when the whole interval is on the right side of the limit. An absolute
figure's interval is widened by how far the figure moves between sessions on this machine
(:func:`judge`): within one session the interval is narrow, and a budget near the figure would
pass in one session and fail in the next.

Limits come from ``@pytest.mark.transport(p95="5ms", rps=1000, max={"p95": 0.25}, ...)``, and
the fixture's calls may give a row its own (``transport.load(server, concurrency=100, rps=600)``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from ..core.jsonio import Fields, ShapeError
from ..core.units import parse_duration
from ..core.vocabulary import Word
from ..engine.changes import Change
from ..engine.checks import Check, Status, Unit, show
from ..engine.samples import Role

DEFAULT_ERRORS = 0
"""Failed requests a load row may have when no ``errors`` limit is given."""


class Metric(Word):
    """A transport figure; the value is its marker keyword."""

    P50 = "p50"
    P95 = "p95"
    P99 = "p99"
    RPS = "rps"
    CLIENT_CPU = "client_cpu"
    SERVER_CPU = "server_cpu"
    ERRORS = "errors"
    TTFE = "ttfe"
    EVENTS_PER_S = "events_per_s"
    TOTAL = "total"
    SCALING = "scaling"


class Measure(Word):
    """What a reading's value is: the figure of one row, or a transport pair's comparison of it.
    The value is the marker keyword a pair's budget on it is given with."""

    FIGURE = "figure"
    CHANGE = "max"
    """framework / baseline - 1, in one session, paired window by window."""
    ADDED = "max_abs"
    """framework - baseline, in the figure's unit, paired the same way."""


def figure_number(value: object) -> float:
    """A figure's number as a budget gives it: 1000, 1e3, "1,000" or "1_000", finite, 0 or more."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"{value!r} is not a number")
    number = float(str(value).replace(",", "").replace("_", "")) if isinstance(value, str) else float(value)
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"{value!r} is not a number >= 0")
    return number


@dataclass(frozen=True)
class Spec:
    what: str
    floor: bool
    parse: Callable[[object], float]
    unit: Unit
    session_sd: float = 0.0
    """How far the figure moves between sessions on this machine kind: the standard deviation of
    its logarithm (:data:`SESSION_SD`), what :func:`judge` widens an absolute figure's interval
    (and a pair's added cost, which moves with the machine's speed) by. 0: not widened (a count,
    or a ratio within one session)."""
    pair_sd: float = 0.0
    """How far a transport pair's change of the figure moves between sessions: the standard
    deviation of its log ratio (:data:`PAIR_SD`), what a pair's change is widened by."""

    def show(self, value: float) -> str:
        return show(self.unit, value)


SESSION_SD = {"rps": 0.24, "p50": 0.28, "p95": 0.25, "p99": 0.26, "cpu": 0.25, "stream": 0.25}
"""Between-session standard deviation of a transport figure's logarithm on this machine kind,
beyond each session's own error, measured (20 fresh sessions, docs/transport.md, "Absolute
budgets on a shared runner": the largest over the figures of each kind, so that no figure of
the kind passes in one session and fails in another): used until this machine's own stored runs
(``MIN_HISTORY`` of them) say how far each figure moves."""
PAIR_SD = {"rps": 0.04, "p50": 0.075, "p95": 0.14, "p99": 0.13, "client_cpu": 0.12, "server_cpu": 0.035,
           "stream": 0.055}  # fmt: skip
"""Between-session standard deviation of a transport pair's log ratio on this machine kind,
beyond each session's own error, measured the same way (docs/transport.md, "Transport pairs"; the
largest of each kind):
both sides share each session's machine, so it is a fraction of an absolute figure's, but new
server processes each session still move it."""
SPECS: dict[Metric, Spec] = {
    Metric.P50: Spec("p50 latency", False, parse_duration, Unit.SECONDS, SESSION_SD["p50"], PAIR_SD["p50"]),
    Metric.P95: Spec("p95 latency", False, parse_duration, Unit.SECONDS, SESSION_SD["p95"], PAIR_SD["p95"]),
    Metric.P99: Spec("p99 latency", False, parse_duration, Unit.SECONDS, SESSION_SD["p99"], PAIR_SD["p99"]),
    Metric.RPS: Spec("req/s", True, figure_number, Unit.RATE, SESSION_SD["rps"], PAIR_SD["rps"]),
    Metric.CLIENT_CPU: Spec(
        "client CPU per request", False, parse_duration, Unit.SECONDS, SESSION_SD["cpu"], PAIR_SD["client_cpu"]
    ),  # fmt: skip
    Metric.SERVER_CPU: Spec(
        "server CPU per request", False, parse_duration, Unit.SECONDS, SESSION_SD["cpu"], PAIR_SD["server_cpu"]
    ),  # fmt: skip
    Metric.ERRORS: Spec("failed requests", False, figure_number, Unit.COUNT),
    Metric.TTFE: Spec(
        "time to first event", False, parse_duration, Unit.SECONDS, SESSION_SD["stream"], PAIR_SD["stream"]
    ),  # fmt: skip
    Metric.EVENTS_PER_S: Spec("events/s", True, figure_number, Unit.RATE, SESSION_SD["stream"], PAIR_SD["stream"]),
    Metric.TOTAL: Spec(
        "stream total time", False, parse_duration, Unit.SECONDS, SESSION_SD["stream"], PAIR_SD["stream"]
    ),  # fmt: skip
    Metric.SCALING: Spec("req/s at the highest level / at the lowest", True, figure_number, Unit.TIMES),
}
KEYWORDS = tuple(metric.value for metric in Metric)
PAIR_KEYWORDS = tuple(measure.value for measure in Measure if measure != Measure.FIGURE)
PAIRED = (Metric.P50, Metric.P95, Metric.P99, Metric.RPS, Metric.CLIENT_CPU, Metric.SERVER_CPU, Metric.TTFE,
          Metric.EVENTS_PER_S, Metric.TOTAL)  # fmt: skip
"""The figures a transport pair compares (failed requests are counted on both sides together)."""

Limits = dict[tuple[Metric, Measure], float]
"""A budget per figure and measure: ``(P95, FIGURE)``: p95 at most; ``(P95, CHANGE)``: p95 at
most that much above the baseline's; a floor's limit is its lowest allowed value (a pair's
req/s change -0.2: at most 20% fewer)."""


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


COMPARED = (Metric.RPS, Metric.P50, Metric.P95, Metric.P99, Metric.TTFE, Metric.EVENTS_PER_S, Metric.TOTAL,
            Metric.SCALING, Metric.CLIENT_CPU, Metric.SERVER_CPU)  # fmt: skip
"""Figures with a ratio to compare (failed requests are counts, judged by their own limit)."""
FigureKey = tuple[str, str, Metric, Measure]
"""What identifies a figure across runs: the test, the row, the figure and its measure."""


@dataclass(frozen=True)
class FigurePlace:
    """The figure at another place of the session (a base tree, an environment), measured in
    rounds interleaved with the session's own: its change against the session's own, in the
    place's role's direction (:mod:`overheadbench.transport.across`)."""

    name: str
    role: Role
    change: Change

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "role": self.role, "change": self.change.to_json()}

    @classmethod
    def from_json(cls, data: Any, path: str, what: str) -> FigurePlace:
        fields = Fields(data, path)
        change = fields.obj("change")
        assert change is not None
        return cls(fields.text("name"), fields.choice("role", Role), Change.from_json(change.data, change.path, what))


@dataclass(frozen=True)
class FigureResult:
    """A reading of one test, judged: its :class:`~overheadbench.engine.checks.Check` (a limit of
    ``None``: shown and stored, not judged). The reading keeps this session's own interval (what a
    comparison with another run starts from); the check has the interval it was judged on."""

    nodeid: str
    reading: Reading
    check: Check
    places: tuple[FigurePlace, ...] = ()

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
        if self.verdict == Status.INCONCLUSIVE:
            message += "; the interval contains the budget, so this run cannot tell: measure longer (duration, runs)"
        return message

    @property
    def key(self) -> FigureKey:
        """What identifies the figure across runs."""
        return (self.nodeid, self.reading.row, self.reading.metric, self.reading.measure)

    @property
    def measured(self) -> bool:
        return self.verdict != Status.UNMEASURED

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
            low, high = _pair(fields.numbers("ci"), fields.path)
            interval = fields.text("interval")
        samples = tuple(fields.samples("samples", signed=measure != Measure.FIGURE))
        note = fields.text("note", optional=True) or ""
        reading = Reading(row, metric, check.value, low, high, interval, samples, note, measure)
        nodeid = fields.text("nodeid")
        what = f"{nodeid}: {row} {metric}"
        places = (
            fields.items("places", lambda item, at: FigurePlace.from_json(item, at, what)) if "places" in data else []
        )
        return cls(nodeid, reading, check, tuple(places))


def compared_values(figure: FigureResult) -> tuple[float, float, float]:
    """The value and interval a change compares: the figure's own, a pair change's as a ratio."""
    reading = figure.reading
    shift = 1.0 if reading.measure == Measure.CHANGE else 0.0
    return reading.value + shift, reading.low + shift, reading.high + shift


def comparable(figure: FigureResult) -> bool:
    """Whether a figure has a positive value to compare as a ratio."""
    value = compared_values(figure)[0]
    return (figure.measured and figure.metric in COMPARED and figure.measure != Measure.ADDED and value > 0
            and math.isfinite(value))  # fmt: skip


def _pair(ci: list[float], path: str) -> tuple[float, float]:
    if len(ci) != 2:
        raise ShapeError(f"{path}.ci: expected [low, high], got {len(ci)} values")
    return ci[0], ci[1]


def _older_check(fields: Fields, row: str, metric: Metric) -> Check:
    """The check of a figure stored before schema 9, from its value, interval, limit and verdict."""
    low, high = _pair(fields.numbers("ci"), fields.path)
    interval = fields.text("interval")
    measured = fields.choice("verdict", Status) != Status.UNMEASURED
    return _check(Reading(row, metric, fields.number("value"), low, high, interval), fields.maybe_number("limit"),
                  measured)  # fmt: skip


CHANGE_UNIT = {Unit.SECONDS: Unit.SIGNED_SECONDS, Unit.COUNT: Unit.SIGNED_COUNT}


def _check(reading: Reading, limit: float | None, measured: bool) -> Check:
    spec, measure = SPECS[reading.metric], reading.measure
    unit = {Measure.FIGURE: spec.unit, Measure.CHANGE: Unit.SIGNED_FRACTION}.get(
        measure, CHANGE_UNIT.get(spec.unit, spec.unit)
    )
    what = f"{reading.row}: {spec.what}" + {Measure.CHANGE: " change", Measure.ADDED: " added"}.get(measure, "")
    name = reading.metric.value if measure == Measure.FIGURE else f"{measure}[{reading.metric.value}]"
    interval = reading.interval or "a single reading"
    return Check(name, what, limit, reading.value, reading.low, reading.high, unit, interval,
                 counted=not reading.interval, floor=spec.floor, measured=measured)  # fmt: skip


def session_prior(metric: Metric, measure: Measure) -> float:
    """How far a figure moves between sessions on this machine kind, before its stored runs say:
    a pair's change by :attr:`Spec.pair_sd`; an absolute figure, and a pair's added cost (in the
    figure's unit, so it moves with the machine's speed as the figure does), by :attr:`Spec.session_sd`."""
    spec = SPECS[metric]
    return spec.pair_sd if measure == Measure.CHANGE else spec.session_sd


def across_sessions(reading: Reading, session_sd: float, confidence: float) -> Reading:
    """The reading with its interval widened by its between-session spread ``session_sd``: the
    session's own half-width and ``z * session_sd`` added in quadrature, on the log scale of the
    figure (a pair's change: of its ratio; an added cost: relative to its size), so the interval
    covers where the figure lands in another session on this machine, not only this session's
    sampling error."""
    value, measure = reading.value, reading.measure
    if session_sd <= 0 or not math.isfinite(value):
        return reading
    wide = NormalDist().inv_cdf((1 + confidence) / 2) * session_sd
    if measure == Measure.ADDED:
        extra = wide * abs(value)
        low = value - math.hypot(value - reading.low, extra)
        high = value + math.hypot(reading.high - value, extra)
    else:
        shift = 1.0 if measure == Measure.CHANGE else 0.0
        centre, bottom, top = value + shift, reading.low + shift, reading.high + shift
        if centre <= 0:
            return reading
        below = math.log(centre / bottom) if bottom > 0 else 0.0
        above = math.log(top / centre) if top > 0 else 0.0
        low = centre * math.exp(-math.hypot(below, wide)) - shift
        high = centre * math.exp(math.hypot(above, wide)) - shift
    interval = f"{reading.interval or 'a single reading'}, widened by {session_sd:.0%} between sessions"
    return dataclasses.replace(reading, low=low, high=high, interval=interval)


def judge(
    nodeid: str,
    reading: Reading,
    limit: float | None,
    measured: bool = True,
    *,
    session_sd: float | None = None,
    confidence: float = 0.95,
) -> FigureResult:
    """The reading against its limit, by the pairs' rule (the whole interval decides). A figure
    with a limit is judged across sessions (:func:`across_sessions`, by ``session_sd``, learned
    from this machine's stored runs, else :func:`session_prior`): a verdict this session gives
    must be the one the next session gives. Not measured (a smoke run without ``--overhead``),
    only failed requests are judged: a count, exact however brief the run, and a load that is
    all errors is a broken test."""
    judged = reading
    if limit is not None:
        sd = session_prior(reading.metric, reading.measure) if session_sd is None else session_sd
        judged = across_sessions(reading, sd, confidence)
    return FigureResult(nodeid, reading, _check(judged, limit, measured or reading.metric == Metric.ERRORS))
