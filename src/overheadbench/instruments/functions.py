"""A callable's cost function by function: the profiles an explanation is made of.

Two profilers with one shape (:class:`~overheadbench.engine.profiles.Profiler`): each runs
one side's callable for about a time budget and returns what every function cost over all those
calls (:data:`~overheadbench.engine.profiles.Profile`) and how many calls ran.

* :class:`~.instructions.InstructionsByFunction`: executed bytecode instructions per function,
  counted as count mode counts them (the harness left out): exact, the same on every run, and
  blind to compiled code.
* :class:`SampledTime`: time per function, sampled (a signal every ``SAMPLE_S``). A
  deterministic profiler was tried first: ``cProfile`` pays at every call and return, and even
  with that cost measured on an empty function and taken off, the five-layer stack's explained
  net read 2.6 times its measured overhead and a layer of many small calls 4 times its own pair's
  (validation/EXPLAIN.md). Sampling costs each call nothing; a sample lands where
  the interpreter next looks for signals, so time spent in C is charged to the Python function
  running then. Where signals cannot be used (Windows, a thread other than the main one) the
  time-mode explanation is the counted one.

A function is named ``module:qualname`` (``framework:make_layer.<locals>.run``); a lambda
keeps its line (``tests.test_x:test_pair.<locals>.<lambda>@12``), since a pair's two sides are
often two lambdas of one test; a built-in is ``builtins:`` and its name. Costs are kept by whole
call stack, from the side's callable down (:func:`named_stacks`): the flame graph's.
"""

from __future__ import annotations

import gc
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from types import CodeType, FrameType, FunctionType
from typing import Any

from ..core.timeouts import check_silence, lent, progressed
from ..engine.profiles import Profile
from ..engine.stacks import stack_path

MAX_CALLS = 1_000_000
"""At most this many calls of a side, however fast."""
WAITS_PER_SAMPLE = 0.5
"""Voluntary switches per sample above which the side waited (its time is wall time, not CPU)."""
SAMPLE_S = 100e-6
"""Time between two samples: 2,500 samples in a side's 0.25 s, a function's share read to about 1%."""


def function_name(code: CodeType | str, modules: dict[str, str], qualnames: Mapping[CodeType, str] = {}) -> str:
    """``module:qualname`` of a code object (``modules``: file -> module name; ``qualnames``: where
    code objects have no ``co_qualname``, Python 3.10, each live function's: :func:`live_qualnames`),
    or a built-in's."""
    if isinstance(code, str):
        return "builtins:" + code.strip("<>").removeprefix("built-in method ").removeprefix("built-in function ")
    module = modules.get(code.co_filename) or Path(code.co_filename).stem
    name = getattr(code, "co_qualname", None) or qualnames.get(code, code.co_name)
    return f"{module}:{name}@{code.co_firstlineno}" if code.co_name == "<lambda>" else f"{module}:{name}"


Stack = tuple[CodeType, ...]
"""A call stack as its code objects, innermost first (as a frame's ``f_back`` walks it)."""


def live_qualnames() -> dict[CodeType, str]:
    """Each live function's qualified name by its code (one pass over the heap): Python 3.10's code
    objects have no ``co_qualname``, and by ``co_name`` alone every layer's inner ``run`` was one row."""
    if sys.version_info >= (3, 11):
        return {}
    return {found.__code__: found.__qualname__ for found in gc.get_objects() if isinstance(found, FunctionType)}


def named_stacks(costs: dict[Stack, float]) -> Profile:
    """Each stack's cost under its name (frames outermost first, :mod:`overheadbench.engine.stacks`)."""
    modules, qualnames, profile = loaded_modules(), live_qualnames(), dict[str, float]()
    for stack, cost in costs.items():
        path = stack_path(function_name(code, modules, qualnames) for code in reversed(stack))
        profile[path] = profile.get(path, 0.0) + cost
    return profile


def stack_of(frame: FrameType | None, harness: set[int]) -> Stack:
    """The stack from ``frame`` up to (not into) the first frame of ``harness``'s code ids (the
    loop calling the side); where no harness frame is above (an event loop's own code, running
    the side's tasks), the frame's function alone."""
    codes: list[CodeType] = []
    while frame is not None and id(frame.f_code) not in harness:
        codes.append(frame.f_code)
        frame = frame.f_back
    return tuple(codes) if frame is not None else tuple(codes[:1])


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
            progressed()  # a block of the profile ran: the pair is not silent


class SampledTime:
    """Approximate: each function's time, sampled (see the module docstring)."""

    unit = "seconds"
    exact = False
    note = (
        f"time per function, sampled every {SAMPLE_S * 1e6:.0f} µs (a sample lands where the interpreter next "
        f"looks for signals: time in C goes to the Python function running then): approximate"
    )

    @staticmethod
    def available() -> bool:
        """Sampling needs ``setitimer`` (not on Windows) and this process's main thread (signals go there)."""
        return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()

    def sync(self, fn: Callable[[], Any], budget_s: float) -> tuple[Profile, int]:
        def run(n: int) -> None:
            for _ in range(n):
                fn()

        blocks = Doubling(budget_s)
        with _Sampling({run.__code__}) as sampling:
            for calls in blocks:
                run(calls)
        return sampling.profile(), blocks.calls

    async def asynchronous(self, fn: Callable[[], Awaitable[Any]], budget_s: float) -> tuple[Profile, int]:
        async def run(n: int) -> None:
            for _ in range(n):
                await fn()

        blocks = Doubling(budget_s)
        with _Sampling({run.__code__}) as sampling:
            for calls in blocks:
                await run(calls)
        return sampling.profile(), blocks.calls


def _waits() -> int:
    """This thread's voluntary context switches so far (it waited: I/O, a sleep, a lock); 0 where unknown."""
    try:
        import resource  # not on Windows, where sampling is not used either
    except ImportError:
        return 0
    try:
        return resource.getrusage(resource.RUSAGE_THREAD).ru_nvcsw
    except (AttributeError, OSError):
        return 0


class _Sampling:
    """A wall-clock timer (``SIGALRM`` every ``SAMPLE_S``: the process's CPU-time timer ticks only every
    few milliseconds, 124 samples in 0.5 s here, against 4,995) while entered; each signal counts one
    sample for the stack the main thread is running when its handler runs (up to ``harness``, the
    loop calling the side: :func:`stack_of`). The samples' shares
    are shares of the thread's CPU time, as a pair that never waits is read (beside two busy loops
    the wall clock charged the five-layer stack's functions 2-3 times their quiet figures), or of the
    wall clock where the calls waited. A pair's silence limit is
    a ``SIGALRM`` timer too (:mod:`overheadbench.core.timeouts`): it is lent to the sampler, which asks
    at each sample whether the pair has been silent too long (a callable that blocks only while
    profiled ends there), and set again, with what is left of the silence, after."""

    def __init__(self, harness: set[CodeType]) -> None:
        self.harness = harness
        self._stop_at = {id(code) for code in harness}
        self.samples: dict[Stack, int] = {}
        self.elapsed_s = 0.0
        self._previous: Any = None
        self._lent = lent()
        self._started = self._cpu = 0.0
        self._waits = 0
        self._stopped = True

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self._stopped:
            return  # a tick handled after the timer was stopped (a signal is handled late)
        if frame is not None:
            stack = stack_of(frame, self._stop_at)
            self.samples[stack] = self.samples.get(stack, 0) + 1
        check_silence(before=self._stop)

    def _stop(self) -> None:
        self._stopped = True
        signal.setitimer(signal.ITIMER_REAL, 0, 0)

    def __enter__(self) -> _Sampling:
        self._stopped = False
        self._lent.__enter__()
        try:
            self._previous = signal.signal(signal.SIGALRM, self._on_signal)
        except BaseException as error:  # an interrupt handled as the handler changed: give the signal back
            self._lent.__exit__(type(error), error, error.__traceback__)
            raise
        self._started, self._cpu, self._waits = time.perf_counter(), time.thread_time(), _waits()
        signal.setitimer(signal.ITIMER_REAL, SAMPLE_S, SAMPLE_S)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop()
        wall, cpu = time.perf_counter() - self._started, time.thread_time() - self._cpu
        waited = _waits() - self._waits > WAITS_PER_SAMPLE * sum(self.samples.values())
        self.elapsed_s = wall if waited else cpu  # the time per call the pair itself reads (engine.sampling)
        try:
            signal.signal(signal.SIGALRM, self._previous)
        finally:  # the silence limit goes on, and strikes at once if it ran out meanwhile
            self._lent.__exit__(*exc)

    def profile(self) -> Profile:
        """Each stack's share of the samples as a share of the time sampled (seconds), samples in the
        harness's loops and the sampler's own code (a signal handled while the last one's stack was
        walked) left out: their time stays in the whole."""
        # its own handler too
        sampler = (_Sampling.__enter__, _Sampling.__exit__, _Sampling._on_signal, _Sampling._stop, check_silence)
        loops = (Doubling.__iter__, SampledTime.sync, SampledTime.asynchronous, progressed, stack_of)
        own = {*self.harness, *(function.__code__ for function in (*sampler, *loops))}
        total = sum(self.samples.values()) or 1
        kept = {stack: count for stack, count in self.samples.items() if stack and stack[0] not in own}
        return named_stacks({stack: count / total * self.elapsed_s for stack, count in kept.items()})
