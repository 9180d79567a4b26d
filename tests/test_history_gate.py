"""``overheadbench history`` as a gate that never passes on nothing (issue 69): what it is given is
checked before anything runs, and what goes wrong around it (a full disk, a killed reader, a reader
that leaves the pipe) ends in a sentence or quietly, never in a traceback or a wrong exit code."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import commit, git, store

from overheadbench.cli import main
from overheadbench.commands import history as history_command
from overheadbench.store import index

TEST = "tests/test_mw.py::test_retry"


@pytest.fixture
def stepped(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """A repository of twelve commits on main, each stored, the framework 16% slower from the seventh."""
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    shas = [commit(project, f"commit {i}") for i in range(12)]
    storage = tmp_path / "runs"
    for number, sha in enumerate(shas, start=1):
        store(storage, number, sha, 1.16 if number > 6 else 1.0)
    return project, storage, shas


def history(project: Path, storage: Path, *args: str) -> int:
    return main(["history", str(storage), "--repository", str(project), *args])


@pytest.mark.parametrize("kind", ["missing", "a file", "a dangling link"])
def test_a_storage_that_is_no_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    """A CI path's typo read "0 runs" and passed every gate, for good."""
    storage = tmp_path / "baselines"
    if kind == "a file":
        storage.write_text("")
    elif kind == "a dangling link":
        storage.symlink_to(tmp_path / "gone")
    assert history(tmp_path, storage, "--fail-above", "5") == 2
    said = capsys.readouterr().err
    why = {"missing": "no such folder", "a file": "not a folder", "a dangling link": "a link to nothing"}[kind]
    assert f"{storage}: {why}" in said and "Traceback" not in said


@pytest.mark.parametrize("given", ["nan", "inf", "-5", "five"])
def test_a_threshold_that_cannot_gate_is_refused(
    stepped: tuple[Path, Path, list[str]], capsys: pytest.CaptureFixture[str], given: str
) -> None:
    project, storage, _ = stepped
    with pytest.raises(SystemExit) as ended:
        history(project, storage, f"--fail-above={given}")
    assert ended.value.code == 2 and "--fail-above" in capsys.readouterr().err
    with pytest.raises(SystemExit) as ended:
        main(["bisect", "HEAD~1", "HEAD", f"--fail-above={given}"])
    assert ended.value.code == 2


def test_a_branch_with_no_runs_is_refused_naming_the_branches_there_are(
    stepped: tuple[Path, Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """``--branch mian`` read every branch and failed on another branch's step."""
    project, storage, shas = stepped
    store(storage, 13, shas[-1], 2.0, branch="feature")
    assert history(project, storage, "--branch", "mian", "--fail-above", "5") == 2
    said = capsys.readouterr().err
    assert "--branch mian: no run stored here is of it" in said and "feature, main" in said
    assert history(project, storage, "--branch", "main", "--fail-above", "20") == 0  # the feature's 2x is not main's


def test_since_that_is_not_a_commit_is_refused_with_or_without_a_threshold(
    stepped: tuple[Path, Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    project, storage, _ = stepped
    assert history(project, storage, "--since", "nosuchref") == 2
    assert history(project, storage, "--since", "nosuchref", "--fail-above", "5") == 2
    assert capsys.readouterr().err.count("--since nosuchref: not a commit") == 2


def test_an_unwritable_json_is_refused_before_any_session(
    stepped: tuple[Path, Path, list[str]], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """It was refused after 80 s of confirming sessions."""
    project, storage, _ = stepped

    def no_session(*args: object, **kwargs: object) -> object:
        raise AssertionError("a session ran before the output was checked")

    monkeypatch.setattr(history_command, "confirm", no_session)
    (storage / "a-file").write_text("")
    output = storage / "a-file" / "h.json"  # under a file: no folder can be made there
    assert history(project, storage, "--confirm", "--json", str(output)) == 2
    assert f"--json {output}" in capsys.readouterr().err


def test_an_index_a_full_disk_cannot_hold_is_read_in_memory(
    stepped: tuple[Path, Path, list[str]], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "database or disk is full" ended history and html in a sqlite traceback, exit 1."""
    project, storage, shas = stepped
    refreshed = index._refreshed
    tries: list[bool] = []

    def full_disk(paths: list[Path], db: sqlite3.Connection) -> object:
        tries.append(True)
        if len(tries) == 1:
            raise sqlite3.OperationalError("database or disk is full")
        return refreshed(paths, db)

    monkeypatch.setattr(index, "_refreshed", full_disk)
    assert history(project, storage, "--fail-above", "5") == 1  # the step read all the same
    assert f"REGRESSION {TEST}" in capsys.readouterr().out and len(tries) == 2


def test_a_reader_that_leaves_the_pipe_ends_quietly_with_the_gates_own_code(
    stepped: tuple[Path, Path, list[str]],
) -> None:
    """``history | head`` ended in a BrokenPipeError traceback and exit 1 whatever the history said."""
    project, storage, _ = stepped
    for threshold, code in (("5", 1), ("50", 0)):
        command = [sys.executable, "-m", "overheadbench.cli", "history", str(storage), "--repository", str(project)]
        ran = subprocess.Popen([*command, "--fail-above", threshold], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert ran.stdout is not None and ran.stderr is not None
        ran.stdout.close()  # the reader leaves before a line is written
        said = ran.stderr.read().decode()
        assert ran.wait(timeout=120) == code and "Traceback" not in said and "BrokenPipe" not in said


READER = """
import os, sys, time
from pathlib import Path
from overheadbench.store import index

def slow(path):
    with open(sys.argv[1], "a") as pids:
        pids.write(f"{os.getpid()}\\n")
    time.sleep(600)

index._read_row = slow
index._read_rows([Path(str(n)) for n in range(index.PARALLEL_FROM)])
"""


def test_the_readers_of_a_history_end_with_it_however_it_dies(tmp_path: Path) -> None:
    """SIGKILL to ``history`` while its index built left its pool's workers blocked for good, holding
    the pipe open (``history | tee`` hung)."""
    pids = tmp_path / "pids"
    parent = subprocess.Popen([sys.executable, "-c", READER, str(pids)])
    try:
        for _ in range(600):
            if pids.exists() and pids.read_text().strip():
                break
            time.sleep(0.1)
        workers = [int(line) for line in pids.read_text().split()]
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    for _ in range(600):  # ended by the kernel's signal, at once; bounded for a busy machine
        if not any(_alive(pid) for pid in workers):
            break
        time.sleep(0.1)
    assert workers and not any(_alive(pid) for pid in workers)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return not (status.exists() and status.read_text().split()[2] == "Z")
