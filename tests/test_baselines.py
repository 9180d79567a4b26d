"""Stored runs and comparisons: storage rules, the significance test, and real sessions that
save, compare and fail (fake clock, so every figure is deterministic)."""

from __future__ import annotations

import json
import math
import os
import platform
import textwrap

import pytest
from helpers import sentences

from overheadbench.core.errors import StorageError
from overheadbench.core.jsonio import strict
from overheadbench.engine.changes import Change
from overheadbench.engine.checks import Status
from overheadbench.engine.combining import SESSION_SD, Method
from overheadbench.engine.findings import Finding
from overheadbench.engine.samples import Kind
from overheadbench.engine.settings import Mode
from overheadbench.engine.shifts import Point, find_shifts
from overheadbench.history.pair_changes import compare_runs
from overheadbench.pairs.pair import Budget, Pair
from overheadbench.pairs.results import OverheadResult
from overheadbench.store.environment import differences, fingerprint
from overheadbench.store.runs import SCHEMA_VERSION, Run, Storage, read_run

MACHINE = fingerprint()


def result(nodeid: str, overhead: float) -> OverheadResult:
    return OverheadResult(
        Pair(nodeid, Budget(max_overhead=1.0)),
        Kind.SYNC,
        ratio=1 + overhead,
        method=Method.BETWEEN_PROCESSES,
        verdict=Status.PASS,
    )


def run(overheads: dict[str, float]) -> Run:
    return Run(results=[result(nodeid, overhead) for nodeid, overhead in overheads.items()])


def test_runs_are_numbered_and_an_existing_file_is_never_replaced(tmp_path) -> None:
    storage = Storage(tmp_path / "baselines", "machine-a")
    first = storage.save(run({"t::a": 0.1}), "base")
    first_bytes = first.read_bytes()
    second = storage.save(run({"t::a": 0.2}), "base")
    third = storage.save(run({"t::a": 0.3}), "feature-x")
    assert [p.name for p in storage.runs()] == ["0001_base.json", "0002_base.json", "0003_feature-x.json"]
    assert first.read_bytes() == first_bytes
    assert storage.find() == third and storage.find("base") == second and storage.find("1") == first
    assert storage.find(str(first)) == first
    assert list((tmp_path / "baselines").rglob("*.tmp")) == []  # written atomically, nothing left over
    mask = os.umask(0)
    os.umask(mask)
    assert first.stat().st_mode & 0o777 == 0o666 & ~mask  # permissions of an ordinary file, not mkstemp's 0600
    with pytest.raises(StorageError, match="no stored run matches 'nope' in"):
        storage.find("nope")
    with pytest.raises(StorageError, match="run name 'a/b'"):
        storage.save(run({}), "a/b")


GOOD_RESULT = run({"t::a": 0.1}).to_json()["results"][0]


def stored(**changes: object) -> str:
    """A stored run of one result, with ``changes`` applied to that result (None deletes a key)."""
    entry = {key: value for key, value in {**GOOD_RESULT, **changes}.items() if value is not None}
    return json.dumps(strict({"schema_version": SCHEMA_VERSION, "results": [entry]}))  # NaN as null, as a run writes


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"schema_version": 1, "results": [', "corrupt or truncated JSON"),
        ("[1, 2]", "the document: expected an object, got list"),
        ('{"schema_version": 99, "results": []}', "schema version 99 was written by a newer overheadbench"),
        ('{"results": []}', "schema_version: missing"),
        ('{"schema_version": 3, "results": {"a": 1}}', "results: expected a list, got dict"),
        ('{"schema_version": 3, "results": [7]}', r"results\[0\]: expected an object, got int 7"),
        (stored(nodeid=None), r"results\[0\].nodeid: missing"),
        (stored(ratio="fast"), r"results\[0\].ratio: expected a number, got str 'fast'"),
        (stored(verdict="great"), r"results\[0\].verdict: 'great' is not one of the known values"),
        (stored(ci=[0.1]), r"results\[0\].ci: expected \[low, high\]"),
        (stored(samples=[{"calls_per_block": 1}]), r"results\[0\].samples\[0\].baseline_ns: missing"),
        (
            stored(
                samples=[
                    {
                        "calls_per_block": 1,
                        "baseline_ns": [1, "x"],
                        "framework_ns": [1, 2],
                        "harness_ns_per_call": 1,
                        "wall_s": 0,
                    }
                ]
            ),
            r"results\[0\].samples\[0\].baseline_ns\[1\]: expected a number",
        ),
        (stored(counts={"calls_per_block": 1, "baseline": {"cycles": [1]}, "framework": {}}), "not a counted figure"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        (b"\xff\xfe not text", "corrupt or truncated JSON"),
    ],
)
def test_a_bad_stored_file_is_a_clear_error_naming_it_and_the_field(
    tmp_path, content: str | bytes, message: str
) -> None:
    path = tmp_path / "0001_x.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(StorageError, match=message) as error:
        read_run(path)
    assert str(path) in str(error.value)


def test_a_stored_file_over_the_size_limit_is_refused_unread(tmp_path) -> None:
    path = tmp_path / "0001_huge.json"
    with path.open("wb") as stream:
        stream.truncate(40 * 2**20)  # sparse: nothing is written; its size is told before anything is read
    with pytest.raises(StorageError, match=r"0001_huge.json: 40.0 MiB, larger than a run can be \(32 MiB\); not read"):
        read_run(path)


def test_a_run_round_trips_as_strict_json_with_nan_as_null(tmp_path) -> None:
    unmeasured = OverheadResult(Pair("t::smoke", Budget(max_overhead=0.1)), Kind.ASYNC)
    text = Storage(tmp_path, "m").save(Run(results=[unmeasured, result("t::a", 0.25)]), "x").read_text()
    assert "NaN" not in text and '"ratio": null' in text
    json.loads(text, parse_constant=lambda name: pytest.fail(f"bare {name} in the file"))
    back = read_run(tmp_path / "m" / "0001_x.json").results
    assert strict(back[1].to_json()) == strict(result("t::a", 0.25).to_json())
    assert back[0].verdict == Status.UNMEASURED and math.isnan(back[0].overhead)


def test_changes_are_matched_by_test_and_described_like_benchstat() -> None:
    changes = compare_runs(run({"t::a": 0.10, "t::gone": 0.2}).results, run({"t::a": 0.31, "t::new": 0.1}).results)
    assert [c.what for c in changes] == ["t::a"]
    grew = Change("t::a", 1.12, 1.315, se=0.02)
    assert grew.describe(("12.0%", "31.5%")) == "12.0% -> 31.5% (+17.4%, 95% CI +12.9..+22.1%)"
    quiet = Change("t::a", 1.12, 1.123, se=0.01)
    assert quiet.describe(("12.0%", "12.3%")) == "12.0% -> 12.3% (~ +0.3%, 95% CI -1.7..+2.3%)"
    assert quiet.finding(0.1) == Finding.UNKNOWN


def test_environment_differences_name_the_field() -> None:
    old = {
        "machine_info": {"python_version": "3.11.7", "cpu": {"brand_raw": "X"}},
        "cpu_count": 2,
        "packages": {"numpy": "2.4.0", "pytest": "9.2.0"},
    }
    new = {
        "machine_info": {"python_version": "3.12.1", "cpu": {"brand_raw": "X"}},
        "cpu_count": 2,
        "packages": {"numpy": "2.4.1", "pytest": "9.2.0"},
    }
    assert differences(old, new) == ["python 3.11.7 -> 3.12.1", "numpy 2.4.0 -> 2.4.1"]
    assert differences(old, old) == []


SLOWABLE_PAIR = """
import os
import pytest

@pytest.mark.overhead(max=1.0)
def test_middleware(overhead, clock):
    overhead.compare(clock.cost(1000), clock.cost(int(os.environ.get("FRAMEWORK_NS", "1100")), seed=2))
"""
FIVE = ("-o", "overhead_processes=5", "--overhead-time-budget=3s")


def test_a_pairs_spread_between_sessions_is_learned_from_the_runs_stored_here(
    fake_clock_project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 56: a real library's pair moved 50% between sessions where its interval was ±5%; no
    session can see that, the stored runs of the machine can."""
    fake_clock_project.makepyfile(SLOWABLE_PAIR)
    for framework_ns in (1100, 1200, 1000):  # three sessions that read 10%, 20% and 0%
        monkeypatch.setenv("FRAMEWORK_NS", str(framework_ns))
        fake_clock_project.runpytest("--overhead", *FIVE, "--overhead-save=run").assert_outcomes(passed=1)
    monkeypatch.setenv("FRAMEWORK_NS", "1100")
    fourth = fake_clock_project.runpytest("--overhead", *FIVE, "--overhead-save=run", "--overhead-json=o.json")
    fourth.assert_outcomes(passed=1)
    fourth.stdout.fnmatch_lines(["*% sd between sessions (learned from 3 stored", "runs of this machine: a busy*"])
    fourth.stdout.no_fnmatch_line("*still wider than the*")  # more processes cannot narrow what sessions add
    (result,) = json.loads((fake_clock_project.path / "o.json").read_text())["results"]
    assert result["session_runs"] == 3
    # the series' spread as history reads it (successive differences, pooled with the 0.5% prior as four more)
    series = find_shifts([Point(math.log(r), 0.0, str(i)) for i, r in enumerate((1.1, 1.2, 1.0))], SESSION_SD)
    assert result["session_sd"] == pytest.approx(series.tau, rel=0.1) and series.tau > 0.05
    low, high = result["ci"]
    assert low < 0.0 and high > 0.2  # a 9% sd with two degrees of freedom: what three sessions can say
    monkeypatch.setenv("FRAMEWORK_NS", "1100")
    alone = fake_clock_project.runpytest("--overhead", *FIVE, "--overhead-json=p.json")
    (prior,) = json.loads((fake_clock_project.path / "p.json").read_text())["results"]
    assert prior["session_runs"] == 0 and prior["ci"][1] - prior["ci"][0] < 0.05  # no storage read: the prior
    alone.stdout.fnmatch_lines(["*sd between sessions (1.25x each pair's"])


def test_save_then_compare_then_fail_on_a_slowed_framework(fake_clock_project: pytest.Pytester, monkeypatch) -> None:
    fake_clock_project.makepyfile(SLOWABLE_PAIR)
    first = fake_clock_project.runpytest("--overhead", *FIVE, "--overhead-save", "base")
    first.assert_outcomes(passed=1)
    sentences(first.stdout).fnmatch_lines([f"overhead run saved to *baselines/{MACHINE}/0001_base.json"])
    stored = json.loads((fake_clock_project.path / "baselines" / MACHINE / "0001_base.json").read_text())
    assert stored["schema_version"] == SCHEMA_VERSION and len(stored["results"][0]["samples"]) == 5
    assert stored["environment"]["machine_info"]["python_version"] and "commit_info" in stored["environment"]

    same = fake_clock_project.runpytest("--overhead", *FIVE, "--overhead-fail-above=5")
    same.assert_outcomes(passed=1)
    sentences(same.stdout).fnmatch_lines(
        ["*overhead: compared with 0001_base.json*", "  test_middleware*10.0%*10.0%*~ +0.0%*same"]
    )

    monkeypatch.setenv("FRAMEWORK_NS", "1300")
    slowed = fake_clock_project.runpytest(
        "--overhead",
        *FIVE,
        "--overhead-fail-above=5",
        "--overhead-autosave",
        "--overhead-json=s.json",
        "--overhead-md=s.md",
    )
    slowed.assert_outcomes(failed=1)
    # the change is made once, where the result is, and every reader reads it from there
    (carried,) = json.loads((fake_clock_project.path / "s.json").read_text())["results"]
    assert carried["stored"]["run"] == "0001_base.json" and carried["stored"]["change"]["between"]["runs"] == 0
    assert carried["stored"]["change"]["new"] == pytest.approx(1.3, rel=0.01)
    markdown = (fake_clock_project.path / "s.md").read_text()
    assert markdown.startswith("# Overhead report\n\n## Gate\n\n**❌ 1 regressed")
    assert "## Against the stored run 0001_base.json" in markdown and "_Separate sessions, not paired:" in markdown
    stored_rows = [line for line in markdown.splitlines() if line.startswith("| `") and "% sd (prior)" in line]
    assert len(stored_rows) == 1 and stored_rows[0].endswith("| regressed |")
    assert slowed.ret == pytest.ExitCode.TESTS_FAILED
    sentences(slowed.stdout).fnmatch_lines(
        [
            "*::test_middleware: the framework path regressed against 0001_base.json: overhead 10.0% -> 30.0% "
            "(+18.2%, 95% CI +*%) (the change: of framework / baseline), more than --overhead-fail-above=5%",
            "FAILED *::test_middleware*",
        ]
    )
    assert (fake_clock_project.path / "baselines" / MACHINE / "0001_base.json").read_text() == json.dumps(
        stored, indent=1
    ) or json.loads((fake_clock_project.path / "baselines" / MACHINE / "0001_base.json").read_text()) == stored
    assert (
        len(list((fake_clock_project.path / "baselines" / MACHINE).glob("0002_*.json"))) == 1
    )  # the failing run is kept too


def test_comparing_with_a_corrupt_run_is_a_usage_error_naming_it(fake_clock_project: pytest.Pytester) -> None:
    fake_clock_project.makepyfile(SLOWABLE_PAIR)
    (fake_clock_project.path / "baselines" / MACHINE).mkdir(parents=True)
    (fake_clock_project.path / "baselines" / MACHINE / "0001_base.json").write_text('{"schema_version": 1, "resu')
    result = fake_clock_project.runpytest("--overhead", "--overhead-compare")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*overheadbench: *0001_base.json: not a valid overheadbench run (corrupt or truncated*"]
    )
    assert "Traceback" not in result.stderr.str()


def test_another_environment_is_named_in_a_warning(fake_clock_project: pytest.Pytester) -> None:
    fake_clock_project.makepyfile(SLOWABLE_PAIR)
    fake_clock_project.runpytest("--overhead", "--overhead-save", "base").assert_outcomes(passed=1)
    path = fake_clock_project.path / "baselines" / MACHINE / "0001_base.json"
    stored = json.loads(path.read_text())
    stored["environment"]["machine_info"]["python_version"] = "2.7.18"
    path.write_text(json.dumps(stored))
    result = fake_clock_project.runpytest("--overhead", "--overhead-compare", "base")
    result.assert_outcomes(passed=1)
    warning = "WARNING: overhead compared with 0001_base.json, measured in another environment: python 2.7.18 -> *"
    result.stdout.fnmatch_lines([warning, "*collected 1 item*", "*compared with 0001_base.json*", warning])


@pytest.mark.every_plugin
def test_xdist_workers_measure_and_the_controller_gathers_everything(fake_clock_project: pytest.Pytester) -> None:
    fake_clock_project.makepyfile(
        """
        import pytest

        @pytest.mark.parametrize("framework_ns", [1100, 1200, 1300, 1400])
        @pytest.mark.overhead(max=1.0)
        def test_pair(overhead, clock, framework_ns):
            overhead.compare(clock.cost(1000), clock.cost(framework_ns, seed=2))

        def test_plain():
            pass
        """
    )
    result = fake_clock_project.runpytest(
        "-n", "2", "--dist", "loadgroup", "--overhead", "--overhead-json=out.json", "--overhead-save=x"
    )
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(["*overhead: framework vs baseline*", "*overhead run saved to *0001_x.json"])
    gathered = json.loads((fake_clock_project.path / "out.json").read_text())["results"]
    assert sorted(round(r["overhead"], 2) for r in gathered) == [0.1, 0.2, 0.3, 0.4]
    assert len(list((fake_clock_project.path / "baselines").rglob("*.json"))) == 1  # saved once, by the controller


@pytest.mark.every_plugin
def test_the_markdown_report_and_pytest_benchmarks_json_carry_the_pairs(fake_clock_project: pytest.Pytester) -> None:
    fake_clock_project.makepyfile(
        """
        import pytest

        @pytest.mark.overhead(max=0.25, group="middleware")
        def test_pair(overhead, clock):
            '''The middleware may cost a quarter of the bare call: what the README promises.

            Further paragraphs explain the measurement and stay out of the report.'''
            overhead.compare(clock.cost(1000), clock.cost(1100, seed=2))

        def test_bench(benchmark):
            benchmark(sum, range(10))
        """
    )
    result = fake_clock_project.runpytest("--overhead", "--overhead-md=report.md", "--benchmark-json=bench.json")
    result.assert_outcomes(passed=2)
    report = (fake_clock_project.path / "report.md").read_text()
    assert "## middleware" in report and "| ✅ |" in report and "| Python | CPython" in report
    assert report.endswith(
        "## What the budgets are for\n\n| Test | What its budget is for |\n|---|---|\n"
        "| `test_the_markdown_report_and_pytest_benchmarks_json_carry_the_pairs.py::test_pair` | "
        "The middleware may cost a quarter of the bare call: what the README promises. |\n"
    )
    carried = json.loads((fake_clock_project.path / "bench.json").read_text())["overheadbench"]["results"]
    assert [r["nodeid"].split("::")[1] for r in carried] == ["test_pair"] and carried[0]["group"] == "middleware"


@pytest.mark.every_plugin
def test_without_pytest_benchmark_a_session_prints_no_header_makes_no_folder_and_still_records_the_environment(
    fake_clock_project: pytest.Pytester,
) -> None:
    """With pytest-benchmark a dependency, every session printed its header and made an empty
    ``.benchmarks/``, plain pytest included; it is an extra now, and a run records the same fields."""
    fake_clock_project.makepyfile(
        """
        import pytest

        @pytest.mark.overhead(max=0.25)
        def test_pair(overhead, clock):
            overhead.compare(clock.cost(1000), clock.cost(1100, seed=2))
        """
    )
    plain = fake_clock_project.runpytest("-p", "no:benchmark")
    plain.assert_outcomes(passed=1)
    plain.stdout.no_fnmatch_line("benchmark:*")
    result = fake_clock_project.runpytest("-p", "no:benchmark", "--overhead", "--overhead-json=out.json")
    result.assert_outcomes(passed=1)
    assert not (fake_clock_project.path / ".benchmarks").exists()
    environment = json.loads((fake_clock_project.path / "out.json").read_text())["environment"]
    machine = environment["machine_info"]
    assert machine["python_version"] == platform.python_version() and machine["system"] == platform.system()
    assert machine["cpu"]["brand_raw"] and machine["cpu"]["count"] == os.cpu_count()
    assert environment["commit_info"]["id"] == "unversioned"  # pytester's folder is no git work tree
    with_it = fake_clock_project.runpytest("--overhead", "--overhead-json=with.json")
    recorded = json.loads((fake_clock_project.path / "with.json").read_text())["environment"]
    assert recorded["fingerprint"] == environment["fingerprint"]
    assert recorded["machine_info"]["cpu"]["brand_raw"] == machine["cpu"]["brand_raw"]  # runs made either way compare
    with_it.stdout.fnmatch_lines(["benchmark: *"])  # installed, pytest-benchmark's own habits stay its own


def test_counted_pairs_compare_exactly_and_only_with_counted_pairs() -> None:
    def counted(nodeid: str, overhead: float, mode: str) -> OverheadResult:
        return OverheadResult(
            Pair(nodeid, Budget(max_overhead=1.0), mode=Mode(mode)), Kind.SYNC, ratio=1 + overhead, verdict=Status.PASS
        )

    result = counted
    old = [result("t::same", 0.6, "count"), result("t::grew", 0.6, "count"), result("t::was_timed", 0.3, "time")]
    new = [result("t::same", 0.6, "count"), result("t::grew", 0.61, "count"), result("t::was_timed", 0.6, "count")]
    changes = {c.what: c for c in compare_runs(old, new)}
    assert set(changes) == {"t::same", "t::grew"}  # a time overhead is no baseline for an instruction overhead
    assert not changes["t::same"].significant
    assert changes["t::grew"].significant and changes["t::grew"].finding(0.5) == Finding.REGRESSED
    assert changes["t::grew"].describe(("60.0%", "61.0%")) == "60.0% -> 61.0% (+0.6%, exact counts)"


def test_a_pair_measured_twice_keeps_its_last_measurement_and_says_so(fake_clock_project: pytest.Pytester) -> None:
    """As pytest-rerunfailures does: the test's protocol run again after a failure."""
    fake_clock_project.makeconftest(
        fake_clock_project.path.joinpath("conftest.py").read_text()
        + textwrap.dedent(
            """
            from _pytest.runner import runtestprotocol

            def pytest_runtest_protocol(item, nextitem):
                item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
                for _ in range(2):
                    runtestprotocol(item, nextitem=nextitem, log=True)
                    item._initrequest()
                return True
            """
        )
    )
    fake_clock_project.makepyfile(
        """
        import pytest

        @pytest.mark.overhead(max=0.25)
        def test_pair(overhead, clock):
            overhead.compare(clock.cost(1000), clock.cost(1100, seed=2))
        """
    )
    result = fake_clock_project.runpytest("--overhead", "--overhead-json=out.json")
    result.stdout.fnmatch_lines(
        ["measured more than once in this session (*), the last measurement kept:", "*::test_pair. Re-measuring*"]
    )
    assert len(json.loads((fake_clock_project.path / "out.json").read_text())["results"]) == 1
