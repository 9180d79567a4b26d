"""The ``overheadbench`` command against golden files (two stored runs in tests/golden/)."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from overheadbench.cli import main

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture
def storage(tmp_path: Path) -> Path:
    for name in ("0001_old.json", "0002_new.json"):
        shutil.copy(GOLDEN / name, tmp_path / name)
    return tmp_path


@pytest.mark.parametrize(("fmt", "golden"), [("markdown", "report.md"), ("csv", "report.csv")])
def test_report_matches_its_golden_file(storage: Path, capsys, fmt: str, golden: str) -> None:
    assert main(["--storage", str(storage), "report", "new", "--format", fmt]) == 0
    assert capsys.readouterr().out == (GOLDEN / golden).read_text()


def test_report_as_json_is_the_run_and_can_go_to_a_file(storage: Path, tmp_path: Path) -> None:
    assert main(["--storage", str(storage), "report", "0002", "--format", "json", "-o", str(tmp_path / "r.json")]) == 0
    assert "tests/test_mw.py::test_retry" in (tmp_path / "r.json").read_text()


def test_compare_prints_the_table_and_fails_above_the_threshold(storage: Path, capsys) -> None:
    assert main(["--storage", str(storage), "compare", "old", "new"]) == 0
    assert capsys.readouterr().out == (GOLDEN / "compare.txt").read_text()
    assert main(["--storage", str(storage), "compare", "old", "new", "--fail-above", "5"]) == 1
    out, err = capsys.readouterr()
    assert "REGRESSION tests/test_mw.py::test_retry: overhead 12.0% -> 31.5% (+17.4%" in err
    assert "regressed" in out and "same" in out  # the outcome column, at the threshold
    assert main(["--storage", str(storage), "compare", "old", "new", "--fail-above", "25"]) == 0


def test_a_corrupt_run_is_exit_code_2_with_the_file_named(storage: Path, capsys) -> None:
    (storage / "0003_broken.json").write_text('{"schema_version": 1, "res')
    assert main(["--storage", str(storage), "compare", "old", "broken"]) == 2
    assert "0003_broken.json: not a valid overheadbench run (corrupt or truncated JSON" in capsys.readouterr().err


def test_plots_are_written_as_svg_and_png(storage: Path, tmp_path: Path) -> None:
    assert main(["--storage", str(storage), "plot", "new", "-o", str(tmp_path / "d.svg")]) == 0
    assert "<svg" in (tmp_path / "d.svg").read_text()
    assert main(["--storage", str(storage), "plot", "--trend", "-o", str(tmp_path / "t.png")]) == 0
    assert (tmp_path / "t.png").read_bytes()[:4] == b"\x89PNG"


def test_without_matplotlib_plot_says_how_to_get_it(storage: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["--storage", str(storage), "plot", "new", "-o", str(tmp_path / "d.svg")]) == 2
    assert "pip install 'overheadbench[plot]'" in capsys.readouterr().err


def test_the_console_command_runs(storage: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "overheadbench.cli", "--storage", str(storage), "compare", "1", "2"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and "~ +0.3%" in done.stdout


def test_storage_may_come_after_the_command(storage: Path, capsys) -> None:
    assert main(["compare", "old", "new", "--storage", str(storage)]) == 0
    assert capsys.readouterr().out == (GOLDEN / "compare.txt").read_text()
    assert main(["report", "0002", "--storage", str(storage), "--format", "csv"]) == 0


def _with_figures(path: Path, rps: float) -> None:
    """Add a transport test's figures to a stored run, in the shape runs had before schema 9."""
    data = json.loads(path.read_text())
    figure = {"nodeid": "tests/test_http.py::test_gateway", "row": "h2c c=10", "metric": "rps", "value": rps,
              "ci": [rps * 0.99, rps * 1.01], "interval": "95% CI over 10 windows", "samples": [rps] * 10,
              "note": "", "limit": 1000, "floor": True, "verdict": "pass", "message": ""}  # fmt: skip
    data["figures"], data["schema_version"] = [figure], 8
    path.write_text(json.dumps(data))


def test_report_and_compare_cover_transport_figures(storage: Path, capsys) -> None:
    _with_figures(storage / "0001_old.json", 2000.0)
    _with_figures(storage / "0002_new.json", 500.0)
    assert main(["--storage", str(storage), "report", "new"]) == 0
    markdown = capsys.readouterr().out
    assert "## Transport" in markdown and "| `tests/test_http.py::test_gateway` | h2c c=10 | 500/s" in markdown
    assert "| `tests/test_http.py::test_gateway` | h2c c=10: req/s | 500/s | 95% CI over 10 windows" in markdown
    assert main(["--storage", str(storage), "report", "new", "--format", "checks"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0][:3] == ["test", "budget", "figure"]
    assert ["tests/test_http.py::test_gateway", "rps", "h2c c=10: req/s", "500.0"] == rows[-1][:4]
    assert rows[-1][rows[0].index("status")] == "fail"  # stored as judged then: below its 1,000/s floor
    assert main(["--storage", str(storage), "compare", "old", "new", "--fail-above", "5"]) == 1
    out, err = capsys.readouterr()
    assert any("test_gateway" in line and "h2c c=10 req/s" in line and "-75.0%" in line for line in out.splitlines())
    assert "REGRESSION tests/test_http.py::test_gateway: h2c c=10 req/s 2,000/s -> 500/s (-75.0%" in err
