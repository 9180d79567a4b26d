"""The sampling plan driven by synthetic block costs and a fake clock."""

from __future__ import annotations

import random

import anyio
import numpy as np
import pytest
from helpers import Synthetic

from overheadbench.core.errors import CallableError
from overheadbench.core.vocabulary import Side
from overheadbench.engine.calibration import WARMUP_PAIRS, calibrate, choose_timer
from overheadbench.engine.counting import TIME_PROBE_CEILING_S, probe_settings
from overheadbench.engine.process_ratio import pair_ratios
from overheadbench.engine.samples import BlockSizes, ReplicaSamples, Timer, Timing
from overheadbench.engine.sampling import (
    MAX_PAIRS,
    MIN_PAIRS,
    drive_async,
    drive_sync,
    replica_plan,
    replica_slice_s,
)
from overheadbench.engine.settings import Settings

BASELINE, FRAMEWORK, HARNESS = Side.BASELINE, Side.FRAMEWORK, Side.HARNESS


def run(synthetic: Synthetic, settings: Settings, calls: int = 256, seed: int = 5, framework_calls: int = 0):
    sizes = BlockSizes(calls, framework_calls or calls)
    return drive_sync(replica_plan(settings, random.Random(seed), synthetic.clock, sizes), synthetic.blocks())


def test_calibration_makes_blocks_at_least_the_minimum_long() -> None:
    synthetic = Synthetic({BASELINE: 700, FRAMEWORK: 900, HARNESS: 20})
    sizes = drive_sync(calibrate(Settings(min_block_s=200e-6)), synthetic.blocks())
    assert sizes == BlockSizes(512, 512)  # 286 calls would do; power-of-two steps; sides this close share one
    assert {side for side, _ in synthetic.log} == {BASELINE, FRAMEWORK}


def test_slow_callables_use_one_call_per_block() -> None:
    synthetic = Synthetic({BASELINE: 5e6, FRAMEWORK: 6e6, HARNESS: 20})
    assert drive_sync(calibrate(Settings()), synthetic.blocks()) == BlockSizes(1, 1)


@pytest.mark.parametrize(("framework_ns", "baseline_calls"), [(4e6, 16384), (1.4e6, 8192), (250e3, 1024)])
def test_a_millisecond_framework_call_gets_a_baseline_block_as_long(framework_ns: float, baseline_calls: int) -> None:
    """A 4 ms framework call against a 200 ns baseline: blocks of 1 call against 512 (100 µs)
    read the ratio 2.8x too high beside busy loops; the baseline's block now lasts as long."""
    synthetic = Synthetic({BASELINE: 200, FRAMEWORK: framework_ns, HARNESS: 20})
    sizes = drive_sync(calibrate(Settings()), synthetic.blocks())
    assert sizes == BlockSizes(baseline_calls, 1)
    assert 2**-0.5 <= baseline_calls * 200 / framework_ns <= 2**0.5


def timing(wall_ns: int, waits: int) -> Timing:
    return Timing(wall_ns, wall_ns - 10, waits)


def test_the_pair_is_read_on_cpu_time_where_neither_side_waits_and_on_the_wall_clock_where_one_does() -> None:
    costs = {BASELINE: [timing(1000, 0)] * 6, FRAMEWORK: [timing(5000, 0)] * 6}
    assert choose_timer(costs, callers=1) == Timer.CPU
    assert choose_timer(costs, callers=4) == Timer.WALL  # other threads' time is not this thread's
    waiting = {**costs, FRAMEWORK: [timing(5000, 1)] * 6}  # a socket, a thread, a lock: once a call at least
    assert choose_timer(waiting, callers=1) == Timer.WALL
    assert choose_timer({BASELINE: [1000] * 6, FRAMEWORK: [5000] * 6}, callers=1) == Timer.WALL  # one clock read
    rare = {**costs, FRAMEWORK: [timing(5000, 0)] * 5 + [timing(5000, 1)]}  # a log flush once: still no waiting
    assert choose_timer(rare, callers=1) == Timer.CPU


def test_samples_keep_the_pair_clock_and_the_other_one_and_read_back() -> None:
    samples = ReplicaSamples(512, framework_calls=2, timer=Timer.CPU)
    samples.add(Timing(110_000, 100_000, 0), Timing(160_000, 150_000, 0))
    assert samples.baseline_ns == [100_000] and samples.framework_ns == [150_000 * 256]
    assert samples.other_baseline_ns == [110_000] and samples.other_framework_ns == [160_000 * 256]
    assert samples.other_timer == Timer.WALL
    assert ReplicaSamples.from_json(samples.to_json()) == samples


@pytest.mark.parametrize("factor", [1, 3, 10, 100, 1000])
def test_each_side_is_sized_on_its_own_cost_so_blocks_last_alike_whatever_the_ratio(factor: int) -> None:
    """Sized on the faster side, a framework 400x its baseline ran 75 ms blocks: 20-25 s a pair."""
    synthetic = Synthetic({BASELINE: 350, FRAMEWORK: 350 * factor, HARNESS: 20})
    sizes = drive_sync(calibrate(Settings()), synthetic.blocks())
    block_ns = {
        side: synthetic.per_call_ns[side] * n for side, n in ((BASELINE, sizes.baseline), (FRAMEWORK, sizes.framework))
    }
    assert (sizes.baseline == sizes.framework) == (factor < 10)
    assert all(100e3 <= ns < 800e3 for ns in block_ns.values()), block_ns
    if factor >= 10:  # sized apart, then evened out: the blocks last alike (within sqrt(2))
        assert max(block_ns.values()) / min(block_ns.values()) <= 2**0.5, block_ns
    synthetic.log.clear()
    samples = run(
        synthetic, Settings(processes=1, time_budget_s=100.0), sizes.baseline, framework_calls=sizes.framework
    )
    assert {(side, n) for side, n in synthetic.log} == {
        (BASELINE, sizes.baseline),
        (FRAMEWORK, sizes.framework),
        (HARNESS, sizes.baseline),
    }
    assert samples.framework_calls == sizes.framework
    assert float(np.median(pair_ratios(samples.baseline_ns, samples.framework_ns))) == pytest.approx(factor, rel=1e-3)


def test_samples_scale_the_framework_blocks_to_the_baseline_count_and_older_files_read_as_equal_sizes() -> None:
    samples = ReplicaSamples(512, framework_calls=2)
    samples.add(100_000, 150_000)
    assert samples.framework_ns == [150_000 * 256]
    assert ReplicaSamples.from_json(samples.to_json()) == samples
    old = samples.to_json()
    del old["framework_calls"]
    assert ReplicaSamples.from_json(old).framework_calls == 512


def test_warmup_and_harness_come_before_the_kept_pairs() -> None:
    synthetic = Synthetic({BASELINE: 1000, FRAMEWORK: 1000, HARNESS: 25})
    samples = run(synthetic, Settings(processes=1), calls=256)
    sides = [side for side, _ in synthetic.log]
    first_harness = sides.index(HARNESS)
    assert first_harness >= 2 * WARMUP_PAIRS
    assert sides[first_harness : first_harness + 7] == [HARNESS] * 7
    assert samples.harness_ns_per_call == pytest.approx(25, abs=1)
    assert len(sides) - first_harness - 7 == 2 * len(samples.baseline_ns)


def test_pairs_are_interleaved_in_random_order() -> None:
    synthetic = Synthetic({BASELINE: 1000, FRAMEWORK: 1100, HARNESS: 25}, noise=0.3)
    run(synthetic, Settings(processes=1, target_halfwidth=0.001), calls=256)
    sides = [side for side, _ in synthetic.log if side != HARNESS]
    kept = list(zip(sides[2 * WARMUP_PAIRS + 20 :: 2], sides[2 * WARMUP_PAIRS + 21 :: 2], strict=False))
    firsts = [first for first, second in kept if {first, second} == {BASELINE, FRAMEWORK}]
    assert len(firsts) == len(kept) > 50
    share = firsts.count(BASELINE) / len(firsts)
    assert 0.35 < share < 0.65


def test_sampling_stops_once_the_interval_is_narrow_enough() -> None:
    synthetic = Synthetic({BASELINE: 1000, FRAMEWORK: 1250, HARNESS: 25}, noise=0.001)
    samples = run(synthetic, Settings(processes=1, time_budget_s=100.0), calls=256)
    assert len(samples.baseline_ns) == 32  # first check after MIN_PAIRS, on a multiple of 16


def test_sampling_stops_at_the_time_slice_when_noise_keeps_the_interval_wide() -> None:
    synthetic = Synthetic({BASELINE: 1000, FRAMEWORK: 1250, HARNESS: 25}, noise=0.9)
    settings = Settings(processes=4, time_budget_s=1.0)
    samples = run(synthetic, settings, calls=256)
    assert replica_slice_s(settings) == pytest.approx(0.05)
    sampled_ns = sum(samples.baseline_ns) + sum(samples.framework_ns)
    one_pair_ns = 2 * 1125 * 256 * 1.9
    assert 0.05e9 <= sampled_ns <= 0.05e9 + one_pair_ns  # the slice counts timed pairs only
    assert len(samples.baseline_ns) < MAX_PAIRS


def test_count_modes_probe_waits_for_undisturbed_blocks_only_within_its_own_short_ceiling() -> None:
    """On CPU time a block whose thread got half its wall time was disturbed: a count-mode probe of a
    client waiting on a busy server sees only such blocks, and ends at its ceiling, not the pair's 60 s."""
    synthetic = Synthetic({BASELINE: 1000, FRAMEWORK: 1250, HARNESS: 25})

    def disturbed(block):
        def run(n: int) -> Timing:
            wall = block(n)
            return Timing(wall, wall // 2, 1)

        return run

    settings = probe_settings(Settings(processes=4, time_budget_s=2.0))
    sizes = BlockSizes(4096, 4096, Timer.CPU)
    plan = replica_plan(settings, random.Random(5), synthetic.clock, sizes)
    samples = drive_sync(plan, {side: disturbed(block) for side, block in synthetic.blocks().items()})
    assert samples.undisturbed == 0
    assert len(samples.baseline_ns) > MIN_PAIRS  # it went on sampling past its slice, waiting for calm ones
    one_pair_ns = (1000 + 1250) * 4096
    assert TIME_PROBE_CEILING_S * 1e9 <= synthetic.now <= TIME_PROBE_CEILING_S * 1e9 + 2 * one_pair_ns + 0.05e9


def test_a_raising_block_names_its_side() -> None:
    synthetic = Synthetic({BASELINE: 1000, FRAMEWORK: 1000, HARNESS: 25})
    blocks = synthetic.blocks()

    def broken(n: int) -> int:
        raise ZeroDivisionError("boom")

    blocks[FRAMEWORK] = broken
    with pytest.raises(CallableError, match="the framework callable raised ZeroDivisionError: boom"):
        drive_sync(replica_plan(Settings(), random.Random(1), synthetic.clock, BlockSizes(64, 64)), blocks)


def test_async_driver_runs_the_same_plan() -> None:
    synthetic = Synthetic({BASELINE: 1000, FRAMEWORK: 1100, HARNESS: 60}, noise=0.05)
    sync_samples = run(synthetic, Settings(processes=1))
    async_synthetic = Synthetic({BASELINE: 1000, FRAMEWORK: 1100, HARNESS: 60}, noise=0.05)

    def wrap(block):
        async def run_async(n: int) -> int:
            return block(n)

        return run_async

    blocks = {side: wrap(block) for side, block in async_synthetic.blocks().items()}
    plan = replica_plan(Settings(processes=1), random.Random(5), async_synthetic.clock, BlockSizes(256, 256))
    async_samples = anyio.run(drive_async, plan, blocks)
    assert async_samples.to_json() == sync_samples.to_json()
    assert async_synthetic.log == synthetic.log
