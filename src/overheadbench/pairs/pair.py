"""What one test asks of its pair, resolved once: the budget, and how the pair is measured.

:mod:`overheadbench.pairs.marker` makes a :class:`Pair` from the test's marker and the session's
settings; everything after (the fixture, the verdict, the report, the stored run) reads it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..core.jsonio import Fields
from ..core.units import as_factor, format_bytes, format_count, format_seconds
from ..engine.settings import Mode, Settings


@dataclass(frozen=True)
class Budget:
    """What the framework path may cost on top of the baseline.

    ``max_overhead`` is a fraction of the baseline's cost per call (0.25 = 25%; negative
    demands a speed-up): of its time, or of its instructions in count mode; ``max_abs_s``
    is extra seconds per call (a time budget: count mode cannot judge it); ``max_alloc`` is
    extra memory blocks kept per call and ``max_alloc_bytes`` extra peak bytes per call
    (both modes).
    """

    max_overhead: float | None = None
    max_abs_s: float | None = None
    max_alloc: float | None = None
    max_alloc_bytes: float | None = None
    max_factor: bool = False
    """``max`` was written as a factor (``"500x"``: ``max_overhead`` 499), and is shown so."""

    def as_factor(self, overhead: float) -> bool:
        """Whether an overhead (or this budget's limit) prints as a factor beside this budget: from
        10x up, or any where the budget was written as one (``max="5x"``), in every table alike (a
        pair read ``3.35x`` in its budgets row and ``234.6%`` in the pairs table)."""
        return self.max_factor or as_factor(overhead)

    def describe(self, mode: Mode = Mode.TIME) -> str:
        """The budget as the report prints it, e.g. ``≤25%, ≤2.00 µs/call``, ``≤25% instr`` or
        ``≤500x`` (as the marker gave it, a factor from 10x up: a budget is a round number, and its
        digits are the table's width)."""
        parts = []
        if self.max_overhead is not None:
            limit = (
                f"{1 + self.max_overhead:,g}x" if self.as_factor(self.max_overhead) else f"{self.max_overhead * 100:g}%"
            )
            parts.append(f"≤{limit}{mode.unit}")
        if self.max_abs_s is not None and not mode.counted:
            parts.append(f"≤{format_seconds(self.max_abs_s)}/call")
        if self.max_alloc is not None:
            parts.append(f"≤{format_count(self.max_alloc)} blocks kept")
        if self.max_alloc_bytes is not None:
            parts.append(f"≤{format_bytes(self.max_alloc_bytes, signed=True)} peak")
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """Each limit under its JSON key (the marker's ``max``, always a fraction; seconds and
        bytes), by field name, and whether ``max`` was written as a factor."""
        return {**{key: getattr(self, name) for name, key in _JSON_KEYS.items()}, "max_factor": self.max_factor}

    @classmethod
    def from_json(cls, fields: Fields) -> Budget:
        limits = {name: fields.maybe_number(key) for name, key in _JSON_KEYS.items()}
        return cls(**limits, max_factor="max_factor" in fields.data and fields.flag("max_factor"))


_JSON_KEYS = {
    "max_overhead": "max",
    "max_abs_s": "max_abs_s",
    "max_alloc": "max_alloc",
    "max_alloc_bytes": "max_alloc_bytes",
}
"""Budget field -> its key in a stored run."""


@dataclass(frozen=True)
class Pair:
    """One test's pair: its budget and every choice about measuring it, marker over session."""

    nodeid: str
    budget: Budget
    mode: Mode = Mode.TIME
    confidence: float = 0.95
    """Two-sided level of the interval the time verdict is made on."""
    group: str | None = None
    """The report table the pair appears in (the marker's ``group``, else pytest-benchmark's)."""
    work_s: float | None = None
    """Not a limit: the real work a call does in production, for the report's "impact"
    column (the absolute overhead as a share of it)."""
    processes: int = 10
    """Fresh processes the pair is measured in first (1: in the test's process only)."""
    concurrency: int = 1
    """Callers of each side at once while it is timed: threads for plain callables, tasks of
    one event loop for ``async def`` ones (the marker's ``concurrency``, or ``compare()``'s)."""
    levels: tuple[int, ...] = ()
    """The marker's list of levels, when the test is measured at each (one row per level)."""

    @property
    def levelled(self) -> bool:
        return bool(self.levels)

    @property
    def replicated(self) -> bool:
        """Whether the pair is measured in replica processes (time mode, more than one process)."""
        return not self.mode.counted and self.processes > 1

    def to_json(self) -> dict[str, Any]:
        """The pair's own part of a result's JSON: its test, how it was measured, its budget."""
        return {
            "nodeid": self.nodeid,
            "group": self.group,
            "mode": self.mode,
            "confidence": self.confidence,
            "work_s": self.work_s,
            "concurrency": self.concurrency,
            "levels": list(self.levels),
            "budget": self.budget.to_json(),
        }

    @classmethod
    def from_json(cls, fields: Fields, nodeid: str, processes: int) -> Pair:
        """A stored result's pair (its :meth:`to_json` part; ``processes``: how many it was measured in)."""
        budget = fields.obj("budget")
        assert budget is not None
        work_s = fields.maybe_number("work_s")
        return cls(
            nodeid=nodeid,
            budget=Budget.from_json(budget),
            mode=fields.choice("mode", Mode, Mode.TIME),  # schema 1 runs were all timed
            confidence=fields.number("confidence"),
            group=fields.text("group", optional=True),
            work_s=budget.maybe_number("work_s") if work_s is None else work_s,  # schema 2 kept it in the budget
            processes=max(processes, 1),
            concurrency=int(fields.maybe_number("concurrency") or 1),  # absent before schema 4: one caller
            levels=tuple(int(level) for level in fields.numbers("levels")) if "levels" in fields.data else (),
        )

    def applied_to(self, settings: Settings) -> Settings:
        """The session's settings with this pair's own choices: what the engine and the replicas use."""
        return dataclasses.replace(
            settings,
            processes=self.processes,
            confidence=self.confidence,
            mode=self.mode,
            concurrency=self.concurrency,
        )
