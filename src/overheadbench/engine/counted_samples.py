"""Count mode's samples: the per-call figures of repeated counted blocks (instructions, allocations), the
harness subtracted; they travel as JSON (from a replica process, in a stored run) and are read back checked.
One process's paired block times are :mod:`.samples`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.jsonio import Fields, ShapeError
from ..core.vocabulary import Counter, Figure, Side

Range = tuple[float, float, float]
"""(median, lowest, highest) over the repeats."""


@dataclass
class CountSamples:
    """Per-call figures of every counted block, the harness subtracted: ``side -> figure -> values``."""

    calls_per_block: int
    """Calls per block counting instructions."""
    baseline: dict[Figure, list[float]] = field(default_factory=dict)
    framework: dict[Figure, list[float]] = field(default_factory=dict)
    counter: Counter = Counter.BYTECODE
    """What the instructions are (files before schema 7 counted bytecode)."""
    allocation_calls: int = 0
    """Calls per block tracing allocations, in their own longer blocks (0: ``calls_per_block``,
    as files before schema 8 traced them)."""

    def __post_init__(self) -> None:
        self.allocation_calls = self.allocation_calls or self.calls_per_block

    def add(self, figures: Sequence[Figure], raw: dict[Side, list[Any]], calls: int) -> None:
        """Take one pass's raw block results (a number or a tuple of numbers per block of
        ``calls`` calls, in the order of ``figures``) and store them per call, minus the harness
        block if any."""
        harness = np.atleast_1d(np.asarray(raw[Side.HARNESS][0], float)) if raw[Side.HARNESS] else 0.0
        for side, store in ((Side.BASELINE, self.baseline), (Side.FRAMEWORK, self.framework)):
            blocks = np.asarray(raw[side], float).reshape(len(raw[side]), -1)
            per_call = (blocks - harness) / calls
            for index, figure in enumerate(figures):
                store[figure] = [float(value) for value in per_call[:, index]]

    def has(self, figure: Figure) -> bool:
        return figure in self.baseline

    def median(self, side: Side, figure: Figure) -> float:
        return float(np.median((self.baseline if side == Side.BASELINE else self.framework)[figure]))

    def repeats(self, figure: Figure) -> int:
        return len(self.baseline[figure])

    def ratio(self, figure: Figure) -> Range:
        """framework / baseline per repeat (each side at least one, so a zero cannot divide)."""
        base = np.maximum(np.asarray(self.baseline[figure]), 1.0)
        return _range(np.maximum(np.asarray(self.framework[figure]), 1.0) / base)

    def difference(self, figure: Figure) -> Range:
        """framework - baseline per repeat."""
        return _range(np.asarray(self.framework[figure]) - np.asarray(self.baseline[figure]))

    def deterministic(self, figure: Figure) -> bool:
        """Whether every repeat of both sides gave one value (the code's count does not move)."""
        return all(len(set(store[figure])) == 1 for store in (self.baseline, self.framework))

    def to_json(self) -> dict[str, Any]:
        return {
            "calls_per_block": self.calls_per_block,
            "allocation_calls": self.allocation_calls,
            "counter": self.counter,
            "baseline": self.baseline,
            "framework": self.framework,
        }

    @classmethod
    def from_json(cls, data: Any, path: str = "counts") -> CountSamples:
        fields = Fields(data, path)
        sides = []
        for side in (Side.BASELINE, Side.FRAMEWORK):
            figures = fields.obj(side)
            assert figures is not None
            # per call less the harness's block: a count may come out a little below zero
            sides.append({_figure(key, figures.path): figures.samples(key, signed=True) for key in figures.data})
        if set(sides[0]) != set(sides[1]) or any(len(sides[0][f]) != len(sides[1][f]) for f in sides[0]):
            raise ShapeError(f"{path}: baseline and framework must have the same figures and repeats")
        counter = fields.choice("counter", Counter, Counter.BYTECODE)
        calls = fields.count("calls_per_block")
        allocation_calls = fields.count("allocation_calls") if "allocation_calls" in data else calls
        return cls(calls, sides[0], sides[1], counter, allocation_calls)


def _figure(key: str, path: str) -> Figure:
    try:
        return Figure(key)
    except ValueError:
        raise ShapeError(f"{path}.{key}: not a counted figure") from None


def _range(values: np.ndarray) -> Range:
    return float(np.median(values)), float(values.min()), float(values.max())
