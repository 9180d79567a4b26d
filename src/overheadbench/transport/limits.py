"""The transport marker and a call's budgets: ``@pytest.mark.transport(p95="5ms", rps=1000)``,
a transport pair's ``max={"p95": 0.25}`` and ``max_abs={"p95": "1ms"}``, parsed into
:data:`~overheadbench.transport.metrics.Limits` or refused with the test and the mistake named."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.errors import MarkerError
from ..core.keywords import Keyword, marker_help
from ..core.units import DurationError
from ..engine.checks import Unit
from .metrics import DEFAULT_ERRORS, KEYWORDS, PAIR_KEYWORDS, PAIRED, SPECS, Limits, Measure, Metric, figure_number

MARKER_NAME = "transport"
_GIVEN_AS = {Unit.SECONDS: "seconds or a string such as '5ms'"}


def _figure_keyword(metric: Metric) -> Keyword:
    spec = SPECS[metric]
    default = f"; default {DEFAULT_ERRORS}" if metric == Metric.ERRORS else ""
    bound = "at least" if spec.floor else "at most"
    return Keyword(metric.value, f"{bound}: {spec.what} ({_GIVEN_AS.get(spec.unit, 'a number')}{default})")


MARKER_KEYWORDS = (
    *(_figure_keyword(metric) for metric in SPECS),
    Keyword("max", "a transport pair's relative budgets, per figure: `{'p95': 0.25, 'rps': 0.2}` (change over base)"),
    Keyword("max_abs", "a transport pair's added-cost budgets, per figure: `{'p95': '1ms'}` (in the figure's unit)"),
)
"""Every keyword ``@pytest.mark.transport`` (and each measuring call) accepts."""
MARKER_HELP = marker_help(MARKER_NAME, "budgets for the figures the `transport` fixture measures", MARKER_KEYWORDS)


def parse_limits(kwargs: Mapping[str, Any], where: str) -> Limits:
    """Limits from a marker's or a call's keywords, or :class:`MarkerError` naming ``where``
    (the test and the marker or call) and the mistake."""
    accepted = (*KEYWORDS, *PAIR_KEYWORDS)
    unknown = sorted(set(kwargs) - set(accepted))
    if unknown:
        raise MarkerError(f"{where} got unknown budget(s) {', '.join(unknown)}; it accepts {', '.join(accepted)}")
    limits: Limits = {}
    for key, value in kwargs.items():
        if value is None:
            continue
        if key in PAIR_KEYWORDS:
            limits.update(_pair_limits(Measure(key), value, where))
            continue
        metric = Metric(key)
        try:
            limits[metric, Measure.FIGURE] = SPECS[metric].parse(value)
        except (DurationError, ValueError) as exc:
            raise MarkerError(f"{where}: {key}={value!r}: {exc}") from None
    return limits


def _pair_limits(measure: Measure, budgets: object, where: str) -> Limits:
    """``max={"p95": 0.25}`` (a fraction of the baseline's figure) or ``max_abs={"p95": "1ms"}``
    (in the figure's unit), each stored as the limit of the signed comparison."""
    example = "{'p95': 0.25, 'rps': 0.2}" if measure == Measure.CHANGE else "{'p95': '1ms', 'rps': 200}"
    if not isinstance(budgets, Mapping) or not budgets:
        raise MarkerError(
            f"{where}: {measure}={budgets!r}: a transport pair's budgets name their figures, e.g. {measure}={example}"
        )
    limits: Limits = {}
    for key, value in budgets.items():
        if key not in {metric.value for metric in PAIRED}:
            raise MarkerError(
                f"{where}: {measure}[{key!r}]: a transport pair compares {', '.join(metric.value for metric in PAIRED)}"
            )
        metric = Metric(key)
        try:
            limit = figure_number(value) if measure == Measure.CHANGE else SPECS[metric].parse(value)
        except (DurationError, ValueError) as exc:
            raise MarkerError(f"{where}: {measure}[{key!r}]={value!r}: {exc}") from None
        limits[metric, measure] = -limit if SPECS[metric].floor else limit
    return limits


def limits_from_marker(args: tuple[Any, ...], kwargs: Mapping[str, Any], nodeid: str) -> Limits:
    where = f"{nodeid}: @pytest.mark.{MARKER_NAME}"
    if args:
        raise MarkerError(f"{where} takes keyword arguments only (e.g. p95='5ms', rps=1000), got {args!r}")
    return parse_limits(kwargs, where)
