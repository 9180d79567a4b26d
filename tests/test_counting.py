"""Count mode's parts without pytest sessions: the instruction counter, the allocation
tracer, the count plan and the figures drawn from it. Counts are exact, so these tests
assert exact numbers where the interpreter version does not change them, and exact
*relations* (linear in the work done, equal across repeats) where it does."""

from __future__ import annotations

import asyncio
import sys
import threading

import pytest

from overheadbench.core.vocabulary import Figure, Side
from overheadbench.engine.counted_samples import CountSamples
from overheadbench.engine.counting import (
    ALLOCATION_MAX_CALLS,
    COUNT_REPEATS,
    COUNT_WARMUP_BLOCKS,
    KEPT_SLACK_BLOCKS,
    KEPT_SLACK_BYTES,
    allocation_calls,
    bounded,
    count_calls,
    count_plan,
    kept_resolution,
    pace_plan,
)
from overheadbench.engine.sampling import drive_sync
from overheadbench.engine.settings import Mode, Settings
from overheadbench.engine.timed_path import paused_gc
from overheadbench.instruments import allocations, instructions

INSTRUCTIONS, PEAK_BYTES, KEPT_BLOCKS = Figure.INSTRUCTIONS, Figure.PEAK_BYTES, Figure.KEPT_BLOCKS
BASELINE, FRAMEWORK, HARNESS = Side.BASELINE, Side.FRAMEWORK, Side.HARNESS


def loop(iterations: int):
    def work() -> int:
        total = 0
        for value in range(iterations):
            total += value
        return total

    return work


def count(fn, calls: int = 8) -> int:
    return instructions.sync_block(fn, instructions.InstructionCounter())(calls)


def test_instructions_grow_exactly_with_the_work_done() -> None:
    per_iteration = (count(loop(20)) - count(loop(10))) / 8 / 10
    assert per_iteration == int(per_iteration) and per_iteration >= 3
    assert count(loop(30)) - count(loop(10)) == 2 * (count(loop(20)) - count(loop(10)))


def test_the_same_callable_counts_the_same_every_time() -> None:
    fn = loop(50)
    count(fn)  # the first block may instrument code objects
    assert len({count(fn) for _ in range(10)}) == 1


def test_the_harness_loop_is_not_counted() -> None:
    def empty() -> None:
        pass

    # an empty function executes two or three instructions of its own; the loop none
    assert 1 <= count(empty, calls=1) <= 3
    assert count(empty, calls=100) == 100 * count(empty, calls=1)


def test_callees_are_counted_and_other_threads_are_not() -> None:
    inner = loop(40)
    assert count(lambda: inner()) > count(inner)

    stop = threading.Event()
    busy = threading.Thread(target=lambda: [loop(100)() for _ in iter(stop.is_set, True)])
    with paused_gc(Settings()):  # as a pair is measured: a collection the busy thread's lists start here once ran a
        quiet = count(loop(25), calls=64)  # finalizer in this thread while it was counted (11,857 against 11,840)
        busy.start()
        try:
            assert count(loop(25), calls=64) == quiet
        finally:
            stop.set()
            busy.join()


def test_a_tracer_already_installed_is_put_back() -> None:
    if sys.version_info >= (3, 12):
        pytest.skip("3.12+ counts with sys.monitoring and leaves sys.settrace alone")
    previous = sys.gettrace()
    try:

        def tracer(frame, event, arg):
            return None

        sys.settrace(tracer)
        count(loop(3))
        assert sys.gettrace() is tracer
    finally:
        sys.settrace(previous)


def test_async_callables_are_counted_with_what_they_await() -> None:
    async def inner() -> int:
        return loop(30)()

    async def outer() -> int:
        return await inner()

    async def main() -> tuple[int, int]:
        counter = instructions.InstructionCounter()
        first, second = instructions.async_block(inner, counter), instructions.async_block(outer, counter)
        await first(4), await second(4)
        return await first(4), await second(4)

    alone, wrapped = asyncio.run(main())
    assert wrapped > alone > 4 * 30


def test_allocations_see_what_a_call_keeps_and_its_peak() -> None:
    """256 calls keep 256 objects; the interpreter may keep some state of its own in the same
    block (CPython 3.10: 2 blocks for the function's frame), within the figure's stated
    resolution (``KEPT_SLACK_BLOCKS`` a block), and a call's typical peak is read exactly."""
    store: list[object] = [None] * 1024
    position = iter(range(1024))  # a preallocated list: no list growth, exactly one new object a call

    def keeps_one_object() -> None:
        store[next(position)] = object()

    def uses_a_temporary_buffer() -> int:
        return len(bytes(10_000))

    block = allocations.sync_block(keeps_one_object)
    block(256)  # warm-up: the first block may also keep what a first call sets up
    assert 256 <= block(256).kept_blocks <= 256 + KEPT_SLACK_BLOCKS
    buffered = allocations.sync_block(uses_a_temporary_buffer)
    buffered(4)
    temporary = buffered(4)
    assert temporary.kept_blocks == 0 and temporary.kept_bytes == 0
    assert temporary.peak_bytes >= 4 * 10_000


def test_bounded_state_reads_as_no_memory_kept_whatever_the_block_length() -> None:
    """A buffer of the last 100 events (a logger's pending records, an LRU cache) keeps up to
    100 blocks in any one block of calls, and no more however many calls: no leak per call."""
    import collections

    recent: collections.deque[object] = collections.deque(maxlen=100)
    block = allocations.sync_block(lambda: recent.append(object()))
    block(256)
    assert [block(calls).kept_blocks for calls in (16, 256, 2048)] == [0, 0, 0]
    recent.clear()  # emptied and refilled in one block: its 100 blocks are kept, and still bounded
    assert block(16).kept_blocks == 0


def test_kept_memory_up_to_the_slack_is_bounded_state_and_beyond_it_counts_whole() -> None:
    assert bounded(KEPT_SLACK_BLOCKS, KEPT_SLACK_BYTES) == (0, 0)
    assert bounded(-KEPT_SLACK_BLOCKS, 64) == (0, 0)
    assert bounded(KEPT_SLACK_BLOCKS + 1, 64) == (KEPT_SLACK_BLOCKS + 1, 0)  # blocks and bytes each on their own
    assert bounded(3, KEPT_SLACK_BYTES + 1) == (0, KEPT_SLACK_BYTES + 1)  # one buffer growing: bytes, no new block
    assert kept_resolution(ALLOCATION_MAX_CALLS) == KEPT_SLACK_BLOCKS / ALLOCATION_MAX_CALLS


def test_allocation_blocks_are_long_for_fast_callables_and_shrink_for_slow_ones() -> None:
    assert allocation_calls(1e-6) == ALLOCATION_MAX_CALLS
    assert allocation_calls(1e-4) == 64  # 10 ms of calls, rounded down to a power of two
    assert allocation_calls(1.0) == 1


def test_the_pace_times_warm_calls_in_growing_blocks_and_takes_the_slower_side() -> None:
    """A first call that sets caches up (1 ms here) does not size the blocks: warm calls do."""
    asked: list[tuple[Side, int]] = []
    per_call_ns = {BASELINE: 1_000, FRAMEWORK: 10_000}

    def block(side: Side):
        def run(n: int) -> int:
            asked.append((side, n))
            first = 1_000_000 if len([s for s, _ in asked if s == side]) == 1 else per_call_ns[side]
            return first + per_call_ns[side] * (n - 1)

        return run

    call_s = drive_sync(pace_plan(), {side: block(side) for side in (BASELINE, FRAMEWORK)})
    assert call_s == pytest.approx(10e-6, rel=0.01)  # the framework's warm call
    assert [n for side, n in asked if side == BASELINE] == [1, 4, 16, 64, 256, 1024, 4096, 4096]  # 2 ms, again
    assert [n for side, n in asked if side == FRAMEWORK] == [1, 4, 16, 64, 256, 256]  # 2.5 ms, again
    assert allocation_calls(call_s) == 512


def test_a_preempted_pace_block_does_not_shorten_the_allocation_blocks() -> None:
    """The block that ended the pace was preempted (a 20 ms pause); its second reading is taken."""
    readings = {BASELINE: iter([1_000, 4_000, 16_000, 64_000, 256_000, 1_024_000, 24_096_000, 4_096_000])}
    readings[FRAMEWORK] = iter([1_000, 4_000, 16_000, 64_000, 256_000, 1_024_000, 4_096_000, 4_096_000])

    def block(side: Side):
        return lambda n: next(readings[side])

    call_s = drive_sync(pace_plan(), {side: block(side) for side in (BASELINE, FRAMEWORK)})
    assert call_s == pytest.approx(1e-6)  # not the preempted block's 5.9 us
    assert allocation_calls(call_s) == 4096


def test_allocation_blocks_repeat_exactly_after_a_warm_up() -> None:
    def builds_a_dict() -> int:
        return len({"a": [1, 2, 3], "b": str(12345)})

    block = allocations.sync_block(builds_a_dict)
    block(16)
    assert len({block(16) for _ in range(5)}) == 1


def test_count_calls_shrinks_for_slow_callables() -> None:
    assert count_calls(1e-6) == 16
    assert count_calls(1e-3) == 8
    assert count_calls(0.5) == 1


def test_the_count_plan_warms_up_then_alternates_the_order() -> None:
    asked: list[str] = []

    def block(side: str):
        def run(n: int) -> int:
            asked.append(side)
            return {BASELINE: 10, FRAMEWORK: 13, HARNESS: 2}[side] * n

        return run

    raw = drive_sync(count_plan(4, harness=True), {side: block(side) for side in (BASELINE, FRAMEWORK, HARNESS)})
    warm = 2 * COUNT_WARMUP_BLOCKS
    assert asked[:warm] == [BASELINE, FRAMEWORK] * COUNT_WARMUP_BLOCKS and asked[warm] == HARNESS
    assert asked[warm + 1 : warm + 5] == [BASELINE, FRAMEWORK, FRAMEWORK, BASELINE]
    assert len(raw[BASELINE]) == len(raw[FRAMEWORK]) == COUNT_REPEATS
    samples = CountSamples(4)
    samples.add((INSTRUCTIONS,), raw, calls=4)
    assert samples.baseline[INSTRUCTIONS] == [8.0] * COUNT_REPEATS  # 10 per call, less the harness's 2
    assert samples.ratio(INSTRUCTIONS) == (11 / 8, 11 / 8, 11 / 8)


def test_figures_keep_their_range_when_repeats_disagree() -> None:
    samples = CountSamples(16, allocation_calls=2)
    raw = {HARNESS: [(0, 0, 0)], BASELINE: [(100, 0, 0)] * 3, FRAMEWORK: [(100, 2, 64), (100, 4, 64), (100, 2, 64)]}
    samples.add((PEAK_BYTES, KEPT_BLOCKS, Figure.KEPT_BYTES), raw, calls=2)
    assert samples.difference(KEPT_BLOCKS) == (1.0, 1.0, 2.0)
    assert samples.difference(PEAK_BYTES) == (0.0, 0.0, 0.0)
    assert CountSamples.from_json(samples.to_json()) == samples
    older = samples.to_json()
    del older["allocation_calls"]  # files before schema 8 traced allocations in the instructions' blocks
    assert CountSamples.from_json(older).allocation_calls == 16


def test_a_budget_inside_the_range_of_counts_is_inconclusive() -> None:
    from overheadbench.engine.checks import Status
    from overheadbench.pairs.pair import Budget, Pair
    from overheadbench.pairs.verdict import instruction_ratio, judge_counts

    def judge(samples: CountSamples, budget: Budget):
        return judge_counts(Pair("t.py::test_counted", budget, mode=Mode.COUNT), samples, instruction_ratio(samples))

    samples = CountSamples(1)
    samples.add((INSTRUCTIONS,), {HARNESS: [], BASELINE: [100] * 5, FRAMEWORK: [120, 125, 130, 120, 125]}, calls=1)
    verdict = judge(samples, Budget(max_overhead=0.25))
    assert verdict.status == Status.INCONCLUSIVE
    assert verdict.message.startswith(
        "instruction overhead 25.0% (range over 5 repeats 20.0%..30.0%) straddles max "
        "25.0%: baseline 100 bytecode instructions/call, framework 125/call (+25)"
    )
    assert "the counts differ from repeat to repeat" in verdict.message
    assert judge(samples, Budget(max_overhead=0.31)).status == Status.PASS
    assert judge(samples, Budget(max_overhead=0.1)).status == Status.FAIL
    exact = CountSamples(1)
    exact.add((INSTRUCTIONS,), {HARNESS: [], BASELINE: [0] * 5, FRAMEWORK: [40] * 5}, calls=1)
    nothing_to_compare = judge(exact, Budget(max_overhead=0.25))
    assert nothing_to_compare.status == Status.UNJUDGED  # not failed: the counts are identical, nothing to divide
    assert "the baseline executes no Python bytecode" in nothing_to_compare.message
    assert "differ from repeat to repeat" not in nothing_to_compare.message


def test_an_allocation_block_cut_short_passes_the_error_on_and_stops_tracing() -> None:
    import gc
    import tracemalloc

    def breaks() -> None:
        raise ValueError("the callable's own error")

    frozen = gc.get_freeze_count()
    with pytest.raises(ValueError, match="the callable's own error"):  # not an AttributeError of the tracer
        allocations.sync_block(breaks)(16)
    assert not tracemalloc.is_tracing() and gc.get_freeze_count() == frozen


def test_a_blocks_peak_is_its_median_calls_so_a_one_off_does_not_move_it() -> None:
    """One call in 4,096 peaking 28 B higher (the interpreter growing a cache once, at a different
    call in each process) changed an averaged figure between sessions; the median call's does not."""
    from overheadbench.instruments.allocations import typical_peak

    steady = [51] * 4096
    one_off = [51] * 4095 + [79]
    assert typical_peak(steady) == typical_peak(one_off) == 51 * 4096
    assert typical_peak([100, 10, 10]) == 30 and typical_peak([]) == 0
