"""Every judged budget of a run, pairs' and transport figures' alike, as one table.

A pair is judged on up to four budgets at once (``max``, ``max_abs``, ``max_alloc``,
``max_alloc_bytes``) and a transport test on each figure it has a limit for; each is a
:class:`~overheadbench.engine.checks.Check`, and this table shows each with its value, its interval,
its limit and its verdict, in the terminal (transport), the markdown report and a CSV
(``overheadbench report RUN --format checks``).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import Any, Protocol

from ..core.tables import markdown_table, plain
from ..engine.checks import Check, Status

MARK = {Status.PASS: "pass", Status.FAIL: "FAIL", Status.INCONCLUSIVE: "inconclusive", Status.UNJUDGED: "not judged"}
ERRORS = "errors"
"""A load row's failed requests: in the budgets table only when over their limit (the load table shows them)."""
CHECK_CSV_HEADERS = (
    "test",
    "budget",
    "figure",
    "value",
    "low",
    "high",
    "interval",
    "limit",
    "floor",
    "unit",
    "status",
    "sentence",
)


class Judged(Protocol):
    """A judged test's checks: a pair (:class:`~overheadbench.pairs.results.OverheadResult`) or a
    transport figure (:class:`~overheadbench.transport.results.FigureResult`)."""

    @property
    def nodeid(self) -> str: ...

    @property
    def measured(self) -> bool: ...

    @property
    def checks(self) -> Sequence[Check]: ...


def judged(*kinds: Sequence[Judged]) -> list[tuple[str, Check]]:
    """(test, check) for every budget judged in the run, pairs' and figures' alike (a figure
    without a limit is shown, not judged; failed requests only when over their limit)."""
    return [
        (item.nodeid, check)
        for items in kinds
        for item in items
        if item.measured
        for check in item.checks
        if check.limit is not None and (check.name != ERRORS or check.status != Status.PASS)
    ]


GATE_REGRESSED = "; the test failed: regressed (gate)"
"""Beside a budget the test met, where the gate failed the test: a plain "pass" there read as a
green test to the reviewer of a red one."""


def budget_rows(
    items: Sequence[tuple[str, Check]], regressed: Collection[str] = (), brief: bool = False
) -> list[tuple[str, ...]]:
    """The budgets table: test, figure, value, interval, budget, verdict (empty without a check);
    ``regressed``: the tests the gate failed, whose verdict says so; ``brief``: the interval's ends
    alone (the terminal's, whose note says how each kind of interval is made: in full, the
    interval column alone was 92 characters wide)."""
    if not items:
        return []
    rows: list[tuple[str, ...]] = [("test", "figure", "value", "interval", "budget", "verdict")]
    for nodeid, check in items:
        rows.append(
            (
                plain(nodeid),
                plain(check.what),
                check.show(check.value),
                check.bounds if brief else check.spread,
                check.bound,
                MARK.get(check.status, check.status.value) + (GATE_REGRESSED if nodeid in regressed else ""),
            )
        )
    return rows


def markdown_budgets(*kinds: Sequence[Judged], regressed: Collection[str] = ()) -> str:
    """The ``## Budgets`` section of the markdown report (empty when nothing was judged)."""
    rows = budget_rows(judged(*kinds), regressed)
    return "\n".join(["## Budgets", "", *markdown_table(rows)]) + "\n" if rows else ""


def check_csv_rows(*kinds: Sequence[Judged]) -> list[tuple[Any, ...]]:
    """One row per judged budget, in the figure's own units (seconds, fractions, req/s), unformatted."""
    rows = [
        (
            plain(nodeid),
            c.name,
            plain(c.what),
            c.value,
            c.low,
            c.high,
            c.interval,
            c.limit,
            c.floor,
            c.unit,
            c.status,
            plain(c.sentence()),
        )
        for nodeid, c in judged(*kinds)
    ]
    return [CHECK_CSV_HEADERS, *(tuple("" if _missing(v) else v for v in row) for row in rows)]


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))
