"""Nothing left behind and nothing lost, however a session ends and however large the suite:
replica work that does not fit the environment, replicas and load workers whose failures tell
their cause, SIGTERM and SIGKILL, the scratch folders they leave. Real sessions, bounded waits.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import alive, sentences

from overheadbench.core import scratch
from overheadbench.replicas.launch import start_batch

LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads process states from /proc")


def _wait_for_lines(path: Path, count: int, timeout_s: float = 60.0) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        lines = path.read_text().split() if path.exists() else []
        if len(lines) >= count:
            return [int(line) for line in lines]
        time.sleep(0.02)
    raise AssertionError(f"{path.name}: fewer than {count} lines after {timeout_s:g} s")


def _wait_gone(pids: list[int], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while any(map(alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not any(map(alive, pids))


@pytest.fixture
def temporary(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The sessions' temporary directory, their own, so what they leave there can be listed."""
    folder = pytester.mkdir("tmp")
    monkeypatch.setenv("TMPDIR", str(folder))
    return folder


def _ours(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if "overheadbench" in p.name)


def test_a_suite_of_10000_overhead_tests_with_10000_character_ids_is_measured(pytester: pytest.Pytester) -> None:
    """The node ids once went to each replica in one environment variable, which Linux caps
    at 128 KiB: ~1,450 ordinary ids or 14 long ones made every replicated pair fail."""
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.overhead(max=10.0)
        @pytest.mark.parametrize("index", range(10_000))
        def test_pair(overhead, index):
            if index >= 2:
                pytest.skip("only the first two are timed")
            overhead.compare(lambda: sum(range(50)), lambda: sum(range(60)))

        @pytest.mark.overhead(max=10.0)
        @pytest.mark.parametrize("index", range(14), ids=lambda index: f"{index}-" + "x" * 10_000)
        def test_long_id(overhead, index):
            if index >= 1:
                pytest.skip("only the first is timed")
            overhead.compare(lambda: sum(range(50)), lambda: sum(range(60)))
        """
    )
    result = pytester.runpytest_subprocess("--overhead", "--overhead-quick", "--overhead-json=out.json", "-q")
    result.assert_outcomes(passed=3, skipped=10_011)
    results = json.loads((pytester.path / "out.json").read_text())["results"]
    assert len(results) == 3 and all(r["processes"] >= 3 for r in results)
    assert any(len(r["nodeid"]) > 10_000 for r in results)
    assert "Argument list too long" not in result.stdout.str()


def test_a_replicas_exception_while_sampling_reaches_its_test_with_the_traceback(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest
        from overheadbench import in_replica

        calls = []

        def framework():
            calls.append(1)
            if in_replica() and len(calls) > 1000:  # well into sampling, past the first calls
                raise RuntimeError("the framework broke in a replica")

        @pytest.mark.overhead(max=5.0)
        def test_breaks_while_sampling(overhead):
            overhead.compare(lambda: None, framework)
        """
    )
    result = pytester.runpytest_subprocess("--overhead", "--overhead-quick")
    result.assert_outcomes(failed=1)
    sentences(result.stdout).fnmatch_lines(
        [
            "*::test_breaks_while_sampling: in a replica process (a fresh run of this test's session) the test "
            "failed while sampling the pair (a callable raised):",
            "*def framework():*",
            "*RuntimeError: the framework broke in a replica*",
        ]
    )
    assert "Idle()" not in sentences(result.stdout).str()


def test_a_callable_hanging_in_a_replica_gets_the_hint_for_a_hang(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import time
        import pytest
        from overheadbench import in_replica

        calls = []

        def framework():
            calls.append(1)
            if in_replica() and len(calls) > 1000:
                time.sleep(600)

        @pytest.mark.overhead(max=5.0)
        def test_hangs_in_replicas(overhead):
            overhead.compare(lambda: None, framework)
        """
    )
    # the silence limit bounds a replica's start too: 10 s leaves room for a start on a loaded machine
    # (5 s was once exceeded by a start under the suite's two workers: "sent nothing ... while starting")
    result = pytester.runpytest_subprocess("--overhead", "--overhead-quick", "--overhead-replica-timeout=10s")
    result.assert_outcomes(failed=1)
    sentences(result.stdout).fnmatch_lines(["*sent nothing for 10 s while sampling (a callable that never returns?*"])
    assert "fixtures are that slow" not in sentences(result.stdout).str()


@LINUX
def test_replicas_still_starting_end_when_the_controller_is_killed(pytester: pytest.Pytester) -> None:
    """Their watchdog starts before pytest does, so a replica stuck importing a conftest
    ends too (how soon: validation/controller_death.py --starting, not asserted)."""
    pytester.makeconftest(
        """
        import os
        import time
        from overheadbench import in_replica

        if in_replica():
            with open("replica-pids.txt", "a") as out:
                out.write(f"{os.getpid()}\\n")
            time.sleep(600)  # a conftest with heavy imports
        """
    )
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.overhead(max=5.0)
        def test_pair(overhead):
            overhead.compare(lambda: None, lambda: None)
        """
    )
    controller = subprocess.Popen(
        [sys.executable, "-m", "pytest", "--overhead", "--overhead-processes=3", "-p", "no:cacheprovider"],
        cwd=pytester.path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    pids = _wait_for_lines(pytester.path / "replica-pids.txt", min(3, start_batch()))  # a batch starts at once
    controller.kill()
    controller.wait()
    assert _wait_gone(pids, 10.0)


SIGTERMED = """
import os
import time
import pytest
from overheadbench import in_replica
from overheadbench.http import start_server


@pytest.fixture
def https_server():
    server = start_server(protocol="https")
    with open("server-pids.txt", "a") as out:
        out.write(f"{server.process.pid}\\n")
    yield server
    server.close()


@pytest.fixture
def slow_in_replicas():
    if in_replica():
        with open("replica-pids.txt", "a") as out:
            out.write(f"{os.getpid()}\\n")
        time.sleep(600)


@pytest.mark.overhead(max=5.0)
def test_pair(overhead, https_server, slow_in_replicas):
    overhead.compare(lambda: None, lambda: None)
"""


ORPHANS = """
import os
import subprocess
import sys
import pytest
from overheadbench import in_replica

@pytest.fixture
def forgotten_server():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    with open("children.txt", "a") as out:
        out.write(f"{'replica' if in_replica() else 'controller'} {child.pid}\\n")
    yield  # never stopped: it outlives its test

@pytest.mark.overhead(max=5.0)
def test_pair(overhead, forgotten_server):
    overhead.compare(lambda: None, lambda: None)
"""


@LINUX
def test_a_fixtures_subprocess_left_running_is_ended_with_each_replica(pytester: pytest.Pytester) -> None:
    """A fixture's server that is never stopped outlives its test: in the user's own process it is
    the user's (as without the plugin), in each replica's it is ours, ended with the replica's
    process group (it was one orphan per replica)."""
    pytester.makepyfile(ORPHANS)
    result = pytester.runpytest_subprocess("--overhead", "--overhead-processes=3", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    started = [line.split() for line in (pytester.path / "children.txt").read_text().splitlines()]
    try:
        replicas = [int(pid) for where, pid in started if where == "replica"]
        controller = [int(pid) for where, pid in started if where == "controller"]
        assert len(replicas) >= 3 and len(controller) == 1
        assert _wait_gone(replicas, 10.0)
        assert alive(controller[0])  # the user's own: left as pytest alone leaves it
    finally:
        for _, pid in started:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)


@LINUX
def test_sigterm_cleans_up_as_ctrl_c_does(pytester: pytest.Pytester, temporary: Path) -> None:
    """CI cancellation and ``timeout`` send SIGTERM: the fixtures are torn down (the server
    stops), the replicas end, the scratch folders go, and no key stays on disk."""
    pytester.makepyfile(SIGTERMED)
    controller = subprocess.Popen(
        [sys.executable, "-m", "pytest", "--overhead", "--overhead-processes=2", "-p", "no:cacheprovider"],
        cwd=pytester.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        replicas = _wait_for_lines(pytester.path / "replica-pids.txt", 2)
        servers = _wait_for_lines(pytester.path / "server-pids.txt", 1)
        assert _ours(temporary), "the replicas' scratch folder exists while they run"
        controller.send_signal(signal.SIGTERM)
        output, _ = controller.communicate(timeout=60)
    finally:
        controller.kill()  # (a no-op once it has ended) a failed assertion leaves nothing running
        controller.wait()
    assert controller.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "SIGTERM received" in output
    assert _wait_gone(replicas + servers, 10.0)
    assert _ours(temporary) == [] and not list(temporary.rglob("key.pem"))


TLS_IN_REPLICAS = """
import os
import pytest
from overheadbench import in_replica
from overheadbench.http import start_server


@pytest.fixture
def https_server():
    if in_replica():
        with open("replica-pids.txt", "a") as out:
            out.write(f"{os.getpid()}\\n")
    server = start_server(protocol="https")
    with open("server-pids.txt", "a") as out:
        out.write(f"{server.process.pid}\\n")
    yield server
    server.close()


@pytest.mark.overhead(max=5.0)
def test_pair(overhead, https_server):
    overhead.compare(lambda: None, lambda: None)
"""


@LINUX
def test_a_session_killed_while_replicas_start_tls_servers_leaves_no_key_on_disk(
    pytester: pytest.Pytester, temporary: Path
) -> None:
    """Killed (SIGKILL: no cleanup) once the first replica's HTTPS server is up, while the others'
    are starting: a key never touches the disk (an in-memory file), and every replica and server
    ends (how soon, over 20 kills: validation/controller_death.py --tls)."""
    pytester.makepyfile(TLS_IN_REPLICAS)
    controller = subprocess.Popen(
        [sys.executable, "-m", "pytest", "--overhead", "--overhead-processes=4", "-p", "no:cacheprovider"],
        cwd=pytester.path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    servers = _wait_for_lines(pytester.path / "server-pids.txt", 2)  # this session's, and a replica's
    controller.kill()
    controller.wait()
    assert not list(temporary.rglob("key.pem")) and not list(temporary.glob("overheadbench-tls-*"))
    replicas = _wait_for_lines(pytester.path / "replica-pids.txt", 1)  # each wrote before its server started
    assert _wait_gone(replicas + servers, 10.0)
    assert not list(temporary.rglob("key.pem")) and not list(temporary.glob("overheadbench-tls-*"))


@LINUX
def test_what_a_killed_session_left_is_removed_when_the_next_one_starts(
    pytester: pytest.Pytester, temporary: Path
) -> None:
    pytester.makepyfile(SIGTERMED)
    controller = subprocess.Popen(
        [sys.executable, "-m", "pytest", "--overhead", "--overhead-processes=2", "-p", "no:cacheprovider"],
        cwd=pytester.path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    replicas = _wait_for_lines(pytester.path / "replica-pids.txt", 2)
    controller.kill()  # SIGKILL: no cleanup at all
    controller.wait()
    assert _wait_gone(replicas, 10.0)
    left = _ours(temporary)
    assert left and all(name.startswith("overheadbench-replicas-") for name in left)
    mine = temporary / "overheadbench-mine"  # a folder that is not a session's: never touched
    mine.mkdir()
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    pytester.runpytest_subprocess("test_plain.py", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert _ours(temporary) == ["overheadbench-mine"]


def test_scratch_folders_of_living_owners_stay_and_of_dead_ones_go(tmp_path: Path) -> None:
    mine = scratch.owned_folder("unit", tmp_path)
    code = (
        "import sys; from pathlib import Path; from overheadbench.core import scratch; "
        "print(scratch.owned_folder('dead', Path(sys.argv[1])))"
    )
    dead = Path(
        subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True).stdout.strip()
    )
    stranger = tmp_path / "overheadbench-unrelated"
    stranger.mkdir()
    assert dead.is_dir() and dead.name.startswith("overheadbench-dead-")
    assert scratch.remove_orphans(tmp_path) == [dead]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([mine.name, stranger.name])
    scratch.remove_folder(mine)
    assert not mine.exists()
    scratch.remove_folder(mine)  # safe twice


def test_stale_lockless_folders_of_earlier_versions_go_and_fresh_ones_stay(tmp_path: Path) -> None:
    old, fresh = tmp_path / "overheadbench-replica-cache-abcd1234", tmp_path / "overheadbench-tls-wxyz5678"
    for folder in (old, fresh):
        folder.mkdir()
    past = time.time() - scratch.STALE_S - 60
    os.utime(old, (past, past))
    assert scratch.remove_orphans(tmp_path) == [old]
    assert fresh.is_dir()
