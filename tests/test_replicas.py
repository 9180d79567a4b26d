"""Replica processes: the orchestration with fakes, and one real run in fresh processes."""

from __future__ import annotations

import json
import os

import pytest

import random

from overheadbench.options import Settings
from overheadbench.replicas import Launch, WorkerRequest, pair_plan, plugin_args
from overheadbench.sampling import BASELINE, FRAMEWORK, HARNESS, CallableError, ReplicaSamples, drive_sync
from test_sampling import Synthetic


class FakePool:
    """Stands in for ReplicaPool: records the calls, advances the fake clock per sampled process."""

    def __init__(self, synthetic: Synthetic, per_process_ns: int) -> None:
        self.synthetic, self.per_process_ns = synthetic, per_process_ns
        self.calls: list[tuple] = []
        self.started = 0

    def start(self, count: int) -> None:
        self.calls.append(("start", count))
        self.started += count

    def wait_ready(self) -> None:
        self.calls.append(("ready",))

    def sample_each(self, calls_per_block: int) -> list[ReplicaSamples]:
        self.calls.append(("sample", calls_per_block))
        count, self.started = self.started, 0
        self.synthetic.now += self.per_process_ns * count
        return [ReplicaSamples(calls_per_block, [1000], [1100]) for _ in range(count)]

    def close(self) -> None:
        self.calls.append(("close",))


def run_pair(settings: Settings, halfwidth, per_process_ns: int = 200_000_000):
    synthetic = Synthetic({BASELINE: 1000, FRAMEWORK: 1100, HARNESS: 25})
    pool = FakePool(synthetic, per_process_ns)
    plan = pair_plan(settings, random.Random(1), synthetic.clock, pool, halfwidth)
    return drive_sync(plan, synthetic.blocks()), pool, synthetic


def test_one_process_starts_no_replica() -> None:
    replicas, pool, _ = run_pair(Settings(processes=1), lambda r: True)
    assert len(replicas) == 1 and pool.calls == []


def test_replicas_start_after_calibration_and_sample_after_this_process() -> None:
    replicas, pool, synthetic = run_pair(Settings(processes=4), lambda r: False)
    assert pool.calls == [("start", 3), ("ready",), ("sample", replicas[0].calls_per_block), ("close",)]
    assert len(replicas) == 4
    sides = [side for side, _ in synthetic.log]
    assert sides[0] == BASELINE and HARNESS in sides  # calibrated and sampled here


def test_more_rounds_while_wide_and_within_budget() -> None:
    # first round: this process's 0.1 s slice + 3 replicas x 0.2 s = ~0.7 s of fake time
    # (start-up is instant here); a round of 2 is predicted at 2/4 of the sampling, ~0.35 s,
    # so rounds end at ~1.1, 1.5, 1.9 s and a fourth would pass the 2 s budget
    replicas, pool, synthetic = run_pair(Settings(processes=4, extra_processes=2, time_budget_s=2.0), lambda r: True)
    assert [call for call in pool.calls if call[0] == "start"] == [("start", 3)] + [("start", 2)] * 3
    assert len(replicas) == 10 and pool.calls[-1] == ("close",)
    assert synthetic.now <= 2.0e9


def test_replicas_are_closed_when_a_callable_raises() -> None:
    synthetic = Synthetic({BASELINE: 1000, FRAMEWORK: 1100, HARNESS: 25})
    pool = FakePool(synthetic, 1)
    blocks = synthetic.blocks()
    blocks[HARNESS] = lambda n: 1 // 0
    with pytest.raises(CallableError):
        drive_sync(pair_plan(Settings(processes=3), random.Random(1), synthetic.clock, pool, lambda r: False), blocks)
    assert pool.calls[-1] == ("close",)


def test_worker_request_round_trips_through_the_environment(tmp_path) -> None:
    request = WorkerRequest("tests/test_a.py::test_b[x]", Settings(processes=3, backend="trio"), str(tmp_path / "o.json"), 5, 6)
    assert WorkerRequest.from_env({"OVERHEADBENCH_WORKER": request.to_env()}) == request
    assert WorkerRequest.from_env({}) is None


def test_plugin_args_carry_explicit_plugins() -> None:
    assert plugin_args(["-p", "asyncio", "-pxdist", "--overhead", "tests/", "-q"]) == ("-p", "asyncio", "-p", "xdist")
    command = Launch(rootdir=__import__("pathlib").Path("/r"), inifile=None, plugin_args=("-p", "asyncio")).command("t.py::x")
    assert command[1:4] == ["-m", "pytest", "t.py::x"] and command[-2:] == ["-p", "asyncio"]


def test_pairs_are_replicated_in_fresh_processes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import os
        import pytest

        def work(n):
            return sum(range(n))

        @pytest.mark.overhead(max=5.0)
        def test_pair(overhead):
            with open("pids.txt", "a") as log:
                log.write(f"{os.getpid()}\\n")
            overhead.compare(lambda: work(20), lambda: work(30))
        """
    )
    result = pytester.runpytest_subprocess("--overhead", "--overhead-processes=3", "--overhead-target=0.5",
                                           "--overhead-time-budget=1s", "--overhead-json=out.json")
    result.assert_outcomes(passed=1)
    pids = set((pytester.path / "pids.txt").read_text().split())
    assert len(pids) == 3
    for pid in pids:  # the controller and every replica are gone: nothing left running
        with pytest.raises(ProcessLookupError):
            os.kill(int(pid), 0)
    data = json.loads((pytester.path / "out.json").read_text())["results"][0]
    assert data["processes"] == 3 and data["method"] == "between-processes"
    assert len({replica["calls_per_block"] for replica in data["samples"]}) == 1
    result.stdout.fnmatch_lines(["*over 3 fresh process(es)*"])


def test_a_replica_that_cannot_measure_is_a_clear_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import os
        import pytest

        @pytest.mark.overhead(max=5.0)
        def test_pair(overhead):
            if "OVERHEADBENCH_WORKER" in os.environ:
                raise RuntimeError("only breaks in a fresh process")
            overhead.compare(lambda: None, lambda: None)
        """
    )
    result = pytester.runpytest_subprocess("--overhead", "--overhead-processes=2", "--overhead-time-budget=200ms")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*test_a_replica_that_cannot_measure_is_a_clear_error.py::test_pair: "
                                 "a replica process*exited with code 1 before measuring the pair*",
                                 "*RuntimeError: only breaks in a fresh process*"])


@pytest.mark.parametrize("plugins", ["needed", "all"])
def test_async_test_replicas_load_the_async_runner(pytester: pytest.Pytester, plugins: str) -> None:
    pytester.makepyfile(
        """
        import os
        import pytest

        async def step():
            return sum(range(20))

        @pytest.mark.asyncio
        @pytest.mark.overhead(max=5.0)
        async def test_in_loop(overhead):
            with open("pids.txt", "a") as log:
                log.write(f"{os.getpid()}\\n")
            await overhead.acompare(step, step)
        """
    )
    result = pytester.runpytest_subprocess("--overhead", "--overhead-processes=2", "--overhead-target=0.5",
                                           "--overhead-time-budget=500ms", f"--overhead-replica-plugins={plugins}")
    result.assert_outcomes(passed=1)
    assert len(set((pytester.path / "pids.txt").read_text().split())) == 2
