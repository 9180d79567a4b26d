"""Async callables: one event loop around all timed calls, anyio backends, the test's own loop."""

from __future__ import annotations

import pytest
from helpers import sentences


def test_async_callables_in_a_sync_test_run_in_one_loop(fake_clock_project: pytest.Pytester) -> None:
    fake_clock_project.makepyfile(
        """
        import asyncio
        import pytest

        loops = set()

        @pytest.mark.overhead(max=0.25)
        def test_async_pair(overhead, clock):
            base, fw = clock.acost(1000), clock.acost(1100, seed=2)

            async def baseline():
                loops.add(id(asyncio.get_running_loop()))
                await base()

            async def framework():
                await fw()

            result = overhead.compare(baseline, framework)
            assert result.kind == "async" and result.verdict == "pass"
            assert len(loops) == 1
        """
    )
    fake_clock_project.runpytest("--overhead").assert_outcomes(passed=1)


def test_trio_backend_is_selectable(fake_clock_project: pytest.Pytester) -> None:
    fake_clock_project.makepyfile(
        """
        import pytest
        import sniffio

        libraries = set()

        @pytest.mark.overhead(max=0.25)
        def test_trio_pair(overhead, clock):
            step = clock.acost(1000)

            async def baseline():
                libraries.add(sniffio.current_async_library())
                await step()

            overhead.compare(baseline, clock.acost(1050, seed=2))
            assert libraries == {"trio"}
        """
    )
    fake_clock_project.runpytest("--overhead", "--overhead-backend=trio").assert_outcomes(passed=1)


@pytest.mark.every_plugin
def test_acompare_measures_in_the_tests_own_loop(fake_clock_project: pytest.Pytester) -> None:
    fake_clock_project.makepyfile(
        """
        import asyncio
        import pytest

        @pytest.mark.asyncio
        @pytest.mark.overhead(max=0.05)
        async def test_in_loop(overhead, clock):
            own = asyncio.get_running_loop()
            step = clock.acost(1000)

            async def baseline():
                assert asyncio.get_running_loop() is own
                await step()

            await overhead.acompare(baseline, clock.acost(1300, seed=2))
        """
    )
    result = fake_clock_project.runpytest("--overhead", "-p", "asyncio")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*overhead 30.*% * exceeds max 5.0%*"])


@pytest.mark.every_plugin
def test_compare_inside_a_running_loop_points_to_acompare(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        async def work():
            pass

        @pytest.mark.asyncio
        @pytest.mark.overhead(max=0.05)
        async def test_wrong_call(overhead):
            overhead.compare(work, work)
        """
    )
    result = pytester.runpytest("--overhead", "-p", "asyncio")
    result.assert_outcomes(failed=1)
    sentences(result.stdout).fnmatch_lines(
        ["*test_wrong_call: compare() was called inside a running event loop*acompare*"]
    )
