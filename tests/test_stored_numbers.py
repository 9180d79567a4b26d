"""Numbers in stored runs (issue 68): a run holding a number no run can hold is refused by every reader
of it with exit 2, naming the file and the field; none crashes (a 1e300 ratio crashed ``html`` and
``compare`` with exit 1, the regression code), and a bare NaN is refused as Infinity is."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from overheadbench.cli import main
from overheadbench.core.jsonio import ShapeError, dumps, loads
from overheadbench.store.runs import SCHEMA_VERSION, read_run

GOLDEN = Path(__file__).parent / "golden"


def stored(folder: Path, name: str, edit: Any = None) -> Path:
    """The golden run at schema ``SCHEMA_VERSION``, written back with ``edit(result)`` applied to its first pair."""
    run = read_run(GOLDEN / "0002_new.json")
    data = json.loads(dumps(run.to_json()))  # as a session writes it: NaN as null
    if edit is not None:
        edit(data["results"][0])
    path = folder / name
    path.write_text(json.dumps(data, allow_nan=True))
    return path


def setting(key: str, value: Any) -> Any:
    def edit(result: dict[str, Any]) -> None:
        result[key] = value

    return edit


BAD = {
    "a huge ratio": (setting("ratio", 1e300), "results[0].ratio: 1e+300 is beyond any figure"),
    "an infinite ratio": (
        setting("ratio", math.inf),
        "results[0].ratio: expected a finite number or null, got a bare Infinity",
    ),
    "a NaN ratio": (setting("ratio", math.nan), "results[0].ratio: expected a finite number or null, got a bare NaN"),
    "a negative ratio": (setting("ratio", -1.3), "results[0].ratio: a ratio must be above zero"),
    "a huge negative figure": (setting("baseline_s", -1e13), "results[0].baseline_s: -1e+13 is beyond any figure"),
    "a reversed interval": (setting("ci", [0.4, 0.3]), "results[0].ci: the interval is reversed"),
    "a word for a number": (setting("ratio", "1.3"), "results[0].ratio: expected a number, got str"),
    "a reversed other clock": (
        setting("other_ratio", [1.3, 1.4, 1.2]),
        "results[0].other_ratio: the interval is reversed",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
@pytest.mark.parametrize("command", ["compare", "html", "report", "plot"])
def test_every_reader_refuses_an_impossible_number_naming_the_file_and_the_field(
    case: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit, said = BAD[case]
    stored(tmp_path, "0001_old.json")
    stored(tmp_path, "0002_bad.json", edit)
    argv = {
        "compare": ["compare", "old", "bad"],
        "html": ["html", "bad", "-o", str(tmp_path / "page.html")],
        "report": ["report", "bad"],
        "plot": ["plot", "bad", "-o", str(tmp_path / "plot.svg")],
    }[command]
    assert main(["--storage", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err
    assert "0002_bad.json: not a valid overheadbench run: " + said in err, err
    assert "Traceback" not in err


def test_a_folder_reader_leaves_the_file_out_and_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A trend over a storage folder warns and goes on (as the stored-run gate and the history's index
    do): one hand-edited run does not stop a history of a hundred; a reader of that run refuses it (above)."""
    pytest.importorskip("matplotlib")
    stored(tmp_path, "0001_old.json")
    stored(tmp_path, "0002_new.json")
    stored(tmp_path, "0003_bad.json", setting("ratio", 1e300))
    assert main(["--storage", str(tmp_path), "plot", "--trend", "-o", str(tmp_path / "t.svg")]) == 0
    err = capsys.readouterr().err
    assert "0003_bad.json: not a valid overheadbench run: results[0].ratio: 1e+300 is beyond any figure" in err
    assert "left out of the trend" in err


def test_bare_nan_reads_as_unmeasured_only_in_the_schemas_that_wrote_it(tmp_path: Path) -> None:
    old = json.loads((GOLDEN / "0002_new.json").read_text())
    old["results"][0]["baseline_s"] = math.nan
    (tmp_path / "old.json").write_text(json.dumps(old, allow_nan=True))
    assert math.isnan(read_run(tmp_path / "old.json").results[0].baseline_s)
    old["schema_version"] = SCHEMA_VERSION
    (tmp_path / "new.json").write_text(json.dumps(old, allow_nan=True))
    with pytest.raises(Exception, match=re.escape("results[0].baseline_s: expected a finite number or null")):
        read_run(tmp_path / "new.json")


def test_samples_may_be_large_but_not_non_finite() -> None:
    """A framework block scaled to the baseline's calls can pass 1e12 ns (a second-long call against
    10-million-call baseline blocks); a figure cannot."""
    from overheadbench.engine.samples import ReplicaSamples

    big = ReplicaSamples(10_000_000, [10**8], [10**16], framework_calls=1).to_json()
    assert ReplicaSamples.from_json(big).framework_ns == [10**16]
    with pytest.raises(ShapeError, match="not a finite|finite number"):
        ReplicaSamples.from_json({**big, "framework_ns": [loads("Infinity")]})
