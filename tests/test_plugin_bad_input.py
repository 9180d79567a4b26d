"""Every mistake a user can make gives a clear failure that names the test, never a deep traceback."""

from __future__ import annotations

import pytest
from helpers import QUIET_INI, sentences

CASES = {
    "unknown_keyword": (
        "@pytest.mark.overhead(max=0.2, maximum=0.3)",
        "*test_case: @pytest.mark.overhead got unknown argument(s) maximum; it accepts max, max_abs, max_alloc, max_alloc_bytes, mode, confidence, group, work, processes, concurrency",
    ),
    "max_not_a_number": (
        "@pytest.mark.overhead(max='25%')",
        "*test_case: @pytest.mark.overhead: max '25%' is not a budget: give a fraction (0.25 = 25% more) or a factor written as a string ('500x' = at most 500 times the baseline)",
    ),
    "max_a_number_as_a_string": (
        "@pytest.mark.overhead(max='500')",
        "*test_case: @pytest.mark.overhead: max '500' is not a budget: give a fraction (0.25 = 25% more) or a factor written as a string ('500x' = at most 500 times the baseline)",
    ),
    "max_x_alone": (
        "@pytest.mark.overhead(max='x')",
        "*test_case: @pytest.mark.overhead: max 'x' is not a budget: give*",
    ),
    "max_negative_factor": (
        "@pytest.mark.overhead(max='-3x')",
        "*test_case: @pytest.mark.overhead: max '-3x' is not a budget: give a fraction (0.25 = 25% more) or a factor written as a string ('500x' = at most 500 times the baseline)",
    ),
    "max_factor_below_one": (
        "@pytest.mark.overhead(max='0.5x')",
        "*test_case: @pytest.mark.overhead: max '0.5x' is a factor below 1: the framework at most 0.5 times the "
        "baseline's cost, a speed-up. If that is what you mean, write it as a fraction: max=-0.5",
    ),
    "max_at_or_below_minus_one": (
        "@pytest.mark.overhead(max=-1)",
        "*test_case: @pytest.mark.overhead: max -1 is not a budget: a fraction must be finite and above -1*",
    ),
    "bad_duration": (
        "@pytest.mark.overhead(max_abs='fast')",
        "*test_case: @pytest.mark.overhead: max_abs 'fast' is not a duration*",
    ),
    "no_budget": ("@pytest.mark.overhead()", "*test_case: @pytest.mark.overhead needs a budget*"),
    "positional": ("@pytest.mark.overhead(0.25)", "*test_case: @pytest.mark.overhead takes keyword arguments only*"),
    "bad_confidence": (
        "@pytest.mark.overhead(max=0.2, confidence=95)",
        "*test_case: @pytest.mark.overhead: confidence must be a number between 0 and 1*",
    ),
    "bad_work": (
        "@pytest.mark.overhead(max=0.2, work='soon')",
        "*test_case: @pytest.mark.overhead: work 'soon' is not a duration*",
    ),
    "bad_group": (
        "@pytest.mark.overhead(max=0.2, group=3)",
        "*test_case: @pytest.mark.overhead: group must be a string, got 3",
    ),
    "bad_mode": (
        "@pytest.mark.overhead(max=0.2, mode='instructions')",
        "*test_case: @pytest.mark.overhead: mode must be 'time' or 'count', got 'instructions'",
    ),
    "count_mode_with_a_time_budget_only": (
        "@pytest.mark.overhead(max_abs='2us', mode='count')",
        "*test_case: @pytest.mark.overhead: max_abs is a time budget, which mode='count' cannot judge*",
    ),
    "bad_alloc_count": (
        "@pytest.mark.overhead(max_alloc='two')",
        "*test_case: @pytest.mark.overhead: max_alloc must be a number of memory blocks per call*",
    ),
    "negative_alloc_count": (
        "@pytest.mark.overhead(max_alloc=-1)",
        "*test_case: @pytest.mark.overhead: max_alloc must be a number of memory blocks per call, 0 or more*, got -1",
    ),
    "bad_processes": (
        "@pytest.mark.overhead(max=0.2, processes=0)",
        "*test_case: @pytest.mark.overhead: processes must be a whole number from 1 to 32 (1 = measured "
        "in this process only), got 0",
    ),
    "too_many_processes": (
        "@pytest.mark.overhead(max=0.2, processes=100)",
        "*test_case: @pytest.mark.overhead: processes must be a whole number from 1 to 32*",
    ),
    "bad_size": (
        "@pytest.mark.overhead(max_alloc_bytes='1 KB please')",
        "*test_case: @pytest.mark.overhead: max_alloc_bytes '1 KB please' is not a size: write a number of "
        "bytes or a number with one of the units B, KB, MB, GB, KiB, MiB, GiB*",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_marker_arguments_name_the_test(pytester: pytest.Pytester, case: str) -> None:
    marker, expected = CASES[case]
    pytester.makepyfile(
        f"""
        import pytest

        {marker}
        def test_case(overhead):
            overhead.compare(lambda: None, lambda: None)
        """
    )
    result = pytester.runpytest("--overhead")
    result.assert_outcomes(errors=1)
    sentences(result.stdout).fnmatch_lines([expected])
    result.stdout.no_fnmatch_line("*Traceback*")


def test_marked_test_that_never_compares_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.overhead(max=0.2)
        def test_forgot():
            pass
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*test_forgot: marked @pytest.mark.overhead but never called overhead.compare*"])


def test_fixture_without_marker_fails_with_the_fix(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_unmarked(overhead):\n    overhead.compare(lambda: 1, lambda: 2)\n")
    result = pytester.runpytest("--overhead")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*test_unmarked: the overhead fixture needs a budget: add @pytest.mark.overhead*"])


USAGE_CASES = {
    "twice": (
        "overhead.compare(f, f)\n            overhead.compare(f, f)",
        "*test_case: overhead.compare() was called twice*",
    ),
    "mixed": (
        "overhead.compare(f, af)",
        "*test_case: baseline and framework must both be plain functions or both `async def`*",
    ),
    "not_callable": ("overhead.compare(f, 42)", "*test_case: the framework must be a zero-argument callable, got 42"),
    "returns_coroutine": (
        "overhead.compare(lambda: af(), lambda: af())",
        "*test_case: the baseline callable returned an awaitable; pass an `async def` function*",
    ),
}


@pytest.mark.parametrize("case", sorted(USAGE_CASES))
@pytest.mark.parametrize("flag", [[], ["--overhead"]], ids=["smoke", "measuring"])
def test_fixture_misuse_names_the_test(pytester: pytest.Pytester, case: str, flag: list[str]) -> None:
    body, expected = USAGE_CASES[case]
    pytester.makepyfile(
        f"""
        import pytest

        def f():
            pass

        async def af():
            pass

        @pytest.mark.overhead(max=0.2)
        def test_case(overhead):
            {body}
        """
    )
    result = pytester.runpytest(*flag, "-o", "overhead_time_budget=50ms", "-o", "overhead_processes=1")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([expected])


@pytest.mark.parametrize("flag", [[], ["--overhead"]], ids=["smoke", "measuring"])
def test_a_callable_that_raises_is_the_tests_error_not_an_overhead(pytester: pytest.Pytester, flag: list[str]) -> None:
    pytester.makepyfile(
        """
        import pytest

        def broken():
            raise KeyError("missing route")

        @pytest.mark.overhead(max=0.2)
        def test_case(overhead):
            overhead.compare(lambda: None, broken)
        """
    )
    result = pytester.runpytest(*flag, "-o", "overhead_processes=1")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*KeyError: 'missing route'*", "*CallableError: the framework callable raised KeyError*"]
    )
    result.stdout.no_fnmatch_line("*framework vs baseline*")


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--overhead-confidence=95", "*--overhead-confidence='95': must be a number between 0 and 1 (e.g. 0.95)*"),
        ("--overhead-time-budget=soon", "*--overhead-time-budget='soon': 'soon' is not a duration*"),
        ("--overhead-backend=curio", "*--overhead-backend='curio': must be one of asyncio, trio*"),
        (
            "--overhead-processes=0",
            "*--overhead-processes='0': must be a whole number from 1 to 32 (1 = measured in this process only)*",
        ),
        (
            "--overhead-processes=500",
            "*--overhead-processes='500': must be a whole number from 1 to 32 (1 = measured in this process only)*",
        ),
        (
            "--overhead-max-processes=64",
            "*--overhead-max-processes='64': must be a whole number from 1 to 32 (1 = measured in this process only)*",
        ),
        (
            "--overhead-processes=2.5",
            "*--overhead-processes='2.5': '2.5' is not a whole number of processes (1 to 32)*",
        ),
        ("--overhead-replica-timeout=0s", "*--overhead-replica-timeout='0s': must be more than zero*"),
        ("--overhead-pair-timeout=never", "*--overhead-pair-timeout='never': 'never' is not a duration*"),
        ("--overhead-mode=cycles", "*--overhead-mode='cycles': must be one of time, count*"),
        ("--overhead-allocations=sometimes", "*--overhead-allocations='sometimes': must be true or false*"),
    ],
)
def test_bad_options_are_usage_errors(pytester: pytest.Pytester, option: str, message: str) -> None:
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest(option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    sentences(result.stderr).fnmatch_lines([message])


def test_bad_ini_value_names_the_ini_option(pytester: pytest.Pytester) -> None:
    pytester.makeini(f"{QUIET_INI}overhead_gc = maybe\n")
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini option overhead_gc='maybe': must be true or false*"])
    pytester.makeini(QUIET_INI.replace("overhead_processes = 3", "overhead_processes = abc"))
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini option overhead_processes='abc': 'abc' is not a whole number of processes*"])


@pytest.mark.parametrize(
    ("sides", "warned"),
    [
        ("lambda: {'a': 1}, lambda: 'a'", "the baseline returned a dict and the framework a str"),
        ("abare, aframework", "the baseline returned a dict and the framework a list"),
        ("lambda: None, lambda: {'a': 1}", None),  # a baseline that does nothing is a choice
        ("lambda: {'a': 1}, lambda: {'a': 2}", None),
    ],
)
def test_sides_returning_different_types_are_warned_of(
    pytester: pytest.Pytester, sides: str, warned: str | None
) -> None:
    pytester.makepyfile(
        f"""
        import pytest

        async def abare():
            return {{"a": 1}}

        async def aframework():
            return ["a"]

        @pytest.mark.overhead(max=5.0, processes=1)
        def test_case(overhead):
            overhead.compare({sides})
        """
    )
    result = pytester.runpytest("-W", "error::overheadbench.OverheadPairWarning")
    if warned is None:
        result.assert_outcomes(passed=1)
    else:
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(
            [f"*OverheadPairWarning: test_sides_returning*::test_case: {warned}: do both sides do the same work?"]
        )
