"""Count mode's machine-instruction counter (callgrind): which counter a session uses, what the
counts record, and real sessions counted under valgrind where it is installed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import COUNTED, git, sentences

from overheadbench.core.errors import InstrumentError
from overheadbench.core.vocabulary import Counter, Figure
from overheadbench.engine import valgrind
from overheadbench.engine.counted_samples import CountSamples
from overheadbench.engine.counting import disagreement
from overheadbench.engine.settings import Mode
from overheadbench.history.pair_changes import comparable
from overheadbench.instruments import callgrind
from overheadbench.instruments.callgrind import MachineInstructionCount

needs_valgrind = pytest.mark.skipif(
    valgrind.unavailable() is not None, reason=f"callgrind cannot run here: {valgrind.unavailable()}"
)

JSON_AND_PYTHON = """
import json
import pytest

DATA = {"user": 42, "name": "agent", "tags": ["a", "b", "c"], "score": 0.5}

def copied():
    return dict(DATA)

def checked():
    out = {}
    for key, value in DATA.items():
        if not isinstance(key, str):
            raise TypeError(key)
        out[key] = value
    return out

@pytest.mark.overhead(max=100.0, mode="count")
def test_json(overhead):
    overhead.compare(copied, lambda: json.loads(json.dumps(DATA)))

@pytest.mark.overhead(max=100.0, mode="count")
def test_python(overhead):
    overhead.compare(copied, checked)
"""


def counted(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, dict]]:
    pytester.makepyfile(test_pairs=JSON_AND_PYTHON)
    result = pytester.runpytest("--overhead", "--overhead-json=out.json", "-p", "no:cacheprovider", *args)
    data = json.loads((pytester.path / "out.json").read_text())
    return result, {r["nodeid"].split("::")[1]: r for r in data["results"]}


@needs_valgrind
def test_callgrind_counts_compiled_code_the_bytecode_counter_cannot_see(pytester: pytest.Pytester) -> None:
    result, machine = counted(pytester, "--overhead-counter=callgrind")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*count mode: the overhead is in executed machine instructions (callgrind: compiled code included*",
            "replica processes started in this session: 1",  # one counting replica for both pairs
        ]
    )
    assert {r["counts"]["counter"] for r in machine.values()} == {"callgrind"}
    assert "machine instructions/call" in machine["test_json"]["message"]
    _, bytecode = counted(pytester, "--overhead-counter=bytecode")
    assert {r["counts"]["counter"] for r in bytecode.values()} == {"bytecode"}
    # json's work is C: bytecode sees a few instructions, the CPU executes thousands
    json_calls = [r["counts"]["framework"]["instructions"] for r in (bytecode["test_json"], machine["test_json"])]
    assert 10 * max(json_calls[0]) < min(json_calls[1])


@needs_valgrind
def test_under_against_both_trees_are_counted_by_callgrind(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(costs="EXTRA = 0\n", test_counted=COUNTED)
    git(pytester.path, "init", "-q")
    git(pytester.path, "add", "-A")
    git(pytester.path, "commit", "-qm", "base")
    pytester.makepyfile(costs="EXTRA = 10\n")  # the head's framework path runs twice the loop
    grew = pytester.runpytest(
        "--overhead-against=HEAD",
        "--overhead-fail-above=5",
        "--overhead-counter=callgrind",
        "--overhead-json=ab.json",
    )
    grew.assert_outcomes(failed=1)
    grew.stdout.fnmatch_lines(["*test_counted: the framework path regressed against HEAD*"])
    (result,) = json.loads((pytester.path / "ab.json").read_text())["results"]
    assert result["counts"]["counter"] == result["places"][0]["result"]["counts"]["counter"] == "callgrind"
    grew.stdout.fnmatch_lines(["replica processes started in this session: 2"])  # a counting replica per tree


def test_callgrind_asked_for_where_it_cannot_run_is_a_usage_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("overheadbench.options.unavailable", lambda: "valgrind is not installed (not on PATH)")
    pytester.makepyfile(test_pairs=JSON_AND_PYTHON)
    refused = pytester.runpytest("--overhead", "--overhead-counter=callgrind")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    sentences(refused.stderr).fnmatch_lines(
        [
            "*--overhead-counter=callgrind: valgrind is not installed (not on PATH); install valgrind "
            "(apt-get install valgrind) or count bytecode with --overhead-counter=bytecode*"
        ]
    )
    fallback = pytester.runpytest("--overhead", "--overhead-counter=auto", "--overhead-json=out.json")
    fallback.assert_outcomes(passed=2)
    sentences(fallback.stdout).fnmatch_lines(
        ["*count mode: the overhead is in executed bytecode instructions (Python only*"]
    )
    results = json.loads((pytester.path / "out.json").read_text())
    assert results["settings"]["counter"] == "bytecode"
    assert {r["counts"]["counter"] for r in results["results"]} == {"bytecode"}


def test_a_bad_counter_name_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--overhead", "--overhead-counter=perf")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--overhead-counter='perf': must be one of auto, callgrind, bytecode*"])


def test_the_counter_travels_with_the_counts_and_old_files_counted_bytecode() -> None:
    machine = CountSamples(256, {Figure.INSTRUCTIONS: [419.0]}, {Figure.INSTRUCTIONS: [857.0]}, Counter.CALLGRIND)
    assert CountSamples.from_json(json.loads(json.dumps(machine.to_json()))) == machine
    old = {"calls_per_block": 16, "baseline": {"instructions": [2.0]}, "framework": {"instructions": [9.0]}}
    assert CountSamples.from_json(old).counter == Counter.BYTECODE


class _Counted:
    def __init__(self, counter: Counter) -> None:
        self.nodeid, self.mode, self.concurrency, self.ratio = "t.py::x", Mode.COUNT, 1, 2.0
        self.counts = CountSamples(16, counter=counter)


def test_machine_and_bytecode_counts_are_never_compared() -> None:
    assert comparable(_Counted(Counter.BYTECODE), _Counted(Counter.BYTECODE))  # type: ignore[arg-type]
    assert not comparable(_Counted(Counter.BYTECODE), _Counted(Counter.CALLGRIND))  # type: ignore[arg-type]


def test_a_disagreement_names_what_that_counter_cannot_see() -> None:
    bytecode = disagreement("t.py::x", 1.24, 3.69, Counter.BYTECODE)
    machine = disagreement("t.py::x", 1.24, 3.69, Counter.CALLGRIND)
    assert bytecode is not None and "compiled code (C or Rust extensions)" in bytecode
    assert machine is not None and "waiting (I/O, sleeping, locks, other processes)" in machine


def test_outside_valgrind_the_machine_counter_refuses_and_the_requests_are_no_ops(tmp_path: Path) -> None:
    if valgrind.supported():
        assert not callgrind.running_on_valgrind()  # the magic sequence returns its default on a real CPU
    with pytest.raises(InstrumentError, match="runs only in a process started under callgrind"):
        MachineInstructionCount(tmp_path)
    command = valgrind.wrapper()
    assert "--tool=callgrind" in command and "--collect-atstart=no" in command
    assert command[-1] == "--callgrind-out-file=%q{OVERHEADBENCH_SCRATCH}/cg.%p"  # the replica's scratch folder
