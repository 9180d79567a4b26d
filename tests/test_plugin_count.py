"""Count mode in real pytest sessions: instruction budgets, allocation budgets in both
modes, the table's count columns, the JSON, and the same counts on every run."""

from __future__ import annotations

import json
import re

import pytest
from helpers import BYTECODE, INI, sentences

from overheadbench.engine.counting import disagreement

PAIRS = """
import pytest

def bare(message="hi"):
    return message.upper()

def wrapped(message="hi"):
    checked = {"message": message}
    return bare(checked["message"])

@pytest.mark.overhead(max=0.25)
def test_wrapper(overhead):
    overhead.compare(bare, wrapped)

@pytest.mark.overhead(max=5.0)
def test_wrapper_generous(overhead):
    overhead.compare(bare, wrapped)
"""


def test_count_mode_judges_the_instruction_ratio(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(PAIRS)
    result = pytester.runpytest("--overhead", "--overhead-mode=count")
    result.assert_outcomes(passed=1, failed=1)
    sentences(result.stdout).fnmatch_lines(
        [
            "instruction overhead *% (the same on all 5 repeats) exceeds max 25.0%: baseline * bytecode instructions/call, "
            "framework */call (+*); peak memory *",
            "*test_wrapper *% instr (exact)*-> * (+*)*FAIL",
            "*test_wrapper_generous *% instr (exact)*PASS",
            "count mode: the overhead is in executed bytecode instructions (Python only*",
        ]
    )
    result.stdout.no_fnmatch_line("*baseline/call*")  # nothing was timed


@pytest.mark.parametrize("how", ["marker", "ini"])
def test_count_mode_from_the_marker_or_the_ini(pytester: pytest.Pytester, how: str) -> None:
    source = PAIRS.replace("max=0.25)", "max=0.25, mode='count')") if how == "marker" else PAIRS
    if how == "ini":
        pytester.makeini(f"{INI}{BYTECODE}overhead_mode = count\n")
    pytester.makepyfile(source)
    result = pytester.runpytest("--overhead", "-o", "overhead_processes=1", "--overhead-json=r.json")
    data = {r["nodeid"].split("::")[1]: r for r in json.loads((pytester.path / "r.json").read_text())["results"]}
    assert data["test_wrapper"]["mode"] == "count" and data["test_wrapper"]["verdict"] == "fail"
    assert data["test_wrapper_generous"]["mode"] == ("count" if how == "ini" else "time")
    assert data["test_wrapper"]["processes"] == 0  # counted here, no replica process
    result.assert_outcomes(passed=1, failed=1)


def test_counts_are_the_same_on_every_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(PAIRS)
    runs = []
    for index in range(3):
        pytester.runpytest("--overhead", "--overhead-mode=count", f"--overhead-json=run{index}.json")
        results = json.loads((pytester.path / f"run{index}.json").read_text())["results"]
        runs.append([(r["counts"]["baseline"], r["counts"]["framework"]) for r in results])
    assert runs[0] == runs[1] == runs[2]
    baseline, framework = runs[0][0]
    assert len(set(framework["instructions"])) == 1 and framework["instructions"][0] > baseline["instructions"][0]


def test_code_that_is_not_deterministic_shows_its_range(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import itertools
        import pytest

        calls = itertools.count()

        def bare():
            return 1

        def sometimes_slow():
            if next(calls) % 3 == 0:
                return sum(range(50))
            return 1

        @pytest.mark.overhead(max=100.0, mode="count")
        def test_jittery(overhead):
            result = overhead.compare(bare, sometimes_slow)
            assert not result.counts.deterministic("instructions")
        """
    )
    result = pytester.runpytest("--overhead")
    result.assert_outcomes(passed=1)
    # the figure's own words depend on the interpreter's bytecode counts (a percent here, a factor
    # such as 10.6x on another patch release): the range is what this test is about
    line = next(line for line in result.stdout.lines if "test_jittery" in line and "PASS" in line)
    assert re.search(r"[\d.,]+(%|x) instr \([\d.,]+(%|x)?\.\.[\d.,]+(%|x)?\)", line), line
    assert re.search(r"-> .*\(\+[\d.,]+.*\.\.\+[\d.,]+", line), line


LEAK = """
import collections
import pytest

kept = []

@pytest.mark.overhead(max=100.0, max_alloc=0)
def test_leaky(overhead, clock):
    work = clock.cost(1000)

    def leaky():
        work()
        kept.append(object())

    overhead.compare(work, leaky)

@pytest.mark.overhead(max=100.0, max_alloc=0)
def test_bounded_buffer(overhead, clock):
    work = clock.cost(1000)
    recent = collections.deque(maxlen=100)  # a logger's last records: bounded state, no leak

    def buffered():
        work()
        recent.append(object())

    overhead.compare(work, buffered)

@pytest.mark.overhead(max=100.0, max_alloc=0, max_alloc_bytes="4KiB")
def test_temporary_buffer(overhead, clock):
    work = clock.cost(1000)

    def buffered():
        work()
        return len(bytes(1000))

    overhead.compare(work, buffered)

@pytest.mark.overhead(max=100.0, max_alloc_bytes=512)
def test_big_buffer(overhead, clock):
    work = clock.cost(1000)

    def buffered():
        work()
        return len(bytes(100_000))

    overhead.compare(work, buffered)
"""


@pytest.mark.parametrize("mode", ["time", "count"])
def test_allocation_budgets_in_both_modes(fake_clock_project: pytest.Pytester, mode: str) -> None:
    fake_clock_project.makepyfile(LEAK)
    result = fake_clock_project.runpytest("--overhead", f"--overhead-mode={mode}", "--overhead-columns=peak,kept")
    result.assert_outcomes(passed=2, failed=2)
    sentences(result.stdout).fnmatch_lines(
        [
            "extra memory blocks kept per call +1* (*; resolution 0.*/call over blocks of * calls) exceeds "
            "max_alloc +0: *blocks kept 0 -> 1* per call (resolution 0.*/call over blocks of * calls)",
            "extra peak memory per call +9* KiB (*) exceeds max_alloc_bytes +512 B: *",
        ]
    )
    sentences(result.stdout).fnmatch_lines(
        ["*test_bounded_buffer*0 -> 0 (+0)*PASS", "*test_temporary_buffer*KiB (+*)*(+0)*PASS"]
    )


def test_allocations_can_be_left_out_of_time_mode(fake_clock_project: pytest.Pytester) -> None:
    fake_clock_project.makepyfile(
        """
        import pytest

        @pytest.mark.overhead(max=0.5)
        def test_pair(overhead, clock):
            overhead.compare(clock.cost(1000), clock.cost(1100, seed=2))
        """
    )
    result = fake_clock_project.runpytest("--overhead", "--overhead-allocations=false", "--overhead-columns=all")
    result.stdout.no_fnmatch_line("*peak memory/call*")
    with_allocations = fake_clock_project.runpytest("--overhead", "--overhead-columns=all")
    with_allocations.stdout.fnmatch_lines(["*peak memory/call*blocks kept/call*"])


def test_a_time_budget_is_not_judged_in_count_mode(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.overhead(max_abs="1ns")
        def test_timed_only(overhead):
            overhead.compare(lambda: 1, lambda: sum(range(10)))
        """
    )
    result = pytester.runpytest("--overhead", "--overhead-mode=count")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*test_timed_only*NOT JUDGED"])


def test_async_callables_are_counted(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import anyio
        import pytest

        async def bare():
            return 1

        async def yielding():
            await anyio.lowlevel.checkpoint()
            return await bare()

        @pytest.mark.overhead(max=0.5, mode="count")
        def test_checkpoint(overhead):
            result = overhead.compare(bare, yielding)
            assert result.counts.deterministic("instructions")
        """
    )
    result = pytester.runpytest("--overhead")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*instruction overhead * exceeds max 50.0%: baseline * bytecode instructions/call*"])


def test_counts_and_time_that_disagree_are_flagged_on_the_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import time
        import pytest

        def bare():
            return sum(range(30))

        def sleeping():
            time.sleep(0.001)  # a millisecond of time, a handful of instructions

        def looping():
            return sum(range(30)) + sum(range(30))

        @pytest.mark.overhead(max=100.0, mode="count")
        def test_sleeping(overhead):
            overhead.compare(bare, sleeping)

        @pytest.mark.overhead(max=100.0, mode="count")
        def test_looping(overhead):
            overhead.compare(bare, looping)
        """
    )
    done = pytester.runpytest("--overhead", "--overhead-json=out.json", "-p", "no:cacheprovider")
    done.assert_outcomes(passed=2)
    sentences(done.stdout).fnmatch_lines(
        [
            "*OverheadCountingWarning: test_*.py::test_sleeping: count mode reads * in instructions, but timing the same "
            "calls reads *x: the counter counts Python bytecode only*"  # a ratio this large as a ratio
        ]
    )
    assert "test_looping: count mode reads" not in sentences(done.stdout).str()
    results = {r["nodeid"].split("::")[1]: r for r in json.loads((pytester.path / "out.json").read_text())["results"]}
    assert results["test_sleeping"]["time_ratio"] > 100 and results["test_looping"]["time_ratio"] > 0


@pytest.mark.parametrize(
    ("count_ratio", "time_ratio", "warned"),
    [
        (1.24, 3.69, "invisible"),  # pydantic vs a dataclass: counts understate
        (4.2, 13.4, "invisible"),  # msgpack
        (0.85, 1.20, "invisible"),  # opposite signs
        (12.0, 2.8, "overstates"),  # the baseline works in C
        (1.3, 0.85, "overstates"),  # opposite signs, the other way
        (8.5, 2.84, None),  # a Python field check around a C-heavy baseline: expected of bytecode counts
        (5.57, 2.24, None),  # the suite's five-layer stack
        (41.4, 45.6, None),  # a json round trip: they agree
        (1.0, 1.08, None),
        (0.95, 1.05, None),  # opposite signs within 10%
        (float("nan"), 2.0, None),
    ],
)
def test_the_disagreement_rule(count_ratio: float, time_ratio: float, warned: str | None) -> None:
    why = disagreement("t.py::x", count_ratio, time_ratio)
    assert (why is None) if warned is None else (why is not None and warned in why)
