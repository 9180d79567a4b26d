"""Count mode on pairs whose work is compiled code (issue 25): the instruction ratio, the time
probe's ratio beside it, and whether the test was warned that they disagree.

    pip install pydantic msgpack
    python validation/compiled_code.py --sessions 5   # ~3 min, run alone

The pairs, each a fresh ``pytest --overhead --overhead-mode=count`` session in a generated
project, once per counter (``--overhead-counter=bytecode`` and ``=callgrind``, where valgrind
is installed), and plain ``--overhead`` in another session for the time mode's own figure:

* ``pydantic``: a dataclass built from a dict against pydantic's ``model_validate`` (pydantic-core,
  Rust);
* ``json``: building the same dict against a ``json.dumps`` / ``json.loads`` round trip (C);
* ``msgpack``: the same against a ``msgpack.packb`` / ``unpackb`` round trip (C);
* ``python``: a pure-Python field check against the same check run twice (no compiled code on
  either side: the two ratios should agree, and no warning).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

import harness

ROOT = Path(__file__).resolve().parents[1]
PAIRS = """
import json
from dataclasses import dataclass

import msgpack
import pydantic
import pytest

DATA = {"user": 42, "name": "agent", "tags": ["a", "b", "c"], "score": 0.5}


@dataclass
class Plain:
    user: int
    name: str
    tags: list
    score: float


class Model(pydantic.BaseModel):
    user: int
    name: str
    tags: list[str]
    score: float


def plain():
    return Plain(**DATA)


def copied():
    return dict(DATA)


def checked():
    out = {}
    for key, value in DATA.items():
        if not isinstance(key, str):
            raise TypeError(key)
        out[key] = value
    return out


@pytest.mark.overhead(max=100.0)
def test_pydantic(overhead):
    overhead.compare(plain, lambda: Model.model_validate(DATA))


@pytest.mark.overhead(max=100.0)
def test_json(overhead):
    overhead.compare(copied, lambda: json.loads(json.dumps(DATA)))


@pytest.mark.overhead(max=100.0)
def test_msgpack(overhead):
    overhead.compare(copied, lambda: msgpack.unpackb(msgpack.packb(DATA)))


def checked_twice():
    checked()
    return checked()


@pytest.mark.overhead(max=100.0)
def test_python(overhead):
    overhead.compare(checked, checked_twice)
"""


def session(project: Path, args: list[str]) -> tuple[dict[str, dict], str]:
    ran = harness.session(project, project / "out.json", *args, paths=[ROOT / "src"], measuring=False)
    return {r["nodeid"].split("::")[1]: r for r in ran.results}, ran.output


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=5)
    parser.add_argument("--counters", default="bytecode,callgrind", help="comma-separated counters to compare")
    args = parser.parse_args()
    counters = args.counters.split(",")
    rows: dict[str, dict[str, list]] = {}
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        (project / "test_compiled.py").write_text(PAIRS)
        (project / "pytest.ini").write_text("[pytest]\n")
        for _ in range(args.sessions):
            timed, _ = session(project, ["--overhead"])
            for counter in counters:
                counted, output = session(
                    project, ["--overhead", "--overhead-mode=count", f"--overhead-counter={counter}"]
                )
                for name, result in counted.items():
                    row = rows.setdefault(
                        f"{name} | {counter}", {"count": [], "probe": [], "time": [], "warned": [], "wall": []}
                    )
                    row["count"].append(result["overhead"])
                    row["probe"].append(result["time_ratio"] - 1)
                    row["time"].append(timed[name]["overhead"])
                    row["warned"].append(f"{name}: count mode reads" in output)
                    row["wall"].append(result["wall_s"])
    print(
        "| pair | counter | instructions (count mode) | time probe in count mode | time mode | warned | wall per pair |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, row in rows.items():
        count = sorted(row["count"])
        print(
            f"| {name} | {100 * count[0]:+.1f}..{100 * count[-1]:+.1f}% | "
            f"{100 * statistics.median(row['probe']):+.0f}% ({100 * min(row['probe']):+.0f}..{100 * max(row['probe']):+.0f}) | "
            f"{100 * statistics.median(row['time']):+.0f}% | {sum(row['warned'])} of {len(row['warned'])} | "
            f"{statistics.median(row['wall']):.2f} s |"
        )


if __name__ == "__main__":
    main()
