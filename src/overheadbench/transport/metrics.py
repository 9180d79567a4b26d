"""Transport and streaming figures: what can be measured and budgeted, how a budget is written,
and how far each figure moves between sessions on this machine kind.

A transport budget is on a figure of one measured row ("h2c c=100"): a latency percentile's
ceiling, a req/s floor, a time-to-first-event ceiling, an events/s floor, a concurrency-scaling
floor, CPU per request ceilings, an error count. A row is one target's figures
(:attr:`Measure.FIGURE`), or a transport pair's: the framework side against the baseline side,
measured in one session with their windows interleaved, as a change (``max``: framework /
baseline - 1) or an added cost (``max_abs``: framework - baseline), each with its paired interval
(:mod:`overheadbench.transport.pairing`). Limits come from ``@pytest.mark.transport(p95="5ms",
rps=1000, max={"p95": 0.25}, ...)``, and the fixture's calls may give a row its own
(``transport.load(server, concurrency=100, rps=600)``).

The readings and their results are :mod:`overheadbench.transport.results`; the verdict,
:mod:`overheadbench.transport.verdict` (as pairs/ splits the same roles).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core.numbers import parse_number
from ..core.units import parse_duration
from ..core.vocabulary import Word
from ..engine.checks import Unit, show

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
    return parse_number(value, minimum=0)


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
PAIR_SD = {
    "rps": 0.04,
    "p50": 0.075,
    "p95": 0.14,
    "p99": 0.13,
    "client_cpu": 0.12,
    "server_cpu": 0.035,
    "stream": 0.10,
}
"""Between-session standard deviation of a transport pair's log ratio on this machine kind,
beyond each session's own error, measured the same way (docs/transport.md, "Transport pairs"; the
largest of each kind):
both sides share each session's machine, so it is a fraction of an absolute figure's, but new
server processes each session still move it. Streams: an SDK's stream against raw httpx moves more
(its side is the client's CPU, the raw side mostly the server's, and how the two share the cores
with a busy neighbour moves the ratio itself): pooled over its figures in two collections of five
sessions beside 2 busy loops, 9.5% (validation/STREAMS.md; one figure's five sessions 23%), where
sse-starlette's pairs moved 4.2-5.5%."""
SPECS: dict[Metric, Spec] = {
    Metric.P50: Spec("p50 latency", False, parse_duration, Unit.SECONDS, SESSION_SD["p50"], PAIR_SD["p50"]),
    Metric.P95: Spec("p95 latency", False, parse_duration, Unit.SECONDS, SESSION_SD["p95"], PAIR_SD["p95"]),
    Metric.P99: Spec("p99 latency", False, parse_duration, Unit.SECONDS, SESSION_SD["p99"], PAIR_SD["p99"]),
    Metric.RPS: Spec("req/s", True, figure_number, Unit.RATE, SESSION_SD["rps"], PAIR_SD["rps"]),
    Metric.CLIENT_CPU: Spec(
        "client CPU per request", False, parse_duration, Unit.SECONDS, SESSION_SD["cpu"], PAIR_SD["client_cpu"]
    ),
    Metric.SERVER_CPU: Spec(
        "server CPU per request", False, parse_duration, Unit.SECONDS, SESSION_SD["cpu"], PAIR_SD["server_cpu"]
    ),
    Metric.ERRORS: Spec("failed requests", False, figure_number, Unit.COUNT),
    Metric.TTFE: Spec(
        "time to first event", False, parse_duration, Unit.SECONDS, SESSION_SD["stream"], PAIR_SD["stream"]
    ),
    Metric.EVENTS_PER_S: Spec("events/s", True, figure_number, Unit.RATE, SESSION_SD["stream"], PAIR_SD["stream"]),
    Metric.TOTAL: Spec(
        "stream total time", False, parse_duration, Unit.SECONDS, SESSION_SD["stream"], PAIR_SD["stream"]
    ),
    Metric.SCALING: Spec("req/s at the highest level / at the lowest", True, figure_number, Unit.TIMES),
}
KEYWORDS = tuple(metric.value for metric in Metric)
PAIR_KEYWORDS = tuple(measure.value for measure in Measure if measure != Measure.FIGURE)
PAIRED = (
    Metric.P50,
    Metric.P95,
    Metric.P99,
    Metric.RPS,
    Metric.CLIENT_CPU,
    Metric.SERVER_CPU,
    Metric.TTFE,
    Metric.EVENTS_PER_S,
    Metric.TOTAL,
)
"""The figures a transport pair compares (failed requests are counted on both sides together)."""

LOAD_FIGURES = (Metric.RPS, Metric.P50, Metric.P95, Metric.P99, Metric.CLIENT_CPU, Metric.SERVER_CPU)
"""A load row's figures (its failed requests aside: a count, judged by its own limit)."""
STREAM_FIGURES = (Metric.TTFE, Metric.EVENTS_PER_S, Metric.TOTAL)
"""A stream row's figures."""
WALL_CLOCK = frozenset({Metric.P50, Metric.P95, Metric.P99, Metric.RPS, Metric.TTFE, Metric.EVENTS_PER_S, Metric.TOTAL})
"""The figures read on the wall clock: as a figure or an added cost (not a change), a contended
machine's as much as the code's (:mod:`overheadbench.engine.contention`); CPU per request is not."""
QUANTILES = {Metric.P50: 0.50, Metric.P95: 0.95, Metric.P99: 0.99}
"""The latency percentiles a load row reports, by the quantile each is."""

Limits = dict[tuple[Metric, Measure], float]
"""A budget per figure and measure: ``(P95, FIGURE)``: p95 at most; ``(P95, CHANGE)``: p95 at
most that much above the baseline's; a floor's limit is its lowest allowed value (a pair's
req/s change -0.2: at most 20% fewer)."""


COMPARED = (
    Metric.RPS,
    Metric.P50,
    Metric.P95,
    Metric.P99,
    Metric.TTFE,
    Metric.EVENTS_PER_S,
    Metric.TOTAL,
    Metric.SCALING,
    Metric.CLIENT_CPU,
    Metric.SERVER_CPU,
)
"""Figures with a ratio to compare (failed requests are counts, judged by their own limit)."""
BY_SERVER = " · "
"""Between a load row's name and a server's, in the row of that server's CPU per request."""
SIDES = ("baseline", "framework")
"""A pair's two sides, as their own rows name them."""


def side_row(row: str, side: str) -> str:
    """The row of one side of pair ``row`` (its own figures beside the pair's changes)."""
    return f"{row} [{side}]"


FigureKey = tuple[str, str, Metric, Measure]
"""What identifies a figure across runs: the test, the row, the figure and its measure."""
RoundValues = list[list[Any]]
"""One round's figures as a place compares them: ``[row, metric, measure, value]`` each (JSON)."""


def session_prior(metric: Metric, measure: Measure) -> float:
    """How far a figure moves between sessions on this machine kind, before its stored runs say:
    a pair's change by :attr:`Spec.pair_sd`; an absolute figure, and a pair's added cost (in the
    figure's unit, so it moves with the machine's speed as the figure does), by :attr:`Spec.session_sd`."""
    spec = SPECS[metric]
    return spec.pair_sd if measure == Measure.CHANGE else spec.session_sd
