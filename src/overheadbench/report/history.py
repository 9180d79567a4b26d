"""``overheadbench history``'s text: each change point on a few lines (regressions first, newest
first within them), and the lines of the gate ``--fail-above`` and ``--since`` ask for."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ..core.tables import plain
from ..core.units import format_fraction, format_overhead
from ..engine.shifts import ShiftKind
from ..engine.stats import CONFIDENCE
from ..history.timeline import EVERY_BRANCH, ChangePoint, History


def regressions(history: History, fail_above: float, newer: Callable[[str], bool] | None = None) -> list[str]:
    """The gate's lines: each regression change point of more than ``fail_above`` percent (that
    came after ``--since``, where ``newer`` says which commits did)."""
    failing = [
        p
        for p in history.change_points
        if p.regression and not p.accepted and not p.pending and abs(p.shift.change) * 100 > fail_above
    ]
    return [
        f"REGRESSION {plain(point.test)} {point.figure}: {format_fraction(point.shift.change, signed=True)} "
        f"at {point.after_commit.short}, more than --fail-above={fail_above:g}%"
        for point in failing
        if newer is None or newer(point.after.commit)
    ]


class Confirmation(Protocol):
    """A change point measured again (:class:`~overheadbench.history.confirm.Confirmation`)."""

    def told(self, point: ChangePoint) -> list[str]: ...

    def to_json(self) -> dict[str, Any]: ...


Confirmations = Mapping[ChangePoint, Confirmation]
"""``--confirm``'s session (and bisection) of each regression change point."""


def history_document(history: History, machine: str, branch: str, confirmed: Confirmations) -> dict[str, Any]:
    """What ``--json`` writes."""
    points = []
    for point in history.change_points:
        points.append(point.to_json() | ({"confirm": confirmed[point].to_json()} if point in confirmed else {}))
    return {
        "machine": machine,
        "branch": branch,
        "runs": history.runs,
        "series": history.series,
        "machines": history.machines,
        "linked": history.linked,
        "change_points": points,
    }


def whose(machine: str, branch: str) -> str:
    """Whose runs a history read: a machine's, on a branch or on every one."""
    return f"machine {machine} on {'every branch' if branch == EVERY_BRANCH else f'branch {branch}'}"


def render_history(history: History, where: str, confirmed: Confirmations | None = None) -> list[str]:
    """The history's lines: what was read, then each change point (``where``: machine and branch),
    with its confirmation where it was measured again."""
    points = sorted(history.change_points, key=lambda p: (not p.regression, -p.after.number))
    dirty = f", {_runs(history.dirty)} of a dirty tree left out" if history.dirty else ""
    pooled = f" (pooled from {history.machines} fingerprints)" if history.machines > 1 else ""
    linked = f" ({history.linked} linked)" if history.linked else ""
    lines = [
        f"overheadbench history: {_runs(history.runs)}{linked} of {where}{pooled} ({history.ordered_by} order), "
        f"{history.series} series{dirty}; {len(points)} change point{'s' if len(points) != 1 else ''}"
    ]
    for point in points:
        lines += _point_lines(point)
        if confirmed and point in confirmed:
            lines += confirmed[point].told(point)
    return lines


def _runs(count: int) -> str:
    return f"{count} run{'s' if count != 1 else ''}"


def direction(point: ChangePoint) -> str:
    """``regressed`` or ``improved``, and whether it was accepted or waits for one more run: the same
    words in the terminal, the page and the JSON's ``regression``."""
    said = ("regressed" if point.regression else "improved") + (", ACCEPTED" if point.accepted else "")
    return said + (", pending one more run" if point.pending else "")


def change_said(point: ChangePoint) -> str:
    """``+20.4% (95% CI +14.9..+26.2%)``: a change point's change and its interval, as every surface says it."""
    low, high = point.shift.interval()
    change = format_fraction(point.shift.change, signed=True)
    return f"{change} ({CONFIDENCE:.0%} CI {format_fraction(low, signed=True)}..{format_fraction(high, signed=True)})"


def _point_lines(point: ChangePoint) -> list[str]:
    shift = point.shift
    head = f"{shift.kind.value.upper()} {direction(point)}: {plain(point.test)} {point.figure}: {change_said(point)}"
    if shift.kind is not ShiftKind.DRIFT:
        between = "" if point.between is None else f", {point.between} commits between"
        where = (
            f"    at {_commit(point.after_commit.short, point.after_commit.subject)}, "
            f"after {_commit(point.before_commit.short, point.before_commit.subject)}{between}"
        )
    else:
        where = f"    over {shift.end - shift.start + 1} runs, {point.before_commit.short}..{point.after_commit.short}"
    return [head, where + _budget(point), *([f"    accepted: {plain(point.accepted)}"] if point.accepted else [])]


def _commit(short: str, subject: str) -> str:
    return f'{short} "{plain(subject)}"' if subject else short


def _budget(point: ChangePoint) -> str:
    ratio = point.latest.ratio
    now = format_overhead(point.value_after - 1) if ratio else f"{point.value_after:.4g}"
    if point.limit is None:
        return f"; now {now}"
    limit = format_overhead(point.limit - 1) if ratio else f"{point.limit:.4g}"
    return f"; now {now}, {'over' if point.over_budget else 'within'} its budget ({limit})"
