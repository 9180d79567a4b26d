"""Real pytest sessions (pytester) driven by a fake clock: verdicts, messages, the table, JSON."""

from __future__ import annotations

import json
import re

import pytest
from helpers import sentences

from overheadbench.options import settings_from_config
from overheadbench.store.runs import SCHEMA_VERSION as JSON_SCHEMA_VERSION


def test_overhead_over_budget_fails_with_the_figures(fake_clock_project: pytest.Pytester) -> None:
    fake_clock_project.makepyfile(
        """
        import pytest

        @pytest.mark.overhead(max=0.15)
        def test_retry(overhead, clock):
            overhead.compare(baseline=clock.cost(673), framework=clock.cost(883, seed=2))
        """
    )
    result = fake_clock_project.runpytest("--overhead")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    sentences(result.stdout).fnmatch_lines(
        [
            "*overhead 31.*% (95% CI 2*%..4*%) exceeds max 15.0%: baseline 67* ns/call, framework 88* ns/call (+21* ns); peak memory *",
            "*overhead: framework vs baseline*",
            "  test_retry *FAIL",
            "*measured in one process only*",
        ]
    )
    result.assert_outcomes(failed=1)


def test_overhead_within_budget_passes_and_is_tabled(fake_clock_project: pytest.Pytester) -> None:
    fake_clock_project.makepyfile(
        """
        import pytest

        @pytest.mark.overhead(max=0.25, max_abs="500ns")
        def test_metrics(overhead, clock):
            result = overhead.compare(clock.cost(1000), clock.cost(1100, seed=2))
            assert result.verdict == "pass"
            assert 0.09 < result.overhead < 0.11
            assert result.ci[0] <= result.overhead <= result.ci[1]
            assert abs(result.abs_overhead_s - 100e-9) < 10e-9
            assert result.baseline_s == pytest.approx(1000e-9, rel=0.01)
            assert result.samples and result.samples[0].baseline_ns
        """
    )
    result = fake_clock_project.runpytest("--overhead", "--overhead-columns=overhead,abs,budget")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["  test_metrics *10.*% (*..*)*≤25%, ≤500 ns/call*PASS"])


INCONCLUSIVE_TEST = """  # the truth at the budget: a fixed draw whose 95% interval straddles it (1 in 20 would not)
import pytest

@pytest.mark.overhead(max=0.25)
def test_borderline(overhead, clock):
    overhead.compare(clock.cost(1_000_000, jitter=0.9), clock.cost(1_250_000, jitter=0.9, seed=6))
"""


def test_inconclusive_fails_by_default_and_says_so(fake_clock_project: pytest.Pytester) -> None:
    fake_clock_project.makepyfile(INCONCLUSIVE_TEST)
    result = fake_clock_project.runpytest("--overhead", "--overhead-time-budget=40ms")
    result.assert_outcomes(failed=1)
    sentences(result.stdout).fnmatch_lines(["*inconclusive: overhead *straddles max 25.0%*cannot tell*"])
    sentences(result.stdout).fnmatch_lines(["*(overhead_inconclusive=warn makes this a warning)*"])


def test_inconclusive_can_be_a_warning(fake_clock_project: pytest.Pytester) -> None:
    fake_clock_project.makepyfile(INCONCLUSIVE_TEST)
    result = fake_clock_project.runpytest(
        "--overhead", "--overhead-time-budget=40ms", "-o", "overhead_inconclusive=warn"
    )
    result.assert_outcomes(passed=1, warnings=2)  # its half-width is wider than its budget: it says so too
    result.stdout.fnmatch_lines(["*OverheadInconclusiveWarning*test_borderline: inconclusive*", "*INCONCLUSIVE*"])
    result.stdout.fnmatch_lines(["*OverheadPrecisionWarning*test_borderline: its budget (25.0%) is tighter than*"])
    assert "overhead_inconclusive=warn" not in result.stdout.str()  # no advice to do what is done


def test_negative_budget_demands_a_speedup(fake_clock_project: pytest.Pytester) -> None:
    fake_clock_project.makepyfile(
        """
        import pytest

        @pytest.mark.overhead(max=-0.2)
        def test_faster(overhead, clock):
            overhead.compare(clock.cost(1000), clock.cost(900, seed=2))
        """
    )
    result = fake_clock_project.runpytest("--overhead")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*overhead -10.*% * exceeds max -20.0%*"])


def test_absolute_budget_alone(fake_clock_project: pytest.Pytester) -> None:
    fake_clock_project.makepyfile(
        """
        import pytest

        @pytest.mark.overhead(max_abs="2us")
        def test_abs(overhead, clock):
            overhead.compare(clock.cost(10_000), clock.cost(13_000, seed=2))
        """
    )
    result = fake_clock_project.runpytest("--overhead")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*absolute overhead per call +3.0* µs (95% CI +*..+*) exceeds max_abs +2.00 µs*"])


def test_without_the_flag_each_callable_runs_once_and_nothing_is_judged(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        calls = {"baseline": 0, "framework": 0}

        @pytest.mark.overhead(max=0.0)
        def test_smoke(overhead):
            result = overhead.compare(lambda: calls.__setitem__("baseline", calls["baseline"] + 1),
                                      lambda: calls.__setitem__("framework", calls["framework"] + 1))
            assert calls == {"baseline": 1, "framework": 1}
            assert result.verdict == "unmeasured" and not result.measured
        """
    )
    result = pytester.runpytest("--strict-markers")
    result.assert_outcomes(passed=1)
    result.stdout.no_fnmatch_line("*framework vs baseline*")
    # a CI job that lost --overhead passes: the end of its output says so
    result.stdout.fnmatch_lines(["1 overhead test(s) ran once as functional checks; add --overhead to measure them"])
    measured = pytester.runpytest("--overhead", "--overhead-processes=1", "--overhead-time-budget=50ms")
    measured.stdout.no_fnmatch_line("*ran once as functional checks*")


def test_json_holds_every_result_with_samples(fake_clock_project: pytest.Pytester) -> None:
    fake_clock_project.makepyfile(
        """
        import pytest

        @pytest.mark.overhead(max=0.5)
        @pytest.mark.parametrize("extra", [100, 200])
        def test_pair(overhead, clock, extra):
            overhead.compare(clock.cost(1000), clock.cost(1000 + extra, seed=2))
        """
    )
    result = fake_clock_project.runpytest("--overhead", "--overhead-json", "out/results.json")
    result.assert_outcomes(passed=2)
    data = json.loads((fake_clock_project.path / "out" / "results.json").read_text())
    assert data["schema_version"] == JSON_SCHEMA_VERSION
    assert [r["nodeid"].split("::")[1] for r in data["results"]] == ["test_pair[100]", "test_pair[200]"]
    first = data["results"][0]
    assert first["verdict"] == "pass" and first["kind"] == "sync" and first["processes"] == 1
    assert len(first["samples"][0]["baseline_ns"]) == len(first["samples"][0]["framework_ns"]) > 0
    assert first["overhead"] == pytest.approx(0.1, abs=0.01)


def test_declared_real_work_gives_the_impact_column(fake_clock_project: pytest.Pytester) -> None:
    fake_clock_project.makepyfile(
        """
        import pytest

        @pytest.mark.overhead(max=0.6, work="500ms")
        def test_llm_call(overhead, clock):
            result = overhead.compare(clock.cost(1000), clock.cost(1400, seed=2))
            assert result.impact == pytest.approx(400e-9 / 0.5, rel=0.05)
        """
    )
    result = fake_clock_project.runpytest("--overhead", "--overhead-md=r.md", "--overhead-columns=abs,impact")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*test_llm_call*+40* ns*8e-05% of 500 ms*PASS"])
    assert "| Impact on real work |" in (fake_clock_project.path / "r.md").read_text()


def test_the_quick_profile_shrinks_the_defaults_but_explicit_options_win(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_settings(request):
            settings = request.config.pluginmanager.get_plugin("overheadbench-reporter").options.settings
            print("SETTINGS", settings.processes, settings.time_budget_s, settings.target_halfwidth, settings.inconclusive)
        """
    )
    pytester.runpytest("--overhead-quick", "-s").stdout.fnmatch_lines(["*SETTINGS 3 0.5 0.03 warn"])
    pytester.runpytest("--overhead-quick", "--overhead-processes=7", "-s").stdout.fnmatch_lines(
        ["*SETTINGS 7 0.5 0.03 warn"]
    )


class _Config:
    """Just enough of pytest's config for :func:`settings_from_config`."""

    def __init__(self, **options: object) -> None:
        self.options = {f"--{name.replace('_', '-')}": value for name, value in options.items()}

    def getoption(self, name: str) -> object:
        return self.options.get(name)

    def getini(self, name: str) -> None:
        return None


def test_the_quick_profile_measures_6_processes_per_tree_against_a_base_and_explicit_options_still_win() -> None:
    assert settings_from_config(_Config(overhead_quick=True)).processes == 3  # type: ignore[arg-type]
    against = settings_from_config(_Config(overhead_quick=True, overhead_against="HEAD"))  # type: ignore[arg-type]
    assert (against.processes, against.max_processes, against.time_budget_s) == (6, 6, 0.5)
    chosen = settings_from_config(_Config(overhead_quick=True, overhead_against="HEAD", overhead_processes="4"))  # type: ignore[arg-type]
    assert chosen.processes == 4


def test_every_budget_of_a_pair_is_stored_and_reported(fake_clock_project: pytest.Pytester) -> None:
    """Each budget is judged and kept (value, interval, limit, status, sentence), not only the worst."""
    fake_clock_project.makepyfile(
        """
        import pytest

        @pytest.mark.overhead(max=0.5, max_abs="20ns", max_alloc=0)
        def test_pair(overhead, clock):
            overhead.compare(clock.cost(1000), clock.cost(1100, seed=2))
        """
    )
    result = fake_clock_project.runpytest("--overhead", "--overhead-json=out.json", "--overhead-md=out.md")
    result.assert_outcomes(failed=1)
    (pair,) = json.loads((fake_clock_project.path / "out.json").read_text())["results"]
    checks = {check["name"]: check for check in pair["checks"]}
    assert set(checks) == {"max", "max_abs", "max_alloc"}
    assert checks["max"]["status"] == "pass" and checks["max"]["limit"] == 0.5
    assert checks["max_abs"]["status"] == "fail" and checks["max_abs"]["value"] == pytest.approx(100e-9, rel=0.05)
    assert checks["max_abs"]["sentence"] in pair["message"]
    assert checks["max_alloc"]["unit"] == "signed count" and checks["max_alloc"]["status"] == "pass"
    markdown = (fake_clock_project.path / "out.md").read_text()
    budgets = markdown[markdown.index("## Budgets") :].splitlines()
    assert any("| overhead | 10.0%" in line and "| ≤50.0% | pass |" in line for line in budgets)
    absolute = re.compile(r"\| absolute overhead per call \| \+(99\.\d|10[0-4]) ns \|.*\| ≤\+20\.0 ns \| FAIL \|")
    assert any(absolute.search(line) for line in budgets), budgets  # the value: 100 ns within the clock's jitter
