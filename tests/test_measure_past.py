"""``overheadbench history --measure REV_RANGE`` (issue 69): past commits measured into the storage,
each linked to the one before it; resumable; a commit whose session stores nothing skipped.

The sessions here are real pytest sessions at each commit of a small git project on the fake clock."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import git

from overheadbench.cli import main
from overheadbench.store.environment import fingerprint
from overheadbench.store.runs import read_run

PAIR = """
import pytest
from costs import FRAMEWORK_NS

@pytest.mark.overhead(max=1.0)
def test_middleware(overhead, clock):
    overhead.compare(clock.cost(1000), clock.cost(FRAMEWORK_NS, seed=2))
"""
SESSION = ["--", "-o", "overhead_processes=2", "-p", "no:randomly"]


@pytest.fixture
def project(fake_clock_project: pytest.Pytester) -> Path:
    """A project of four commits on main: the pair at 1100, 1100, 1500 and 1500 ns, and a tag at the first."""
    path = fake_clock_project.path
    fake_clock_project.makepyfile(test_pair=PAIR)
    fake_clock_project.makefile(".gitignore", "baselines/\n")
    git(path, "init", "-q", "-b", "main")
    for number, framework in enumerate((1100, 1100, 1500, 1500)):
        (path / "costs.py").write_text(f"FRAMEWORK_NS = {framework}\n# commit {number}\n")
        git(path, "add", "-A")
        git(path, "commit", "-qm", f"commit {number}")
        if number == 0:
            git(path, "tag", "start")
    return path


def runs(path: Path) -> list[Path]:
    return sorted((path / "baselines" / fingerprint()).glob("*.json"))


def test_a_range_is_measured_linked_and_measured_again_only_where_runs_are_missing(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cwd = os.getcwd()
    os.chdir(project)
    try:
        assert main(["history", "--measure", "main", *SESSION]) == 0
        said = capsys.readouterr().out
        assert "measured 4 commits, 0 had runs already" in said
        stored = [read_run(path) for path in runs(project)]
        commits = git(project, "rev-list", "--reverse", "main").split()
        assert [run.environment["commit_info"]["id"] for run in stored] == commits
        assert [run.link for run in stored] == ["", *commits[:-1]]
        assert {run.environment["commit_info"]["branch"] for run in stored} == {"main"}
        assert "STEP regressed: test_pair.py::test_middleware overhead (time)" in said  # at commit 2, linked
        assert f"    at {commits[2][:10]}" in said
        runs(project)[1].unlink()  # as if the measuring was interrupted there
        assert main(["history", "--measure", "main", *SESSION]) == 0
        assert "measured 1 commit, 3 had runs already" in capsys.readouterr().out
    finally:
        os.chdir(cwd)


def test_measure_needs_a_range_and_a_branch(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    arguments = ["history", str(project / "baselines"), "--repository", str(project)]
    assert main([*arguments, "--measure", "nosuch..main"]) == 2
    assert "--measure nosuch..main: not a range of commits" in capsys.readouterr().err
    assert main([*arguments, "--measure", "main", "--max-commits", "0"]) == 2
    assert "--max-commits 0: give at least 1" in capsys.readouterr().err
    git(project, "checkout", "-q", "--detach", "HEAD")
    assert main([*arguments, "--measure", "main"]) == 2
    assert "name it with --branch" in capsys.readouterr().err
