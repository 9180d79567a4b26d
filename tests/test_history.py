"""``overheadbench history``: stored runs of a real git history read as series, each change point
named by its commits, written as JSON, gated; and the index it reads them through."""

from __future__ import annotations

import functools
import json
import os
import random
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from helpers import GOLDEN_RUN, commit, git, store

from overheadbench.cli import main
from overheadbench.commands import history as history_command
from overheadbench.engine.findings import Finding
from overheadbench.history.bisect import Measured, Moved
from overheadbench.history.confirm import confirm
from overheadbench.store.environment import fingerprint
from overheadbench.store.index import INDEX_FILE, indexed_runs
from overheadbench.store.runs import Storage

TEST = "tests/test_mw.py::test_retry"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    repository = tmp_path / "project"
    repository.mkdir()
    git(repository, "init", "-q", "-b", "main")
    return repository


def history(project: Path, storage: Path, *args: str) -> int:
    return main(["history", str(storage), "--repository", str(project), *args])


def measured_history(
    project: Path, storage: Path, measured: Sequence[int], step_at: int, scale: float = 1.16
) -> list[str]:
    """Twelve commits, the ``measured`` ones stored; the framework path slower from ``step_at`` on."""
    shas = [commit(project, f"commit {i}") for i in range(12)]
    for number, i in enumerate(measured, start=1):
        store(storage, number, shas[i], scale if i >= step_at else 1.0)
    return shas


def test_a_step_is_named_at_its_commit_with_the_one_before_and_written(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = tmp_path / "runs"
    shas = measured_history(project, storage, range(12), step_at=6)
    assert history(project, storage, "--json", str(tmp_path / "h.json")) == 0
    out = capsys.readouterr().out
    assert "12 runs of machine" in out and "on branch main (git order)" in out
    assert f"STEP regressed: {TEST} overhead (time): +16" in out
    assert f'at {shas[6][:10]} "commit 6", after {shas[5][:10]} "commit 5", 0 commits between' in out
    document = json.loads((tmp_path / "h.json").read_text())
    points = [p for p in document["change_points"] if p["test"] == TEST]
    (point,) = points
    assert (point["commit"], point["before_commit"], point["kind"]) == (shas[6], shas[5], "step")
    assert point["ci"][0] < point["change"] < point["ci"][1] and point["change"] == pytest.approx(0.16, abs=0.01)
    assert {p["commit"] for p in document["change_points"]} == {shas[6]}  # every pair of the run moved there only


def test_commits_not_measured_between_the_two_runs_are_counted(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = tmp_path / "runs"
    shas = measured_history(project, storage, range(0, 12, 3), step_at=6)  # commits 0, 3, 6, 9
    history(project, storage)
    assert (
        f'at {shas[6][:10]} "commit 6", after {shas[3][:10]} "commit 3", 2 commits between' in capsys.readouterr().out
    )


def test_an_unchanged_history_has_no_change_point_and_passes_the_gate(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = tmp_path / "runs"
    measured_history(project, storage, range(12), step_at=12)
    assert history(project, storage, "--fail-above", "1") == 0
    assert "; 0 change points" in capsys.readouterr().out


def test_fail_above_exits_1_on_a_regression_newer_than_since(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = tmp_path / "runs"
    shas = measured_history(project, storage, range(12), step_at=6)
    assert history(project, storage, "--fail-above", "5") == 1
    assert f"REGRESSION {TEST} overhead (time): +16" in capsys.readouterr().out
    assert history(project, storage, "--fail-above", "20") == 0  # a change of 16% is not more than 20%
    assert history(project, storage, "--fail-above", "5", "--since", shas[5]) == 1
    assert history(project, storage, "--fail-above", "5", "--since", shas[6]) == 0  # landed before: not new
    assert history(project, storage, "--fail-above", "5", "--since", "no-such-ref") == 2


def test_runs_of_another_branch_and_of_a_dirty_tree_are_left_out(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = tmp_path / "runs"
    shas = measured_history(project, storage, range(12), step_at=12)
    store(storage, 13, shas[11], 1.5, branch="feature")
    dirty = store(storage, 14, shas[11], 1.5)
    data = json.loads(dirty.read_text())
    data["environment"]["commit_info"]["dirty"] = True
    dirty.write_text(json.dumps(data))
    history(project, storage)
    out = capsys.readouterr().out
    assert "12 runs of machine" in out  # the feature branch's run is not main's
    assert "1 run of a dirty tree left out; 0 change points" in out
    history(project, storage, "--branch", "all")
    assert "every branch" in capsys.readouterr().out


def test_the_index_reads_again_only_what_changed_and_is_rebuilt_when_it_cannot_be_trusted(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = tmp_path / "runs"
    shas = measured_history(project, storage, range(6), step_at=6)
    reads: list[Path] = []
    import overheadbench.store.index as index

    real = index.read_run
    monkeypatch.setattr(index, "read_run", lambda path: reads.append(path) or real(path))
    rows, _ = indexed_runs(Storage(storage))
    assert len(rows) == len(reads) == 6 and (storage / INDEX_FILE).is_file()
    reads.clear()
    assert indexed_runs(Storage(storage))[0] == rows and reads == []  # nothing changed: nothing read
    changed = store(storage, 3, shas[2], 2.0)
    os.utime(changed, ns=(1, 1))
    gone = storage / fingerprint() / "0006_main.json"
    gone.unlink()
    rows, _ = indexed_runs(Storage(storage))
    assert reads == [changed] and len(rows) == 5
    assert [row.readings[0].log for row in rows][2] > [row.readings[0].log for row in rows][1]
    with sqlite3.connect(storage / INDEX_FILE) as db:
        db.execute("UPDATE runs SET data = '{\"path\": 1}' WHERE path LIKE '%0002_main.json'")  # a row it cannot read
    reads.clear()
    assert len(indexed_runs(Storage(storage))[0]) == 5 and [path.name for path in reads] == ["0002_main.json"]
    with sqlite3.connect(storage / INDEX_FILE) as db:
        db.execute("PRAGMA user_version = 99")  # an index of another version
    reads.clear()
    assert len(indexed_runs(Storage(storage))[0]) == 5 and len(reads) == 5
    (storage / INDEX_FILE).write_bytes(b"not a database")
    reads.clear()
    assert len(indexed_runs(Storage(storage))[0]) == 5 and len(reads) == 5


def test_a_storage_folder_with_no_runs_reads_as_an_empty_history(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "none").mkdir()
    assert history(project, tmp_path / "none") == 0
    assert "0 runs" in capsys.readouterr().out


@dataclass
class MadeSessions:
    """Sessions of a commit against another (what ``CommitSessions`` is), read off a made history:
    ``culprit`` and every commit after it regressed over every commit before it; the threshold and
    arguments each set of sessions was opened with, kept."""

    shas: list[str]
    culprit: int
    regressed: bool = True
    opened: list[tuple[str, ...]] = field(default_factory=list)
    threshold: float = 0.0

    def open(self, repository: Path, threshold: float, pytest_args: list[str]) -> MadeSessions:
        self.opened.append((f"{threshold:.0f}%", *pytest_args))
        self.threshold = threshold
        return self

    def __call__(self, commit: str, reference: str) -> Measured:
        if self.regressed and self.shas.index(commit) >= self.culprit > self.shas.index(reference):
            return Measured((Moved(TEST, 16.0, 12.0, 20.0, Finding.REGRESSED),))
        return Measured((Moved(TEST, 0.2, -1.0, 1.4, Finding.SAME),))

    def close(self) -> None:
        pass


def confirming(monkeypatch: pytest.MonkeyPatch, sessions: MadeSessions) -> None:
    monkeypatch.setattr(history_command, "confirm", functools.partial(confirm, sessions_for=sessions.open))


def test_confirm_measures_a_regression_in_one_session_and_bisects_the_commits_no_run_measured(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = tmp_path / "runs"
    shas = measured_history(project, storage, (0, 0, 3, 3, 6, 6, 9, 9), step_at=6)  # commits 4, 5 not measured
    sessions = MadeSessions(shas, culprit=5)
    confirming(monkeypatch, sessions)
    assert history(project, storage, "--confirm", "--json", str(tmp_path / "h.json"), "--", "-x") == 0
    out = capsys.readouterr().out
    assert f"CONFIRMED in one session, {shas[6][:10]} against {shas[3][:10]}: +16.0% (+12.0..+20.0%) regressed" in out
    assert f"first regressed commit between them (cut-off +5.0% over {shas[3][:10]}): {shas[5]}" in out
    tests = {result["nodeid"] for result in json.loads(GOLDEN_RUN.read_text())["results"]}
    # each pair's test alone, at half its step (+16%): confirmed where the commits differ by more than 8%
    assert sorted(sessions.opened) == sorted(("8%", "-x", test) for test in tests)
    (point,) = [p for p in json.loads((tmp_path / "h.json").read_text())["change_points"] if p["test"] == TEST]
    assert point["confirm"]["verdict"] == "confirmed" and point["confirm"]["bisect"]["first_bad"] == shas[5]


def test_a_step_the_same_session_reads_the_same_is_not_confirmed_and_not_bisected(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = tmp_path / "runs"
    shas = measured_history(project, storage, (0, 0, 3, 3, 6, 6, 9, 9), step_at=6)
    confirming(monkeypatch, MadeSessions(shas, culprit=5, regressed=False))
    history(project, storage, "--confirm")
    out = capsys.readouterr().out
    assert f"NOT CONFIRMED in one session, {shas[6][:10]} against {shas[3][:10]}: +0.2%" in out
    assert "first regressed commit" not in out


def test_a_step_down_is_an_improvement_and_never_fails_the_gate(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = tmp_path / "runs"
    shas = measured_history(project, storage, range(12), step_at=4, scale=0.8)
    assert history(project, storage, "--fail-above", "1") == 0
    out = capsys.readouterr().out
    assert re.search(rf"STEP improved: {re.escape(TEST)} overhead \(time\): -(19|20)\.\d%", out)
    assert f'at {shas[4][:10]} "commit 4"' in out
    assert "REGRESSION" not in out


def test_a_transport_figure_that_fell_is_a_regression_named_with_its_row(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """req/s is a floor: lower is worse. Its series is the row's own figure, on its own spread."""
    storage = tmp_path / "runs"
    shas = measured_history(project, storage, range(12), step_at=12)
    for path in sorted((storage / fingerprint()).glob("*.json")):
        number = int(path.name[:4])
        rps = (2000.0 if number <= 6 else 1200.0) * (1 + random.Random(number).gauss(0, 0.01))
        data = json.loads(path.read_text())
        figure = {**FIGURE, "value": rps, "ci": [rps * 0.98, rps * 1.02], "samples": [rps] * 10}
        data["figures"], data["schema_version"] = [figure], 8
        path.write_text(json.dumps(data))
    assert history(project, storage, "--fail-above", "10") == 1
    out = capsys.readouterr().out
    assert "STEP regressed: tests/test_http.py::test_gateway h2c c=10 rps: -40" in out
    assert f'at {shas[6][:10]} "commit 6", after {shas[5][:10]}' in out and ", over its budget (1500)" in out
    assert "REGRESSION tests/test_http.py::test_gateway h2c c=10 rps: -40" in out


FIGURE = {
    "nodeid": "tests/test_http.py::test_gateway",
    "row": "h2c c=10",
    "metric": "rps",
    "interval": "95% CI over 10 windows",
    "note": "",
    "limit": 1500,
    "floor": True,
    "verdict": "pass",
    "message": "",
}
"""A transport test's figure, in the shape runs had before schema 9 (still read)."""


def test_outside_a_repository_runs_are_in_date_order_and_git_options_are_refused(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = tmp_path / "runs"
    measured_history(project, storage, range(12), step_at=6)
    plain = tmp_path / "plain"
    plain.mkdir()
    assert main(["history", str(storage), "--repository", str(plain)]) == 0
    out = capsys.readouterr().out
    assert "(date order)" in out and f"STEP regressed: {TEST} overhead (time): +16" in out
    assert main(["history", str(storage), "--repository", str(plain), "--confirm"]) == 2
    assert "is not a git repository" in capsys.readouterr().err
