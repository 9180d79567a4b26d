"""``--overhead-link`` and ``--overhead-machine`` in sessions (issue 69): a main-branch run measures
the newest stored ancestor's commit beside itself and stores the change; a fleet's runs go under one
name; every contradiction is a usage error before anything is measured.

The projects are git repositories whose pairs run on the fake clock (deterministic costs)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import git, sentences

from overheadbench.cli import main
from overheadbench.engine.settings import QUICK, QUICK_LINKED, quick_profile
from overheadbench.store.environment import fingerprint
from overheadbench.store.runs import read_run

PAIR = """
import pytest
from costs import FRAMEWORK_NS

@pytest.mark.overhead(max=1.0)
def test_middleware(overhead, clock):
    overhead.compare(clock.cost(1000), clock.cost(FRAMEWORK_NS, seed=2))
"""
LINKED = ("--overhead-autosave", "--overhead-link", "-o", "overhead_processes=2", "-p", "no:cacheprovider")


def commit_costs(project: pytest.Pytester, framework_ns: int, subject: str) -> str:
    project.makepyfile(costs=f"FRAMEWORK_NS = {framework_ns}\n")
    git(project.path, "add", "-A")
    git(project.path, "commit", "-qm", subject)
    return git(project.path, "rev-parse", "HEAD").strip()


@pytest.fixture
def project(fake_clock_project: pytest.Pytester) -> pytest.Pytester:
    fake_clock_project.makepyfile(test_pair=PAIR)
    fake_clock_project.makefile(".gitignore", "baselines/\n")
    git(fake_clock_project.path, "init", "-q", "-b", "main")
    return fake_clock_project


def stored(project: pytest.Pytester, machine: str | None = None) -> list[Path]:
    return sorted((project.path / "baselines" / (machine or fingerprint())).glob("*.json"))


def test_a_linked_run_measures_the_newest_stored_ancestor_beside_it_and_history_reads_the_link(
    project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    first = commit_costs(project, 1100, "first")
    started = project.runpytest(*LINKED)  # nothing stored yet: this run starts the chain
    started.assert_outcomes(passed=1)
    started.stdout.fnmatch_lines(["overhead run saved to * (unlinked: no stored run of this branch is an ancestor*)"])
    second = commit_costs(project, 1400, "slower")
    done = project.runpytest(*LINKED)
    done.assert_outcomes(passed=1)
    done.stdout.fnmatch_lines(
        [
            f"*overhead: against {first[:12]} (measured in this session, interleaved)*",
            f"overhead run saved to * (linked to {first[:12]})",
        ]
    )
    older, newer = (read_run(path) for path in stored(project))
    assert older.link == "" and newer.link == first
    (place,) = newer.results[0].places
    assert place.change is not None and place.change.new / place.change.old == pytest.approx(1.4 / 1.1, rel=0.02)
    assert newer.environment["commit_info"]["id"] == second
    assert main(["history", str(project.path / "baselines"), "--repository", str(project.path)]) == 0
    said = capsys.readouterr().out
    assert "2 runs (1 linked) of machine" in said  # one run a side: the link places the step
    assert f'    at {second[:10]} "slower", after {first[:10]} "first", 0 commits between' in said


def test_a_fleet_stores_its_runs_under_one_name_each_with_its_fingerprint(
    project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    commit_costs(project, 1100, "first")
    project.runpytest("--overhead-machine=ubuntu-latest", *LINKED).assert_outcomes(passed=1)
    (path,) = stored(project, "ubuntu-latest")
    assert read_run(path).environment["fingerprint"] == fingerprint()
    history = ["history", str(project.path / "baselines"), "--repository", str(project.path)]
    assert main([*history, "--machine", "ubuntu-latest"]) == 0
    assert "1 run of machine ubuntu-latest on branch main" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (("--overhead-link",), "*--overhead-link links a stored run: give --overhead-autosave too*"),
        ((*LINKED, "--overhead-against=HEAD"), "*--overhead-link measures*--overhead-against names another place*"),
        ((*LINKED, "--overhead-compare"), "*--overhead-link measures*--overhead-compare names another place*"),
        ((*LINKED, "--overhead-machine=a b"), "*--overhead-machine 'a b': use letters, digits*"),
    ],
)
def test_a_linked_run_that_cannot_be_is_a_usage_error(project: pytest.Pytester, arguments, said: str) -> None:
    commit_costs(project, 1100, "first")
    done = project.runpytest(*arguments)
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    sentences(done.stderr).fnmatch_lines([said])


def test_a_linked_quick_session_measures_each_place_with_more_processes() -> None:
    """It had the plain quick profile's 3 a place: its link read from 2 degrees of freedom."""
    assert quick_profile(True, False, True)["processes"] == QUICK_LINKED["processes"] > QUICK["processes"]
    assert quick_profile(True, False, False) == QUICK and quick_profile(False, True, True) == {}
