"""Accepted steps (issue 69): ``history --accept COMMIT --reason TEXT`` records an intended cost in a
file of the repository; its change point is shown as accepted (terminal, JSON, page) and never
fails ``--fail-above``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import commit, git, store

from overheadbench.cli import main
from overheadbench.history.accepted import ACCEPTED_FILE

TEST = "tests/test_mw.py::test_retry"


@pytest.fixture
def stepped(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """Twelve commits, every other one stored; the framework 16% slower from commit 6 (unmeasured:
    its runs are at 5 and 7)."""
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    shas = [commit(project, f"commit {i}") for i in range(12)]
    storage = tmp_path / "runs"
    for number, index in enumerate(range(1, 12, 2), start=1):
        store(storage, number, shas[index], 1.16 if index >= 6 else 1.0)
    return project, storage, shas


def history(project: Path, storage: Path, *args: str) -> int:
    return main(["history", str(storage), "--repository", str(project), *args])


def test_an_accepted_step_is_shown_with_its_reason_and_never_fails_the_gate(
    stepped: tuple[Path, Path, list[str]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project, storage, shas = stepped
    assert history(project, storage, "--fail-above", "5") == 1
    capsys.readouterr()
    reason = "the retry budget is read per call now (#42)"
    assert history(project, storage, "--accept", shas[6], "--reason", reason, "--json", str(tmp_path / "h.json")) == 0
    said = capsys.readouterr().out
    assert f"accepted: the step at {shas[6][:10]} for every test ({reason}); commit {ACCEPTED_FILE}" in said
    assert f"STEP regressed, ACCEPTED: {TEST}" in said and f"    accepted: {reason}" in said
    points = json.loads((tmp_path / "h.json").read_text())["change_points"]
    assert len(points) == 3 and {p["commit"] for p in points} == {shas[7]}  # every pair's step, in its range
    assert all(p["accepted"] == reason for p in points)
    kept = json.loads((project / ACCEPTED_FILE).read_text())["accepted"]
    assert kept == [{"commit": shas[6], "test": None, "reason": reason}]
    assert history(project, storage, "--fail-above", "5") == 0  # read from the file, every later run
    assert "REGRESSION" not in capsys.readouterr().out
    git(project, "add", ACCEPTED_FILE)
    commit(project, "accept the retry budget's cost")  # reviewed and merged like code
    monkeypatch.chdir(project)  # the page reads the repository it is run in
    assert main(["html", str(storage), "-o", str(tmp_path / "page.html")]) == 0
    assert "; 0 regressions in the history" in (tmp_path / "page.html").read_text()


def test_a_step_accepted_for_another_test_or_another_range_still_fails(
    stepped: tuple[Path, Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    project, storage, shas = stepped
    assert history(project, storage, "--accept", shas[6], "--test", "tests/test_other.py::test_x", "--reason", "r") == 0
    assert history(project, storage, "--accept", shas[3], "--reason", "an older step") == 0  # before the range
    assert history(project, storage, "--fail-above", "5") == 1
    assert f"REGRESSION {TEST}" in capsys.readouterr().out
    capsys.readouterr()
    assert history(project, storage, "--accept", shas[7], "--test", TEST, "--reason", "meant") == 0
    assert history(project, storage, "--fail-above", "5") == 1  # the other two pairs' steps still fail
    said = capsys.readouterr().out
    assert f"REGRESSION {TEST}" not in said and "REGRESSION tests/test_mw.py::test_metrics" in said


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--accept", "HEAD"], "--accept needs --reason"),
        (["--accept", "nosuchref", "--reason", "r"], "--accept nosuchref: not a commit"),
        (["--reason", "r"], "--test and --reason go with --accept"),
    ],
)
def test_an_acceptance_that_cannot_be_made_is_refused(
    stepped: tuple[Path, Path, list[str]], capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    project, storage, _ = stepped
    assert history(project, storage, *args) == 2
    assert said in capsys.readouterr().err and not (project / ACCEPTED_FILE).exists()


def test_an_accepted_file_that_cannot_be_read_is_refused_not_ignored(
    stepped: tuple[Path, Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    project, storage, _ = stepped
    (project / ACCEPTED_FILE).write_text('{"accepted": [{"reason": "no commit"}]}')
    assert history(project, storage, "--fail-above", "5") == 2
    assert f"{ACCEPTED_FILE}: cannot be read as accepted steps" in capsys.readouterr().err
