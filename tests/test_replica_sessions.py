"""Replicas run the user's suite the way the user runs it: each case a real session with
real replica processes, under ``pytest --overhead`` with the default settings.

Every case here broke before replicas re-ran the user's own command line: import modes and
``pythonpath`` from the ini or the command line, plugins from ``addopts``, conftest options,
strict configurations, xdist. The assertions are on outcomes and on what the processes wrote
(pids, set-ups, time windows), never on timing figures.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from helpers import LOOP_SCOPE, QUIET_INI, alive, sentences

PAIR = """
import pytest

@pytest.mark.overhead(max=5.0)
def test_pair{suffix}(overhead{fixtures}):
    overhead.compare(lambda: sum(range(200)), lambda: sum(range(300)))
"""


def measure(
    pytester: pytest.Pytester, *args: str, timeout: float | None = None
) -> tuple[pytest.RunResult, dict[str, dict]]:
    """A real session with replicas; its outcome and its pairs by test name (``timeout``: a bound on
    a session that could hang, so that the test fails rather than hangs)."""
    result = pytester.runpytest_subprocess("--overhead", "--overhead-json=out.json", *args, timeout=timeout)
    path = pytester.path / "out.json"
    pairs = {r["nodeid"]: r for r in json.loads(path.read_text())["results"]} if path.exists() else {}
    return result, pairs


def assert_replicated(pairs: dict[str, dict], count: int) -> None:
    """Every pair was measured, and in fresh processes (3 at least, the default)."""
    assert len(pairs) == count and all(pair["processes"] >= 3 for pair in pairs.values()), pairs


def test_import_mode_from_addopts_reaches_the_replicas(pytester: pytest.Pytester) -> None:
    pytester.makeini(f"{QUIET_INI}addopts = --import-mode=importlib\n")
    for folder in ("a", "b"):  # two test_x.py: only importlib mode can import both
        pytester.mkdir(folder)
        (pytester.path / folder / "test_x.py").write_text(PAIR.format(suffix=f"_{folder}", fixtures=""))
    result, pairs = measure(pytester)
    result.assert_outcomes(passed=2)
    assert_replicated(pairs, 2)


def test_a_plugin_loaded_by_addopts_gives_its_fixtures_to_the_replicas(pytester: pytest.Pytester) -> None:
    pytester.makeini(f"{QUIET_INI}addopts = -p myplug.fixtures\n")
    pytester.mkpydir("myplug")
    (pytester.path / "myplug" / "fixtures.py").write_text(
        "import pytest\n\n@pytest.fixture\ndef agent():\n    return 'agent'\n"
    )
    pytester.makepyfile(PAIR.format(suffix="", fixtures=", agent"))
    result, pairs = measure(pytester)
    result.assert_outcomes(passed=1)
    assert_replicated(pairs, 1)


def test_pythonpath_given_on_the_command_line_reaches_the_replicas(pytester: pytest.Pytester) -> None:
    pytester.mkdir("src")
    (pytester.path / "src" / "mylib.py").write_text("def work(n):\n    return sum(range(n))\n")
    pytester.makepyfile(
        """
        import pytest
        from mylib import work

        @pytest.mark.overhead(max=5.0)
        def test_pair(overhead):
            overhead.compare(lambda: work(20), lambda: work(30))
        """
    )
    result, pairs = measure(pytester, "-o", "pythonpath=src")
    result.assert_outcomes(passed=1)
    assert_replicated(pairs, 1)


def test_a_conftest_option_reaches_the_replicas(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(  # pytest's own --runslow recipe
        """
        import pytest

        def pytest_addoption(parser):
            parser.addoption("--runslow", action="store_true", default=False, help="run slow tests")

        def pytest_configure(config):
            config.addinivalue_line("markers", "slow: mark test as slow to run")

        def pytest_collection_modifyitems(config, items):
            if config.getoption("--runslow"):
                return
            for item in items:
                if "slow" in item.keywords:
                    item.add_marker(pytest.mark.skip(reason="need --runslow option to run"))
        """
    )
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.slow
        @pytest.mark.overhead(max=5.0)
        def test_pair(overhead):
            overhead.compare(lambda: sum(range(20)), lambda: sum(range(30)))
        """
    )
    result, pairs = measure(pytester, "--runslow")
    result.assert_outcomes(passed=1)
    assert_replicated(pairs, 1)


@pytest.mark.every_plugin
def test_a_strict_configuration_with_another_plugins_ini_key_works_in_the_replicas(pytester: pytest.Pytester) -> None:
    # asyncio_default_fixture_loop_scope is pytest-asyncio's key: a replica that did not load
    # every plugin the session loaded failed on it under --strict-config
    pytester.makeini(f"{QUIET_INI}{LOOP_SCOPE}addopts = --strict-config\nfilterwarnings =\n    error\n")
    pytester.makepyfile(PAIR.format(suffix="", fixtures=""))
    result, pairs = measure(pytester)
    result.assert_outcomes(passed=1)
    assert_replicated(pairs, 1)


WINDOWS = """
import json
import os
import time

import pytest
from overheadbench import in_replica


def log(**event):
    with open("events.jsonl", "a") as out:
        out.write(json.dumps({"pid": os.getpid(), "replica": in_replica(), **event}) + "\\n")


@pytest.fixture(scope="session")
def expensive():
    log(what="session setup", at=time.time())
    sum(range(300_000))  # CPU work, as a real session fixture does
    return "ready"


@pytest.fixture
def per_test(request, expensive):
    log(what="setup", test=request.node.name, at=time.time())
    return expensive


def timed(overhead, name):
    started = time.time()
    overhead.compare(lambda: sum(range(20)), lambda: sum(range(30)))
    if not in_replica():
        log(what="window", test=name, start=started, end=time.time())
"""


def read_events(path: Path) -> list[dict]:
    return [json.loads(line) for line in (path / "events.jsonl").read_text().splitlines()]


def test_replicas_set_up_only_while_their_pair_waits_for_them(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(WINDOWS)
    pytester.makepyfile(
        """
        import time
        import pytest
        from conftest import log, timed

        @pytest.mark.overhead(max=5.0)
        def test_first(overhead, per_test):
            timed(overhead, "test_first")

        def test_unmarked():
            started = time.time()
            time.sleep(0.3)
            log(what="window", test="test_unmarked", start=started, end=time.time())

        @pytest.mark.overhead(max=5.0)
        def test_second(overhead, per_test):
            timed(overhead, "test_second")

        @pytest.mark.overhead(max=5.0, processes=1)
        def test_alone(overhead, per_test):
            timed(overhead, "test_alone")
        """
    )
    result, pairs = measure(pytester, "--overhead-columns=overhead,procs,wall")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*procs*wall*status*", "replica processes started in this session: *"])
    events = read_events(pytester.path)
    windows = {e["test"]: e for e in events if e["what"] == "window"}
    replica_setups = [e for e in events if e["what"] == "setup" and e["replica"]]
    for setup in replica_setups:  # inside its own pair's compare, never while anything else ran
        window = windows[setup["test"]]
        assert window["start"] <= setup["at"] <= window["end"], (setup, window)
    assert {e["test"] for e in replica_setups} == {"test_first", "test_second"}  # processes=1: none
    for name in ("test_first", "test_second"):  # a replica sets up only the pairs it measures
        measured_by = pairs[f"test_replicas_set_up_only_while_their_pair_waits_for_them.py::{name}"]["processes"]
        assert sum(1 for e in replica_setups if e["test"] == name) == measured_by
    processes = {e["pid"] for e in events}
    session_setups = [e for e in events if e["what"] == "session setup"]
    assert len(session_setups) == len(processes)  # once per process, the controller's included
    started = int(result.stdout.str().split("replica processes started in this session: ")[1].split()[0])
    assert len(processes) == 1 + started
    assert pairs["test_replicas_set_up_only_while_their_pair_waits_for_them.py::test_alone"]["processes"] == 1


def test_a_fixture_holding_a_fixed_port_gets_a_clear_hint_and_processes_1_measures_it(
    pytester: pytest.Pytester,
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    source = f"""
import socket
import pytest

@pytest.fixture(scope="session")
def fixed_port():
    server = socket.socket()
    server.bind(("127.0.0.1", {port}))
    server.listen()
    yield server
    server.close()

@pytest.mark.overhead(max=5.0{{extra}})
def test_server(overhead, fixed_port):
    overhead.compare(lambda: sum(range(20)), lambda: sum(range(30)))
"""
    pytester.makepyfile(source.format(extra=""))
    result, _ = measure(pytester)
    result.assert_outcomes(failed=1)
    sentences(result.stdout).fnmatch_lines(
        [
            "*::test_server: in a replica process (a fresh run of this test's session) the test failed while setting the "
            "test up:*",
            "*Address already in use*",
            "*a fixture that holds an exclusive resource (a fixed port, a file, a lock)*processes=1*",
        ]
    )
    pytester.makepyfile(source.format(extra=", processes=1"))
    result, pairs = measure(pytester)
    result.assert_outcomes(passed=1)
    assert [pair["processes"] for pair in pairs.values()] == [1]


DYING = """
import os
import time
import pytest
from overheadbench import in_replica

@pytest.mark.overhead(max=5.0)
def test_breaks(overhead):
    if in_replica():
        {how}
    overhead.compare(lambda: sum(range(20)), lambda: sum(range(30)))

@pytest.mark.overhead(max=5.0)
def test_healthy(overhead):
    overhead.compare(lambda: sum(range(20)), lambda: sum(range(30)))
"""


@pytest.mark.parametrize(
    "how, message, options",
    [
        (
            "os._exit(3)",
            "*::test_breaks: a replica process (a fresh run of this test's session) exited with code 3 "
            "while moving to a test*",
            (),
        ),
        # the silence limit covers every wait, the replacements' start-up included: 8 s leaves them
        # room on a loaded machine
        (
            "time.sleep(600)",
            "*::test_breaks: a replica process (a fresh run of this test's session) sent nothing for "
            "8 s while moving to a test (raise overhead_replica_timeout*",
            ("--overhead-replica-timeout=8s",),
        ),
    ],
)
def test_a_dead_or_hung_replica_fails_its_own_pair_only(
    pytester: pytest.Pytester, how: str, message: str, options: tuple[str, ...]
) -> None:
    pytester.makepyfile(DYING.format(how=how))
    result, pairs = measure(pytester, *options)
    result.assert_outcomes(failed=1, passed=1)
    sentences(result.stdout).fnmatch_lines([message])
    assert_replicated(pairs, 1)  # the next pair got fresh processes in place of the dropped one


def test_a_callable_that_hangs_here_fails_its_test_after_the_pair_timeout(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import time
        import pytest

        @pytest.mark.overhead(max=5.0)
        def test_hangs(overhead):
            overhead.compare(lambda: time.sleep(600), lambda: None)

        @pytest.mark.overhead(max=5.0, processes=1)
        def test_after(overhead):
            overhead.compare(lambda: sum(range(200)), lambda: sum(range(300)))
        """
    )
    # the hang is in this process's first call, before any replica is asked for; test_after is
    # measured in this process so that a loaded machine cannot make it reach the short limit too
    result, pairs = measure(pytester, "--overhead-pair-timeout=5s", "--overhead-time-budget=500ms")
    result.assert_outcomes(failed=1, passed=1)
    sentences(result.stdout).fnmatch_lines(
        [
            "*::test_hangs: the pair made no progress for 5 s (overhead_pair_timeout, a limit on silence*): "
            "does the baseline or the framework callable hang, here or only while profiled? (a first call never "
            "returned.)*"
        ]
    )
    assert list(pairs) == ["test_a_callable_that_hangs_here_fails_its_test_after_the_pair_timeout.py::test_after"]


def test_a_callable_that_hangs_only_while_explained_fails_at_the_silence_limit(pytester: pytest.Pytester) -> None:
    """Explaining had no limit: a callable that blocked only while profiled hung the session until it
    was interrupted, and the interrupt was then reported as the pair timeout."""
    pytester.makepyfile(
        """
        import signal
        import time
        import pytest

        def profiled():  # the sampling profiler holds SIGALRM while it samples
            return getattr(signal.getsignal(signal.SIGALRM), "__name__", "") == "_on_signal"

        def framework():
            if profiled():
                time.sleep(3600)
            return sum(range(300))

        @pytest.mark.overhead(max=5.0, processes=1)
        def test_hangs_when_explained(overhead):
            overhead.compare(lambda: sum(range(200)), framework)

        @pytest.mark.overhead(max=5.0, processes=1)
        def test_after(overhead):
            overhead.compare(lambda: sum(range(200)), lambda: sum(range(300)))
        """
    )
    result, pairs = measure(
        pytester, "--overhead-pair-timeout=5s", "--overhead-time-budget=300ms", "--overhead-explain"
    )
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(
        ["*::test_hangs_when_explained: the pair made no progress for 5 s (overhead_pair_timeout, a limit on silence*"]
    )
    assert [name.rpartition("::")[2] for name in pairs] == ["test_after"]


STUBBORN = """
import asyncio
import pytest

async def stubborn():
    while True:
        try:
            await asyncio.sleep(0.2)
        except asyncio.CancelledError:
            pass  # a leaked worker that swallows its cancellation: the loop cannot close

calls = []

async def baseline():
    if not calls:
        asyncio.get_running_loop().create_task(stubborn())
    calls.append(1)
    await asyncio.sleep({hang})

async def framework():
    await asyncio.sleep(0)

@pytest.mark.overhead(max=1000.0)
def test_leaks(overhead):
    overhead.compare(baseline, framework)

@pytest.mark.overhead(max=5.0, processes=1)
def test_after(overhead):
    overhead.compare(lambda: sum(range(200)), lambda: sum(range(300)))
"""


NEVER_CLOSES = (
    "*::test_leaks: a task the callables left on the event loop would not end when cancelled (stubborn() at "
    "*test_*.py:*: does it catch CancelledError and go on?); it was abandoned after 2 s*"
)
TIMED_OUT_THEN_NEVER_CLOSES = (
    "*::test_leaks: the pair made no progress for 8 s (overhead_pair_timeout, a limit on silence*)*; a task the callables "
    "left on the event loop would not end when cancelled (stubborn() at *"
)


@pytest.mark.parametrize(
    ("hang", "processes", "message"),
    [
        # the pair itself ends, then its loop cannot close (in this process: a replica closes its loop alike)
        ("0", "1", NEVER_CLOSES),
        # the pair's limit strikes first, then no loop can close, here or in a replica (it sat there 150 s
        # past a 15 s limit)
        ("0 if len(calls) < 3 else 600", "3", TIMED_OUT_THEN_NEVER_CLOSES),
    ],
)
def test_a_loop_that_cannot_close_is_abandoned_and_named_and_the_session_goes_on(
    pytester: pytest.Pytester, hang: str, processes: str, message: str
) -> None:
    pytester.makepyfile(STUBBORN.format(hang=hang))
    result, pairs = measure(pytester, "--overhead-pair-timeout=8s", f"--overhead-processes={processes}", timeout=120)
    result.assert_outcomes(failed=1, passed=1)
    sentences(result.stdout).fnmatch_lines([message])
    assert list(pairs) == [
        "test_a_loop_that_cannot_close_is_abandoned_and_named_and_the_session_goes_on.py::test_after"
    ]


@pytest.mark.parametrize("where", ["sampling", "moving to a test"])
def test_a_hang_only_in_replicas_is_ended_at_the_pair_timeout_and_the_next_pair_is_measured(
    pytester: pytest.Pytester, where: str
) -> None:
    # the silence limit (600 s) is far past the pair's: only the pair's limit can end this session
    # in time; a hang while moving to the test (its first calls there) ends every replica, so the
    # pair after it starts all of its processes anew, a start its limit does not count
    hang_after = 1000 if where == "sampling" else 0
    pytester.makepyfile(
        f"""
        import time
        import pytest
        from overheadbench import in_replica

        @pytest.mark.overhead(max=5.0)
        def test_a_before(overhead):
            overhead.compare(lambda: sum(range(200)), lambda: sum(range(300)))

        @pytest.mark.overhead(max=5.0)
        def test_b_hangs(overhead):
            calls = []

            def framework():
                calls.append(1)
                if in_replica() and len(calls) > {hang_after}:
                    time.sleep(3600)
                return sum(range(300))

            overhead.compare(lambda: sum(range(200)), framework)

        @pytest.mark.overhead(max=5.0)
        def test_c_after(overhead):
            overhead.compare(lambda: sum(range(200)), lambda: sum(range(300)))
        """
    )
    result, pairs = measure(
        pytester,
        "--overhead-pair-timeout=10s",
        "--overhead-replica-timeout=600s",
        "--overhead-time-budget=500ms",
        "--overhead-processes=3",
        "--overhead-max-processes=3",
    )
    result.assert_outcomes(failed=1, passed=2)
    sentences(result.stdout).fnmatch_lines(
        [
            f"*::test_b_hangs: the pair made no progress for 10 s (overhead_pair_timeout, a limit on silence*): a replica "
            f"process (a fresh run of this test's session) was {where} and never answered; it was ended.*"
        ]
    )
    result.stdout.no_fnmatch_line("*first call*")
    assert sorted(name.rpartition("::")[2] for name in pairs) == ["test_a_before", "test_c_after"]
    assert_replicated(pairs, 2)


@pytest.mark.parametrize("storing", [False, True], ids=["outputs", "storage"])
def test_path_options_written_with_a_space_outside_the_project_measure_on_every_run(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory, storing: bool
) -> None:
    # pytest takes an existing value for a test path when it chooses the rootdir (before it knows
    # the option): the session roots at a common ancestor; its replicas must root there too
    pytester.makepyfile(PAIR.format(suffix="", fixtures=""))
    outside = tmp_path_factory.mktemp("ci")
    if storing:
        given = {"--overhead-storage": outside / "runs"}
        given["--overhead-storage"].mkdir()  # a storage folder exists from the first run on
    else:
        given = {"--overhead-json": outside / "out.json", "--overhead-md": outside / "out.md"}
    args = ["--overhead", "--overhead-quick", *(word for item in given.items() for word in map(str, item))]
    args += ["--overhead-save=run"] if storing else []
    for run in (1, 2):
        result = pytester.runpytest_subprocess(*args)
        result.assert_outcomes(passed=1)
        if run == 2 or storing:  # the values exist
            sentences(result.stdout).fnmatch_lines_random(
                [
                    f"*PytestConfigWarning: overheadbench: {option} {path}: pytest chose the rootdir (*) and the ini "
                    f"file (none) before it knew this option, taking {path} for a test path; write {option}={path}*"
                    for option, path in given.items()
                ]
            )
    if storing:
        assert sorted(path.name for path in outside.glob("runs/*/*.json")) == ["0001_run.json", "0002_run.json"]
        return
    for path in given.values():
        assert "test_pair" in path.read_text()
        result.stdout.fnmatch_lines([f"overhead results written to {path} (replacing the file written 20*)"])


def test_a_failure_quotes_that_tests_own_replica_output(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest
        from overheadbench import in_replica

        @pytest.mark.overhead(max=5.0)
        def test_noisy(overhead):
            print("noise from test_noisy")
            overhead.compare(lambda: sum(range(20)), lambda: sum(range(30)))

        @pytest.mark.overhead(max=5.0)
        def test_breaks_in_replicas(overhead):
            if in_replica():
                print("test_breaks_in_replicas' own output")
                raise ValueError("test_breaks_in_replicas' own failure")
            overhead.compare(lambda: sum(range(20)), lambda: sum(range(30)))
        """
    )
    result, _ = measure(pytester)
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(
        ["*ValueError: test_breaks_in_replicas' own failure*", "*test_breaks_in_replicas' own output*"]
    )
    assert "noise from test_noisy" not in result.stdout.str()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads process states from /proc")
def test_replicas_exit_soon_after_the_controller_is_killed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import os
        import time
        import pytest
        from overheadbench import in_replica

        @pytest.fixture
        def slow_in_replicas():
            if in_replica():
                with open("replica-pids.txt", "a") as out:
                    out.write(f"{os.getpid()}\\n")
                time.sleep(600)  # busy in a fixture: not reading the controller's pipe

        @pytest.mark.overhead(max=5.0)
        def test_pair(overhead, slow_in_replicas):
            overhead.compare(lambda: None, lambda: None)
        """
    )
    controller = subprocess.Popen(
        [sys.executable, "-m", "pytest", "--overhead", "--overhead-processes=3", "-p", "no:cacheprovider"],
        cwd=pytester.path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    pids_file = pytester.path / "replica-pids.txt"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(pids_file.read_text().split() if pids_file.exists() else []) < 3:
        time.sleep(0.05)
    pids = [int(pid) for pid in pids_file.read_text().split()]
    controller.send_signal(signal.SIGKILL)
    controller.wait()
    killed_at = time.monotonic()
    while any(alive(pid) for pid in pids) and time.monotonic() - killed_at < 10:
        time.sleep(0.02)
    # they exit by themselves (no one else kills them); how soon is measured by
    # validation/controller_death.py, not asserted here
    assert len(pids) == 3 and not any(alive(pid) for pid in pids)


def test_processes_beyond_the_bound_are_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(PAIR.format(suffix="", fixtures=""))
    result = pytester.runpytest("--overhead", "--overhead-processes=100")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    sentences(result.stderr).fnmatch_lines(
        ["*--overhead-processes='100': must be a whole number from 1 to 32 (1 = measured in this process only)*"]
    )


XDIST_PAIRS = """
import time
import pytest
from conftest import timed

@pytest.mark.overhead(max=5.0)
def test_pair_one(overhead):
    timed(overhead, "{name}::test_pair_one")

def test_plain():
    pass

@pytest.mark.xdist_group("mine")
@pytest.mark.overhead(max=5.0)
def test_pair_in_a_group_of_its_own(overhead):
    timed(overhead, "{name}::test_pair_in_a_group_of_its_own")
"""


@pytest.mark.parametrize("dist", [(), ("--dist", "loadgroup")])
@pytest.mark.every_plugin
def test_under_xdist_pairs_run_one_at_a_time_and_the_controller_gathers_them(pytester: pytest.Pytester, dist) -> None:
    pytester.makeconftest(WINDOWS)
    for name in ("test_a", "test_b"):
        pytester.makepyfile(**{name: XDIST_PAIRS.format(name=name)})
    result, pairs = measure(pytester, "-n", "2", *dist)
    result.assert_outcomes(passed=6)
    assert sorted(pairs) == [
        f"{name}.py::{test}"
        for name in ("test_a", "test_b")
        for test in ("test_pair_in_a_group_of_its_own", "test_pair_one")
    ]  # no "@group"
    assert_replicated(pairs, 4)
    result.stdout.fnmatch_lines(["replica processes started in this session: [1-9]*"])  # the workers' count
    windows = sorted((e["start"], e["end"], e["pid"]) for e in read_events(pytester.path) if e["what"] == "window")
    assert len(windows) == 4 and len({pid for _, _, pid in windows}) == 1  # one worker measured them all
    for (_, end, _), (start, _, _) in zip(windows, windows[1:], strict=False):
        assert end <= start  # no two pairs' timing overlapped


@pytest.mark.parametrize("dist", ["loadfile", "loadscope", "worksteal", "each"])
@pytest.mark.every_plugin
def test_xdist_modes_that_cannot_keep_pairs_on_one_worker_are_refused(pytester: pytest.Pytester, dist: str) -> None:
    pytester.makepyfile(PAIR.format(suffix="", fixtures=""))
    result = pytester.runpytest_subprocess("--overhead", "-n", "2", "--dist", dist)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    sentences(result.stderr).fnmatch_lines(
        [
            f"*overheadbench: --dist {dist} would measure overhead pairs on several xdist "
            f"workers at once*use --dist load or loadgroup*"
        ]
    )


@pytest.mark.every_plugin
def test_under_xdist_transport_tests_run_on_the_pairs_worker(pytester: pytest.Pytester) -> None:
    """A transport test's load beside a timed pair disturbs both: every test that times
    anything (pairs, transport-marked tests, tests using the transport fixture) goes to one worker."""
    pytester.makeconftest(
        """
        import os
        import pytest
        from overheadbench.http.load import Throughput

        @pytest.fixture
        def where(request):
            yield
            with open("workers.txt", "a") as out:
                out.write(f"{request.node.module.__name__}.{request.node.name} {os.environ['PYTEST_XDIST_WORKER']}\\n")

        def record(transport):
            transport.record("row", Throughput(10, 20, 0, 2.0, None, 1e-4, ""))
        """
    )
    body = """
        import pytest
        from conftest import record

        @pytest.mark.overhead(max=5.0, processes=1)
        def test_pair(overhead, where):
            overhead.compare(lambda: None, lambda: None)

        @pytest.mark.transport(rps=1)
        def test_marked(transport, where):
            record(transport)

        def test_fixture_only(transport, where):
            record(transport)
    """
    for name in ("test_a", "test_b"):
        pytester.makepyfile(
            **{name: textwrap.dedent(body) + "".join(f"\ndef test_plain_{i}(where):\n    pass\n" for i in range(6))}
        )
    result = pytester.runpytest("-n", "2", "--overhead", "--overhead-time-budget=0.1s", "--overhead-json=out.json")
    result.assert_outcomes(passed=18)
    seen = dict(line.split() for line in (pytester.path / "workers.txt").read_text().splitlines())
    timed = {
        seen[f"{module}.{name}"]
        for module in ("test_a", "test_b")
        for name in ("test_pair", "test_marked", "test_fixture_only")
    }
    assert len(seen) == 18 and len(timed) == 1, seen
    assert len(set(seen.values())) == 2  # the plain tests spread out
    assert {nodeid.split("::")[0] for nodeid in _figure_nodeids(pytester)} == {"test_a.py", "test_b.py"}
    assert not any("@" in nodeid for nodeid in _figure_nodeids(pytester))  # the group suffix never shows


def _figure_nodeids(pytester: pytest.Pytester) -> list[str]:
    return [figure["nodeid"] for figure in json.loads((pytester.path / "out.json").read_text())["figures"]]
