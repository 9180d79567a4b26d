"""Replica processes: the orchestration with fakes, and one real run in fresh processes."""

from __future__ import annotations

import json

import pytest

from overheadbench.options import Settings
from overheadbench.replicas import Launch, WorkerRequest, plugin_args, replicate
from overheadbench.sampling import ReplicaSamples


class Ticks:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def make_spawner(ticks: Ticks, per_wave_s: float, jobs: int):
    calls: list[int] = []

    def spawn(count: int) -> list[ReplicaSamples]:
        calls.append(count)
        ticks.now += per_wave_s * -(-count // jobs)
        return [ReplicaSamples(8) for _ in range(count)]

    return spawn, calls


def test_one_process_spawns_nothing() -> None:
    ticks = Ticks()
    spawn, calls = make_spawner(ticks, 0.5, 2)
    assert len(replicate(ReplicaSamples(8), spawn, Settings(processes=1), lambda r: 1.0, 0.0, ticks)) == 1
    assert calls == []


def test_more_waves_while_wide_and_within_budget() -> None:
    ticks = Ticks()
    spawn, calls = make_spawner(ticks, 0.4, 2)
    settings = Settings(processes=4, jobs=2, time_budget_s=2.0)
    replicas = replicate(ReplicaSamples(8), spawn, settings, lambda r: 0.05, 0.0, ticks)
    # 3 workers = 2 waves (0.8 s); each further wave of 2 takes 0.4 s; stop before 2.0 s
    assert calls == [3, 2, 2, 2]
    assert len(replicas) == 10
    assert ticks.now <= 2.0


def test_no_more_waves_once_narrow() -> None:
    ticks = Ticks()
    spawn, calls = make_spawner(ticks, 0.4, 2)
    replicate(ReplicaSamples(8), spawn, Settings(processes=4, jobs=2), lambda r: 0.005, 0.0, ticks)
    assert calls == [3]


def test_worker_request_round_trips_through_the_environment(tmp_path) -> None:
    request = WorkerRequest("tests/test_a.py::test_b[x]", 64, Settings(processes=3, backend="trio"), str(tmp_path / "o.json"))
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
                                 "a replica process*exited with code 1 without measuring the pair*",
                                 "*RuntimeError: only breaks in a fresh process*"])
