"""Executed bytecode instructions, counted in this thread while a block runs.

Python 3.12+ counts with ``sys.monitoring`` INSTRUCTION events (one tool id, taken for the
block and given back after); 3.10 and 3.11 with ``sys.settrace`` and ``f_trace_opcodes``.
Either way the count covers everything this thread executes in Python while the block
runs: the callable, what it calls, coroutines it awaits and, when an async callable
suspends, the event loop's own Python code. Instructions of other threads are not counted.

A block has the wall-clock blocks' shape (``block(n) -> count``): the same loop, with the
counter read where the clock was. The harness's own code (that loop, the counter's entry
and exit) is left out of the count, so what is counted is exactly the callable's own
instructions and everything below it: an empty function counts 2 or 3.

Counts are per interpreter version: 3.12's specialising interpreter and 3.11's execute
different bytecode, and the two backends see frames differently (``settrace`` does not
trace a frame that was already running when it was switched on, such as an event loop's
own loop). Compare counts within one Python version only.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Awaitable, Callable
from functools import partial
from types import CodeType, FrameType
from typing import Any

from ..core.errors import InstrumentError
from ..core.vocabulary import Figure
from ..engine.profiles import Profile
from ..engine.samples import Kind
from . import walltime
from .functions import MAX_CALLS as MAX_PROFILED_CALLS, Stack, named_stacks, stack_of

_FREE_TOOL_IDS = (2, 3, 4, 5)
"""sys.monitoring tool ids tried in turn (0 is debuggers', 1 coverage's)."""


class CounterBusy(InstrumentError):
    """No sys.monitoring tool id is free (other tools hold them all)."""


class InstructionCounter:
    """Counts instructions while entered (``with counter:``), except in the harness's code.

    ``read`` is a C-level callable (no bytecode of its own) returning the running total.
    ``by_stack``, when given, gets each call stack's own instructions too, the stack walked up to
    the harness (an explanation's exact profile, :mod:`.functions`); walked again only when the
    executing frame changes, since a frame's callers do not change while it runs.
    """

    def __init__(self, by_stack: dict[Stack, int] | None = None) -> None:
        self.count = 0
        self.by_stack = by_stack
        self._last: tuple[FrameType | None, Stack] = (None, ())
        """The frame the last instruction ran in, and its stack (held, so that its id is not reused)."""
        self.read: Callable[[], int] = partial(getattr, self, "count")
        self._skip: set[int] = {id(code) for code in _own_codes()}
        self._thread = threading.get_ident()

    def skip(self, code: CodeType) -> None:
        """Leave ``code`` (a harness loop) out of the count."""
        self._skip.add(id(code))

    def __enter__(self) -> InstructionCounter:
        self._thread = threading.get_ident()
        self._start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop()
        self._last = (None, ())

    def _counted_in(self, frame: FrameType) -> None:
        """One instruction of ``frame`` counted to its stack."""
        if frame is not self._last[0]:
            self._last = (frame, stack_of(frame, self._skip))
        stack, by_stack = self._last[1], self.by_stack
        if by_stack is not None:
            by_stack[stack] = by_stack.get(stack, 0) + 1

    if sys.version_info >= (3, 12):
        _tool: int = -1

        def _start(self) -> None:
            monitoring = sys.monitoring
            self._tool = next((tool for tool in _FREE_TOOL_IDS if monitoring.get_tool(tool) is None), -1)
            if self._tool < 0:
                raise CounterBusy("count mode needs a free sys.monitoring tool id (2-5); other tools hold them all")
            monitoring.use_tool_id(self._tool, "overheadbench")
            thread, get_ident, skip, disable = self._thread, threading.get_ident, self._skip, monitoring.DISABLE
            counted_in, getframe, by_stack = self._counted_in, sys._getframe, self.by_stack is not None

            def on_instruction(code: CodeType, offset: int) -> Any:
                if id(code) in skip:
                    return disable  # never called back for this harness location again
                if get_ident() == thread:
                    self.count += 1
                    if by_stack:
                        counted_in(getframe(1))  # the frame executing ``code``
                return None

            monitoring.register_callback(self._tool, monitoring.events.INSTRUCTION, on_instruction)
            monitoring.set_events(self._tool, monitoring.events.INSTRUCTION)

        def _stop(self) -> None:
            monitoring = sys.monitoring
            monitoring.set_events(self._tool, 0)
            monitoring.register_callback(self._tool, monitoring.events.INSTRUCTION, None)
            monitoring.free_tool_id(self._tool)
    else:
        _previous: Any = None

        def _start(self) -> None:
            skip, counted_in, by_stack = self._skip, self._counted_in, self.by_stack is not None

            def on_opcode(frame: FrameType, event: str, arg: Any) -> Any:
                if event == "opcode":
                    self.count += 1
                    if by_stack:
                        counted_in(frame)
                return on_opcode

            def on_call(frame: FrameType, event: str, arg: Any) -> Any:
                if id(frame.f_code) in skip:
                    return None
                frame.f_trace_opcodes = True
                frame.f_trace_lines = False
                return on_opcode

            self._previous = sys.gettrace()
            sys.settrace(on_call)

        def _stop(self) -> None:
            sys.settrace(self._previous)


def _own_codes() -> list[CodeType]:
    return [
        InstructionCounter.__enter__.__code__,
        InstructionCounter.__exit__.__code__,
        InstructionCounter._start.__code__,
        InstructionCounter._stop.__code__,
    ]


def sync_block(fn: Callable[[], Any], counter: InstructionCounter) -> walltime.SyncBlock:
    """A block that calls ``fn`` ``n`` times and returns the instructions executed below it."""
    timed = walltime.sync_block(fn, counter.read)

    def block(n: int) -> int:
        with counter:
            return timed(n)

    counter.skip(timed.__code__)
    counter.skip(block.__code__)
    return block


def async_block(fn: Callable[[], Awaitable[Any]], counter: InstructionCounter) -> walltime.AsyncBlock:
    """A block that awaits ``fn()`` ``n`` times in the running loop and returns the
    instructions executed below it (the event loop's included while ``fn`` waits)."""
    timed = walltime.async_block(fn, counter.read)

    async def block(n: int) -> int:
        with counter:
            return await timed(n)

    counter.skip(timed.__code__)
    counter.skip(block.__code__)
    return block


class InstructionCount:
    """The count-mode instrument: blocks return the instructions executed below the callable."""

    figures: tuple[Figure, ...] = (Figure.INSTRUCTIONS,)
    subtract_harness: bool = False
    """The counter leaves the harness's own code out already."""
    paced: bool = False

    def __init__(self) -> None:
        self.counter = InstructionCounter()

    def block(self, fn: Callable[[], Any], kind: Kind) -> walltime.SyncBlock | walltime.AsyncBlock:
        return sync_block(fn, self.counter) if kind == Kind.SYNC else async_block(fn, self.counter)

    def close(self) -> None:
        """Nothing held between blocks."""


class InstructionsByFunction:
    """An explanation's exact profile: each function's own bytecode instructions per call
    (:mod:`.functions`), the same on every run, blind to compiled code.

    A block counts a few instructions once whatever its length (monitoring switched on
    re-instruments the code: 29 more in one 10-iteration loop's function), so the profile is a
    block of ``2n`` calls less a block of ``n``: ``n`` calls' worth, exactly."""

    unit = "instructions"
    exact = True
    note = "bytecode instructions counted per function (compiled code is not seen)"

    def sync(self, fn: Callable[[], Any], budget_s: float) -> tuple[Profile, int]:
        by_stack: dict[Stack, int] = {}
        block = sync_block(fn, InstructionCounter(by_stack))
        started = time.perf_counter()
        block(1)  # the first counted call runs the code as instrumented for the first time
        calls = _calls_within(budget_s, time.perf_counter() - started)
        by_stack.clear()
        block(calls)
        once = dict(by_stack)
        by_stack.clear()
        block(2 * calls)
        return _counted(by_stack, once), calls

    async def asynchronous(self, fn: Callable[[], Awaitable[Any]], budget_s: float) -> tuple[Profile, int]:
        by_stack: dict[Stack, int] = {}
        block = async_block(fn, InstructionCounter(by_stack))
        started = time.perf_counter()
        await block(1)
        calls = _calls_within(budget_s, time.perf_counter() - started)
        by_stack.clear()
        await block(calls)
        once = dict(by_stack)
        by_stack.clear()
        await block(2 * calls)
        return _counted(by_stack, once), calls


def _calls_within(budget_s: float, one_s: float) -> int:
    """Calls per block: the two blocks (``n`` and ``2n`` calls) last about ``budget_s``. A block of
    fewer than ``PRIMED_BELOW`` calls makes one more call first, outside the counted loop but not
    outside the per-function count (:func:`~.walltime.sync_block`): ``n`` is chosen so that both
    blocks make it or neither does, and the difference is ``n`` calls exactly (a slow call's
    profile read 12,009 instructions per call for 14,010 when only the short block made it)."""
    calls = max(1, min(MAX_PROFILED_CALLS, int(budget_s / 3 / max(one_s, 1e-9))))
    return min(calls, (walltime.PRIMED_BELOW - 1) // 2) if calls < walltime.PRIMED_BELOW else calls


def _counted(twice: dict[Stack, int], once: dict[Stack, int]) -> Profile:
    """Each stack's instructions in the longer block beyond the shorter one, named."""
    return named_stacks({stack: float(max(0, twice.get(stack, 0) - once.get(stack, 0))) for stack in {*twice, *once}})
