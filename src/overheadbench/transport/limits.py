"""The transport marker and a call's budgets: ``@pytest.mark.transport(p95="5ms", rps=1000)``,
a transport pair's ``max={"p95": 0.25}`` and ``max_abs={"p95": "1ms"}``, parsed into
:data:`~overheadbench.transport.figures.Limits` or refused with the test and the mistake named."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.errors import MarkerError
from ..core.units import DurationError
from .figures import KEYWORDS, PAIR_KEYWORDS, PAIRED, SPECS, Limits, Measure, Metric, figure_number

MARKER_NAME = "transport"
MARKER_HELP = (
    "transport(p50=None, p95=None, p99=None, rps=None, client_cpu=None, server_cpu=None, errors=0, ttfe=None, "
    "events_per_s=None, total=None, scaling=None, max=None, max_abs=None): budgets for the figures the "
    "`transport` fixture measures: latency, CPU per request, time to first event and stream total ceilings "
    "(seconds or '5ms'), req/s, events/s and scaling floors (numbers), failed requests; a transport pair's "
    "max={'p95': 0.25, 'rps': 0.2} (relative change) and max_abs={'p95': '1ms'} (added cost)"
)


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
        raise MarkerError(f"{where}: {measure}={budgets!r}: a transport pair's budgets name their figures, "
                          f"e.g. {measure}={example}")  # fmt: skip
    limits: Limits = {}
    for key, value in budgets.items():
        if key not in {metric.value for metric in PAIRED}:
            raise MarkerError(f"{where}: {measure}[{key!r}]: a transport pair compares "
                              f"{', '.join(metric.value for metric in PAIRED)}")  # fmt: skip
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
