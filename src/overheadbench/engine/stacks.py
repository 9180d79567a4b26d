"""Whole call stacks: how a profile keys its costs, and how a flame graph of an overhead is made.

A profile (:data:`~overheadbench.engine.profiles.Profile`) keys each cost by the call stack it
was spent in, from the side's own callable down to the function running (``tests.test_x:test_pair.
<locals>.<lambda>@12;framework:outer;framework:middle;app:work``): the frames are
``module:qualname`` names joined by ``;``, outermost first, as the folded format of flamegraph.pl,
speedscope and inferno has them. Why whole stacks: a ``module;function`` graph showed *which*
functions add cost but not *through which* layer they are reached, and a middleware stack's
layers all call the same inner functions.

What a frame adds is read per function, as the explanation's rows are
(:func:`~overheadbench.engine.attribution.explain`): the framework path and the baseline call
shared work through different stacks (a pair's two lambdas, a layer between them), so a stack of
one side has no twin in the other. Each function's added cost is shared out among the framework
side's stacks ending in it, in proportion to what each spent there (:func:`apportioned`): the
stacks' added costs sum to the rows', and work both sides share adds nothing wherever it sits.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

SEPARATOR = ";"
"""Between two frames of a stack (the folded format's)."""


def stack_path(names: Iterable[str]) -> str:
    """The frames (outermost first) as one stack: ``;`` (the separator) and spaces (the folded
    format's count follows one) taken out of each name."""
    return SEPARATOR.join(name.replace(SEPARATOR, ",").replace(" ", "_") for name in names)


def leaf(path: str) -> str:
    """The function a stack ends in: where its cost was spent."""
    return path.rpartition(SEPARATOR)[2]


def by_function(profile: Mapping[str, float]) -> dict[str, float]:
    """A stack-keyed profile's cost per function (each stack's cost goes to its last frame)."""
    functions: dict[str, float] = {}
    for path, cost in profile.items():
        function = leaf(path)
        functions[function] = functions.get(function, 0.0) + cost
    return functions


@dataclass(frozen=True)
class StackCost:
    """One stack of the framework side: what it costs per call, and what of that is added."""

    path: str
    """The frames, outermost first, ``;`` between them."""
    cost: float
    """The framework side's cost per call spent in this stack's last frame (instructions or seconds)."""
    added: float
    """Its share of its function's added cost per call (negative: the function costs less than on the
    baseline side)."""

    def to_json(self) -> list[Any]:
        return [self.path, self.cost, self.added]


def apportioned(framework: Mapping[str, float], calls: int, added: Mapping[str, float]) -> tuple[StackCost, ...]:
    """The framework side's stacks (costs over ``calls`` calls) with each function's ``added`` cost
    per call shared out among the stacks ending in it by what each spent there; costliest first."""
    totals = by_function(framework)
    stacks = [
        StackCost(path, cost / calls, added.get(leaf(path), 0.0) * cost / totals[leaf(path)])
        for path, cost in framework.items()
        if cost > 0 and totals[leaf(path)] > 0
    ]
    return tuple(sorted(stacks, key=lambda stack: -stack.cost))


def folded(stacks: Iterable[StackCost], scale: float) -> str:
    """The added cost as folded stacks (``frame;frame count``, counts ``added * scale`` rounded),
    what flame graph tools read; stacks that add nothing left out."""
    lines = [f"{stack.path} {round(stack.added * scale)}" for stack in stacks if round(stack.added * scale) > 0]
    return "\n".join(lines) + ("\n" if lines else "")
