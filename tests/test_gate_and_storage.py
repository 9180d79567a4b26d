"""The regression gate on synthetic runs (deterministic), stored runs per machine, exclusive
saves, and CI integration (GitHub annotations, the job summary, a table that fits)."""

from __future__ import annotations

import dataclasses
import json
import math
import multiprocessing
import os
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import sentences

from overheadbench.core.errors import StorageError
from overheadbench.engine.checks import Status
from overheadbench.engine.combining import SESSION_SD, Method
from overheadbench.engine.findings import Finding
from overheadbench.engine.samples import Kind, ReplicaSamples
from overheadbench.engine.shifts import Point, find_shifts
from overheadbench.history.pair_changes import compare_result, reading
from overheadbench.pairs.comparing import Figure, session_sd
from overheadbench.pairs.pair import Budget, Pair
from overheadbench.pairs.results import OverheadResult
from overheadbench.report.files.github import annotation
from overheadbench.report.terminal.summary import SessionFacts, render_table, session_summary
from overheadbench.store.environment import fingerprint, recorded_fingerprint
from overheadbench.store.runs import Run, Storage, read_run


def timed(overheads: list[float], nodeid: str = "t.py::test_pair") -> OverheadResult:
    """A timed result whose processes' median overheads are ``overheads`` (one pair per process)."""
    samples = [ReplicaSamples(1, [100_000], [round(100_000 * (1 + o))], 10.0) for o in overheads]
    centre = sorted(overheads)[len(overheads) // 2]
    return OverheadResult(
        Pair(nodeid, Budget(max_overhead=1.0), processes=len(overheads)),
        Kind.SYNC,
        ratio=1 + centre,
        method=Method.BETWEEN_PROCESSES,
        verdict=Status.PASS,
        samples=samples,
        baseline_s=1e-6,
        framework_s=1.1e-6,
    )


def processes(centre: float, sd: float, k: int) -> list[float]:
    """``k`` process medians around ``centre`` with sample standard deviation about ``sd`` (fixed, not random)."""
    offsets = (
        [(-1) ** i * (i // 2 + 1) for i in range(k)]
        if k % 2 == 0
        else [0, *[(-1) ** i * (i // 2 + 1) for i in range(k - 1)]]
    )
    scale = sd / math.sqrt(sum(o * o for o in offsets) / (k - 1))
    return [centre + scale * o for o in offsets]


def test_a_runs_reading_carries_the_standard_error_of_its_processes_log_ratios() -> None:
    medians = processes(0.10, 0.01, 6)
    six = reading(timed(medians))
    log_sd = float(np.std(np.log1p(medians), ddof=1))
    # the median's standard error, over the spread seen or the robust spread between processes if wider
    assert log_sd / math.sqrt(6) * 1.2533 <= six.log_se <= 1.5 * log_sd / math.sqrt(6) * 1.2533 and six.df == 5
    three = reading(timed(processes(0.10, 0.01, 3)))
    assert three.log_se == pytest.approx(float(np.std(np.log1p(processes(0.10, 0.01, 3)), ddof=1)) / math.sqrt(3))


@pytest.mark.parametrize("k", [3, 6, 9])
def test_the_gate_detects_an_eighteen_percent_regression_with_three_processes_or_more(k: int) -> None:
    old, new = timed(processes(0.10, 0.005, k)), timed(processes(0.30, 0.005, k))
    change = compare_result(old, new)
    assert change.percent == pytest.approx(100 * (1.30 / 1.10 - 1), abs=0.1)  # of the framework path: +18%
    assert change.significant and change.finding(5) == Finding.REGRESSED
    assert change.finding(25) == Finding.SAME  # +18% is not "more than 25%"


def test_identical_code_is_not_significant_and_never_gated() -> None:
    change = compare_result(timed(processes(0.10, 0.01, 6)), timed(processes(0.103, 0.01, 6)))
    assert not change.significant and change.finding(5) == Finding.SAME and change.finding(0) == Finding.UNKNOWN


def test_a_230_percent_pair_and_a_20_percent_pair_slowed_alike_are_gated_alike() -> None:
    """The change is of framework / baseline: the framework path 10% slower is +10% on either."""
    low = compare_result(timed(processes(0.20, 0.002, 6)), timed(processes(0.32, 0.002, 6)))
    high = compare_result(timed(processes(2.30, 0.002, 6)), timed(processes(2.63, 0.002, 6)))
    assert low.percent == pytest.approx(10.0, abs=0.1) and high.percent == pytest.approx(10.0, abs=0.1)
    assert low.finding(5) == high.finding(5) == Finding.REGRESSED


def test_the_session_spread_comes_from_the_machines_history_when_it_has_enough() -> None:
    centres = (0.10, 0.14, 0.06, 0.12)
    history = [timed(processes(centre, 0.0001, 6)) for centre in centres]
    figure = Figure.of(history[0])
    assert session_sd([], figure, 0.001) == (SESSION_SD, math.inf)
    sd, df = session_sd(history, figure, 0.0001)
    points = [
        Point(math.log1p(centre), reading(run).log_se, str(i))
        for i, (centre, run) in enumerate(zip(centres, history, strict=True))
    ]
    series = find_shifts(points, SESSION_SD)
    assert sd == pytest.approx(series.tau, rel=1e-3) and df == series.df  # the series' spread, as history reads it
    assert sd > SESSION_SD and math.isfinite(df)
    assert session_sd(history, dataclasses.replace(figure, concurrency=8), 0.0001) == (SESSION_SD, math.inf)
    noisy = compare_result(timed(processes(0.10, 0.001, 6)), timed(processes(0.20, 0.001, 6)), history)
    assert noisy.finding(5) != Finding.REGRESSED  # +9% is within what this pair moves between sessions here
    quiet = compare_result(timed(processes(0.10, 0.001, 6)), timed(processes(0.20, 0.001, 6)))
    assert quiet.finding(5) == Finding.REGRESSED  # with the prior (0.5% between sessions) it is a regression


def test_runs_are_stored_per_machine_and_the_newest_of_this_machine_is_the_default(tmp_path: Path) -> None:
    here, there = Storage(tmp_path, "machine-a"), Storage(tmp_path, "machine-b")
    first = here.save(Run(), "base")
    other = there.save(Run(), "elsewhere")
    assert (
        first == tmp_path / "machine-a" / "0001_base.json" and other == tmp_path / "machine-b" / "0001_elsewhere.json"
    )
    later = there.save(Run(), "base")
    assert here.find() == first and there.find() == later  # never another machine's newer run
    assert here.find("elsewhere") == other and here.is_foreign(other) and not here.is_foreign(first)
    legacy = tmp_path / "0007_old.json"
    legacy.write_text(json.dumps(Run().to_json()))
    assert here.find("old") == legacy and here.is_foreign(legacy)
    with pytest.raises(StorageError, match=r"no stored run of this machine \(machine-c\).*2 of other machines"):
        Storage(tmp_path / "machine-b", "machine-c").find()


@pytest.mark.replicas  # reads this machine's fingerprint: `file -b` on the interpreter
def test_a_run_filed_under_this_machine_but_measured_elsewhere_is_foreign(tmp_path: Path) -> None:
    """The folder is where a run was put; the run records which machine measured it (older runs:
    rebuilt from their machine info), and that is what the gate's refusal reads."""
    here = Storage(tmp_path, fingerprint())
    mine = here.save(Run(environment={"fingerprint": fingerprint()}), "mine")
    copied = here.save(Run(environment={"fingerprint": "Linux-CPython-3.11-64bit-2cpu-0000beef"}), "copied")
    assert not here.is_foreign(mine, read_run(mine).environment)
    assert here.is_foreign(copied, read_run(copied).environment)
    legacy = {
        "cpu_count": 2,
        "machine_info": {
            "system": "Linux",
            "python_implementation": "CPython",
            "python_version": "3.11.7",
            "cpu": {"brand_raw": "Some Other CPU", "bits": 64},
        },
    }
    rebuilt = recorded_fingerprint(legacy)
    assert rebuilt is not None and rebuilt.startswith("Linux-CPython-3.11-64bit-2cpu-") and rebuilt != fingerprint()
    assert recorded_fingerprint({}) is None  # unknown: the folder decides


def test_a_default_storage_linked_outside_the_rootdir_is_used_only_when_named(
    fake_clock_project: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("shared-folder")
    theirs = elsewhere / ".their-editor.tmp"
    theirs.write_text("not ours")
    (fake_clock_project.path / "baselines").symlink_to(elsewhere, target_is_directory=True)
    fake_clock_project.makepyfile(GATED_PAIR)
    refused = fake_clock_project.runpytest("--overhead-save=base")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines([f"*default storage folder */baselines resolves to {elsewhere}, outside the rootdir*"])
    assert list(elsewhere.iterdir()) == [theirs]  # nothing written there
    fake_clock_project.runpytest("--overhead").assert_outcomes(passed=1)  # not saving: the link is not touched
    named = fake_clock_project.runpytest("--overhead-save=base", f"--overhead-storage={elsewhere}")
    named.assert_outcomes(passed=1)
    assert (elsewhere / fingerprint() / "0001_base.json").is_file() and theirs.exists()


def test_the_gate_refuses_a_foreign_run_copied_into_this_machines_folder(fake_clock_project: pytest.Pytester) -> None:
    fake_clock_project.makepyfile(GATED_PAIR)
    fake_clock_project.runpytest("--overhead-save=base").assert_outcomes(passed=1)
    stored = fake_clock_project.path / "baselines" / fingerprint() / "0001_base.json"
    data = json.loads(stored.read_text())
    assert data["environment"]["fingerprint"] == fingerprint()  # every run records its machine
    data["environment"]["fingerprint"] = "Linux-CPython-3.11-64bit-2cpu-0000beef"
    stored.write_text(json.dumps(data))
    refused = fake_clock_project.runpytest("--overhead-compare=base", "--overhead-fail-above=5")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    sentences(refused.stderr).fnmatch_lines(
        ["*0001_base.json: measured on another machine than this one (*); a gate across*"]
    )


def _save_many(root: str, count: int) -> None:
    storage = Storage(Path(root), "racing")
    for _ in range(count):
        storage.save(Run(environment={"pid": os.getpid()}), "same")


def test_saves_that_race_never_overwrite_each_other(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_save_many, args=(str(tmp_path), 25)) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    files = sorted((tmp_path / "racing").glob("*.json"))
    assert len(files) == 100 and [f.name for f in files] == [f"{n:04d}_same.json" for n in range(1, 101)]
    assert all(read_run(f).environment["pid"] for f in files)  # each whole, none half-written
    assert list((tmp_path / "racing").glob(".*.tmp")) == []


def test_a_save_removes_the_temporary_files_a_killed_save_left(tmp_path: Path) -> None:
    storage = Storage(tmp_path, "m")
    storage.folder.mkdir(parents=True)
    stale, fresh = storage.folder / ".run.k1lled_x.tmp", storage.folder / ".run.inflight.tmp"
    others = [storage.folder / name for name in (".notes.tmp", ".run.tmp", ".run.their-own-name.tmp")]
    for path in (stale, fresh, *others):
        path.write_text("{")
        if path != fresh:
            hours_ago = time.time() - 7200
            os.utime(path, (hours_ago, hours_ago))
    storage.save(Run(), "next")
    assert not stale.exists() and fresh.exists()  # a save in flight elsewhere is left alone
    assert all(path.exists() for path in others)  # hidden *.tmp files that are not ours (a linked folder's)


GATED_PAIR = """
import os
import pytest

@pytest.mark.overhead(max=1.0, processes=1)
def test_middleware(overhead, clock):
    overhead.compare(clock.cost(1000), clock.cost(int(os.environ.get("FRAMEWORK_NS", "1100")), seed=2))
"""


def test_a_gate_against_another_machines_run_is_refused_unless_forced(fake_clock_project: pytest.Pytester) -> None:
    fake_clock_project.makepyfile(GATED_PAIR)
    fake_clock_project.runpytest("--overhead-save=base").assert_outcomes(passed=1)
    baselines = fake_clock_project.path / "baselines"
    (baselines / fingerprint()).rename(baselines / "another-machine")
    refused = fake_clock_project.runpytest("--overhead-compare=base", "--overhead-fail-above=5")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    sentences(refused.stderr).fnmatch_lines(
        ["*0001_base.json: measured on another machine than this one (*); a gate across*"]
    )
    forced = fake_clock_project.runpytest(
        "--overhead-compare=base", "--overhead-fail-above=5", "--overhead-compare-force"
    )
    forced.assert_outcomes(passed=1)
    compared = fake_clock_project.runpytest("--overhead-compare=base")  # without a gate: compared, not refused
    compared.assert_outcomes(passed=1)
    sentences(compared.stdout).fnmatch_lines(["*overhead: compared with 0001_base.json*"])


def test_under_github_actions_failing_pairs_are_annotated_and_the_report_goes_to_the_summary(
    fake_clock_project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_clock_project.makepyfile(GATED_PAIR.replace("max=1.0", "max=0.02"))
    summary = fake_clock_project.path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = fake_clock_project.runpytest("--overhead")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "::error file=test_under_github_actions_failing_pairs_are_annotated_and_the_report_goes_to_the_summary.py,"
            "line=4,title=overhead over budget in test_middleware::overhead 10.0%25 (*) exceeds max 2.0%25: baseline*"
        ]
    )
    text = summary.read_text()
    assert text.startswith("earlier step\n# Overhead report") and "test_middleware" in text
    quiet = fake_clock_project.runpytest("--overhead", "--overhead-github=false")
    quiet.stdout.no_fnmatch_line("::error*")


@pytest.mark.parametrize("github", ["true", "false"])
def test_a_markdown_report_named_as_the_job_summary_is_appended_to_it_once(
    fake_clock_project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, github: str
) -> None:
    """``--overhead-md="$GITHUB_STEP_SUMMARY"`` replaced what earlier steps wrote, the report came
    twice, and a failing session left a ``.previous`` file in the runner's folder."""
    fake_clock_project.makepyfile(GATED_PAIR.replace("max=1.0", "max=0.05"))
    folder = fake_clock_project.path / "runner"
    folder.mkdir()
    summary = folder / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = fake_clock_project.runpytest("--overhead", f"--overhead-md={summary}", f"--overhead-github={github}")
    result.assert_outcomes(failed=1)
    text = summary.read_text()
    assert text.startswith("earlier step\n# Overhead report") and text.count("# Overhead report") == 1
    assert sorted(path.name for path in folder.iterdir()) == ["summary.md"]


def test_a_job_summary_that_cannot_be_written_is_a_warning_not_a_failed_session(
    fake_clock_project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_clock_project.makepyfile(GATED_PAIR)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(fake_clock_project.path / "no-such-folder" / "summary.md"))
    result = fake_clock_project.runpytest("--overhead", "--overhead-json=out.json")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["overheadbench: warning: *no-such-folder/summary.md: could not be written (*)"])
    assert (fake_clock_project.path / "out.json").is_file()  # the other outputs are written


def test_annotations_escape_what_the_command_syntax_reserves() -> None:
    line = annotation("a,b:c.py", 7, "over budget", "50% over\nsecond line")
    assert line == "::error file=a%2Cb%3Ac.py,line=7,title=over budget::50%25 over%0Asecond line"


def test_the_terminal_table_fits_120_columns_and_columns_can_be_chosen() -> None:
    long = "benchmarks/test_middleware_overhead.py::test_each_middleware_alone[rate_limiter-async-with-a-long-id]"
    result = timed(processes(0.1, 0.01, 6), long)
    lines = render_table(Run(results=[result]))
    assert max(len(line) for line in lines) <= 120
    assert "benchmarks/test_middleware_overhead.py" in lines  # the file, once, as a heading
    assert lines[3].startswith("  test_each_middleware_alone[rate_limiter-async-with-a-long-id]  1.00 µs")  # whole
    many = [timed(processes(0.1, 0.01, 6), f"t.py::test_x[{kind}-{index}]") for kind in "ab" for index in range(3)]
    many.append(timed(processes(0.1, 0.01, 6), "t.py::test_" + "y" * 130))
    lines = render_table(Run(results=many))
    assert max(len(line) for line in lines if "yyy" not in line) <= 120  # a name wider than the table: own line
    assert (
        lines[2:4] == ["t.py", "  test_x"] and lines[4].startswith("    [a-0]  ") and lines[9].startswith("    [b-2]  ")
    )
    assert lines[10] == "  test_" + "y" * 130 and lines[11].strip().startswith("1.00 µs")  # own line, never cut
    chosen = render_table(Run(results=[result]), ("overhead", "procs", "wall"))
    assert chosen[0].split() == ["test", "overhead", "(CI)", "procs", "wall", "status"]


def test_the_summary_lines_fit_120_columns_and_never_break_a_path() -> None:
    """A line of the facts under the table (a re-measured pair, a file written) was one line however
    long: 121 characters and more under ``COLUMNS=120``."""
    result = timed(processes(0.1, 0.01, 6), "t.py::test_x")
    path = "/a/very/long/" + "folder/" * 20 + "overhead-results.json"
    remeasured = [f"t.py::test_{index}" for index in range(12)]
    facts = SessionFacts(measuring=True, replicas_started=3, quick=True, written=[path], remeasured=remeasured)
    sections = session_summary(Run(results=[result]), None, ("overhead",), facts)
    (facts,) = [section for section in sections if section.title is None]
    assert all(len(line) <= 120 for line in facts.lines if path not in line)
    assert f"overhead results written to {path}" in " ".join(facts.lines).replace("to\n", "to ")
    assert any(line.endswith(path) or line == path for line in facts.lines)  # whole, on its line


def test_unknown_columns_are_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest("--overhead-columns=overhead,cycles")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--overhead-columns='overhead,cycles': unknown column(s) cycles; choose from*"])


def test_one_stored_run_far_from_the_others_does_not_make_the_learned_spread() -> None:
    """A haystack pipeline read 32x in one session of ten (550-640x in the rest): kept, that run
    made its learned spread 100-150% and every later interval useless."""
    centres = (6.0, 6.2, 5.9, 6.1, 0.3, 6.05)  # overheads: ratios 7.0, 7.2, 6.9, 7.1, 1.3, 7.05
    history = [timed(processes(centre, 0.0001, 6)) for centre in centres]
    sd, _ = session_sd(history, Figure.of(history[0]), 0.0001)
    kept = [math.log1p(centre) for centre in centres if centre > 1]
    assert sd < 2 * float(np.std(kept, ddof=1))  # the far run winsorised and its differences left out
    near, _ = session_sd(history[:4] + history[5:], Figure.of(history[0]), 0.0001)
    assert sd == pytest.approx(near, rel=0.5)


def test_a_session_that_uses_no_storage_never_reads_the_machine() -> None:
    """Reading the machine (packages, the interpreter's build) costs a third of a second, and every
    replica process paid it once the session's parts were assembled before the options were read."""
    from overheadbench.history.gate import session_stored

    class NoStorage:
        uses_storage = False

    def environment() -> dict[str, object]:
        raise AssertionError("the machine was read")

    assert session_stored(NoStorage(), environment) is None
