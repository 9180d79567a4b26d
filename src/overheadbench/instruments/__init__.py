"""What a block measures: one interface, three instruments.

An instrument turns a zero-argument callable into a *block*: ``block(n)`` runs the callable
``n`` times (awaiting it in the running loop for an ``async def`` one) and returns what the
whole block cost. The sampling plans ask for blocks by side and never see the instrument,
so one engine serves them all:

* :class:`~.walltime.WallClock`: nanoseconds (time mode, replicated, estimated);
* :class:`~.instructions.InstructionCount`: executed bytecode instructions (count mode);
* :class:`~.allocations.AllocationTrace`: peak bytes, blocks and bytes kept (tracemalloc).

An instrument's own failure raises :class:`~overheadbench.core.errors.InstrumentError`, which
the drivers never blame on the user's callable.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any, Protocol

from ..core.vocabulary import Figure, Side
from ..engine.samples import Kind

Block = Callable[[int], Any] | Callable[[int], Awaitable[Any]]


@dataclass(frozen=True)
class Stage:
    """One instrument's pass over a pair: a plan (asking for blocks by side and calls), the blocks
    it asks for, and where its result goes."""

    plan: Generator[tuple[Side, int], Any, Any]
    blocks: dict[Side, Block]
    keep: Callable[[Any], None]


class Instrument(Protocol):
    @property
    def figures(self) -> tuple[Figure, ...]:
        """What each number of a block's result is, in order (empty: one cost in nanoseconds)."""
        ...

    @property
    def subtract_harness(self) -> bool:
        """Whether the counted plan measures an empty callable once, to subtract from every block."""
        ...

    @property
    def paced(self) -> bool:
        """Whether its blocks are sized by the calls' pace on the wall clock first (the allocation
        tracer slows every call: its blocks hold as many calls as a set time allows)."""
        ...

    def block(self, fn: Callable[[], Any], kind: Kind) -> Block:
        """A block running ``fn`` (sync or async, as ``kind`` says)."""
        ...

    def close(self) -> None:
        """Release what the blocks held (the concurrent callers' threads)."""
        ...
