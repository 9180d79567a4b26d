"""A callable's cost function by function: the profiles an explanation is made of.

Two profilers with one shape (:class:`~overheadbench.engine.attribution.Profiler`): each runs
one side's callable for about a time budget and returns what every function cost over all those
calls (:data:`~overheadbench.engine.attribution.Profile`) and how many calls ran.

* :class:`~.instructions.InstructionsByFunction`: executed bytecode instructions per function,
  counted as count mode counts them (the harness left out): exact, the same on every run, and
  blind to compiled code.
* :class:`SelfTimeByFunction`: self time per function under ``cProfile`` (its "inline" time).
  A deterministic profiler pays a cost at every call and return, which lands on small functions
  most: it is measured once per process on an empty function (:func:`profiler_cost`) and taken
  off every function, per call it received and per call it made; what remains is approximate.

A function is named ``module:qualname`` (``framework:make_layer.<locals>.run``); a lambda
keeps its line (``tests.test_x:test_pair.<locals>.<lambda>@12``), since a pair's two sides are
often two lambdas of one test; a built-in is ``builtins:`` and what the profiler calls it.
"""

from __future__ import annotations

import cProfile
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from functools import cache
from pathlib import Path
from types import CodeType
from typing import Any

from ..engine.attribution import FunctionCost, Profile

MAX_CALLS = 1_000_000
"""At most this many calls of a side, however fast."""
CALIBRATION_CALLS = 20_000
CALIBRATION_REPEATS = 5


def function_name(code: CodeType | str, modules: dict[str, str]) -> str:
    """``module:qualname`` of a code object (``modules``: file -> module name), or a built-in's."""
    if isinstance(code, str):
        return "builtins:" + code.strip("<>").removeprefix("built-in method ").removeprefix("built-in function ")
    module = modules.get(code.co_filename) or Path(code.co_filename).stem
    name = getattr(code, "co_qualname", code.co_name)
    return f"{module}:{name}@{code.co_firstlineno}" if code.co_name == "<lambda>" else f"{module}:{name}"


def loaded_modules() -> dict[str, str]:
    """Each loaded module's file and its name: a function's module is the file its code is in."""
    return {
        path: name
        for name, module in list(sys.modules.items())
        if isinstance(path := getattr(module, "__file__", None), str)
    }


class Doubling:
    """A side's calls in blocks of 1, 2, 4... until ``budget_s`` has passed since the first (at least
    one call, at most ``MAX_CALLS``): the one stopping rule of a profile, sync or async. ``calls``: how
    many were handed out."""

    def __init__(self, budget_s: float) -> None:
        self.budget_s = budget_s
        self.calls = 0

    def __iter__(self) -> Iterator[int]:
        started, block = time.perf_counter(), 1
        while self.calls == 0 or (time.perf_counter() - started < self.budget_s and self.calls < MAX_CALLS):
            yield block
            self.calls += block
            block *= 2


class SelfTimeByFunction:
    """Approximate: each function's self time under cProfile, its cost taken off (see the module docstring)."""

    unit = "seconds"
    exact = False

    @property
    def note(self) -> str:
        callee, caller = profiler_cost()
        return (
            f"self time per function under cProfile, its cost taken off ({callee * 1e9:.0f} ns per call received, "
            f"{caller * 1e9:.0f} ns per call made, measured on an empty function): approximate"
        )

    def sync(self, fn: Callable[[], Any], budget_s: float) -> tuple[Profile, int]:
        profiler = cProfile.Profile()

        def run(n: int) -> None:
            profiler.enable()
            for _ in range(n):
                fn()
            profiler.disable()

        blocks = Doubling(budget_s)
        for calls in blocks:
            run(calls)
        return _self_times(profiler, {run.__code__}), blocks.calls

    async def asynchronous(self, fn: Callable[[], Awaitable[Any]], budget_s: float) -> tuple[Profile, int]:
        profiler = cProfile.Profile()

        async def run(n: int) -> None:
            profiler.enable()
            for _ in range(n):
                await fn()
            profiler.disable()

        blocks = Doubling(budget_s)
        for calls in blocks:
            await run(calls)
        return _self_times(profiler, {run.__code__}), blocks.calls


def _self_times(profiler: cProfile.Profile, harness: set[CodeType]) -> Profile:
    """Each function's inline time, the profiler's cost per call received and made taken off
    (never below zero); the harness's loop and the profiler's own switches left out."""
    callee, caller = profiler_cost()
    modules, profile = loaded_modules(), dict[str, FunctionCost]()
    for entry in profiler.getstats():
        code = entry.code
        if code in harness or (isinstance(code, str) and "_lsprof" in code):
            continue
        made = sum(sub.callcount for sub in entry.calls or ())
        cost = max(0.0, entry.inlinetime - callee * entry.callcount - caller * made)
        where = function_name(code, modules)
        known = profile.get(where)
        profile[where] = FunctionCost(
            entry.callcount + (known.calls if known else 0), cost + (known.cost if known else 0)
        )
    return profile


def _empty() -> None:
    """Calibration's callee: its body costs next to nothing."""


def _calls(n: int) -> None:
    for _ in range(n):
        _empty()


@cache
def profiler_cost() -> tuple[float, float]:
    """cProfile's cost per call in seconds, as it lands in the profile: on the function called
    (an empty function's inline time per call) and on its caller (the calling loop's inline time
    per call beyond the whole loop's unprofiled time per call); medians of a few repeats."""
    callee, caller = [], []
    for _ in range(CALIBRATION_REPEATS):
        started = time.perf_counter()
        _calls(CALIBRATION_CALLS)
        plain = (time.perf_counter() - started) / CALIBRATION_CALLS
        profiler = cProfile.Profile()
        profiler.enable()
        _calls(CALIBRATION_CALLS)
        profiler.disable()
        inline = {entry.code: entry.inlinetime for entry in profiler.getstats()}
        callee.append(inline.get(_empty.__code__, 0.0) / CALIBRATION_CALLS)
        caller.append(inline.get(_calls.__code__, 0.0) / CALIBRATION_CALLS - plain)
    return max(0.0, statistics.median(callee)), max(0.0, statistics.median(caller))
