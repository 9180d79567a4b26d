"""``--overhead-against``: both trees measured in one session by replicas, interleaved; the change
gated; the base imports the base; every bad input a usage error before anything is measured.

The projects here are git repositories whose committed state is the base and whose working tree
is the head; their pairs run on the fake clock (deterministic costs), so a change is exact."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import COUNTED, git, one_line, sentences

from overheadbench.cli import main
from overheadbench.engine.changes import Change, Gate, StoredChange
from overheadbench.engine.checks import Overall, Status
from overheadbench.engine.combining import Method
from overheadbench.engine.outcome import Gated
from overheadbench.engine.samples import LOPSIDED, BlockSizes, Kind, Timer
from overheadbench.engine.settings import Policy
from overheadbench.pairs.across import StoredGate
from overheadbench.pairs.outcome import pair_outcome as outcome
from overheadbench.pairs.pair import Budget, Pair
from overheadbench.pairs.results import OverheadResult
from overheadbench.replicas.own_imports import foreign_modules
from overheadbench.report.pair_notes import wider_than
from overheadbench.report.terminal.summary import title
from overheadbench.store.runs import read_run
from overheadbench.transport.outcome import undecided_figures

PAIR = """
import pytest
from costs import FRAMEWORK_NS

@pytest.mark.overhead(max=1.0)
def test_middleware(overhead, clock):
    overhead.compare(clock.cost(1000), clock.cost(FRAMEWORK_NS, seed=2))
"""
REPLICATED = ("-o", "overhead_processes=2", "-p", "no:cacheprovider")


def committed(project: pytest.Pytester, framework_ns: int = 1100) -> pytest.Pytester:
    """``project`` as a git repository whose base commit has the pair at ``framework_ns``."""
    project.makepyfile(costs=f"FRAMEWORK_NS = {framework_ns}\n", test_pair=PAIR)
    git(project.path, "init", "-q")
    git(project.path, "add", "-A")
    git(project.path, "commit", "-qm", "base")
    return project


def base_tree(output: str) -> Path:
    """The base tree's folder, as the session printed it (other sessions' may exist beside it
    under xdist: only this one's must be gone)."""
    (line,) = [line for line in output.splitlines() if line.startswith("base tree: ")]
    return Path(line.removeprefix("base tree: ").split(" (")[0])


@pytest.fixture
def project(fake_clock_project: pytest.Pytester) -> pytest.Pytester:
    return committed(fake_clock_project)


def test_identical_trees_measure_the_same_and_the_worktree_is_removed(project: pytest.Pytester) -> None:
    done = project.runpytest("--overhead-against=HEAD", "--overhead-fail-above=5", *REPLICATED)
    done.assert_outcomes(passed=1)
    done.stdout.fnmatch_lines(
        [
            "replica processes started in this session: 4",  # 2 per tree
            "*overhead: against HEAD (*) (measured in this session, interleaved)*",
            "  test_middleware*10.0%*10.0%*~ +0.0%*same",
            "base tree: */overheadbench-against-*/b* (its path as long as the head's; removed)",
        ]
    )
    tree = base_tree(done.stdout.str())
    assert tree.name.startswith("b") and tree.parent.name.startswith("overheadbench-against-")
    assert git(project.path, "worktree", "list").count("\n") == 1 and not tree.parent.exists()


def test_a_slower_framework_path_in_the_head_fails_and_reads_relative_to_the_framework_path(
    project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    project.makepyfile(costs="FRAMEWORK_NS = 1300\n")  # the working tree (head): +18% on framework / baseline
    done = project.runpytest(
        "--overhead-against=HEAD", "--overhead-fail-above=5", "--overhead-json=o.json", *REPLICATED
    )
    done.assert_outcomes(failed=1)
    sentences(done.stdout).fnmatch_lines(
        [
            "*::test_middleware: the framework path regressed against HEAD (*): overhead 10.0% -> 30.0% (+18.2%*), "
            "more than --overhead-fail-above=5%",
        ]
    )
    run = read_run(project.path / "o.json")
    (result,) = run.results  # the base's measurement travels with the head's
    (base,) = result.places
    # one verdict, carried: the budget passed, the test failed as regressed, and the JSON's top level says so
    raw = json.loads((project.path / "o.json").read_text())["results"][0]
    assert (raw["verdict"], raw["outcome"], raw["failed"]) == ("pass", "regressed", True)
    assert run.gate.pairs == 5
    # a report of the stored file shows what the session showed: the gate first, the pair as regressed
    assert main(["report", str(project.path / "o.json")]) == 0
    report = capsys.readouterr().out
    assert "## Gate" in report and "❌ 1 regressed" in report
    assert "| ❌ regressed |" in report
    assert base.result is not None and base.result.overhead == pytest.approx(0.10, abs=0.002)
    assert base.name.startswith("HEAD") and base.role == "base"
    assert base.change is not None and base.change.percent == pytest.approx(100 * (1.3 / 1.1 - 1), abs=0.3)


def test_a_place_lopsided_to_this_one_times_its_blocks_in_its_own_sizes(project: pytest.Pytester) -> None:
    """A head ~360x its base was read in the head's block sizes: the base's framework blocks were 360
    times too short, and the change misread. A place that calibrates lopsided keeps its own sizes."""
    project.makepyfile(costs="FRAMEWORK_NS = 360000\n")  # the head's framework: ~330x the base's
    project.runpytest("--overhead-against=HEAD", "--overhead-json=o.json", *REPLICATED)
    (result,) = read_run(project.path / "o.json").results
    (base,) = result.places
    assert base.result is not None and base.change is not None
    head_sizes = {(s.calls_per_block, s.framework_calls) for s in result.samples}
    base_sizes = {(s.calls_per_block, s.framework_calls) for s in base.result.samples}
    assert len(head_sizes) == len(base_sizes) == 1  # every process of a place in the same sizes
    ((_, head_framework),), ((_, base_framework),) = head_sizes, base_sizes
    assert base_framework >= LOPSIDED * head_framework  # the base's own: its blocks as long as the head's
    assert base.change.percent == pytest.approx(100 * (360 / 1.1 - 1), rel=0.02)


def test_a_place_keeps_the_sessions_block_sizes_unless_its_own_are_lopsided() -> None:
    session = BlockSizes(64, 8, Timer.CPU)
    assert session.at_place(BlockSizes(128, 16, Timer.WALL)) is session  # a power of two apart: chance
    assert session.at_place(BlockSizes(64, 2048, Timer.WALL)) == BlockSizes(64, 2048, Timer.CPU)  # its own, this clock


def test_count_mode_pairs_are_counted_in_the_base_tree_too_and_compared_exactly(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(costs="EXTRA = 0\n", test_counted=COUNTED)
    git(pytester.path, "init", "-q")
    git(pytester.path, "add", "-A")
    git(pytester.path, "commit", "-qm", "base")
    same = pytester.runpytest("--overhead-against=HEAD", "--overhead-fail-above=5", "-p", "no:cacheprovider")
    same.assert_outcomes(passed=1)
    sentences(same.stdout).fnmatch_lines(["*overhead: against HEAD*", "  test_counted*41x*41x*~ +0.0%*exact*"])
    (row,) = [
        line for line in same.outlines if line.startswith("  test_counted") and "exact" in line and "41x  " in line
    ]
    # same by the counts; unknown where timing the same calls at both places disagrees, as the two probes (one in
    # this process, one in a fresh replica) did beside 4 busy loops (-22.4..-5.8%): a warning, never a failure
    assert row.split()[-1] in ("same", "unknown"), row
    pytester.makepyfile(costs="EXTRA = 10\n")  # the head's framework path runs twice the loop
    # saving the run too: the base tree's change is judged by the gate at the places, not the storage's (which read
    # "regressed against : ...", a stored run of no name)
    args = ("--overhead-against=HEAD", "--overhead-fail-above=5", "--overhead-autosave", "-p", "no:cacheprovider")
    grew = pytester.runpytest(*args)
    grew.assert_outcomes(failed=1)
    sentences(grew.stdout).fnmatch_lines(["*test_counted: the framework path regressed against HEAD (*exact counts*"])


LAYERED = """
import pytest
from costs import extra

def check(value):
    return value

def bare():
    return check(1)

def framework():
    return check(1) + extra()

@pytest.mark.overhead(max=1e6, mode="{mode}")
def test_layered(overhead):
    overhead.compare(bare, framework)
"""
EXTRA = "def extra():\n    total = 0\n    for i in range({loops}):\n        total += i\n    return total\n"


def layered(pytester: pytest.Pytester, mode: str, base: int, head: int) -> pytest.Pytester:
    """A project whose base commit's ``costs.extra`` loops ``base`` times, and whose head's ``head`` times."""
    pytester.makepyfile(costs=EXTRA.format(loops=base), test_layered=LAYERED.format(mode=mode))
    git(pytester.path, "init", "-q")
    git(pytester.path, "add", "-A")
    git(pytester.path, "commit", "-qm", "base")
    pytester.makepyfile(costs=EXTRA.format(loops=head))
    return pytester


def test_a_regressed_change_is_explained_function_by_function_head_less_base(pytester: pytest.Pytester) -> None:
    project = layered(pytester, "count", 2, 2000)
    args = ("--overhead-against=HEAD", "--overhead-fail-above=5", "-p", "no:cacheprovider", "--overhead-json=run.json")
    done = project.runpytest(*args)
    done.assert_outcomes(failed=1)
    sentences(done.stdout).fnmatch_lines(
        [
            "*test_layered: the framework path regressed against HEAD (*exact counts*",
            "what the change added (exact: bytecode counted per function; net +*/call):",
            "  100%  +* bytecode instr/call  costs:extra",
        ]
    )
    (place,) = json.loads((project.path / "run.json").read_text())["results"][0]["places"]
    explained = place["explain"]
    assert explained["exact"] and [row["where"] for row in explained["rows"]] == ["costs:extra"]
    assert 1998 * 4 <= explained["rows"][0]["added"] <= 1998 * 12  # the loop's bytecode, per added pass
    same = project.runpytest(*args, "--overhead-fail-above=1e6")  # not regressed: not explained
    same.assert_outcomes(passed=1)
    (place,) = json.loads((project.path / "run.json").read_text())["results"][0]["places"]
    assert place["change"] is not None and place["explain"] is None


def test_with_explain_every_change_is_explained_in_time_too(pytester: pytest.Pytester) -> None:
    project = layered(pytester, "time", 10, 400)  # the added loop well above the sampler's noise under -n 3 load
    against = ("--overhead-against=HEAD", "--overhead-explain", "--overhead-quick", "-o", "overhead_processes=2")
    done = project.runpytest(*against, "-p", "no:cacheprovider", "--overhead-json=run.json", "--overhead-md=run.md")
    done.assert_outcomes(passed=1)
    (result,) = json.loads((project.path / "run.json").read_text())["results"]
    (place,) = result["places"]
    assert place["explain"]["unit"] == "seconds" and place["explain"]["rows"][0]["where"] == "costs:extra"
    assert result["explain"]["rows"][0]["where"] == "costs:extra"  # the pair's own, beside it
    report = (project.path / "run.md").read_text()
    assert "### Against HEAD (" in report and "`test_layered.py::test_layered`, what the change added" in report


@pytest.mark.parametrize(("policy", "fails"), [(Policy.WARN, False), (Policy.FAIL, True)])
def test_a_change_too_close_to_the_threshold_to_tell_warns_or_fails_by_policy(policy: Policy, fails: bool) -> None:
    result = OverheadResult(
        Pair("t.py::test_x", Budget(max_overhead=1.0)),
        Kind.SYNC,
        ratio=1.155,
        verdict=Status.PASS,
        baseline_s=1e-6,
        harness_s=0.0,
    )
    straddling = Change("t.py::test_x", 1.10, 1.155, se=0.02)  # +5%, 95% CI about ±4%
    result.stored = StoredChange("HEAD (abc)", straddling)  # the change the result carries
    decided = outcome(result, Policy.FAIL, False, StoredGate(Gate("HEAD (abc)", 5.0, policy)))
    message = "t.py::test_x: cannot tell whether the framework path changed by more than --overhead-fail-above=5%"
    assert (decided.failure or "").startswith(message) if fails else str(decided.warnings[0]).startswith(message)
    assert outcome(result, Policy.FAIL, False, StoredGate(Gate("HEAD (abc)", None, policy))).failure is None
    assert decided.overall == Overall.UNKNOWN  # the budget passed; the one outcome is the gate's


def test_a_transport_gate_that_decided_nothing_says_so_once() -> None:
    """27 unknown figures exited 0 with no warning; each alone is only shown, so one warning says it."""
    wide = Gated("h2c c=16 req/s", "story", Change("t.py::test_gateway", 100.0, 103.0, se=0.05))
    clear = Gated("h2c c=16 p50 latency", "story", Change("t.py::test_gateway", 1.0, 1.001, se=0.001))
    shown_only = Gate("HEAD (abc)", 5.0, None)
    warning = undecided_figures("t.py::test_gateway", [wide, clear], shown_only)
    assert warning is not None and one_line(str(warning)).startswith(
        "t.py::test_gateway: the gate cannot tell 1 of its 2 transport figures' changes from --overhead-fail-above=5% "
        "(their intervals ±10..10%)"
    )
    assert undecided_figures("t.py::test_gateway", [clear], shown_only) is None
    assert undecided_figures("t.py::test_gateway", [wide], Gate("HEAD (abc)", None, None)) is None  # not gated


@pytest.mark.parametrize(
    ("verdict", "new", "overall"),
    [
        (Status.PASS, 1.10, Overall.PASS),  # the same, within budget
        (Status.PASS, 1.30, Overall.REGRESSED),  # +18%: the gate's finding outranks a passing budget
        (Status.INCONCLUSIVE, 1.30, Overall.REGRESSED),
        (Status.FAIL, 1.30, Overall.FAIL),  # a broken budget comes first
        (Status.INCONCLUSIVE, 1.10, Overall.INCONCLUSIVE),
        (Status.UNJUDGED, 1.10, Overall.UNJUDGED),
    ],
)
def test_a_pairs_one_outcome_is_the_worst_of_its_verdict_and_its_changes(
    verdict: Status, new: float, overall: Overall
) -> None:
    pair = Pair("t.py::test_x", Budget(max_overhead=1.0))
    result = OverheadResult(pair, Kind.SYNC, ratio=new, verdict=verdict, baseline_s=1e-6, harness_s=0.0)
    result.stored = StoredChange("HEAD (abc)", Change("t.py::test_x", 1.10, new, se=0.005))
    decided = outcome(result, Policy.WARN, False, StoredGate(Gate("HEAD (abc)", 5.0)))
    assert decided.overall == overall
    assert (decided.failure is not None) == (overall in (Overall.FAIL, Overall.REGRESSED))


def test_a_test_the_base_does_not_have_is_new_and_one_it_cannot_collect_fails_alone(project: pytest.Pytester) -> None:
    (project.path / "test_added.py").write_text("this is not python\n")  # broken in the base, fixed in the head
    git(project.path, "add", "test_added.py")
    git(project.path, "commit", "-qm", "broken")
    project.makepyfile(test_added=PAIR.replace("test_middleware", "test_added_later"))
    project.makepyfile(test_new=PAIR.replace("test_middleware", "test_only_in_head"))
    done = project.runpytest("--overhead-against=HEAD", "--overhead-fail-above=5", *REPLICATED)
    done.assert_outcomes(passed=2, failed=1)
    done.stdout.fnmatch_lines_random(
        [
            "*test_new.py::test_only_in_head: new: the base tree has no such test",
            "*test_added.py::test_added_later: the base tree * does not collect there:*",
        ]
    )


SRC_PAIR = """
import pytest
from mypkg import FRAMEWORK_NS

@pytest.mark.overhead(max=1.0)
def test_middleware(overhead, clock):
    overhead.compare(clock.cost(1000), clock.cost(FRAMEWORK_NS, seed=2))
"""


@pytest.mark.parametrize("path_entry", ["absolute", "relative"])
def test_the_base_imports_the_base_or_the_session_stops_saying_why(
    fake_clock_project: pytest.Pytester, path_entry: str
) -> None:
    """A package put on the path by an absolute path to the head tree (as an editable install of
    the head does) is the head's code in the base's replicas: a usage error naming the module, the
    tree it came from and the fix. A path relative to each tree imports each tree's own."""
    project = fake_clock_project
    src = project.path / "src" / "mypkg"
    src.mkdir(parents=True)
    (src / "__init__.py").write_text("FRAMEWORK_NS = 1100\n")
    entry = str(project.path / "src") if path_entry == "absolute" else "src"
    project.makeconftest(
        (project.path / "conftest.py").read_text()
        + f"\nimport os, sys\nsys.path.insert(0, os.path.abspath({entry!r}))\n"
    )
    project.makepyfile(test_pair=SRC_PAIR)
    git(project.path, "init", "-q")
    git(project.path, "add", "-A")
    git(project.path, "commit", "-qm", "base")
    done = project.runpytest("--overhead-against=HEAD", *REPLICATED)
    if path_entry == "relative":
        done.assert_outcomes(passed=1)
        return
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    sentences(done.stdout).fnmatch_lines(
        [
            "*--overhead-against: a replica of the base tree * imported mypkg from *src/mypkg/__init__.py, the head "
            "tree*pythonpath = src*--overhead-against-python*"
        ]
    )


def test_foreign_modules_are_project_code_from_anywhere_but_the_base_tree(tmp_path: Path) -> None:
    head, base = tmp_path / "head", tmp_path / "head" / ".worktrees" / "base"
    fake = {
        "mine": type(sys)("mine"),
        "theirs": type(sys)("theirs"),
        "overheadbench.plugin": type(sys)("overheadbench.plugin"),
        "builtin": type(sys)("builtin"),
    }
    fake["mine"].__file__ = str(base / "src" / "mine.py")
    fake["theirs"].__file__ = str(head / "src" / "theirs.py")
    fake["overheadbench.plugin"].__file__ = str(head / "src" / "overheadbench" / "plugin.py")
    assert list(foreign_modules(fake, head, base)) == [("theirs", (head / "src" / "theirs.py").resolve())]
    (base / "src" / "mine").mkdir(parents=True)
    (base / "src" / "mine" / "__init__.py").write_text("")
    fake["mine"].__file__ = str(tmp_path / "site-packages" / "mine" / "__init__.py")  # the head, installed
    assert ("mine", (tmp_path / "site-packages" / "mine" / "__init__.py").resolve()) in foreign_modules(
        fake, head, base
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--overhead-against=no-such-rev",),
            "*--overhead-against=no-such-rev: no such revision in this repository. "
            "Fetch it first (git fetch origin no-such-rev*",
        ),
        (("--overhead-against=HEAD", "--overhead-compare=x"), "*--overhead-compare compares with a stored run*"),
        (("--overhead-against-python=/usr/bin/python3",), "*--overhead-against-python names the base tree's*"),
        (
            ("--overhead-against=HEAD", "--overhead-against-python=/nowhere/python"),
            "*--overhead-against-python=/nowhere/python: not an executable file*",
        ),
        (
            ("--overhead-against=HEAD", "--overhead-against-python=/bin/false"),
            "*--overhead-against-python=/bin/false: cannot import pytest and overheadbench*",
        ),
        (("--overhead-against=.",), "*--overhead-against=.: that is this tree*"),
        (("--overhead-against=HEAD", "--overhead-compare-unknown=maybe"), "*must be warn or fail*"),
    ],
)
def test_bad_input_is_a_usage_error_before_anything_is_measured(
    project: pytest.Pytester, args: tuple[str, ...], message: str
) -> None:
    done = project.runpytest(*args)
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    sentences(done.stderr).fnmatch_lines([message])


def test_a_shallow_clone_says_how_to_fetch_the_base(project: pytest.Pytester, tmp_path: Path) -> None:
    (project.path / "costs.py").write_text("FRAMEWORK_NS = 1200\n")
    git(project.path, "commit", "-qam", "second")
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth=1", f"file://{project.path}", str(clone))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--overhead-against=HEAD~1", "-p", "no:cacheprovider"],
        cwd=clone,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert "this clone is shallow, and it is not in it. Fetch it first" in one_line(done.stderr)


def test_a_base_folder_with_uncommitted_changes_is_refused(project: pytest.Pytester, tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    git(tmp_path, "clone", "-q", str(project.path), str(checkout))
    (checkout / "costs.py").write_text("FRAMEWORK_NS = 1\n")
    done = project.runpytest(f"--overhead-against={checkout}")
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    done.stderr.fnmatch_lines(["*the checkout has uncommitted changes (costs.py); commit or stash them*"])
    git(checkout, "checkout", "-q", "costs.py")
    clean = project.runpytest(f"--overhead-against={checkout}", "--overhead-fail-above=5", *REPLICATED)
    clean.assert_outcomes(passed=1)
    clean.stdout.fnmatch_lines([f"*overhead: against {checkout} (measured in this session, interleaved)*"])


HANGING = """
import os, time
import pytest
from costs import FRAMEWORK_NS

@pytest.mark.overhead(max=1.0)
def test_middleware(overhead, clock):
    if os.environ.get("HANG") and not __import__("overheadbench").in_replica():
        open(os.environ["HANG"], "w").close()
        time.sleep(300)
    overhead.compare(clock.cost(1000), clock.cost(FRAMEWORK_NS, seed=2))
"""


def test_a_killed_sessions_worktree_is_removed_by_the_next(project: pytest.Pytester, tmp_path: Path) -> None:
    """SIGKILL runs no cleanup: the worktree's folder stays, locked by nobody; the next session
    removes it, and the next --overhead-against forgets its registration (git worktree prune)."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    project.makepyfile(test_first=PAIR.replace("test_middleware", "test_a_first_pair"), test_pair=HANGING)
    marker = tmp_path / "hanging"
    env = {**os.environ, "TMPDIR": str(temporary), "HANG": str(marker)}
    session = subprocess.Popen(
        [sys.executable, "-m", "pytest", "--overhead-against=HEAD", *REPLICATED],
        cwd=project.path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and time.monotonic() < deadline and session.poll() is None:
            time.sleep(0.1)
        assert marker.exists(), "the session never reached its second pair"
        assert list(temporary.glob("overheadbench-against-*")), "the first pair made no worktree"
        session.kill()
        session.wait()
    finally:
        if session.poll() is None:
            session.kill()
    time.sleep(1.0)  # its replicas' watchdogs end them
    assert (
        "prunable" in git(project.path, "worktree", "list", "--porcelain")
        or git(project.path, "worktree", "list").count("\n") == 2
    )
    env.pop("HANG")
    again = subprocess.run(
        [sys.executable, "-m", "pytest", "--overhead-against=HEAD", *REPLICATED],
        cwd=project.path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert again.returncode == 0, again.stdout[-2000:]
    assert not list(temporary.glob("overheadbench-against-*"))
    assert git(project.path, "worktree", "list").count("\n") == 1


@pytest.mark.every_plugin
def test_under_xdist_the_pairs_are_measured_against_the_base_on_one_worker(project: pytest.Pytester) -> None:
    project.makepyfile(test_more=PAIR.replace("test_middleware", "test_other"))
    git(project.path, "add", "test_more.py")
    git(project.path, "commit", "-qm", "another pair")
    done = project.runpytest("-n", "2", "--overhead-against=HEAD", "--overhead-fail-above=5", *REPLICATED)
    done.assert_outcomes(passed=2)
    done.stdout.fnmatch_lines_random(
        ["*overhead: against HEAD (*", "  test_middleware*10.0%*10.0%*same", "  test_other*10.0%*10.0%*same"]
    )


def test_a_regression_is_annotated_as_such_on_github() -> None:
    assert title("tests/t.py::test_x: the framework path regressed against HEAD (abc): ...") == "overhead regressed"
    assert title("overhead 31.5% (95% CI ...) exceeds max 25.0%: ...") == "overhead over budget"
    assert title("h2c c=10: req/s 700/s (...) falls below rps 1,000/s", "transport") == "transport over budget"
    # the cases of one parametrized function share a line: the title tells them apart
    assert title("overhead 31.5% ...", "overhead", "test_x[c=64-retry]") == "overhead over budget in test_x[c=64-retry]"


def test_pairs_whose_interval_stayed_wider_than_the_target_are_named() -> None:
    def timed(nodeid: str, low: float, high: float) -> OverheadResult:
        return OverheadResult(
            Pair(nodeid, Budget(max_overhead=1.0)),
            Kind.SYNC,
            ratio=2.0,
            ci=(low, high),
            method=Method.BETWEEN_PROCESSES,
            verdict=Status.PASS,
        )

    narrow, wide = timed("t.py::narrow", 0.99, 1.01), timed("t.py::wide", 0.9, 1.1)  # ±0.5% and ±5% of a ratio of 2
    assert wider_than([narrow, wide], 0.01) == ["t.py::wide"]


RAISES_WHEN_EXPLAINED = """
import signal
import pytest
from overheadbench import in_replica


def framework():
    if in_replica() and getattr(signal.getsignal(signal.SIGALRM), "__name__", "") == "_on_signal":
        raise RuntimeError("only while a replica profiles it")
    return sum(range(300))


@pytest.mark.overhead(max=50.0)
def test_pair(overhead):
    overhead.compare(lambda: sum(range(200)), framework)
"""


def test_a_replica_that_fails_while_explaining_a_change_costs_the_explanation_not_the_result(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_pair=RAISES_WHEN_EXPLAINED)
    for command in (("init", "-q"), ("add", "-A"), ("commit", "-qm", "base")):
        git(pytester.path, *command)
    done = pytester.runpytest(
        "--overhead-against=HEAD", "--overhead-explain", "--overhead-quick", "--overhead-json=o.json", *REPLICATED
    )
    done.assert_outcomes(passed=1)
    unexplained = "*OverheadChangeWarning: test_pair.py::test_pair: its change was not explained (its result stands): *"
    done.stdout.fnmatch_lines([unexplained])
    assert "only while a replica profiles it" in done.stdout.str()
    (result,) = read_run(pytester.path / "o.json").results
    assert result.explain is not None and result.places[0].change is not None and result.places[0].explain is None


C_WORK = """
import json
import pytest
from costs import KEYS

SMALL = {"a": 1}
PAYLOAD = {f"key{i}": i for i in range(KEYS)}


def bare():
    return json.dumps(SMALL)


def framework():
    return json.dumps(PAYLOAD)


@pytest.mark.overhead(max="1000x", mode="count")
def test_counted(overhead):
    overhead.compare(bare, framework)
"""


def test_a_change_in_work_the_counter_cannot_see_is_unknown_never_same(pytester: pytest.Pytester) -> None:
    """A head adding C work per call (``json.dumps`` of a bigger dict) read "+0.1% exact, same" in
    bytecode, exit 0, where time read +7..12%: both trees' time probes are kept and compared now."""
    pytester.makepyfile(costs="KEYS = 10\n", test_counted=C_WORK)
    git(pytester.path, "init", "-q")
    git(pytester.path, "add", "-A")
    git(pytester.path, "commit", "-qm", "base")
    pytester.makepyfile(costs="KEYS = 1000\n")  # the head's framework path serialises 100 times the keys, in C
    args = ("--overhead-against=HEAD", "--overhead-fail-above=5", "--overhead-compare-unknown=fail")
    done = pytester.runpytest(*args, "-p", "no:cacheprovider", "--overhead-json=o.json")
    done.assert_outcomes(failed=1)
    sentences(done.stdout).fnmatch_lines(
        ["*test_counted: cannot tell whether the framework path changed by more than*"]
    )
    sentences(done.stdout).fnmatch_lines(["*exact counts; timing the same calls read +*work the counter does not see*"])
    (result,) = json.loads((pytester.path / "o.json").read_text())["results"]
    (base,) = result["places"]
    assert result["probe"] is not None and base["result"]["probe"] is not None  # both trees' probes kept
    assert base["change"]["timed"][0] > 5
