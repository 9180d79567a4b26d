"""Options and output files: every bad one is a usage error before anything is measured, the
command line beats ini, measuring options imply --overhead, outputs are strict and escaped."""

from __future__ import annotations

import dataclasses
import errno
import json
import re
import sys
from pathlib import Path

import pytest
from helpers import sentences

from overheadbench.cli import main
from overheadbench.core.tables import markdown_code
from overheadbench.core.thresholds import parse_thresholds
from overheadbench.core.vocabulary import Role
from overheadbench.engine.changes import Change, Gate
from overheadbench.engine.checks import Check, Status, Unit
from overheadbench.engine.combining import Method
from overheadbench.engine.samples import Kind
from overheadbench.engine.settings import Policy
from overheadbench.pairs.across import PlaceGate
from overheadbench.pairs.outcome import pair_outcome
from overheadbench.pairs.pair import Budget, Pair
from overheadbench.pairs.results import OverheadResult, PlaceResult
from overheadbench.report.files.markdown import markdown_purposes, render_markdown
from overheadbench.report.files.outputs import Output, write_outputs
from overheadbench.store.environment import fingerprint
from overheadbench.store.runs import Run, Storage

RECORDING_PAIR = """
import pathlib
import pytest

@pytest.mark.overhead(max=1.0, processes=1)
def test_pair(overhead, clock):
    pathlib.Path("measured").write_text("yes")
    overhead.compare(clock.cost(1000), clock.cost(1100, seed=2))
"""


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--overhead-save=my run", "*run name 'my run': use letters, digits*"),
        ("--overhead-save=../../x", "*run name '../../x'*(no spaces, folders or leading dot)"),
        ("--overhead-save=", "*run name ''*"),
        ("--overhead-json=afile/out.json", "*--overhead-json=afile/out.json: cannot write in *afile"),
        ("--overhead-md=adir", "*--overhead-md=adir: is a folder; name a file"),
        ("--overhead-html=adir", "*--overhead-html=adir: is a folder; name a file"),
        ("--overhead-json=", "*--overhead-json needs a file path"),
        ("--overhead-storage=afile", "*afile: the storage folder is a file; name a folder*"),
        ("--overhead-fail-above=nan", "*--overhead-fail-above='nan': give a number of percent*"),
        ("--overhead-fail-above=-3", "*--overhead-fail-above='-3': give a number of percent*"),
        ("--overhead-compare=nope", "*no stored run matches 'nope'*"),
    ],
)
def test_bad_output_and_storage_options_stop_the_run_before_measuring(
    fake_clock_project: pytest.Pytester, option: str, message: str
) -> None:
    fake_clock_project.makepyfile(RECORDING_PAIR)
    (fake_clock_project.path / "afile").write_text("not a folder")
    (fake_clock_project.path / "adir").mkdir()
    result = fake_clock_project.runpytest("--overhead", option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    sentences(result.stderr).fnmatch_lines(["*overheadbench: *" + message.lstrip("*")])
    assert not (fake_clock_project.path / "measured").exists()


def test_measuring_options_imply_overhead_and_say_so(fake_clock_project: pytest.Pytester) -> None:
    fake_clock_project.makepyfile(RECORDING_PAIR)
    result = fake_clock_project.runpytest("--overhead-save=first")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["overheadbench: measuring (--overhead implied by --overhead-save)", "*overhead run saved to*0001_first.json"]
    )


def test_the_quick_profile_on_the_command_line_beats_the_ini_file(fake_clock_project: pytest.Pytester) -> None:
    fake_clock_project.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\noverhead_time_budget = 5s\n")
    fake_clock_project.makepyfile(RECORDING_PAIR)
    result = fake_clock_project.runpytest("--overhead-quick", "--overhead-json=out.json")
    result.assert_outcomes(passed=1)
    settings = json.loads((fake_clock_project.path / "out.json").read_text())["settings"]
    assert settings["time_budget_s"] == 0.5 and settings["inconclusive"] == "warn"
    explicit = fake_clock_project.runpytest("--overhead-quick", "--overhead-time-budget=1s", "--overhead-json=out.json")
    explicit.assert_outcomes(passed=1)
    assert json.loads((fake_clock_project.path / "out.json").read_text())["settings"]["time_budget_s"] == 1.0


def test_deprecated_options_keep_working_for_a_release_and_say_what_replaces_them(
    fake_clock_project: pytest.Pytester,
) -> None:
    fake_clock_project.makeini(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\noverhead_processes = 1\noverhead_extra_processes = 2\n"
    )
    fake_clock_project.makepyfile(RECORDING_PAIR)
    result = fake_clock_project.runpytest(
        "--overhead-target=0.5", "--overhead-max-processes=3", "--overhead-json=out.json"
    )
    result.assert_outcomes(passed=1)
    settings = json.loads((fake_clock_project.path / "out.json").read_text())["settings"]
    assert (settings["target_halfwidth"], settings["max_processes"], settings["extra_processes"]) == (0.5, 3, 2)
    sentences(result.stdout).fnmatch_lines(
        [
            "*PytestDeprecationWarning: --overhead-target: deprecated since overheadbench 0.2.0, to be removed in 0.3: "
            "the profile sets the stopping rule (the default, or --overhead-quick); --overhead-processes and "
            "--overhead-time-budget override it*",
            "*PytestDeprecationWarning: --overhead-max-processes: deprecated since overheadbench 0.2.0*",
            "*PytestDeprecationWarning: overhead_extra_processes: deprecated since overheadbench 0.2.0*",
        ]
    )


@pytest.mark.parametrize(
    ("args", "pairs", "transport"),
    [
        (["--overhead-fail-above=5%"], 5.0, 5.0),
        (["--overhead-fail-above=5"], 5.0, 5.0),
        (["--overhead-fail-above=pairs:5%,transport:30%"], 5.0, 30.0),
        (["--overhead-fail-above=transport:30"], None, 30.0),
        (["--overhead-compare-fail=5"], 5.0, None),  # the old pairs' flag: against a stored run, pairs only
        (["--overhead-compare-fail=5", "--overhead-compare-fail-percent=20"], 5.0, 20.0),
        (["--overhead-compare-fail=5", "--overhead-env=py=python"], 5.0, 5.0),  # at other places: figures too
    ],
)
def test_one_threshold_option_and_the_old_two_resolve_to_the_same_gate(
    pytester: pytest.Pytester, args: list[str], pairs: float | None, transport: float | None
) -> None:
    from overheadbench.gate_options import gate_deprecations, gate_options_from_config

    config = pytester.parseconfig(*args)
    gate = gate_options_from_config(config, in_replica=True)
    assert (gate.thresholds.pairs, gate.thresholds.transport) == (pairs, transport)
    old = [arg.partition("=")[0] for arg in args if arg.startswith("--overhead-compare-fail")]
    assert [warning.partition(":")[0] for warning in gate_deprecations(config)] == old


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--overhead-fail-above=5", "--overhead-compare-fail=5"],
            "*--overhead-compare-fail is the old spelling of --overhead-fail-above: give one",
        ),
        (
            ["--overhead-fail-above=pairs:5,gates:3"],
            "*--overhead-fail-above='pairs:5,gates:3': 'gates:3' is not "
            "KIND:PERCENT with KIND one of pairs, transport*",
        ),
        (["--overhead-fail-above=pairs:5,pairs:6"], "--overhead-fail-above='pairs:5,pairs:6': pairs is given twice"),
    ],
)
def test_a_bad_threshold_is_a_usage_error_naming_the_option(
    pytester: pytest.Pytester, args: list[str], message: str
) -> None:
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    sentences(result.stderr).fnmatch_lines(["*overheadbench: " + message.lstrip("*")])


FACTOR_PAIRS = """
import pytest

@pytest.mark.overhead(max=25)
def test_percent_meant(overhead, clock):
    overhead.compare(clock.cost(1000), clock.cost(1100, seed=2))

@pytest.mark.overhead(max=1500)
def test_large_plain(overhead, clock):
    overhead.compare(clock.cost(1000), clock.cost(413_000, seed=2))

@pytest.mark.overhead(max="500x")
def test_factor(overhead, clock):
    overhead.compare(clock.cost(1000), clock.cost(413_000, seed=2))

@pytest.mark.overhead(max="100x")
def test_factor_over(overhead, clock):
    overhead.compare(clock.cost(1000), clock.cost(413_000, seed=2))

@pytest.mark.overhead(max="5x")
def test_small_factor(overhead, clock):
    overhead.compare(clock.cost(1000), clock.cost(3350, seed=2))
"""


def test_large_ratios_read_as_factors_and_a_percent_hint_comes_only_where_the_figure_makes_it_plausible(
    fake_clock_project: pytest.Pytester,
) -> None:
    """A 413x pair read "41,200%" and a budget of max=1500 warned "did you mean max=15?" on every run."""
    fake_clock_project.makepyfile(FACTOR_PAIRS)
    outputs = ("--overhead-json=out.json", "--overhead-md=out.md", "--overhead-html=out.html")
    result = fake_clock_project.runpytest("--overhead", *outputs)
    result.assert_outcomes(passed=4, failed=1, warnings=1)
    sentences(result.stdout).fnmatch_lines(["overhead results written to *out.html"])
    page = (fake_clock_project.path / "out.html").read_text()
    assert "ratio, log axis" in page and page.count('<tr id="pair-') == 5  # ratios over decades: a log axis
    sentences(result.stdout).fnmatch_lines(
        [
            "*overhead 413x (95% CI 3??x..4??x) exceeds max 100x: baseline 1.00 µs/call*",  # one process: its layout prior
            "*OverheadMarkerWarning: *test_percent_meant: max=25 allows 26x overhead, and the pair measured 10.0%: "
            "max is a fraction (0.25 = 25%); did you mean max=0.25? (A factor is written as a string: max='26x'.)*",
        ]
    )
    result.stdout.re_match_lines(
        [r"\s+test_large_plain\s.*413x.*≤1,501x", r"\s+test_factor\s.*\s413x \([34]\d\dx\.\.4\d\dx\)\*\s+≤500x\s+PASS"]
    )
    assert "41,2" not in sentences(result.stdout).str() and "did you mean max=15" not in sentences(result.stdout).str()
    markdown = (fake_clock_project.path / "out.md").read_text()
    assert "413x (3" in markdown
    small = [line for line in markdown.splitlines() if "test_small_factor" in line]  # one notation, in both tables
    assert (
        len(small) == 2
        and not re.search(r"23\d(\.\d)?%", "".join(small))
        and all(re.search(r"\| 3\.3\dx ", line) for line in small)
    ), small
    results = {
        r["nodeid"].split("::")[1]: r for r in json.loads((fake_clock_project.path / "out.json").read_text())["results"]
    }
    assert results["test_factor"]["budget"]["max"] == 499 and results["test_factor"]["budget"]["max_factor"] is True
    assert results["test_factor"]["overhead"] == pytest.approx(412, rel=0.01)  # the JSON keeps the fraction
    assert results["test_percent_meant"]["checks"][0]["sentence"].endswith("is within max 26x")  # as its budget reads
    assert "overhead 413x (95% CI 3" in results["test_large_plain"]["checks"][0]["sentence"]
    low, high = results["test_factor"]["ci"]  # what the pair can see: twice the half-width on the log scale
    assert results["test_factor"]["detectable"] == pytest.approx((1 + high) / (1 + low) - 1)
    assert "| Detects |" in (fake_clock_project.path / "out.md").read_text()
    chosen = fake_clock_project.runpytest(
        "--overhead", "--overhead-columns=overhead,detects,wall", "-k", "test_percent_meant"
    )
    chosen.stdout.re_match_lines(
        [r"test\s+overhead \(CI\)\s+detects\s+wall\s+status", r"\s+test_percent_meant\s.*\s±\d+\.\d%\s"]
    )


@pytest.mark.every_plugin
def test_count_mode_json_outputs_are_strict_json(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.overhead(max=5, mode="count")
        def test_counted(overhead):
            overhead.compare(lambda: None, lambda: sum(range(10)))

        def test_benchmarked(benchmark):  # pytest-benchmark writes its file only when something was benchmarked
            benchmark(lambda: None)
        """
    )
    result = pytester.runpytest("--overhead", "--overhead-json=o.json", "--benchmark-json=b.json")
    result.assert_outcomes(passed=2)

    def refuse(name: str) -> None:
        raise AssertionError(f"bare {name} in a JSON output")

    ours = json.loads((pytester.path / "o.json").read_text(), parse_constant=refuse)
    assert ours["results"][0]["baseline_s"] is None and ours["results"][0]["mode"] == "count"
    carried = json.loads((pytester.path / "b.json").read_text(), parse_constant=refuse)["overheadbench"]
    assert carried["results"][0]["nodeid"].endswith("::test_counted")


HOSTILE = "t.py::test_\x1b[31mred|pipe\nnewline`tick"


@pytest.fixture
def hostile_storage(tmp_path):
    result = OverheadResult(
        Pair(HOSTILE, Budget(max_overhead=0.5), group="g|\x1b]0;title\x07"),
        Kind.SYNC,
        ratio=1.1,
        ci=(0.05, 0.15),
        method=Method.BETWEEN_PROCESSES,
        verdict=Status.PASS,
        message="fine",
    )
    storage = Storage(tmp_path, "m")
    storage.save(Run(environment={"commit_info": {"id": "abc|\x1b[2J"}}, results=[result]), "hostile")
    storage.save(Run(results=[result]), "again")
    return tmp_path


@pytest.mark.parametrize("fmt", ["markdown", "csv"])
def test_text_from_a_stored_file_is_escaped_in_every_report(hostile_storage, capsys, fmt: str) -> None:
    assert main(["--storage", str(hostile_storage), "report", "hostile", "--format", fmt]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b[31m" in out and "\\n" in out
    body = [line for line in out.splitlines() if "test_" in line]
    assert len(body) == 1  # the newline in the name did not start a new row
    if fmt == "markdown":
        assert "red\\|pipe" in body[0] and "abc\\|" in out  # a pipe does not end a cell


def test_a_markdown_report_renders_no_html_and_mentions_no_one() -> None:
    """A pull request comment shows the report: a docstring's HTML or ``@team`` must reach it as text."""
    purposes = markdown_purposes({"t.py::test_x": 'Ask @perf-team <img src="https://x.invalid/p.png"> & <b>me</b>'})
    assert "<img" not in purposes and "<b>" not in purposes and "&lt;img" in purposes
    assert "@perf-team" not in purposes and "@\u200bperf-team" in purposes
    assert markdown_code("t.py::test_x[<a>@b]") == "`t.py::test_x[<a>@b]`"  # a code span renders neither


def _gated(nodeid: str, old: float, new: float) -> OverheadResult:
    """A pair whose own budget passed, measured against a base tree with the change old -> new."""

    def result(ratio: float) -> OverheadResult:
        pair = Pair(nodeid, Budget(max_overhead=5.0))
        return OverheadResult(
            pair,
            Kind.SYNC,
            ratio=ratio,
            ci=(ratio - 1.01, ratio - 0.99),
            method=Method.BETWEEN_PROCESSES,
            verdict=Status.PASS,
            message="within budget",
            checks=[
                Check("max", "overhead", 5.0, ratio - 1, ratio - 1.01, ratio - 0.99, Unit.FRACTION, "95% CI", False)
            ],
        )

    change = Change(nodeid, old, new, se=0.005, df=9)
    gated = dataclasses.replace(result(new), places=[PlaceResult("HEAD~1", Role.BASE, result(old), change)])
    decided = pair_outcome(gated, Policy.WARN, False, PlaceGate(Gate("HEAD~1", 5.0)))  # as the session decides the test
    gated.outcome, gated.failed = decided.overall, decided.failure is not None
    return gated


def test_a_gated_reports_outcome_comes_first_and_no_regressed_pair_shows_a_tick() -> None:
    """A reviewer opened the summary on the environment and a ✅ beside a test the gate failed."""
    results = [_gated("t.py::test_slower", 2.0, 2.3), _gated("t.py::test_same", 2.0, 2.001)]
    report = render_markdown(Run(results=results, gate=parse_thresholds("5%")))
    assert report.startswith(
        "# Overhead report\n\n## Gate\n\n**❌ 1 regressed · ⚠ 0 unknown · ✅ 0 improved · ✅ 1 same**"
    )
    assert report.index("## Gate") < report.index("## Against HEAD~1") < report.index("| Python |")
    assert "❌ regressed:\n\n- `t.py::test_slower`" in report
    rows = {line.split("|")[1].strip(): line for line in report.splitlines() if line.startswith("| `t.py::")}
    pairs_table = [line for line in report.splitlines() if line.startswith("| `t.py::") and "within" not in line]
    assert any(line.endswith("| ❌ regressed |") and "test_slower" in line for line in pairs_table), rows
    assert any(line.endswith("| ✅ |") and "test_same" in line for line in pairs_table), rows
    budgets = report[report.index("## Budgets") :].splitlines()
    assert any(
        "test_slower" in line and line.endswith("| pass; the test failed: regressed (gate) |") for line in budgets
    )
    assert any("test_same" in line and line.endswith("| pass |") for line in budgets)
    assert "## Gate" not in render_markdown(Run(results=results))  # no threshold, no outcome to count


def test_text_from_a_stored_file_is_escaped_in_the_terminal_comparison(hostile_storage, capsys) -> None:
    assert main(["--storage", str(hostile_storage), "compare", "hostile", "again"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\nt.py\n  test_\\x1b[31mred|pipe\\nnewline`tick" in out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"schema_version": 3, "results": "all"}', "results: expected a list"),
        ('{"schema_version": 3, "results": [{"nodeid": 1}]}', r"results[0].nodeid: expected a string"),
    ],
)
def test_the_cli_gives_exit_2_not_1_for_a_bad_shape(tmp_path, capsys, content: str, message: str) -> None:
    (tmp_path / "0001_bad.json").write_text(content)
    (tmp_path / "0002_good.json").write_text(json.dumps(Run().to_json()))
    assert main(["--storage", str(tmp_path), "compare", "bad", "good"]) == 2
    assert message in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:  # argparse: usage error, exit 2 (nan would switch the gate off)
        main(["--storage", str(tmp_path), "compare", "good", "good", "--fail-above", "nan"])
    assert refused.value.code == 2
    assert "--fail-above: 'nan': give a number of percent, 0 or more" in capsys.readouterr().err


@pytest.mark.skipif(sys.version_info < (3, 12), reason="sys.monitoring tool ids exist from Python 3.12")
def test_an_instruments_own_error_is_not_blamed_on_the_callable(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import sys
        import pytest

        @pytest.fixture
        def all_tools_taken():
            for tool in (2, 3, 4, 5):
                sys.monitoring.use_tool_id(tool, "someone else")
            yield
            for tool in (2, 3, 4, 5):
                sys.monitoring.free_tool_id(tool)

        @pytest.mark.overhead(max=0.5, mode="count")
        def test_counted(all_tools_taken, overhead):
            overhead.compare(lambda: None, lambda: None)
        """
    )
    result = pytester.runpytest("--overhead")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*CounterBusy: count mode needs a free sys.monitoring tool id*"])
    result.stdout.no_fnmatch_line("*callable raised*")


def test_every_public_name_resolves_and_is_typed() -> None:
    from pathlib import Path

    import overheadbench

    assert all(getattr(overheadbench, name) is not None for name in overheadbench.__all__)
    assert (Path(overheadbench.__file__).parent / "py.typed").exists()
    assert issubclass(overheadbench.OverheadInconclusiveWarning, UserWarning)


def test_an_output_that_fails_at_the_end_loses_no_other_and_is_named(fake_clock_project: pytest.Pytester) -> None:
    fake_clock_project.makepyfile(
        RECORDING_PAIR
        + """

def test_the_disk_changes_under_the_run():
    pathlib.Path("out.json").mkdir()  # the checked path became a folder mid-run: the write must fail
"""
    )
    first = fake_clock_project.runpytest("--overhead-save=base")
    first.assert_outcomes(passed=2)
    folder = fake_clock_project.path / "baselines" / fingerprint()
    stored = (folder / "0001_base.json").read_bytes()
    (fake_clock_project.path / "out.json").rmdir()
    result = fake_clock_project.runpytest(
        "--overhead-compare=base", "--overhead-json=out.json", "--overhead-md=out.md", "--overhead-save=next"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(
        ["overheadbench: out.json: could not be written (Is a directory)", "*overhead: framework vs baseline*"]
    )
    text = result.stdout.str()
    assert "written to out.md" in text and "written to out.json" not in text  # only what was written is listed
    assert (fake_clock_project.path / "out.md").is_file()  # the others are written all the same
    assert (folder / "0002_next.json").is_file() and "overhead run saved to" in text
    assert (folder / "0001_base.json").read_bytes() == stored


def test_a_full_disk_is_named_with_the_file_it_stopped() -> None:
    def full() -> Path:
        raise OSError(errno.ENOSPC, "No space left on device")

    done = write_outputs([Output("out.json", full), Output("out.md", lambda: Path("out.md"))], interrupted=False)
    assert done.problems == ["out.json: could not be written (No space left on device)"]
    assert done.files == ["out.md"]


FAILING_PAIR = """
import pytest

@pytest.mark.overhead(max=0.05, processes=1)
def test_pair(overhead, clock):
    overhead.compare(clock.cost(1000), clock.cost(1500, seed=2))
"""


def test_a_session_that_fails_keeps_the_output_it_replaced_and_says_so(fake_clock_project: pytest.Pytester) -> None:
    fake_clock_project.makepyfile(RECORDING_PAIR)
    outputs = ("--overhead", "--overhead-json=out.json", "--overhead-md=out.md")
    fake_clock_project.runpytest(*outputs).assert_outcomes(passed=1)
    again = fake_clock_project.runpytest(*outputs)
    again.assert_outcomes(passed=1)
    again.stdout.fnmatch_lines(["overhead results written to out.json (replacing the file written 20*)"])
    passed = {name: (fake_clock_project.path / name).read_text() for name in ("out.json", "out.md")}
    assert not (fake_clock_project.path / "out.previous.json").exists()  # a passing session keeps nothing aside

    fake_clock_project.makepyfile(FAILING_PAIR)  # the same file, now over its budget
    failed = fake_clock_project.runpytest(*outputs)
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(
        [
            "overhead results written to out.json (this session did not pass: the file it replaced, written 20*, "
            "is kept as out.previous.json)",
            "overhead results written to out.md (this session did not pass: * is kept as out.previous.md)",
        ]
    )
    assert (fake_clock_project.path / "out.previous.json").read_text() == passed["out.json"]
    assert (fake_clock_project.path / "out.previous.md").read_text() == passed["out.md"]
    assert json.loads((fake_clock_project.path / "out.json").read_text())["results"][0]["verdict"] == "fail"


INTERRUPTED = """
import pytest

@pytest.mark.overhead(max=1.0, processes=1)
def test_a_pair(overhead, clock):
    overhead.compare(clock.cost(1000), clock.cost(1100, seed=2))

def test_b_interrupted():
    raise KeyboardInterrupt
"""


def test_an_interrupted_session_leaves_existing_outputs_as_they_were(fake_clock_project: pytest.Pytester) -> None:
    fake_clock_project.makepyfile(INTERRUPTED)
    for name in ("out.json", "out.md"):
        (fake_clock_project.path / name).write_text("from the last whole session\n")
    result = fake_clock_project.runpytest_subprocess(
        "--overhead", "--overhead-json=out.json", "--overhead-md=out.md", "--overhead-save=partial"
    )
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        ["overheadbench: interrupted: out.json, out.md not written (existing files left as they were)"]
    )
    for name in ("out.json", "out.md"):
        assert (fake_clock_project.path / name).read_text() == "from the last whole session\n"
    assert not (fake_clock_project.path / "baselines").exists()


@pytest.mark.parametrize("taken", ["tests/test_x.py", "test_x.py::test_pair", "tests"])
def test_a_test_path_taken_as_the_stored_runs_name_is_a_usage_error(pytester: pytest.Pytester, taken: str) -> None:
    pytester.mkdir("tests")
    result = pytester.runpytest("--overhead-compare", taken)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    sentences(result.stderr).fnmatch_lines(
        [
            f"*--overhead-compare took '{taken}' as the stored run's name, which looks like a test path; write --overhead-compare=NAME*"
        ]
    )


BIDI_IDS = """
import pytest

@pytest.mark.overhead(max=5.0, processes=1)
@pytest.mark.parametrize("name", ["a\\u202eevil"])
def test_warned(overhead, name):
    overhead.compare(lambda: None, lambda: None, concurrency=4)  # the callers' own cost: a warning naming the test

@pytest.mark.overhead(max=5.0, processes=1)
@pytest.mark.parametrize("name", ["b\\u2066x"])
def test_misused(overhead, name):
    overhead.compare(lambda: None, lambda: None)
    overhead.compare(lambda: None, lambda: None)  # twice: a usage error naming the test
"""


def test_text_from_test_ids_is_escaped_in_every_message_and_report(pytester: pytest.Pytester) -> None:
    """With pytest's own escaping of ids switched off, a bidirectional override in an id must
    still not reorder our warnings, failures or reports."""
    pytester.makeini(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\n"
        "disable_test_id_escaping_and_forfeit_all_rights_to_community_support = true\n"
    )
    pytester.makepyfile(BIDI_IDS)
    result = pytester.runpytest("--overhead", "--overhead-time-budget=200ms", "--overhead-md=r.md")
    result.assert_outcomes(passed=1, failed=1)
    ours = [  # pytest's own lines (its short summary's "FAILED <id>") print the id as the ini asked
        line
        for line in result.stdout.lines
        if ("OverheadHarnessWarning" in line or "compare() was called twice" in line) and not line.startswith("FAILED")
    ]
    assert any("test_warned[a\\u202eevil]: releasing and gathering" in line for line in ours), ours
    assert any("test_misused[b\\u2066x]: overhead.compare() was called twice" in line for line in ours), ours
    assert not any(char in line for line in ours for char in "\u202e\u2066")
    report = (pytester.path / "r.md").read_text(encoding="utf-8")
    assert "a\\u202eevil" in report and "\u202e" not in report
