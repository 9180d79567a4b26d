"""Stored runs as a hostile repository could commit them: one bad number, a file that is not a
file, an impossible schema. Each is refused with the file and the field named (exit 2 from the
command), and a bad run in the machine's history is left out with a warning, never a crash.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from helpers import sentences

from overheadbench.cli import main
from overheadbench.core.errors import StorageError
from overheadbench.store.bounded import MAX_RUN_BYTES
from overheadbench.store.environment import fingerprint
from overheadbench.store.runs import read_run

GOLDEN = Path(__file__).parent / "golden"


def golden(name: str = "0002_new.json") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / name).read_text())
    return data


def poisoned(where: str, value: str) -> str:
    """The golden run as JSON text with one value replaced (``1e999`` and ``NaN`` kept as written)."""
    data = golden()
    if where == "schema_version":
        data["schema_version"] = "@@"
    else:
        data["results"][0]["samples"][0][where][2] = "@@"
    return json.dumps(data).replace('"@@"', value)


@pytest.mark.parametrize(
    ("where", "value", "message"),
    [
        ("baseline_ns", "1e999", "results[0].samples[0].baseline_ns[2]: expected a finite number, got float inf"),
        ("framework_ns", "-1e999", "results[0].samples[0].framework_ns[2]: expected a finite number, got float -inf"),
        ("baseline_ns", "null", "results[0].samples[0].baseline_ns[2]: a sample is missing (null)"),
        (
            "baseline_ns",
            "NaN",
            "results[0].samples[0].baseline_ns[2]: a sample is missing (null)",
        ),  # schema 2: bare NaN was null
        ("framework_ns", "-5", "results[0].samples[0].framework_ns[2]: a sample cannot be negative, got int -5"),
        ("schema_version", "-1", "schema_version: expected a whole number of at least 1, got -1"),
        ("schema_version", "0", "schema_version: expected a whole number of at least 1, got 0"),
    ],
)
def test_a_bad_number_is_refused_naming_the_file_and_field_and_the_command_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str, value: str, message: str
) -> None:
    path = tmp_path / "0001_bad.json"
    path.write_text(poisoned(where, value))
    with pytest.raises(StorageError, match=rf"0001_bad.json: not a valid overheadbench run: {_escaped(message)}"):
        read_run(path)
    shutil.copy(GOLDEN / "0002_new.json", tmp_path / "0002_new.json")
    for command in (["report", "bad"], ["compare", "bad", "new"], ["compare", "new", "bad"]):
        assert main(["--storage", str(tmp_path), *command]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err


def _escaped(text: str) -> str:
    import re

    return re.escape(text)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_link_to_a_device_is_refused_without_reading_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "0001_zero.json").symlink_to("/dev/zero")
    with pytest.raises(
        StorageError, match=r"0001_zero.json \(a link to /dev/zero\): not a regular file but a character"
    ):
        read_run(tmp_path / "0001_zero.json")
    assert main(["--storage", str(tmp_path), "report", "zero"]) == 2
    assert "not a regular file" in capsys.readouterr().err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_at_once_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "0001_pipe.json"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []

    def read() -> None:
        try:
            read_run(fifo)
        except BaseException as exc:
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10.0)
    if reader.is_alive():  # free the hung reader before failing
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("reading a FIFO hung")
    assert len(outcome) == 1 and "not a regular file but a FIFO" in str(outcome[0])


def test_a_folder_by_a_run_name_is_refused(tmp_path: Path) -> None:
    (tmp_path / "0001_folder.json").mkdir()
    with pytest.raises(StorageError, match="not a regular file but a folder"):
        read_run(tmp_path / "0001_folder.json")


def test_the_size_limit_holds_for_a_link_too(tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    with big.open("wb") as out:
        out.truncate(MAX_RUN_BYTES + 1)  # sparse: no disk used
    (tmp_path / "0001_big.json").symlink_to(big)
    with pytest.raises(StorageError, match="larger than a run can be"):
        read_run(tmp_path / "0001_big.json")


GATED = """
import pytest

@pytest.mark.overhead(max=1.0, processes=1)
def test_middleware(overhead, clock):
    overhead.compare(clock.cost(1000), clock.cost(1100, seed=2))
"""


@pytest.mark.parametrize("bad", ["1e999", "null", "-3"])
def test_a_bad_run_in_the_history_is_left_out_with_a_warning_naming_it(
    fake_clock_project: pytest.Pytester, bad: str
) -> None:
    fake_clock_project.makepyfile(GATED)
    fake_clock_project.runpytest("--overhead-save=base").assert_outcomes(passed=1)
    folder = fake_clock_project.path / "baselines" / fingerprint()
    run = json.loads((folder / "0001_base.json").read_text())
    run["results"][0]["samples"][0]["baseline_ns"][0] = "@@"
    (folder / "0002_poisoned.json").write_text(json.dumps(run).replace('"@@"', bad))
    gated = fake_clock_project.runpytest("--overhead-compare=base", "--overhead-fail-above=5")
    assert gated.ret == pytest.ExitCode.OK  # not INTERNALERROR
    gated.assert_outcomes(passed=1)
    sentences(gated.stdout).fnmatch_lines(
        [
            "WARNING: *0002_poisoned.json: not a valid overheadbench run: results?0?.samples?0?.baseline_ns?0?: *"
            "; left out of the history"
        ]
    )
    compared = main(["--storage", str(fake_clock_project.path / "baselines"), "compare", "base", "base"])
    assert compared == 0


def test_a_poisoned_compared_run_is_a_usage_error_naming_it(fake_clock_project: pytest.Pytester) -> None:
    fake_clock_project.makepyfile(GATED)
    fake_clock_project.runpytest("--overhead-save=base").assert_outcomes(passed=1)
    path = fake_clock_project.path / "baselines" / fingerprint() / "0001_base.json"
    path.write_text(path.read_text().replace('"framework_ns": [', '"framework_ns": [1e999, ', 1))
    result = fake_clock_project.runpytest("--overhead-compare=base")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    sentences(result.stderr).fnmatch_lines(
        ["*0001_base.json: not a valid overheadbench run: *framework_ns?0?: expected a finite*"]
    )
    assert "INTERNALERROR" not in sentences(result.stdout).str() + sentences(result.stderr).str()


def test_the_command_runs_as_a_process_and_exits_2_on_a_poisoned_run(tmp_path: Path) -> None:
    import subprocess

    (tmp_path / "0001_bad.json").write_text(poisoned("baseline_ns", "1e999"))
    done = subprocess.run(
        [sys.executable, "-m", "overheadbench.cli", "--storage", str(tmp_path), "report", "bad"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "expected a finite number" in done.stderr and "Traceback" not in done.stderr
