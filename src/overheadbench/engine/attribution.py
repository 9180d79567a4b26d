"""Where an overhead goes: two function-by-function profiles of a pair, framework minus baseline.

A profile (:mod:`overheadbench.instruments.functions`) is each function's cost over ``calls``
calls of one side: its executed instructions (exact) or its sampled time (approximate). The
explanation is, per function, what the framework path spends there per call beyond what the
baseline spends, ranked by its *share*: that function's added cost over the sum of every
function's added cost (so the shares of the functions that add cost sum to 1). A function the
framework path spends less in (the baseline's own work, moved or skipped) has no share; the
net added cost per call is kept beside the rows.

Functions are named ``module:qualname`` (``framework:make_layer.<locals>.run``), so a layer's
inner functions stay apart from another layer's. A profile keeps its costs by whole call stack
(:mod:`overheadbench.engine.stacks`); the rows read them by the function each stack ends in, and
the explanation keeps the framework side's stacks with their added cost: its flame graph.

Sampled profiles are **paired**: the two sides are profiled in alternating rounds
(:data:`~overheadbench.pairs.explaining.EXPLAIN_ROUNDS`), so a drift of the machine (its clock, its
neighbours) falls on both alike. Beside two sequential windows, work both sides share (a handler's
``json.dumps``) read +150 to +800 ns in one window pair and not in the next (sd 290 ns per function
here, 80 ns paired), and outranked the thin layer a change had slowed. The rounds' spread gives each
row its noise (``se``); rows are ranked by what they add *beyond* their noise (``added - 2 se``), so
shared work that moves by chance does not come first, and an explanation whose rows all sit within
their noise says that it cannot separate the change from shared work (:attr:`Explanation.separated`).
A change between places is read with each place's profile normalised by its own baseline (the gate
reads framework / baseline): a replica slower throughout does not move every function.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.jsonio import Fields, ShapeError
from ..core.units import format_count, format_seconds
from .profiles import Profiled
from .stacks import StackCost, apportioned, folded

SHOWN_ROWS = 3
"""Rows a failure message quotes."""
MIN_SHOWN_SHARE = 0.005
"""A failure message leaves out a function that adds less than this share (a first call's warm-up, spread thin)."""
SAVED_SAID = 0.1
"""Where other functions save more than this share of what the listed ones add, the message says how the
net and the rows relate (a net of +220 ns/call sat beside a top row of +693 ns with nothing between them)."""
CHANGE_HEAD = "what the change added"
"""How a change's explanation is headed (:func:`explain_change`; a pair's own reads "where the overhead goes")."""
NOISE_Z = 2.0
"""A row stands out of its noise when its added cost is more than this many standard errors."""
UNSEPARATED = (
    "~ within its noise: no function stands out of the sampling's noise, so this cannot tell the change\n"
    "    from work both sides share (a longer profile, or count mode, can)"
)
"""What an explanation whose rows all sit within their noise says under them."""
KEPT_ROWS = 20
"""Rows a result keeps (the JSON and the markdown): the rest are summed in ``rest``."""


@dataclass(frozen=True)
class ExplainRow:
    where: str
    """The function, ``module:qualname``."""
    share: float
    """Its share of the added cost, 0 to 1."""
    added: float
    """What the framework path spends there per call beyond the baseline (instructions or seconds)."""
    se: float = 0.0
    """Its standard error over the profile's rounds (0: exact, or not known)."""

    @property
    def clear(self) -> bool:
        """Whether it stands out of its noise (:data:`NOISE_Z` standard errors above zero)."""
        return self.added > NOISE_Z * self.se

    def to_json(self) -> dict[str, Any]:
        return {"where": self.where, "share": self.share, "added": self.added, "se": self.se}

    @classmethod
    def from_json(cls, fields: Fields) -> ExplainRow:
        """A row back (a run before schema 16 had no ``se``, and a ``calls`` always 0: left unread)."""
        return cls(
            fields.text("where"), fields.number("share"), fields.number("added"), fields.maybe_number("se") or 0.0
        )


@dataclass(frozen=True)
class Explanation:
    """Where a pair's overhead goes, function by function (see the module docstring)."""

    unit: str
    """``instructions`` (exact: counted) or ``seconds`` (approximate: sampled time)."""
    exact: bool
    calls: tuple[int, int]
    """The calls profiled: the baseline's, the framework's."""
    net: float
    """The framework path's added cost per call, all functions together (added minus saved)."""
    rows: tuple[ExplainRow, ...] = ()
    rest: float = 0.0
    """The share of the functions beyond ``KEPT_ROWS``."""
    note: str = ""
    """How the figures were made (the profiler's cost taken off, the counter)."""
    stacks: tuple[StackCost, ...] = field(default=(), compare=False)
    """The framework side's whole call stacks, each with its cost and added cost per call
    (:mod:`overheadbench.engine.stacks`): the flame graph the session writes (``--overhead-flame``,
    and the page's) from the gathered results, xdist workers' included."""

    def to_json(self) -> dict[str, Any]:
        return {
            "unit": self.unit,
            "exact": self.exact,
            "calls": list(self.calls),
            "net": self.net,
            "rows": [row.to_json() for row in self.rows],
            "rest": self.rest,
            "note": self.note,
            "stacks": [stack.to_json() for stack in self.stacks],
        }

    @classmethod
    def from_json(cls, fields: Fields) -> Explanation:
        calls = fields.numbers("calls")
        if len(calls) != 2:
            raise ShapeError(f"{fields.path}.calls: expected the two sides' calls, got {len(calls)} numbers")
        return cls(
            fields.text("unit"),
            fields.flag("exact"),
            (int(calls[0]), int(calls[1])),
            fields.number("net"),
            tuple(fields.items("rows", lambda item, path: ExplainRow.from_json(Fields(item, path)))),
            fields.number("rest"),
            fields.text("note"),
            tuple(_stacks(fields)),
        )

    def per_call(self, value: float) -> str:
        """A cost per call in the explanation's unit, signed (``+1.20 µs``, ``+412 bytecode instr``)."""
        if self.exact:
            return format_count(value, signed=True) + " bytecode instr"
        return format_seconds(value, signed=True)

    @property
    def kind(self) -> str:
        """How exact the rows are, in words."""
        return "exact: bytecode counted per function" if self.exact else "approximate: sampled time"

    def modules(self) -> list[tuple[str, float]]:
        """Each module's share (the sum of its functions' kept rows), largest first: for a stack of
        libraries, which library; for a middleware module of layers, that module."""
        shares: dict[str, float] = {}
        for row in self.rows:
            module = row.where.partition(":")[0]
            shares[module] = shares.get(module, 0.0) + row.share
        return sorted(shares.items(), key=lambda item: -item[1])

    @property
    def separated(self) -> bool:
        """Whether its first row stands out of its noise: where it does not, no row does (they are
        ranked by what they add beyond it), and the explanation cannot tell the change from the work
        both sides share, moved by chance."""
        return not self.rows or self.rows[0].clear

    def told(self, rows: int = SHOWN_ROWS, head: str = "where the overhead goes") -> str:
        """The top ``rows`` as a failure message quotes them, one function a line, under ``head``
        (``~`` before a row within its noise)."""
        head = f"{head} ({self.kind}; net {self.per_call(self.net)}/call):"
        shown = [row for row in self.rows[:rows] if row.share >= MIN_SHOWN_SHARE]
        lines = [f" {' ' if row.clear else '~'}{row.share:4.0%}  {self._added(row)}/call  {row.where}" for row in shown]
        if shown and (saved := self.net - self.added) < -SAVED_SAID * self.added:
            lines.append(
                f"  net = {self.per_call(self.added)}/call the functions add (each row's share is of it) "
                f"{self.per_call(saved)}/call others save"
            )
        modules = [f"{module} {share:.0%}" for module, share in self.modules()[:rows] if share >= MIN_SHOWN_SHARE]
        if len(modules) > 1:
            lines.append(f"  by module: {', '.join(modules)}")
        if not self.separated:
            lines.append(f"  {UNSEPARATED}")
        return "\n".join([head, *lines] if lines else [f"{head} no function adds cost"])

    @property
    def added(self) -> float:
        """What the functions that add cost add per call, all together (the rows' shares are of it; the
        net is this less what others save)."""
        return self.rows[0].added / self.rows[0].share if self.rows and self.rows[0].share > 0 else max(self.net, 0.0)

    def _added(self, row: ExplainRow) -> str:
        """A row's added cost per call, with its noise where it has one: ``+374 ns ±40 ns``."""
        noise = f" ±{format_seconds(NOISE_Z * row.se)}" if row.se and not self.exact else ""
        return self.per_call(row.added) + noise

    def folded(self) -> str:
        """The added cost as whole folded stacks (``module:f;module:g count``), what flame graph tools
        read (``flamegraph.pl``, speedscope, inferno); counts in instructions, or nanoseconds."""
        return folded(self.stacks, 1.0 if self.exact else 1e9)


def explain(profiled: Profiled, unit: str, exact: bool, note: str = "") -> Explanation:
    """The framework path's profile against the baseline's, per call."""
    added = {where: (profiled.per_call(where), profiled.spread.get(where, 0.0)) for where in profiled.functions()}
    return _ranked(added, profiled.calls, unit, exact, note, profiled)


def explain_change(old: Profiled, new: Profiled, unit: str, exact: bool, note: str = "") -> Explanation:
    """What the framework path adds per call at ``new`` beyond what it adds at ``old`` (two places of
    one session: a base tree and the head, two interpreters), function by function: each one's
    added cost there less its added cost here, ranked as a pair's explanation is. ``calls``: the
    framework path's calls profiled at ``old``, then at ``new``."""
    if not exact and old.baseline_per_call > 0 and new.baseline_per_call > 0:
        new = new.scaled(old.baseline_per_call / new.baseline_per_call)  # each place read against its own baseline
    added = {
        where: (new.per_call(where) - old.per_call(where), old.spread.get(where, 0.0) + new.spread.get(where, 0.0))
        for where in old.functions() | new.functions()
    }
    return _ranked(added, (old.framework_calls, new.framework_calls), unit, exact, note, new)


def _ranked(
    per_call: Mapping[str, tuple[float, float]],
    calls: tuple[int, int],
    unit: str,
    exact: bool,
    note: str,
    drawn: Profiled,
) -> Explanation:
    """Each function's added cost per call (and its variance) ranked into an explanation: by what it
    adds beyond its noise (``added - NOISE_Z se``; exact rows have none); its stacks are ``drawn``'s
    framework side, each with its share of its function's added cost."""
    net = sum(added for added, _ in per_call.values())
    total = sum(added for added, _ in per_call.values() if added > 0)
    ranked = sorted(
        (
            (added - NOISE_Z * math.sqrt(variance), added, math.sqrt(variance), where)
            for where, (added, variance) in per_call.items()
            if added > 0
        ),
        reverse=True,
    )
    rows = tuple(ExplainRow(where, added / total, added, se) for _, added, se, where in ranked[:KEPT_ROWS])
    rest = sum(added for _, added, _, _ in ranked[KEPT_ROWS:]) / total if total else 0.0
    added = {where: added for where, (added, _) in per_call.items()}
    stacks = apportioned(drawn.framework, drawn.framework_calls, added)
    return Explanation(unit, exact, calls, net, rows, rest, note, stacks)


def _stacks(fields: Fields) -> list[StackCost]:
    """An explanation's stacks back: ``[stack, cost, added]`` (schema 19); a run of schema 18 kept
    ``[module;function, added]`` (its cost read as its added cost); older runs kept none."""
    if "stacks" not in fields.data:
        return []

    def stack(item: Any, path: str) -> StackCost:
        if not (isinstance(item, list) and len(item) in (2, 3) and isinstance(item[0], str)):
            raise ShapeError(f"{path}: expected [stack, cost, added], got {item!r:.80}")
        numbers = Fields({"cost": item[1], "added": item[-1]}, path)
        return StackCost(item[0], numbers.number("cost"), numbers.number("added"))

    return fields.items("stacks", stack)
