"""Which commit did it: the bisection's search on injected measurements, and a real bisection of a
small project's history in count mode (exact, so the test cannot flake)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from overheadbench.cli import INTERRUPTED, main
from overheadbench.engine.findings import Finding
from overheadbench.history.bisect import BisectError, Measured, Moved, bisect
from overheadbench.history.commits import CommitSessions


def _history(count: int) -> list[tuple[str, str]]:
    return [(f"{index:040x}", f"commit {index}") for index in range(1, count + 1)]


def _measure(changes: dict[str, list[Finding]]) -> tuple[list[str], object]:
    asked: list[str] = []

    def measure(commit: str, reference: str) -> Measured:
        asked.append(commit)
        finding = changes[commit].pop(0) if len(changes[commit]) > 1 else changes[commit][0]
        if finding == Finding.REGRESSED and changes.get(reference, [Finding.SAME])[-1] == Finding.REGRESSED:
            finding = Finding.SAME  # over a commit already past the one step: the same
        return Measured((Moved("t.py::test_x", 8.0 if finding == Finding.REGRESSED else 0.0, 0, 0, finding),))

    return asked, measure


def test_one_regressed_commit_among_sixteen_is_found_in_log2_plus_two_steps() -> None:
    commits = _history(16)
    for culprit in range(16):
        findings = {c: [Finding.REGRESSED if i >= culprit else Finding.SAME] for i, (c, _) in enumerate(commits)}
        asked, measure = _measure(findings)
        found = bisect("0" * 40, commits, measure, rounds=3, said=lambda line: None)  # type: ignore[arg-type]
        assert found.first_bad == commits[culprit][0]
        assert len(found.steps) <= 4 + 2 and not found.gradual


def test_an_unknown_commit_is_measured_again_then_skipped_never_guessed() -> None:
    commits = _history(4)
    findings = {
        commits[0][0]: [Finding.SAME],
        commits[1][0]: [Finding.UNKNOWN],  # stays unknown: skipped
        commits[2][0]: [Finding.REGRESSED],
        commits[3][0]: [Finding.REGRESSED],
    }
    _, measure = _measure(findings)
    found = bisect("0" * 40, commits, measure, rounds=2, said=lambda line: None)  # type: ignore[arg-type]
    skipped = [step for step in found.steps if step.outcome == "skipped"]
    assert len(skipped) == 1 and skipped[0].rounds == 2
    assert found.first_bad is None and found.unsplit == (commits[1][0], commits[2][0])
    assert f"skipped commits left 2 candidates ({commits[1][0][:12]}, {commits[2][0][:12]})" in found.note


def test_a_bad_that_is_not_regressed_has_nothing_to_find() -> None:
    commits = _history(3)
    _, measure = _measure({commit: [Finding.SAME] for commit, _ in commits})
    found = bisect("0" * 40, commits, measure, rounds=1, said=lambda line: None)  # type: ignore[arg-type]
    assert found.first_bad is None and len(found.steps) == 1 and "nothing to find" in found.note


def test_a_regression_of_several_small_steps_is_told_as_such() -> None:
    commits = _history(4)
    findings = {
        commit: [Finding.REGRESSED if index >= 2 else Finding.SAME] for index, (commit, _) in enumerate(commits)
    }
    asked, measure = _measure(findings)

    def against_parent_too(commit: str, reference: str) -> Measured:
        if reference != "0" * 40:  # the first bad one against its parent: each step alone is small
            return Measured((Moved("t.py::test_x", 3.0, 2.0, 4.0, Finding.SAME),))
        return measure(commit, reference)  # type: ignore[operator]

    found = bisect("0" * 40, commits, against_parent_too, rounds=1, said=lambda line: None)
    assert found.first_bad == commits[2][0] and found.gradual
    assert "made of several smaller steps" in found.note


AGENT = """
import pytest

WORK = {work}

def bare(x):
    return x * 2

def framework(x):
    total = 0
    for index in range(WORK):
        total += index
    return bare(x)

@pytest.mark.overhead(max=1000.0, mode="count")
def test_framework(overhead):
    overhead.compare(lambda: bare(3), lambda: framework(3))
"""


def _git(folder: Path, *args: str) -> str:
    environ = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    environ["GIT_COMMITTER_EMAIL"] = "t@t"
    return subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True, text=True, env=environ).stdout


@pytest.mark.usefixtures("only_this_plugin")
def test_a_real_history_is_bisected_to_the_commit_that_slowed_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "pytest.ini").write_text("[pytest]\noverhead_counter = bytecode\n")
    for index, work in enumerate((10, 10, 10, 10, 30, 30, 30, 30)):  # the fifth commit slows the framework
        (tmp_path / "test_agent.py").write_text(AGENT.format(work=work))
        (tmp_path / "notes.txt").write_text(f"commit {index}\n")
        _git(tmp_path, "add", "-A")
        _git(tmp_path, "commit", "-q", "-m", f"step {index}" + (" slows the loop" if index == 4 else ""))
    log = _git(tmp_path, "log", "--reverse", "--format=%H").split()
    monkeypatch.chdir(tmp_path)
    assert main(["bisect", log[0], log[-1], "--json", "out.json", "--", "-p", "no:randomly"]) == 0
    said = capsys.readouterr().out
    assert f"first regressed (cut-off +5% over {log[0][:12]}): {log[4]} step 4 slows the loop" in said
    assert "then regressed" not in said  # one step: BAD over it is the same
    found = json.loads((tmp_path / "out.json").read_text())
    assert found["first_bad"] == log[4] and not found["gradual"]
    (explained,) = found["explained"].values()  # the commit's own change, function by function (exact)
    assert explained["rows"][0]["where"] == "test_agent:framework" and explained["rows"][0]["added"] > 0
    assert "test_agent.py::test_framework, against its parent: what the change added (exact" in said
    assert found["steps"][0]["commit"] == log[-1] and found["steps"][0]["outcome"] == "bad"
    assert len(found["steps"]) <= 3 + 2
    assert len(_git(tmp_path, "worktree", "list").splitlines()) == 1  # the steps' worktree is gone


def test_a_first_bad_commit_unknown_against_its_parent_is_measured_again_and_not_called_gradual() -> None:
    commits = _history(4)
    findings = {
        commit: [Finding.REGRESSED if index >= 2 else Finding.SAME] for index, (commit, _) in enumerate(commits)
    }
    _, measure = _measure(findings)
    against_parent: list[str] = []

    def unknown_against_parent(commit: str, reference: str) -> Measured:
        if reference == commits[1][0]:  # the first bad one against its parent: +5.9% (+4.3..+7.4%) at a 5% gate
            against_parent.append(commit)
            return Measured((Moved("t.py::test_x", 5.9, 4.3, 7.4, Finding.UNKNOWN),))
        return measure(commit, reference)  # type: ignore[operator]

    found = bisect("0" * 40, commits, unknown_against_parent, rounds=3, said=lambda line: None)
    assert found.first_bad == commits[2][0] and not found.gradual
    assert against_parent == [commits[2][0]] * 3  # measured again while unknown, as a step is
    assert "stayed unknown after 3 session(s)" in found.note and "cannot be told" in found.note


def test_a_step_where_the_regressed_pair_raised_is_never_called_good() -> None:
    """The culprit also made the pair raise once: read as "no pair measured -> good", bisect named the
    next commit and exited 0."""
    commits = _history(6)
    raised = commits[2][0]  # the commit that slowed the pair, where it also raises

    def measure(commit: str, reference: str) -> Measured:
        if commit == raised:
            return Measured((Moved("t.py::test_other", 0.0, -1.0, 1.0, Finding.SAME),))  # the pair itself: absent
        index = [c for c, _ in commits].index(commit)
        finding = Finding.REGRESSED if index >= 2 else Finding.SAME
        return Measured((Moved("t.py::test_x", 8.0 if index >= 2 else 0.0, 0, 0, finding),))

    lines: list[str] = []
    found = bisect("0" * 40, commits, measure, rounds=3, said=lines.append)
    (step,) = [step for step in found.steps if step.commit == raised]
    assert step.outcome == "skipped" and step.rounds == 1  # not noise: not measured again
    assert "t.py::test_x not compared (raised, renamed or not collected here): cannot be told" in step.told(1)
    assert found.first_bad is None and found.unsplit == (commits[2][0], commits[3][0])  # never the wrong one


def test_a_bad_that_compared_nothing_is_an_error_not_nothing_to_find() -> None:
    commits = _history(3)
    with pytest.raises(BisectError, match="no pair was compared at .* nothing to bisect on"):
        bisect("0" * 40, commits, lambda commit, reference: Measured(()), rounds=2, said=lambda line: None)


def test_bad_input_is_refused_before_the_first_session(tmp_path: Path, monkeypatch, capsys) -> None:
    _git(tmp_path, "init", "-q", "-b", "main")
    for name in ("one", "two"):
        (tmp_path / "f.txt").write_text(name)
        _git(tmp_path, "add", "-A")
        _git(tmp_path, "commit", "-q", "-m", name)
    _git(tmp_path, "checkout", "-q", "-b", "side", "HEAD~1")
    (tmp_path / "g.txt").write_text("side")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "side")
    monkeypatch.chdir(tmp_path)
    assert main(["bisect", "main", "side"]) == 2  # main is not an ancestor of side
    assert "main is not an ancestor of side" in capsys.readouterr().err
    (tmp_path / "a-file").write_text("")
    assert main(["bisect", "HEAD~1", "HEAD", "--json", "a-file/out.json"]) == 2
    assert "--json a-file/out.json: cannot write in" in capsys.readouterr().err
    assert len(_git(tmp_path, "worktree", "list").splitlines()) == 1


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
@pytest.mark.usefixtures("only_this_plugin")
def test_a_killed_bisection_leaves_no_process_and_no_worktree(tmp_path: Path, how: signal.Signals) -> None:
    """SIGTERM or SIGKILL left the step's pytest running ~60 s and the worktree registered in the user's repository."""
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "pytest.ini").write_text("[pytest]\noverhead_counter = bytecode\n")
    collecting = tmp_path.parent / f"{tmp_path.name}-collecting"
    hang = f"\nimport pathlib, time\npathlib.Path({str(collecting)!r}).touch()\ntime.sleep(600)\n"
    for index, work in enumerate((10, 30)):
        (tmp_path / "test_agent.py").write_text(AGENT.format(work=work) + hang)
        _git(tmp_path, "add", "-A")
        _git(tmp_path, "commit", "-q", "-m", f"step {index}")
    command = [sys.executable, "-m", "overheadbench.cli", "bisect", "HEAD~1", "HEAD"]
    bisecting = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert _wait_for(collecting.exists, 120), "the first step's session never collected"
        steps = _sessions_of(bisecting.pid)
        assert steps and all(_alive(pid) for pid in steps)
    finally:
        bisecting.send_signal(how)
        _, said = bisecting.communicate(timeout=120)
    if how == signal.SIGTERM:  # one line, not a traceback
        assert said.splitlines()[-1:] == ["overheadbench: bisect interrupted (SIGTERM received)"], said
        assert "Traceback" not in said and bisecting.returncode == INTERRUPTED
    # gone by themselves (within ~1 s here; the bound leaves a loaded machine room: no timing is asserted)
    assert _wait_for(lambda: not any(_alive(pid) for pid in steps) and _registered(tmp_path) == 1, 60)


def _wait_for(condition: Callable[[], Any], seconds: float) -> Any:
    """``condition()`` once true (or its last value after ``seconds``), polled."""
    deadline = time.monotonic() + seconds
    while not (value := condition()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return value


def _sessions_of(pid: int) -> list[int]:
    """The pytest processes the bisection ``pid`` started (its children running pytest)."""
    children = Path(f"/proc/{pid}/task/{pid}/children")
    found = []
    for child in children.read_text().split() if children.exists() else []:
        cmdline = Path(f"/proc/{child}/cmdline")
        if cmdline.exists() and b"pytest" in cmdline.read_bytes():
            found.append(int(child))
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def _registered(repository: Path) -> int:
    return len(_git(repository, "worktree", "list").splitlines())


def test_a_commit_whose_tests_do_not_collect_is_skipped_at_once_and_the_search_goes_on() -> None:
    """Standalone bisect ended (exit 2) on such a commit."""
    commits = _history(8)
    broken = commits[3][0]
    findings = {c: [Finding.REGRESSED if i >= 5 else Finding.SAME] for i, (c, _) in enumerate(commits)}
    asked, measure = _measure(findings)

    def measure_or_break(commit: str, reference: str) -> Measured:
        if commit == broken:
            asked.append(commit)
            return Measured((), broken="E   SyntaxError: invalid syntax\n1 error in 0.05s")
        return measure(commit, reference)  # type: ignore[operator]

    said: list[str] = []
    found = bisect("0" * 40, commits, measure_or_break, rounds=3, said=said.append)
    assert found.first_bad == commits[5][0]
    (skipped,) = [step for step in found.steps if step.outcome == "skipped"]
    assert skipped.commit == broken and skipped.rounds == 1 and asked.count(broken) == 1  # never measured again
    assert any("wrote no results" in line and "1 error in 0.05s" in line for line in said)
    assert skipped.to_json()["broken"].endswith("1 error in 0.05s")


def test_a_sessions_commit_that_does_not_collect_is_read_as_broken_not_an_error(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "test_agent.py").write_text(AGENT.format(work=10))
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "good")
    (tmp_path / "test_agent.py").write_text("def test_broken(:\n")
    _git(tmp_path, "commit", "-qam", "does not collect")
    good, head = _git(tmp_path, "log", "--reverse", "--format=%H").split()
    sessions = CommitSessions(tmp_path, 5.0, ["-p", "no:randomly"])
    try:
        measured = sessions(head, good)
    finally:
        sessions.close()
    assert measured.broken and measured.finding == Finding.UNKNOWN and not measured.changes


def test_every_first_regressed_commit_of_a_range_of_two_steps_is_named() -> None:
    """A range of two regressions (+30.6%, then +55% five commits later) was bisected to the larger alone."""
    commits = _history(12)
    steps = {commits[3][0]: 30.6, commits[8][0]: 55.0}
    index = {commit: i for i, (commit, _) in enumerate(commits)}

    def level(commit: str) -> float:
        return sum(size for at, size in steps.items() if index.get(commit, -1) >= index[at])

    def measure(commit: str, reference: str) -> Measured:
        change = level(commit) - level(reference)
        return Measured(
            (Moved("t.py::test_x", change, change - 2, change + 2, Finding.REGRESSED if change > 5 else Finding.SAME),)
        )

    found = bisect("0" * 40, commits, measure, rounds=3, said=lambda line: None)
    assert found.first_bad == commits[3][0] and found.then_bad == (commits[8][0],)
    assert found.to_json()["then_bad"] == [commits[8][0]]
    one = bisect(
        "0" * 40,
        commits,
        lambda c, r: measure(c, r) if index[c] < 8 else measure(commits[7][0], r),
        3,
        lambda line: None,
    )
    assert one.first_bad == commits[3][0] and one.then_bad == ()
