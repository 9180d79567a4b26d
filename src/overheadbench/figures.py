"""Transport and streaming figures with budgets: what is measured, its limit, its verdict.

A pair's budget is on an overhead; a transport budget is on an absolute figure of one
measured row ("h2c c=100"): a latency percentile's ceiling, a req/s floor, a time-to-first-
event ceiling, an events/s floor, a concurrency-scaling floor, CPU per request ceilings, an
error count. Each figure comes with the interval it has (percentiles: order statistics;
req/s: over windows of the run; stream figures: over repeated streams; CPU and errors are
single readings) and is judged by the same :class:`~overheadbench.checks.Check` as a pair:
pass only when the whole interval is on the right side of the limit.

Limits come from ``@pytest.mark.transport(p95="5ms", rps=1000, ...)``, and the fixture's
calls may give a row its own (``transport.load(server, concurrency=100, rps=600)``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .checks import Check, Status
from .errors import MarkerError
from .jsonio import Fields, ShapeError
from .units import DurationError, format_count, format_seconds, parse_duration
from .vocabulary import Word

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


def _rate(value: float) -> str:
    return f"{value:,.0f}/s" if math.isfinite(value) else "n/a"


def _times(value: float) -> str:
    return f"{value:.2f}x" if math.isfinite(value) else "n/a"


def _seconds(value: float) -> str:
    return format_seconds(value) if math.isfinite(value) else "n/a"


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
    show: Callable[[float], str]


SPECS: dict[Metric, Spec] = {
    Metric.P50: Spec("p50 latency", False, parse_duration, _seconds),
    Metric.P95: Spec("p95 latency", False, parse_duration, _seconds),
    Metric.P99: Spec("p99 latency", False, parse_duration, _seconds),
    Metric.RPS: Spec("req/s", True, _number, _rate),
    Metric.CLIENT_CPU: Spec("client CPU per request", False, parse_duration, _seconds),
    Metric.SERVER_CPU: Spec("server CPU per request", False, parse_duration, _seconds),
    Metric.ERRORS: Spec("failed requests", False, _number, format_count),
    Metric.TTFE: Spec("time to first event", False, parse_duration, _seconds),
    Metric.EVENTS_PER_S: Spec("events/s", True, _number, _rate),
    Metric.TOTAL: Spec("stream total time", False, parse_duration, _seconds),
    Metric.SCALING: Spec("req/s at the highest level / at the lowest", True, _number, _times),
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
    """A reading of one test, judged against its limit (``None``: shown and stored, not judged)."""

    nodeid: str
    reading: Reading
    limit: float | None
    verdict: Status
    message: str

    @property
    def row(self) -> str:
        return self.reading.row

    @property
    def metric(self) -> Metric:
        return self.reading.metric

    @property
    def key(self) -> tuple[str, str, Metric]:
        """What identifies the figure across runs."""
        return (self.nodeid, self.reading.row, self.reading.metric)

    @property
    def measured(self) -> bool:
        return self.verdict != Status.UNMEASURED

    def to_json(self) -> dict[str, Any]:
        reading = self.reading
        return {
            "nodeid": self.nodeid,
            "row": reading.row,
            "metric": reading.metric,
            "value": reading.value,
            "ci": [reading.low, reading.high],
            "interval": reading.interval,
            "samples": list(reading.samples),
            "note": reading.note,
            "limit": self.limit,
            "floor": SPECS[reading.metric].floor,
            "verdict": self.verdict,
            "message": self.message,
        }

    @classmethod
    def from_json(cls, data: Any, path: str = "figure") -> FigureResult:
        fields = Fields(data, path)
        ci = fields.numbers("ci")
        if len(ci) != 2:
            raise ShapeError(f"{path}.ci: expected [low, high], got {len(ci)} values")
        reading = Reading(
            fields.text("row"),
            fields.choice("metric", Metric),
            fields.number("value"),
            ci[0],
            ci[1],
            fields.text("interval"),
            tuple(fields.samples("samples")),
            fields.text("note", optional=True) or "",
        )
        return cls(
            fields.text("nodeid"),
            reading,
            fields.maybe_number("limit"),
            fields.choice("verdict", Status),
            fields.text("message"),
        )


def judge(nodeid: str, reading: Reading, limit: float | None, measured: bool = True) -> FigureResult:
    """The reading against its limit, by the pairs' rule (the whole interval decides). Not
    measured (a smoke run without ``--overhead``), only failed requests are judged: a count,
    exact however brief the run, and a load that is all errors is a broken test."""
    spec = SPECS[reading.metric]
    shown = f"{reading.row}: {spec.what} {spec.show(reading.value)}"
    if not measured and reading.metric != Metric.ERRORS:
        return FigureResult(nodeid, reading, limit, Status.UNMEASURED, "not measured (run pytest with --overhead)")
    if limit is None:
        return FigureResult(nodeid, reading, None, Status.UNJUDGED, f"{shown} (no budget)")
    check = Check(
        reading.metric.value,
        f"{reading.row}: {spec.what}",
        limit,
        reading.value,
        reading.low,
        reading.high,
        spec.show,
        reading.interval or "a single reading",
        counted=not reading.interval,
        floor=spec.floor,
    )
    message = check.sentence() + (f" ({reading.note})" if reading.note else "")
    if check.status == Status.INCONCLUSIVE:
        message += "; the interval contains the budget, so this run cannot tell: measure longer (duration, runs)"
    return FigureResult(nodeid, reading, limit, check.status, message)
