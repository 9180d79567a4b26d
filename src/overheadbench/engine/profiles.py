"""A side's profile, function by function (:class:`Profiled`: both sides' call stacks and their costs over the
calls run, with each function's spread over the rounds), and what makes one (:class:`Profiler`: sampled time or
counted bytecode, :mod:`overheadbench.instruments.functions`). What the profiles say of a pair, framework minus
baseline, is :mod:`.attribution`'s.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

import numpy as np

from .stacks import by_function

Profile = Mapping[str, float]
"""A side's profile: each call stack (``module:qualname`` frames, outermost first, ``;`` between:
:mod:`overheadbench.engine.stacks`) and the cost spent in its last frame over all the calls run
(instructions or seconds). How often each ran is not kept: sampled time cannot know it, and the
counted profile charges instructions to the function executing them, not calls to it."""


@dataclass(frozen=True)
class Profiled:
    """A pair's two profiles, each over its own calls: what a place's replica sends back when the
    controller explains a change between places (:mod:`overheadbench.replicas.messages`)."""

    baseline: Profile
    baseline_calls: int
    framework: Profile
    framework_calls: int
    spread: Mapping[str, float] = field(default_factory=dict)
    """Per function, the variance of its added cost per call (:meth:`per_call`) as a mean over the
    profile's rounds (sampled time; empty: exact, or one round)."""

    @classmethod
    def merged(cls, rounds: Sequence[Profiled]) -> Profiled:
        """The rounds of a paired profile as one: costs and calls summed, and each function's spread
        over the rounds (the variance of the mean of its per-round added cost)."""
        if len(rounds) == 1:
            return rounds[0]

        def summed(side: str) -> dict[str, float]:
            total: dict[str, float] = {}
            for profiled in rounds:
                for where, cost in getattr(profiled, side).items():
                    total[where] = total.get(where, 0.0) + cost
            return total

        functions = set().union(*(profiled.functions() for profiled in rounds))
        spread = {
            where: float(np.var([profiled.per_call(where) for profiled in rounds], ddof=1)) / len(rounds)
            for where in functions
        }
        baseline_calls = sum(profiled.baseline_calls for profiled in rounds)
        framework_calls = sum(profiled.framework_calls for profiled in rounds)
        return cls(summed("baseline"), baseline_calls, summed("framework"), framework_calls, spread)

    @property
    def calls(self) -> tuple[int, int]:
        return self.baseline_calls, self.framework_calls

    @cached_property
    def _by_function(self) -> tuple[dict[str, float], dict[str, float]]:
        """Each side's cost per function (its stacks' costs by the function they end in)."""
        return by_function(self.baseline), by_function(self.framework)

    @property
    def baseline_per_call(self) -> float:
        """The baseline's whole profiled cost per call: what a place's profile is normalised by."""
        return sum(self.baseline.values()) / self.baseline_calls

    def scaled(self, factor: float) -> Profiled:
        """Every cost times ``factor`` (its spread times its square)."""
        return Profiled(
            {where: cost * factor for where, cost in self.baseline.items()},
            self.baseline_calls,
            {where: cost * factor for where, cost in self.framework.items()},
            self.framework_calls,
            {where: variance * factor**2 for where, variance in self.spread.items()},
        )

    def per_call(self, where: str) -> float:
        """What the framework path adds in the function ``where`` per call beyond the baseline."""
        baseline, framework = self._by_function
        return framework.get(where, 0.0) / self.framework_calls - baseline.get(where, 0.0) / self.baseline_calls

    def functions(self) -> set[str]:
        baseline, framework = self._by_function
        return {*baseline, *framework}

    def to_json(self) -> dict[str, Any]:
        return {
            "baseline": dict(self.baseline),
            "baseline_calls": self.baseline_calls,
            "framework": dict(self.framework),
            "framework_calls": self.framework_calls,
            "spread": dict(self.spread),
        }

    @classmethod
    def from_json(cls, data: Any) -> Profiled:
        def side(name: str) -> Profile:
            return {where: float(cost) for where, cost in data.get(name, {}).items()}

        return cls(
            side("baseline"),
            int(data["baseline_calls"]),
            side("framework"),
            int(data["framework_calls"]),
            side("spread"),
        )


class Profiler(Protocol):
    @property
    def unit(self) -> str: ...

    @property
    def exact(self) -> bool: ...

    @property
    def note(self) -> str:
        """How the figures were made, for the reader."""
        ...

    def sync(self, fn: Callable[[], Any], budget_s: float) -> tuple[Profile, int]: ...

    async def asynchronous(self, fn: Callable[[], Awaitable[Any]], budget_s: float) -> tuple[Profile, int]: ...
