"""Where an overhead goes: the differential profile (exact in count mode, profiled in time mode),
its JSON, the failure message's top rows, the markdown section and the folded stacks."""

from __future__ import annotations

import json
import math
import os

import pytest
from helpers import BYTECODE, INI, LOOP_SCOPE

from overheadbench.core.jsonio import Fields
from overheadbench.core.vocabulary import Role
from overheadbench.engine.attribution import UNSEPARATED, ExplainRow, Explanation, explain, explain_change
from overheadbench.engine.profiles import Profiled
from overheadbench.engine.samples import Kind
from overheadbench.instruments.functions import SampledTime, function_name, loaded_modules
from overheadbench.instruments.instructions import InstructionCount, InstructionsByFunction, _calls_within
from overheadbench.instruments.walltime import PRIMED_BELOW
from overheadbench.pairs.explaining import explained, flame_path
from overheadbench.pairs.pair import Budget, Pair
from overheadbench.pairs.results import OverheadResult, PlaceResult
from overheadbench.replicas.messages import Explained, decode, encode

METRICS, RETRY = "mw:metrics_layer.<locals>.run", "mw:retry_layer.<locals>.run"


def test_the_added_cost_is_ranked_by_share_and_the_saved_cost_only_nets() -> None:
    """Profiles keyed by whole stacks, read by the function each ends in; the flame graph keeps the
    framework side's whole stacks."""
    baseline = {"t:bare;app:handle": 1000.0, "t:bare;app:handle;app:parse": 400.0}
    framework = {
        f"t:framed;{RETRY};{METRICS};app:handle": 2000.0,  # the same per call
        f"t:framed;{RETRY};{METRICS};app:handle;app:parse": 400.0,  # half the baseline's per call: saved
        f"t:framed;{RETRY};{METRICS}": 3000.0,
        f"t:framed;{RETRY}": 1000.0,
    }
    explained = explain(Profiled(baseline, 10, framework, 20), "instructions", exact=True)
    assert [row.where for row in explained.rows] == [METRICS, RETRY]
    assert [row.share for row in explained.rows] == [0.75, 0.25]
    assert [row.added for row in explained.rows] == [150.0, 50.0]
    assert explained.net == pytest.approx(150 + 50 - 20)  # parse: 20 per call saved
    assert explained.added == 200 and "net = +200 bytecode instr/call the functions add" not in explained.told()
    cached = Profiled({**baseline, "t:bare;app:cache": 1500.0}, 10, {**framework, "t:framed;app:cache": 1500.0}, 20)
    saving = explain(cached, "instructions", exact=True)
    assert saving.net == pytest.approx(200 - 20 - 75) and saving.added == 200  # the cache: 150 a call, now 75
    assert saving.told().splitlines()[-1] == (
        "  net = +200 bytecode instr/call the functions add (each row's share is of it) -95 bytecode instr/call others save"
    )
    assert explained.folded() == f"t:framed;{RETRY};{METRICS} 150\nt:framed;{RETRY} 50\n"
    stacks = {stack.path.rpartition(";")[2]: (stack.cost, stack.added) for stack in explained.stacks}
    assert stacks == {"app:handle": (100.0, 0.0), "app:parse": (20.0, -20.0), METRICS: (150.0, 150.0), RETRY: (50, 50)}


def test_a_functions_added_cost_is_shared_among_its_stacks_by_what_each_spent() -> None:
    """A function reached through two layers: its added cost goes to each stack by its share of the
    function's cost, so the stacks' added costs sum to the row's."""
    framework = {"t:f;mw:a;app:encode": 300.0, "t:f;mw:b;app:encode": 100.0, "t:f;app:encode": 100.0}
    explained = explain(Profiled({"t:b;app:encode": 100.0}, 1, framework, 1), "instructions", exact=True)
    assert explained.rows[0].where == "app:encode" and explained.rows[0].added == 400.0
    added = {stack.path: stack.added for stack in explained.stacks}
    assert added == {"t:f;mw:a;app:encode": 240.0, "t:f;mw:b;app:encode": 80.0, "t:f;app:encode": 80.0}


def test_an_explanation_survives_its_json() -> None:
    framework = {"mw:run": 4e-6, "app:x": 1e-6}
    explained = explain(Profiled({"app:x": 1e-6}, 2, framework, 4), "seconds", exact=False, note="n")
    back = Explanation.from_json(Fields(json.loads(json.dumps(explained.to_json())), "explain"))
    assert back == explained  # the stacks are not stored
    assert back.rows[0].where == "mw:run" and back.rows[0].share == 1.0


def test_a_failure_message_quotes_the_top_rows() -> None:
    framework = {f"mw:layer{index}": float(index) for index in range(1, 6)}
    told = explain(Profiled({}, 1, framework, 1), "seconds", exact=False).told()
    assert told.splitlines()[0] == "where the overhead goes (approximate: sampled time; net +15.0 s/call):"
    assert [line.split()[-1] for line in told.splitlines()[1:]] == ["mw:layer5", "mw:layer4", "mw:layer3"]


def _bare(x: int) -> int:
    return x * 2


def _layer(x: int) -> int:
    total = 0
    for index in range(10):
        total += index
    return _bare(x) + total - total


def test_the_counted_profile_names_each_function_and_is_the_same_every_time() -> None:
    profiler = InstructionsByFunction()
    runs = []
    for _ in range(2):
        baseline, baseline_calls = profiler.sync(lambda: _bare(3), 0.01)
        framework, framework_calls = profiler.sync(lambda: _layer(3), 0.01)
        runs.append(
            explain(Profiled(baseline, baseline_calls, framework, framework_calls), profiler.unit, profiler.exact)
        )
    first, second = (run.rows[0] for run in runs)
    assert first.where == f"{__name__}:_layer" and first.share > 0.9
    assert first.added == second.added and first.added == math.floor(first.added)  # whole instructions per call


def test_the_sampled_profile_charges_the_function_running() -> None:
    profiler = SampledTime()
    assert SampledTime.available()  # the tests run in the main thread, on Linux
    baseline, baseline_calls = profiler.sync(lambda: _bare(3), 0.05)
    framework, framework_calls = profiler.sync(lambda: _layer(3), 0.05)
    explained = explain(Profiled(baseline, baseline_calls, framework, framework_calls), profiler.unit, profiler.exact)
    assert explained.rows[0].where == f"{__name__}:_layer" and not explained.exact
    assert "sampled every 100 µs" in profiler.note


def test_a_lambda_keeps_its_line_and_a_builtin_its_name() -> None:
    def pair() -> tuple[object, object]:
        baseline = lambda: 1  # noqa: E731
        framework = lambda: 2  # noqa: E731
        return baseline, framework

    first, second = pair()
    modules = loaded_modules()
    names = {function_name(fn.__code__, modules) for fn in (first, second)}  # type: ignore[attr-defined]
    assert len(names) == 2 and all("<lambda>@" in name for name in names)
    assert function_name("<built-in method builtins.sorted>", modules) == "builtins:builtins.sorted"


STACK = """
import pytest

def bare(x):
    return x * 2

def metrics_layer(inner):
    seen = {}
    def run(x):
        seen[x] = seen.get(x, 0) + 1
        for _ in range(30):
            pass
        return inner(x)
    return run

def retry_layer(inner):
    def run(x):
        for attempt in range(1):
            return inner(x)
    return run

stacked = retry_layer(metrics_layer(bare))

@pytest.mark.overhead(max=0.1, mode="count")
def test_stack(overhead):
    overhead.compare(lambda: bare(3), lambda: stacked(3))

@pytest.mark.overhead(max=100.0, mode="count")
def test_generous(overhead):
    overhead.compare(lambda: bare(3), lambda: stacked(3))
"""


WHOLE_STACK = (
    "test_stack:test_generous.<locals>.<lambda>@29;test_stack:retry_layer.<locals>.run;"
    "test_stack:metrics_layer.<locals>.run"
)
"""The stack the metrics layer's own work is in: the framework side's lambda (line 29 of the written file), the
retry layer, the metrics layer."""


def test_a_failing_pair_is_explained_in_its_message_the_json_and_the_markdown(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_stack=STACK)
    result = pytester.runpytest(
        "--overhead", "--overhead-counter=bytecode", "--overhead-json=out.json", "--overhead-md=out.md"
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "where the overhead goes (exact: bytecode counted per function; net +* bytecode instr/call):",
            "*%  +* bytecode instr/call  test_stack:metrics_layer.<locals>.run",
            "*%  +* bytecode instr/call  test_stack:retry_layer.<locals>.run",
        ]
    )
    results = {r["nodeid"].split("::")[-1]: r for r in json.loads((pytester.path / "out.json").read_text())["results"]}
    assert results["test_generous"]["explain"] is None  # passing, not asked
    rows = results["test_stack"]["explain"]["rows"]
    assert rows[0]["where"] == "test_stack:metrics_layer.<locals>.run" and 0 < rows[0]["share"] <= 1
    assert sum(row["share"] for row in rows) == pytest.approx(1.0)
    markdown = (pytester.path / "out.md").read_text()
    assert "## Where the overhead goes" in markdown and "### `test_stack.py::test_stack`" in markdown
    assert "| `test_stack:metrics_layer.<locals>.run` |" in markdown  # as written: no entity inside a code span


def test_every_pair_is_explained_when_asked_and_its_flame_graph_written(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_stack=STACK)
    flame = pytester.path / "flame"
    result = pytester.runpytest(
        "--overhead-explain", "--overhead-counter=bytecode", f"--overhead-flame={flame}", "--overhead-json=out.json"
    )
    result.assert_outcomes(passed=1, failed=1)
    results = json.loads((pytester.path / "out.json").read_text())["results"]
    assert all(r["explain"] is not None for r in results)
    folded = flame_path(str(flame), "test_stack.py::test_generous").read_text().splitlines()
    assert WHOLE_STACK in [line.rpartition(" ")[0] for line in folded]  # from the side's lambda down
    assert all(int(line.rpartition(" ")[2]) > 0 for line in folded)
    # the passing pair's explanation in the terminal too (only a failure's was printed), once
    result.stdout.fnmatch_lines(
        [
            "*overhead: where it goes, in the pairs that passed*",
            "test_stack.py::test_generous",
            "  where the overhead goes (exact: bytecode counted per function; net +* bytecode instr/call):",
            "*%  +* bytecode instr/call  test_stack:metrics_layer.<locals>.run",
        ]
    )
    assert result.stdout.str().count("test_stack.py::test_stack\n  where the overhead goes") == 0  # in its failure
    written = [line for line in result.stdout.lines if line.startswith("overhead results written to")]
    assert len([line for line in written if line.endswith(".folded")]) == 2  # named, as every output is


@pytest.mark.every_plugin
def test_an_xdist_workers_explained_pair_gets_its_flame_graph_from_the_controller(pytester: pytest.Pytester) -> None:
    """The controller writes the flame graphs from the gathered results: a worker's pair carries its stacks."""
    pytester.makepyfile(test_stack=STACK)
    flame = pytester.path / "flame"
    result = pytester.runpytest(
        "-n", "1", "--overhead-explain", "--overhead-counter=bytecode", f"--overhead-flame={flame}"
    )
    result.assert_outcomes(passed=1, failed=1)
    folded = flame_path(str(flame), "test_stack.py::test_generous").read_text().splitlines()
    assert WHOLE_STACK in [line.rpartition(" ")[0] for line in folded]


def test_each_test_has_a_flame_file_of_its_own_whatever_its_id() -> None:
    ids = [
        "t.py::test_x[a/b]",
        "t.py::test_x[a_b]",
        "t.py::test_x[" + "y" * 300 + "]",
        "t.py::test_x[" + "y" * 301 + "]",
    ]
    names = [flame_path("/f", nodeid).name for nodeid in ids]
    assert len(set(names)) == len(ids) and all(len(name.encode()) < 255 for name in names)
    assert names[0].startswith("t.py_test_x_a_b-") and names[0].endswith(".folded")


@pytest.mark.parametrize("make", ["file", "read-only"])
def test_a_flame_folder_that_cannot_be_written_is_a_usage_error_before_anything_is_measured(
    pytester: pytest.Pytester, make: str
) -> None:
    pytester.makepyfile(test_stack=STACK)
    flame = pytester.path / "flame"
    if make == "file":
        flame.write_text("not a folder")
    else:
        flame.mkdir()
        flame.chmod(0o500)
    if make == "read-only" and os.access(flame, os.W_OK):  # root writes anywhere: the file case stands for it
        pytest.skip("this user can write in a read-only folder")
    result = pytester.runpytest("--overhead-explain", "--overhead-counter=bytecode", f"--overhead-flame={flame}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--overhead-flame={flame}: *"])


def test_a_flame_file_that_cannot_be_written_warns_and_the_result_is_kept(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_stack=STACK)
    flame = pytester.path / "flame"
    flame_path(str(flame), "test_stack.py::test_generous").mkdir(parents=True)  # a folder where the file goes
    result = pytester.runpytest(
        "--overhead-explain", "--overhead-counter=bytecode", f"--overhead-flame={flame}", "--overhead-json=out.json"
    )
    result.assert_outcomes(passed=1, failed=1)  # as without the folder in the way
    unwritten = "overheadbench: warning: */flame/test_stack.py_test_generous-*.folded: could not be written (*)"
    result.stdout.fnmatch_lines([unwritten])  # an optional output: the exit status is the tests'
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    written = [line for line in result.stdout.lines if line.startswith("overhead results written to")]
    assert any(line.endswith(".folded") and "test_stack.py_test_stack-" in line for line in written)  # named
    results = json.loads((pytester.path / "out.json").read_text())["results"]
    assert sorted(r["nodeid"] for r in results) == ["test_stack.py::test_generous", "test_stack.py::test_stack"]


ASYNC_PAIRS = """
import asyncio
import pytest

async def bare():
    return 1

async def audited():
    log = []
    for index in range(20):
        log.append(str(index))
    return await bare()

@pytest.mark.overhead(max=0.1, mode="count")
def test_sync_side(overhead):
    overhead.compare(bare, audited)

@pytest.mark.asyncio
@pytest.mark.overhead(max=0.1, processes=1)
async def test_in_loop(overhead):
    await overhead.acompare(bare, audited)
"""


@pytest.mark.every_plugin
def test_async_pairs_are_explained_in_both_modes(pytester: pytest.Pytester) -> None:
    pytester.makeini(f"{INI}{LOOP_SCOPE}{BYTECODE}")
    pytester.makepyfile(test_async=ASYNC_PAIRS)
    result = pytester.runpytest("--overhead", "--overhead-time-budget=0.2s", "--overhead-json=out.json")
    result.assert_outcomes(failed=2)
    explained = {
        r["nodeid"].split("::")[-1]: r["explain"]
        for r in json.loads((pytester.path / "out.json").read_text())["results"]
    }
    assert explained["test_sync_side"]["exact"] and not explained["test_in_loop"]["exact"]
    for explanation in explained.values():
        assert explanation["rows"][0]["where"] == "test_async:audited", explanation


def _precision_warnings(outcome: object) -> list[str]:
    from overheadbench.core.errors import OverheadPrecisionWarning

    return [str(w) for w in outcome.warnings if isinstance(w, OverheadPrecisionWarning)]  # type: ignore[attr-defined]


def test_a_budget_tighter_than_the_pair_can_detect_says_so_once() -> None:
    from overheadbench.engine.checks import Status
    from overheadbench.engine.samples import Kind
    from overheadbench.engine.settings import Policy
    from overheadbench.pairs.outcome import pair_outcome
    from overheadbench.pairs.pair import Budget, Pair
    from overheadbench.pairs.results import OverheadResult

    def result(limit: float, verdict: Status) -> OverheadResult:
        pair = Pair("t.py::test_x", Budget(max_overhead=limit))
        return OverheadResult(pair, Kind.SYNC, ratio=1.005, ci=(-0.04, 0.05), verdict=verdict, message="m")

    (warning,) = _precision_warnings(pair_outcome(result(0.01, Status.INCONCLUSIVE), Policy.WARN, False))
    assert warning.startswith("t.py::test_x: its budget (1.0%) is tighter than what it can detect here (±")
    assert "--overhead-time-budget" in warning and "mode='count'" in warning
    assert _precision_warnings(pair_outcome(result(0.10, Status.INCONCLUSIVE), Policy.WARN, False)) == []
    assert _precision_warnings(pair_outcome(result(0.01, Status.FAIL), Policy.WARN, False)) == []


def test_a_gate_threshold_within_what_a_change_can_detect_says_so() -> None:
    import dataclasses

    from overheadbench.core.vocabulary import Role
    from overheadbench.engine.changes import Change, Gate
    from overheadbench.engine.checks import Status
    from overheadbench.engine.samples import Kind
    from overheadbench.engine.settings import Policy
    from overheadbench.pairs.across import PlaceGate
    from overheadbench.pairs.outcome import pair_outcome
    from overheadbench.pairs.pair import Budget, Pair
    from overheadbench.pairs.results import OverheadResult, PlaceResult

    pair = Pair("t.py::test_x", Budget(max_overhead=1.0))
    own = OverheadResult(pair, Kind.SYNC, ratio=1.3, ci=(0.28, 0.32), verdict=Status.PASS, message="m")
    wide = Change("t.py::test_x", 1.3, 1.3 * 1.03, se=0.05, df=20)  # +3%, ±10%: contains 5%
    narrow = dataclasses.replace(wide, se=0.005)  # ±1%: regressed at 5%? no: +3% < 5%, same
    gate = PlaceGate(Gate("main", threshold=5.0))
    for change, warned in ((wide, 1), (narrow, 0)):
        result = dataclasses.replace(own, places=[PlaceResult("main", Role.BASE, None, change)])
        warnings = _precision_warnings(pair_outcome(result, Policy.FAIL, False, gate))
        assert len(warnings) == warned
    (text,) = _precision_warnings(
        pair_outcome(
            dataclasses.replace(own, places=[PlaceResult("main", Role.BASE, None, wide)]), Policy.FAIL, False, gate
        )
    )
    assert "the gate's threshold (5%) is within what the framework path" in text


def test_a_change_between_places_is_what_each_function_adds_there_less_what_it_adds_here() -> None:
    def side(**costs: float) -> dict[str, float]:
        return {f"mw:{name}": cost for name, cost in costs.items()}

    old = Profiled(side(x=10), 1, side(x=10, a=5, b=5), 1)
    new = Profiled(side(x=40), 2, side(x=40, a=10, b=30, c=4), 2)  # per call: x 20 on both sides, a 5, b 15, c 2
    explained = explain_change(old, new, "instructions", exact=True)
    assert [(row.where, row.added, row.share) for row in explained.rows] == [
        ("mw:b", 10.0, 10 / 12),
        ("mw:c", 2.0, 2 / 12),
    ]
    assert explained.net == 12.0 and explained.calls == (1, 2)
    assert explain_change(new, old, "instructions", exact=True).net == -12.0  # the other way round: saved, no rows


def test_a_replicas_profiles_survive_the_channel() -> None:
    profiled = Profiled({"a:f": 1.5e-6}, 3, {"a:f": 3e-6, "b:g": 1.0}, 6)
    assert decode(encode(Explained(profiled))) == Explained(profiled)


def test_the_counted_profiles_two_blocks_are_both_primed_or_neither() -> None:
    """A block of fewer than PRIMED_BELOW calls makes one more call first (counted per function): the
    profile's n-call and 2n-call blocks must make it alike, or one call's instructions stay in."""
    for one_s in (1.0, 0.04, 0.02, 0.012, 0.01, 0.008, 0.005, 0.003, 1e-3, 1e-6):
        calls = _calls_within(0.25, one_s)
        assert (calls < PRIMED_BELOW) == (2 * calls < PRIMED_BELOW), (one_s, calls)


def test_the_counted_profile_sums_to_what_count_mode_counts() -> None:
    def slow() -> int:
        return sum(range(3)) + _layer(2)

    counter = InstructionCount().block(slow, Kind.SYNC)
    per_call = counter(10) / 10  # type: ignore[operator]
    profile, calls = InstructionsByFunction().sync(slow, 0.0)  # one call's time: the fewest calls
    assert calls == 1 and sum(profile.values()) == per_call


class _Profiler:
    unit, exact, note = "instructions", True, "counted"


@pytest.mark.parametrize(("role", "added"), [(Role.BASE, 30.0), (Role.ENVIRONMENT, -30.0)])
def test_a_places_change_is_read_in_its_roles_direction(role: Role, added: float) -> None:
    """Against a base tree the change is the session's tree (head) less the base; under another
    environment it is that environment less the session's own."""
    here = Profiled({}, 1, {"mw:a": 50.0}, 1)
    there = Profiled({}, 1, {"mw:a": 20.0}, 1)
    result = OverheadResult(Pair("t.py::test_x", Budget(max_overhead=1.0)), Kind.SYNC, ratio=2.0)
    result.places = [PlaceResult("other", role)]
    explained_result = explained(result, _Profiler(), here, {"other": (here, there)})  # type: ignore[arg-type]
    (place,) = explained_result.places
    assert place.explain is not None and place.explain.net == added
    assert explained_result.explain is not None and explained_result.explain.net == 50.0  # the pair's own, from here


def test_paired_rounds_give_each_row_its_noise_and_rank_what_stands_out_first() -> None:
    """A thin layer (+300, steady) over shared work (+0 on average, but ±400 from round to round):
    ranked by added cost alone, the shared work came first in half the rounds."""
    rounds = [
        Profiled({"json:iterencode": 4000.0}, 1, {"json:iterencode": 4000.0 + swing, "agent:layer": 300.0 + wobble}, 1)
        for swing, wobble in ((400, 10), (-400, -10), (400, 0), (-350, 5), (450, -5), (-400, 0))
    ]
    merged = Profiled.merged(rounds)
    assert merged.baseline_calls == merged.framework_calls == 6
    explained = explain(merged, "seconds", exact=False)
    layer, shared = explained.rows
    assert layer.where == "agent:layer" and layer.clear and layer.se < 5
    assert shared.where == "json:iterencode" and not shared.clear  # +16.7 ± 2 se of about 150
    assert explained.separated and "~" in explained.told().splitlines()[2]


def test_an_explanation_within_its_noise_says_it_cannot_separate_the_change() -> None:
    rounds = [Profiled({"json:iterencode": 4000.0}, 1, {"json:iterencode": 4000.0 + swing}, 1) for swing in (300, -200)]
    explained = explain(Profiled.merged(rounds), "seconds", exact=False)
    assert not explained.separated
    assert explained.told().endswith(f"  {UNSEPARATED}")


def test_a_change_between_places_reads_each_place_against_its_own_baseline() -> None:
    """A replica slower throughout (1.25x) made every function of the change's head read slower."""
    old = Profiled({"json:iterencode": 4000.0}, 1, {"json:iterencode": 4000.0, "agent:layer": 400.0}, 1)
    new = Profiled({"json:iterencode": 5000.0}, 1, {"json:iterencode": 5000.0, "agent:layer": 625.0}, 1)
    explained = explain_change(old, new, "seconds", exact=False)
    (row,) = explained.rows
    assert row.where == "agent:layer" and row.added == pytest.approx(100.0)  # 625 / 1.25 - 400
    assert explain_change(old, new, "instructions", exact=True).rows[0].added == 225.0  # counts are not scaled


def test_a_profile_with_its_spread_survives_the_channel_and_a_row_its_json() -> None:
    rounds = [Profiled({"a:f": 1.0}, 1, {"a:f": 2.0 + swing}, 1) for swing in (0.1, -0.1)]
    merged = Profiled.merged(rounds)
    assert decode(encode(Explained(merged))) == Explained(merged) and merged.spread["a:f"] > 0
    row = explain(merged, "seconds", exact=False).rows[0]
    assert ExplainRow.from_json(Fields(json.loads(json.dumps(row.to_json())), "row")) == row
