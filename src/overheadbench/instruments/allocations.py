"""Memory a block's calls allocate, as ``tracemalloc`` sees it.

tracemalloc follows live memory blocks: it sees each allocation while it is alive and
forgets it when freed, and it keeps a high-water mark. So per call it can say exactly:

* ``peak_bytes``: the most extra memory the call held at once (its high-water mark above
  where it started), the figure pyperf's ``--tracemalloc`` and pytest-memray's
  ``limit_memory`` report; a block's is its median call's (:func:`typical_peak`);
* ``kept_blocks`` / ``kept_bytes``: the memory blocks and bytes the call allocated that
  are still allocated after it returns (a cache filling, a list growing: a leak per call).
  Code that holds bounded state (a buffer pending its flush, an LRU cache, an interpreter
  cache) keeps some blocks in one block of calls and frees them in the next; so kept memory
  is read over blocks of many calls, and a block's that bounded state explains reads as
  none (:func:`~overheadbench.engine.counting.bounded`).

It cannot count *every* allocation (a temporary freed a moment later leaves no trace
but its share of the peak), and objects served from CPython's free lists (small tuples,
floats, frames) never reach the allocator at all. Gross counts in the sense of Go's
``allocs/op`` would need a C allocator hook (memray has one).

Tracing is switched on only for the block (unless something else already traces, which
is then left as it was), so only the block's own allocations are traced. The harness's
own bookkeeping is measured with an empty callable and subtracted, as for time.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

from ..core.vocabulary import Figure
from ..engine.counting import bounded
from ..engine.samples import Kind


class Allocations(NamedTuple):
    """A block's allocation figures, summed over its calls (bytes and blocks; the peak as the
    median call's times the calls)."""

    peak_bytes: int
    kept_blocks: int
    kept_bytes: int


_BALLAST_BYTES = 1024


class _Tracing:
    """tracemalloc around one block, and the blocks and bytes the block kept (``kept``)."""

    def __enter__(self) -> _Tracing:
        # A full collection empties CPython's free lists, so every block starts from the same
        # state; with the heap frozen first, it only looks at objects made since (fast).
        self.frozen = gc.get_freeze_count() == 0
        if self.frozen:
            gc.freeze()
        gc.collect()
        self.started = not tracemalloc.is_tracing()
        if self.started:
            tracemalloc.start()
        # Traced memory under 257 bytes would make the harness's reads small cached ints
        # (no allocation) at some times and not others; with this ballast they always allocate.
        self.ballast = bytes(_BALLAST_BYTES)
        return self

    def settled(self) -> None:
        """Called after the block's settling calls: what the block keeps is counted from here.
        State the calls replace (``self.total += x`` makes a new float; a full LRU cache evicts
        an entry a call) then already holds traced objects, whose replacement frees them:
        without settling, every untraced object replaced would look like one block kept (a
        64-entry ``lru_cache`` read as 130 blocks kept per block, however long)."""
        gc.collect()
        self.before = tracemalloc.take_snapshot()

    def __exit__(self, error_type: type[BaseException] | None, *exc: object) -> None:
        try:
            if error_type is None:  # a block cut short (the callable raised, a time limit) keeps no count
                gc.collect()  # what sits on a free list, or is cyclic garbage, was not kept by the calls
                kept = _own_excluded(tracemalloc.take_snapshot()).compare_to(_own_excluded(self.before), "traceback")
                self.kept = bounded(sum(d.count_diff for d in kept), sum(d.size_diff for d in kept))
        finally:
            if self.started:
                tracemalloc.stop()
            if self.frozen:
                gc.unfreeze()


def _own_excluded(snapshot: tracemalloc.Snapshot) -> tracemalloc.Snapshot:
    """The snapshot without blocks allocated by this module's bookkeeping or tracemalloc's own."""
    return snapshot.filter_traces(
        [tracemalloc.Filter(False, __file__), tracemalloc.Filter(False, tracemalloc.__file__)]
    )


# In both loops nothing of the harness allocates between ``reset_peak()`` and the read after
# the call: the start is read (and its int made) before the peak is reset.


def sync_block(fn: Callable[[], Any]) -> Callable[[int], Allocations]:
    """A block that calls ``fn`` ``n`` times to settle, then ``n`` times counted, under
    tracemalloc, and returns the allocations of the counted ``n`` calls."""
    traced, reset_peak = tracemalloc.get_traced_memory, tracemalloc.reset_peak

    def block(n: int) -> Allocations:
        calls = range(n)
        peaks = [0] * n  # filled in place: no list growth between the calls
        with _Tracing() as tracing:
            for _ in calls:  # settling: as many calls as are counted
                fn()
            tracing.settled()
            for index in calls:
                start = traced()[0]
                reset_peak()
                fn()
                peaks[index] = traced()[1] - start
        return Allocations(typical_peak(peaks), *tracing.kept)

    return block


def async_block(fn: Callable[[], Awaitable[Any]]) -> Callable[[int], Awaitable[Allocations]]:
    """Like :func:`sync_block`, awaiting ``fn()`` in the running loop."""
    traced, reset_peak = tracemalloc.get_traced_memory, tracemalloc.reset_peak

    async def block(n: int) -> Allocations:
        calls = range(n)
        peaks = [0] * n
        with _Tracing() as tracing:
            for _ in calls:  # settling: as many calls as are counted
                await fn()
            tracing.settled()
            for index in calls:
                start = traced()[0]
                reset_peak()
                await fn()
                peaks[index] = traced()[1] - start
        return Allocations(typical_peak(peaks), *tracing.kept)

    return block


def typical_peak(peaks: list[int]) -> int:
    """The block's peak as a sum over its calls: the median call's peak, times the calls. A call
    now and then peaks higher on the interpreter's own business (a cache or free list that
    grows once: one call in 4,096 at +28 B on CPython 3.10 and 3.13, at a different call in each
    process), which a plain sum carried into the figure as a fraction of a byte that changed
    from session to session; the median call is the same every time."""
    return sorted(peaks)[len(peaks) // 2] * len(peaks) if peaks else 0


class AllocationTrace:
    """The allocation instrument (both modes): blocks return :class:`Allocations`."""

    figures: tuple[Figure, ...] = (Figure.PEAK_BYTES, Figure.KEPT_BLOCKS, Figure.KEPT_BYTES)
    subtract_harness: bool = True
    """tracemalloc's own bookkeeping per call is measured with an empty callable and removed."""
    paced: bool = True
    """tracemalloc slows every call: its blocks are sized by the calls' pace on the wall clock."""

    def block(
        self, fn: Callable[[], Any], kind: Kind
    ) -> Callable[[int], Allocations] | Callable[[int], Awaitable[Allocations]]:
        return sync_block(fn) if kind == Kind.SYNC else async_block(fn)

    def close(self) -> None:
        """Nothing held between blocks."""
