"""Replica processes: the orchestration with fakes, the parts as plain units, and real runs
in fresh processes."""

from __future__ import annotations

import io
import json
import os
import random
import sys
from pathlib import Path

import pytest
from helpers import Synthetic, sentences

from overheadbench.core.errors import CallableError
from overheadbench.core.vocabulary import Role, Side
from overheadbench.engine.samples import BlockSizes, ReplicaSamples
from overheadbench.engine.sampling import GateRounds, InProcess, Stopping, drive_sync
from overheadbench.engine.settings import Settings
from overheadbench.replicas import in_replica
from overheadbench.replicas.launch import ReplicaRequest, write_work
from overheadbench.replicas.lifeline import watch_controller
from overheadbench.replicas.messages import Done, Go, Idle, Missed, Next, ProtocolError, Ready, Samples, decode, encode
from overheadbench.replicas.places import Place
from overheadbench.replicas.pool import ReplicaPool
from overheadbench.replicas.process import State
from overheadbench.replicas.relaunch import Invocation, absolute_nodeid, without_dropped
from overheadbench.replicas.replica import order_like
from overheadbench.replicas.rounds import places_plan

BASELINE, FRAMEWORK, HARNESS = Side.BASELINE, Side.FRAMEWORK, Side.HARNESS


class FakePool:
    """Stands in for ReplicaPool: records the calls, advances the fake clock per sampled process."""

    def __init__(self, synthetic: Synthetic, per_process_ns: int, startup_ns: int = 0, size: int = 0) -> None:
        self.synthetic, self.per_process_ns, self.startup_per_two_ns = synthetic, per_process_ns, startup_ns
        self.calls: list[tuple] = []
        self.size = size
        self.parked = 0
        self.start_ns = 0.0

    def round_ns(self, count: int) -> float:
        return self.startup_per_two_ns * -(-max(0, self.parked + count - self.size) // 2)

    def ensure(self, count: int, nodeid: str) -> None:
        self.calls.append(("ensure", count, nodeid))
        self.synthetic.now += self.round_ns(count - self.parked)
        self.size, self.parked = max(self.size, count), count

    def sample(self, index: int, sizes: BlockSizes, settings: Settings, own_sizes: bool = False) -> ReplicaSamples:
        self.calls.append(("sample", index))
        self.synthetic.now += self.per_process_ns
        return ReplicaSamples(sizes.baseline, [1000], [1100], framework_calls=sizes.framework)

    def release(self) -> None:
        self.calls.append(("release",))


def run_pair(settings: Settings, too_wide, per_process_ns: int = 200_000_000, **pool_args):
    synthetic = Synthetic({BASELINE: 1000, FRAMEWORK: 1100, HARNESS: 25})
    if settings.processes == 1:
        plan = InProcess().plan("t.py::x", settings, random.Random(1), synthetic.clock, Stopping(too_wide))
        return drive_sync(plan, synthetic.blocks()).samples, None, synthetic
    pool = FakePool(synthetic, per_process_ns, **pool_args)
    plan = places_plan(settings, random.Random(1), synthetic.clock, [pool], (), "t.py::x", Stopping(too_wide))
    return drive_sync(plan, synthetic.blocks()).samples, pool, synthetic


def test_one_process_needs_no_pool() -> None:
    replicas, pool, _ = run_pair(Settings(processes=1), lambda r: True)
    assert len(replicas) == 1 and pool is None


def test_replicas_are_parked_before_anything_is_timed_and_this_process_only_calibrates() -> None:
    replicas, pool, synthetic = run_pair(Settings(processes=4), lambda r: False)
    assert pool.calls == [
        ("ensure", 4, "t.py::x"),
        ("sample", 0),
        ("sample", 1),
        ("sample", 2),
        ("sample", 3),
        ("release",),
    ]
    assert len(replicas) == 4
    assert {side for side, _ in synthetic.log} == {BASELINE, FRAMEWORK}  # calibration only, no harness probe


def test_more_rounds_while_wide_and_within_budget() -> None:
    # 4 replicas x 0.2 s after a few ms of calibration; a round of 2 is predicted at 0.4 s
    # (sampling only: the pool already has the processes), so rounds end just after 1.2 and
    # 1.6 s, and a third would pass the 2 s budget
    replicas, pool, synthetic = run_pair(
        Settings(processes=4, max_processes=20, extra_processes=2, time_budget_s=2.0), lambda r: True, size=20
    )
    assert [call for call in pool.calls if call[0] == "ensure"] == [("ensure", count, "t.py::x") for count in (4, 6, 8)]
    assert [call[1] for call in pool.calls if call[0] == "sample"] == list(range(8))
    assert len(replicas) == 8 and pool.calls[-1] == ("release",)
    assert synthetic.now <= 2.0e9


def test_processes_are_added_up_to_the_cap_only() -> None:
    replicas, pool, _ = run_pair(
        Settings(processes=3, max_processes=6, extra_processes=2, time_budget_s=60.0),
        lambda r: True,
        per_process_ns=1_000_000,
    )
    assert [call[1] for call in pool.calls if call[0] == "ensure"] == [3, 5, 6] and len(replicas) == 6


def test_a_narrow_interval_stops_at_the_first_round() -> None:
    seen = []
    replicas, pool, _ = run_pair(
        Settings(processes=3, max_processes=9, time_budget_s=60.0),
        lambda r: seen.append(len(r)) or False,
        per_process_ns=1_000_000,
    )
    assert len(replicas) == 3 and seen == [3]


def test_a_further_rounds_start_up_counts_against_the_budget_the_first_rounds_does_not() -> None:
    # processes must start (0.3 s per two). The first round's start-up (0.6 s) is the
    # session's, not the pair's: after it, 4 x 0.2 s of sampling; a round of 2 new processes
    # is predicted at 0.3 + 0.4 s and fits (1.5 s); another would reach 2.2 s and does not
    replicas, pool, synthetic = run_pair(
        Settings(processes=4, max_processes=20, extra_processes=2, time_budget_s=2.0),
        lambda r: True,
        startup_ns=300_000_000,
    )
    assert [call[1] for call in pool.calls if call[0] == "ensure"] == [4, 6]
    assert len(replicas) == 6 and synthetic.now <= 0.6e9 + 2.0e9


def test_replicas_are_released_when_a_callable_raises() -> None:
    synthetic = Synthetic({BASELINE: 1000, FRAMEWORK: 1100, HARNESS: 25})
    pool = FakePool(synthetic, 1)
    blocks = synthetic.blocks()
    blocks[BASELINE] = lambda n: 1 // 0
    with pytest.raises(CallableError):
        drive_sync(
            places_plan(
                Settings(processes=3),
                random.Random(1),
                synthetic.clock,
                [pool],
                (),
                "t.py::x",
                Stopping(lambda r: False),
            ),
            blocks,
        )
    assert pool.calls[-1] == ("release",)


def test_after_the_sessions_last_pair_its_replicas_are_told_and_not_waited_for() -> None:
    """Waiting for ten replicas to end their sessions put 2-3 s on the last pair's time."""

    class Parked:
        state = State.PARKED
        commands = io.BytesIO()

    pool = ReplicaPool(Invocation(("pytest",), Path()), ("a.py::x", "a.py::y"))
    replica = Parked()
    pool._replicas, pool.talk.current = [replica], "a.py::y"  # type: ignore[list-item]
    pool.release()  # waiting would read the replica's (absent) pipe and fail
    assert replica.state is State.LEAVING and decode(replica.commands.getvalue()) == Done()


def test_replicas_run_the_marked_tests_in_the_controllers_order() -> None:
    class Item:
        def __init__(self, nodeid: str) -> None:
            self.nodeid = nodeid

    items = [Item(n) for n in ("a::1", "a::2", "b::1", "b::2")]
    kept, rest = order_like(items, ("b::2", "a::1", "b::1"))
    assert [i.nodeid for i in kept] == ["b::2", "a::1", "b::1"] and [i.nodeid for i in rest] == ["a::2"]


def test_replica_request_round_trips_through_the_environment_and_its_work_file(tmp_path: Path) -> None:
    nodeids = ("tests/test_a.py::test_b[x]", "t.py::c", "t.py::d")
    request = ReplicaRequest(str(write_work(tmp_path, nodeids)), 1, 5, 6, 7)
    assert ReplicaRequest.from_env({"OVERHEADBENCH_REPLICA": request.to_env()}) == request
    assert ReplicaRequest.from_env({}) is None
    assert request.nodeids() == ("t.py::c", "t.py::d")


def test_the_environment_carries_no_node_id_however_large_the_suite(tmp_path: Path) -> None:
    """Linux caps one environment string at 128 KiB: the ids travel in the work file."""
    nodeids = tuple(f"tests/test_{index}.py::test_{'x' * 10_000}" for index in range(14))
    request = ReplicaRequest(str(write_work(tmp_path, nodeids)), 0, 5, 6, 7)
    assert len(request.to_env()) < 1000 and request.nodeids() == nodeids


def test_messages_round_trip_and_nonsense_is_a_protocol_error() -> None:
    samples = ReplicaSamples(8, [1, 2], [3, 4], 0.5, 0.1)
    for message in (
        Ready("t.py::x"),
        Samples(samples),
        Missed("t.py::x", "setup", "failed", "E  boom"),
        Idle(),
        Next("t.py::y"),
        Go(64, Settings(processes=5, backend="trio")),
        Go(64, Settings(), framework_calls=2),
        Done(),
    ):
        assert decode(encode(message)) == message
    with pytest.raises(ProtocolError, match="not an overheadbench replica message"):
        decode(b'{"type": "Launch"}')
    assert Go(64, Settings(), framework_calls=2).sizes == BlockSizes(64, 2)
    assert Go(64, Settings()).sizes == BlockSizes(64, 64)  # count mode's order: one size


@pytest.mark.parametrize(
    "args, kept",
    [
        (["--overhead", "-n", "4", "tests/", "--dist=loadgroup"], ["--overhead", "tests/"]),
        (["-n4", "-x", "--overhead-json", "out.json", "--overhead-md=r.md"], ["-x"]),
        (["--junitxml", "j.xml", "--basetemp=/tmp/b", "-p", "myplug", "--runslow"], ["-p", "myplug", "--runslow"]),
        (["--overhead-compare", "tests/"], []),  # argparse takes the word as the optional value, as here
        (["--overhead-compare", "-q", "--lf", "--sw", "-o", "pythonpath=src"], ["-q", "-o", "pythonpath=src"]),
        (["-k", "x", "--", "-n", "4"], ["-k", "x", "--", "-n", "4"]),
    ],
)
def test_options_that_replicas_must_not_have_are_dropped_in_every_spelling(args, kept) -> None:
    assert without_dropped(args) == kept


def test_a_replica_runs_the_users_command_line_less_its_outputs() -> None:
    invocation = Invocation(
        args=("--overhead", "-n", "2", "-o", "pythonpath=src", "--runslow", "--overhead-json=o.json"),
        directory=Path("/project"),
        ini_addopts=("--import-mode=importlib", "--junitxml=j.xml"),
        env_addopts="-p myplug --overhead-md r.md",
        module_run=True,
    )
    command = invocation.command(Path("/tmp/cache"))
    assert command[1] == "-c" and "lifeline.py')['boot'](module_run=True)" in command[2]
    assert command[3:] == [
        "--overhead",
        "-o",
        "pythonpath=src",
        "--runslow",
        "-o",
        "cache_dir=/tmp/cache",
        "--continue-on-collection-errors",
        "-o",
        "addopts=--import-mode=importlib",
        "-p",
        "no:xdist",
    ]
    environ = invocation.environ({"HOME": "/root", "PYTEST_ADDOPTS": "unused"}, {"OVERHEADBENCH_REPLICA": "{}"})
    assert environ == {"HOME": "/root", "PYTEST_ADDOPTS": "-p myplug", "OVERHEADBENCH_REPLICA": "{}"}
    plain = Invocation(args=("t.py",), directory=Path("/p"), module_run=False).command(Path("/c"))
    assert "(module_run=False)" in plain[2] and plain[3:] == [
        "t.py",
        "-o",
        "cache_dir=/c",
        "--continue-on-collection-errors",
        "-p",
        "no:xdist",
    ]


def test_the_base_trees_replicas_run_the_same_session_in_the_other_tree(tmp_path: Path, monkeypatch) -> None:
    """Absolute paths into the head tree (arguments, PYTHONPATH) and the directory move to the base
    tree; relative ones stay (they follow the directory); the interpreter is the base's."""
    head, base = tmp_path / "head", tmp_path / "base"
    (head / "tests").mkdir(parents=True)
    monkeypatch.setenv("PYTHONPATH", f"{head / 'src'}{os.pathsep}lib{os.pathsep}/elsewhere")
    mapped = Invocation(args=(str(head / "tests"), "-k", "x", "tests"), directory=head / "tests").in_tree(
        lambda path: base / path.relative_to(head) if head in path.parents or path == head else path, "/venv/python"
    )
    assert mapped.args == (str(base / "tests"), "-k", "x", "tests") and mapped.directory == base / "tests"
    assert mapped.python == "/venv/python" and mapped.command(Path("/c"))[0] == "/venv/python"
    environ = mapped.environ({"PYTHONPATH": "head's"}, {})
    assert environ["PYTHONPATH"] == f"{base / 'src'}{os.pathsep}lib{os.pathsep}/elsewhere"


def test_node_ids_become_absolute_collection_arguments() -> None:
    assert absolute_nodeid("tests/test_a.py::T::test_b[a::b/c]", Path("/r")) == "/r/tests/test_a.py::T::test_b[a::b/c]"
    assert absolute_nodeid("test_a.py", Path("/r")) == "/r/test_a.py"


def test_the_watchdog_ends_the_replica_when_the_lifeline_closes() -> None:
    import threading

    ended = threading.Event()
    read_end, write_end = os.pipe()
    interrupted = []
    try:
        thread = watch_controller(read_end, grace_s=0.0, exit_process=lambda code: ended.set())
        assert not ended.wait(0.05)  # alive while the controller is
        import _thread

        original, _thread.interrupt_main = _thread.interrupt_main, lambda *a: interrupted.append(True)
        try:
            os.close(write_end)
            assert ended.wait(5.0)
        finally:
            _thread.interrupt_main = original
        thread.join(5.0)
    finally:
        os.close(read_end)
    assert interrupted == [True]


def test_in_replica_is_false_in_the_users_session() -> None:
    assert in_replica() is False


def test_a_replica_that_cannot_measure_is_a_clear_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import os
        import pytest
        from overheadbench import in_replica

        @pytest.mark.overhead(max=5.0)
        def test_pair(overhead):
            if in_replica():
                raise RuntimeError("only breaks in a fresh process")
            overhead.compare(lambda: None, lambda: None)

        @pytest.mark.overhead(max=5.0)
        def test_next(overhead):
            overhead.compare(lambda: sum(range(20)), lambda: sum(range(30)))

        @pytest.mark.overhead(max=5.0)
        def test_last(overhead):
            if in_replica():
                os._exit(3)
            overhead.compare(lambda: None, lambda: None)
        """
    )
    result = pytester.runpytest(
        "--overhead", "--overhead-processes=2", "--overhead-target=0.5", "--overhead-time-budget=300ms"
    )
    result.assert_outcomes(failed=2, passed=1)
    sentences(result.stdout).fnmatch_lines(
        [
            "*test_a_replica_that_cannot_measure_is_a_clear_error.py::test_pair: in a replica "
            "process (a fresh run of this test's session) the test failed while running the "
            "test, before its pair was ready to sample:*",
            "*RuntimeError: only breaks in a fresh process*",
        ]
    )
    sentences(result.stdout).fnmatch_lines(
        [
            "*::test_last: a replica process (a fresh run of this test's session) exited with "
            "code 3 while moving to a test*"
        ]
    )


@pytest.mark.every_plugin
def test_async_test_replicas_load_the_async_runner(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import os
        import pytest

        async def step():
            return sum(range(20))

        @pytest.mark.asyncio
        @pytest.mark.overhead(max=5.0)
        async def test_in_loop(overhead):
            with open("pids.txt", "a") as log:
                log.write(f"{os.getpid()}\\n")
            await overhead.acompare(step, step)
        """
    )
    result = pytester.runpytest(
        "--overhead", "--overhead-processes=2", "--overhead-target=0.5", "--overhead-time-budget=500ms"
    )
    result.assert_outcomes(passed=1)
    assert len(set((pytester.path / "pids.txt").read_text().split())) == 3  # this process and 2 replicas


PID_LOGGING_TESTS = """
import os
import pytest

def work(n):
    return sum(range(n))

def log_pid(name):
    with open(f"pids-{name}.txt", "a") as log:
        log.write(f"{os.getpid()}\\n")

@pytest.mark.overhead(max=5.0)
def test_one(overhead):
    log_pid("one")
    overhead.compare(lambda: work(20), lambda: work(30))

def test_unmarked():
    log_pid("unmarked")

@pytest.mark.overhead(max=5.0)
def test_two(overhead):
    log_pid("two")
    overhead.compare(lambda: work(20), lambda: work(25))
"""


def test_one_pool_of_replicas_serves_every_pair_of_the_session(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(PID_LOGGING_TESTS)
    result = pytester.runpytest_subprocess(  # the controller's pid is among those that must be gone
        "--overhead", "--overhead-processes=3", "--overhead-target=0.5", "--overhead-time-budget=1s"
    )
    result.assert_outcomes(passed=3)
    read = lambda name: (pytester.path / f"pids-{name}.txt").read_text().split()  # noqa: E731
    assert len(read("one")) == 4 and set(read("one")) == set(read("two"))  # the same 3 replicas + this one
    assert len(read("unmarked")) == 1  # replicas run only the marked tests
    for pid in read("one"):  # the controller and every replica are gone: nothing left running
        with pytest.raises(ProcessLookupError):
            os.kill(int(pid), 0)


def test_replicas_follow_the_controllers_order(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        from overheadbench import in_replica

        def pytest_collection_modifyitems(items):
            if not in_replica():
                items.reverse()
        """
    )
    pytester.makepyfile(PID_LOGGING_TESTS)
    result = pytester.runpytest(
        "--overhead", "--overhead-processes=2", "--overhead-target=0.5", "--overhead-time-budget=500ms", "-v"
    )
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*test_two PASSED*", "*test_unmarked PASSED*", "*test_one PASSED*"])


def test_a_pair_skipped_here_is_passed_over_by_the_replicas(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest
        from overheadbench import in_replica

        @pytest.mark.overhead(max=5.0)
        def test_skipped_here(overhead):
            if not in_replica():
                pytest.skip("not measured in the controller")
            overhead.compare(lambda: None, lambda: None)

        @pytest.mark.overhead(max=5.0)
        def test_measured(overhead):
            overhead.compare(lambda: sum(range(20)), lambda: sum(range(30)))
        """
    )
    result = pytester.runpytest(
        "--overhead",
        "--overhead-processes=2",
        "--overhead-target=0.5",
        "--overhead-time-budget=500ms",
        "--overhead-json=out.json",
    )
    result.assert_outcomes(passed=1, skipped=1)
    assert json.loads((pytester.path / "out.json").read_text())["results"][0]["processes"] == 2


def gated_pair(undecided, settings: Settings, looks=(4, 8, 16)):
    synthetic = Synthetic({BASELINE: 1000, FRAMEWORK: 1100, HARNESS: 25})
    own, base = FakePool(synthetic, 1_000_000), FakePool(synthetic, 1_000_000)
    place = Place("base", Role.BASE, sys.executable)
    stop = Stopping(lambda r: True, GateRounds(looks, undecided))
    plan = places_plan(settings, random.Random(1), synthetic.clock, [own, base], [place], "t.py::x", stop)
    return drive_sync(plan, synthetic.blocks()), own


def test_a_gate_looks_again_at_its_next_count_while_a_change_is_unknown_and_stops_once_decided() -> None:
    answers = iter([True, False])
    seen = []

    def undecided(own, others):
        seen.append((len(own), [(role, len(samples)) for role, samples in others]))
        return next(answers)

    sampled, own = gated_pair(undecided, Settings(processes=4, max_processes=4, time_budget_s=0.1))
    assert seen == [(4, [(Role.BASE, 4)]), (8, [(Role.BASE, 8)])]  # looked twice; the budget did not stop it
    assert [call[1] for call in own.calls if call[0] == "ensure"] == [4, 8]
    assert len(sampled.samples) == 8 and len(sampled.places[0].samples) == 8


def test_a_gate_never_looks_past_its_last_count_nor_its_ceiling() -> None:
    sampled, own = gated_pair(lambda own, others: True, Settings(processes=4, time_budget_s=0.1))
    assert [call[1] for call in own.calls if call[0] == "ensure"] == [4, 8, 16]
    tight = Settings(processes=4, time_budget_s=0.1, max_time_s=0.005)  # 5 ms per place: no further round fits
    sampled, own = gated_pair(lambda own, others: True, tight)
    assert [call[1] for call in own.calls if call[0] == "ensure"] == [4] and len(sampled.samples) == 4
