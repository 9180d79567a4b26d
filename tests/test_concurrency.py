"""Concurrent callers (issue 16, work in progress on this branch): the crew, task blocks,
levels from the marker. No timing asserts: counts of calls and clean stops."""

from __future__ import annotations

import json
import threading

import anyio
import pytest
from helpers import sentences

from overheadbench.core.errors import MarkerError
from overheadbench.engine.settings import Settings
from overheadbench.instruments.callers import Crew, shares, tasks_block
from overheadbench.pairs.marker import listed_levels, pair_from_marker


def test_calls_are_shared_as_evenly_as_they_go() -> None:
    assert shares(10, 4) == [3, 3, 2, 2] and shares(3, 8) == [1, 1, 1, 0, 0, 0, 0, 0] and sum(shares(4096, 64)) == 4096


def test_a_crew_runs_every_call_in_its_own_threads_and_stops_cleanly() -> None:
    before = threading.active_count()
    crew = Crew(8)
    seen: list[str] = []
    lock = threading.Lock()

    def call() -> None:
        with lock:
            seen.append(threading.current_thread().name)

    ticks = iter(range(0, 1000, 10))
    assert crew.run(call, 100, lambda: next(ticks)) == 10  # the injected clock, read once each side
    assert len(seen) == 100 and len(set(seen)) == 8 and all(name.startswith("overheadbench-caller-") for name in seen)
    crew.close()
    assert threading.active_count() == before


def test_a_crew_raises_its_callers_error_in_the_measuring_thread() -> None:
    crew = Crew(4)
    try:

        def fails() -> None:
            raise ConnectionError("down")

        with pytest.raises(ConnectionError, match="down"):
            crew.run(fails, 8, lambda: 0)
        assert crew.run(lambda: None, 8, lambda: 0) == 0  # still usable after an error
    finally:
        crew.close()


def test_a_task_block_awaits_every_call_in_concurrent_tasks() -> None:
    running = 0
    most = 0

    async def call() -> None:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await anyio.sleep(0)
        running -= 1

    elapsed = anyio.run(tasks_block(call, 5, lambda: 0), 20)
    assert elapsed == 0 and most == 5


def test_marker_levels_make_one_pair_per_level_and_bad_ones_name_the_test() -> None:
    settings = Settings()
    pair = pair_from_marker((), {"max": 0.1, "concurrency": [1, 8, 64]}, "t::x[c=8]", settings, level=8)
    assert (pair.concurrency, pair.levels, pair.applied_to(settings).concurrency) == (8, (1, 8, 64), 8)
    assert pair_from_marker((), {"max": 0.1, "concurrency": 4}, "t::x", settings).concurrency == 4
    assert listed_levels({"concurrency": [1, 8]}) == (1, 8) and listed_levels({"concurrency": 8}) == ()
    for bad in (0, 2000, [1, 1], "8", [], True):
        with pytest.raises(MarkerError, match="t::x: @pytest.mark.overhead: concurrency"):
            pair_from_marker((), {"max": 0.1, "concurrency": bad}, "t::x", settings)
    with pytest.raises(MarkerError, match="count mode counts one caller's instructions"):
        pair_from_marker((), {"max": 0.1, "concurrency": 8, "mode": "count"}, "t::x", settings)


def test_a_list_of_levels_gives_one_row_each_and_the_growth_table(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        def work():
            return sum(range(30))

        @pytest.mark.overhead(max=9, concurrency=[1, 4], processes=1)
        def test_levels(overhead):
            overhead.compare(baseline=work, framework=work)

        @pytest.mark.overhead(max=9, processes=1)
        def test_call(overhead):
            overhead.compare(baseline=work, framework=work, concurrency=3)

        @pytest.mark.overhead(max=9, concurrency=[1, 4], processes=1)
        def test_clash(overhead):
            overhead.compare(baseline=work, framework=work, concurrency=2)
        """
    )
    result = pytester.runpytest("--overhead", "--overhead-time-budget=0.2s", "--overhead-json=out.json", "-v")
    result.assert_outcomes(passed=3, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*test_levels[[]c=1[]] PASSED*",
            "*test_levels[[]c=4[]] PASSED*",
            "*test_clash[[]c=1[]]: the marker's concurrency levels set this row to 1 callers; compare() asked for 2*",
            "*callers*calls/s*",
            "overhead by concurrent callers:",
            "*test*c=1*c=4*growth (points)*",
            "  test_levels  *%*%*±*",
        ]
    )
    data = json.loads((pytester.path / "out.json").read_text())
    levels = {r["nodeid"].split("::")[1]: (r["concurrency"], r["levels"]) for r in data["results"]}
    assert levels == {"test_levels[c=1]": (1, [1, 4]), "test_levels[c=4]": (4, [1, 4]), "test_call": (3, [])}


def test_levels_in_a_params_marks_are_refused_rather_than_lost() -> None:
    with pytest.raises(
        MarkerError, match=r"goes in a marker on the test\s+function .* not in pytest.param\(marks=...\)"
    ):
        pair_from_marker((), {"max": 0.1, "concurrency": [1, 8]}, "t::x[a]", Settings())


def test_session_count_mode_skips_concurrency_pairs_and_a_marker_asking_both_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        def work():
            return sum(range(20))

        @pytest.mark.overhead(max=9, concurrency=[1, 4], processes=1)
        def test_levels(overhead):
            overhead.compare(baseline=work, framework=work)

        @pytest.mark.overhead(max=9, concurrency=4, mode="count", processes=1)
        def test_contradiction(overhead):
            overhead.compare(baseline=work, framework=work)

        @pytest.mark.overhead(max=9, processes=1)
        def test_counted(overhead):
            overhead.compare(baseline=work, framework=work)
        """
    )
    result = pytester.runpytest("--overhead", "--overhead-mode=count", "-rs")
    result.assert_outcomes(passed=1, skipped=2, errors=1)  # the contradiction: an error of its set-up
    sentences(result.stdout).fnmatch_lines(
        [
            "*test_contradiction: @pytest.mark.overhead: count mode counts one caller's instructions; concurrency is a time measurement",
            "SKIPPED [[]1[]]*test_levels[[]c=4[]]: @pytest.mark.overhead: count mode counts one caller's instructions; concurrency is a time "
            "measurement (skipped under --overhead-mode=count; measure it in time mode)",
        ]
    )
