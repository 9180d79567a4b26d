"""Transport and streaming figures with budgets: what is measured, its limit, its verdict.

A pair's budget is on an overhead; a transport budget is on an absolute figure of one
measured row ("h2c c=100"): a latency percentile's ceiling, a req/s floor, a time-to-first-
event ceiling, an events/s floor, a concurrency-scaling floor, CPU per request ceilings, an
error count. Each figure comes with the interval it has (percentiles: order statistics;
req/s: over windows of the run; stream figures: over repeated streams; CPU and errors are
single readings) and is judged as a :class:`~overheadbench.engine.checks.Check`, the pairs' judged
figure: pass only when the whole interval is on the right side of the limit.

Limits come from ``@pytest.mark.transport(p95="5ms", rps=1000, ...)``, and the fixture's
calls may give a row its own (``transport.load(server, concurrency=100, rps=600)``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..core.errors import MarkerError
from ..core.jsonio import Fields, ShapeError
from ..core.units import DurationError, parse_duration
from ..core.vocabulary import Word
from ..engine.checks import Check, Status, Unit, show

MARKER_NAME = "transport"
MARKER_HELP = (
    "transport(p50=None, p95=None, p99=None, rps=None, client_cpu=None, server_cpu=None, errors=0, ttfe=None, "
    "events_per_s=None, total=None, scaling=None): budgets for the figures the `transport` fixture measures: "
    "latency, CPU per request, time to first event and stream total ceilings (seconds or '5ms'), req/s, "
    "events/s and scaling floors (numbers), failed requests"
)
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


def _number(value: object) -> float:
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

    def show(self, value: float) -> str:
        return show(self.unit, value)


SPECS: dict[Metric, Spec] = {
    Metric.P50: Spec("p50 latency", False, parse_duration, Unit.SECONDS),
    Metric.P95: Spec("p95 latency", False, parse_duration, Unit.SECONDS),
    Metric.P99: Spec("p99 latency", False, parse_duration, Unit.SECONDS),
    Metric.RPS: Spec("req/s", True, _number, Unit.RATE),
    Metric.CLIENT_CPU: Spec("client CPU per request", False, parse_duration, Unit.SECONDS),
    Metric.SERVER_CPU: Spec("server CPU per request", False, parse_duration, Unit.SECONDS),
    Metric.ERRORS: Spec("failed requests", False, _number, Unit.COUNT),
    Metric.TTFE: Spec("time to first event", False, parse_duration, Unit.SECONDS),
    Metric.EVENTS_PER_S: Spec("events/s", True, _number, Unit.RATE),
    Metric.TOTAL: Spec("stream total time", False, parse_duration, Unit.SECONDS),
    Metric.SCALING: Spec("req/s at the highest level / at the lowest", True, _number, Unit.TIMES),
}
KEYWORDS = tuple(metric.value for metric in Metric)

Limits = dict[Metric, float]


def parse_limits(kwargs: Mapping[str, Any], where: str) -> Limits:
    """``{keyword: limit}`` from a marker's or a call's keywords, or :class:`MarkerError`
    naming ``where`` (the test and the marker or call) and the mistake."""
    unknown = sorted(set(kwargs) - set(KEYWORDS))
    if unknown:
        raise MarkerError(f"{where} got unknown budget(s) {', '.join(unknown)}; it accepts {', '.join(KEYWORDS)}")
    limits: Limits = {}
    for key, value in kwargs.items():
        if value is None:
            continue
        metric = Metric(key)
        try:
            limits[metric] = SPECS[metric].parse(value)
        except (DurationError, ValueError) as exc:
            raise MarkerError(f"{where}: {key}={value!r}: {exc}") from None
    return limits


def limits_from_marker(args: tuple[Any, ...], kwargs: Mapping[str, Any], nodeid: str) -> Limits:
    where = f"{nodeid}: @pytest.mark.{MARKER_NAME}"
    if args:
        raise MarkerError(f"{where} takes keyword arguments only (e.g. p95='5ms', rps=1000), got {args!r}")
    return parse_limits(kwargs, where)


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


@dataclass(frozen=True)
class FigureResult:
    """A reading of one test, judged: its :class:`~overheadbench.engine.checks.Check` (a limit of
    ``None``: shown and stored, not judged)."""

    nodeid: str
    reading: Reading
    check: Check

    @property
    def row(self) -> str:
        return self.reading.row

    @property
    def metric(self) -> Metric:
        return self.reading.metric

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
    def key(self) -> tuple[str, str, Metric]:
        """What identifies the figure across runs."""
        return (self.nodeid, self.reading.row, self.reading.metric)

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
            "samples": list(reading.samples),
            "note": reading.note,
            "check": self.check.to_json(),
        }

    @classmethod
    def from_json(cls, data: Any, path: str = "figure") -> FigureResult:
        """A figure back from :meth:`to_json`, or from a run of schema 8 or older (the check's
        fields beside the figure's)."""
        fields = Fields(data, path)
        metric = fields.choice("metric", Metric)
        row = fields.text("row")
        stored = fields.obj("check", optional=True)
        check = Check.from_json(stored.data, stored.path) if stored else _older_check(fields, row, metric)
        interval = "" if check.counted else check.interval  # a single reading has no interval of its own
        reading = Reading(row, metric, check.value, check.low, check.high, interval,
                          tuple(fields.samples("samples")), fields.text("note", optional=True) or "")  # fmt: skip
        return cls(fields.text("nodeid"), reading, check)


def _older_check(fields: Fields, row: str, metric: Metric) -> Check:
    """The check of a figure stored before schema 9, from its value, interval, limit and verdict."""
    ci = fields.numbers("ci")
    if len(ci) != 2:
        raise ShapeError(f"{fields.path}.ci: expected [low, high], got {len(ci)} values")
    interval = fields.text("interval")
    measured = fields.choice("verdict", Status) != Status.UNMEASURED
    return _check(Reading(row, metric, fields.number("value"), ci[0], ci[1], interval), fields.maybe_number("limit"),
                  measured)  # fmt: skip


def _check(reading: Reading, limit: float | None, measured: bool) -> Check:
    spec = SPECS[reading.metric]
    what = f"{reading.row}: {spec.what}"
    interval = reading.interval or "a single reading"
    return Check(reading.metric.value, what, limit, reading.value, reading.low, reading.high, spec.unit, interval,
                 counted=not reading.interval, floor=spec.floor, measured=measured)  # fmt: skip


def judge(nodeid: str, reading: Reading, limit: float | None, measured: bool = True) -> FigureResult:
    """The reading against its limit, by the pairs' rule (the whole interval decides). Not
    measured (a smoke run without ``--overhead``), only failed requests are judged: a count,
    exact however brief the run, and a load that is all errors is a broken test."""
    return FigureResult(nodeid, reading, _check(reading, limit, measured or reading.metric == Metric.ERRORS))
