"""What the timed path sees: no pytest logging handlers, capture or tracer while a pair is timed,
the app's own logging configuration, and everything put back after (issue 25).

The generated pairs record what their callables saw on every call into a JSON file per process
(the pytest process and each replica), so the conditions are asserted, never timings."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from overheadbench.core.errors import OverheadTimedPathWarning
from overheadbench.engine import harness
from overheadbench.engine.timed_path import untraced, without_pytest_handlers
from overheadbench.replicas.relaunch import Invocation

SEEING = '''
import json, logging, os, sys, warnings

SEEN = []

def seeing():
    """What a timed call sees: recorded on every call, written at the end of the process."""
    root = logging.getLogger()
    SEEN.append({
        "handlers": sorted(type(h).__name__ for h in root.handlers),
        "level": root.level,
        "trace": sys.gettrace() is not None,
        "stdout": getattr(sys.stdout, "name", None),
        "finders": [getattr(f, "__name__", type(f).__name__) for f in sys.meta_path],
        "shows": getattr(warnings._showwarnmsg_impl, "__name__", "?"),
        "filters": [(action, getattr(category, "__name__", "")) for action, _, category, *_ in warnings.filters],
    })

def dump():
    with open(f"seen-{os.getpid()}.json", "w") as out:
        json.dump(SEEN, out)
'''

PAIR = """
import atexit, logging, sys, warnings
import pytest
from seeing import seeing, dump

atexit.register(dump)

def bare():
    return 1

def framework():
    seeing()
    print("spam from the timed path")
    logging.getLogger("app").info("a log call")
    return 1

@pytest.mark.overhead(max_abs="1s")
def test_pair(overhead, caplog):
    caplog.set_level(logging.INFO)
    overhead.compare(bare, framework)
    logging.getLogger("app").warning("after the pair")
    assert "after the pair" in caplog.text  # caplog works again once the pair is measured
    assert any(type(finder).__name__ == "AssertionRewritingHook" for finder in sys.meta_path)  # put back
    with pytest.warns(UserWarning, match="after the pair"):  # pytest's recording too
        warnings.warn("after the pair", UserWarning)
"""


def seen(project: pytest.Pytester) -> list[list[dict]]:
    """Per process, what the framework callable saw on each call (first call first)."""
    return [json.loads(path.read_text()) for path in sorted(project.path.glob("seen-*.json"))]


def timed(calls: list[dict]) -> list[dict]:
    """The calls made while timing (the first call, which checks the callable, is outside)."""
    return calls[1:] if len(calls) > 1 else calls


@pytest.mark.parametrize("processes", [1, 2])
def test_timed_calls_see_no_pytest_logging_capture_or_tracer_and_the_test_gets_them_back(
    pytester: pytest.Pytester, processes: int
) -> None:
    pytester.makepyfile(seeing=SEEING, test_pair=PAIR)
    done = pytester.runpytest_subprocess(
        "--overhead",
        "-s",
        "-o",
        f"overhead_processes={processes}",
        "-o",
        "overhead_time_budget=0.2s",
        "-p",
        "no:cacheprovider",
        "-o",
        "log_level=DEBUG",
        "-W",
        "error::overheadbench.OverheadTimedPathWarning",
    )
    done.assert_outcomes(passed=1)
    # under -s, only the first call (which checks the callable, untimed) prints: the timed ones print to devnull
    assert done.stdout.str().count("spam from the timed path") == 1
    processes_seen = seen(pytester)
    assert len(processes_seen) == (1 if processes == 1 else 1 + processes)
    for calls in processes_seen:
        assert "AssertionRewritingHook" in calls[0]["finders"] and calls[0]["shows"] == "append"  # pytest's, untimed
        for call in timed(calls):
            assert call["handlers"] == [] and not call["trace"] and call["stdout"] == "/dev/null", call
            assert call["level"] == logging.WARNING  # the app's (the default), not pytest's log_level=DEBUG
            # imports and warnings as production has them: no assertion rewriter, no recording
            assert "AssertionRewritingHook" not in call["finders"] and call["shows"] == "show_on_stderr", call
            assert ("always", "DeprecationWarning") not in call["filters"], call


APP = """
import logging
logging.basicConfig(level=logging.INFO, handlers=[logging.NullHandler()])
"""


@pytest.mark.parametrize("processes", [2])  # the replicas and this process's calibration
def test_an_app_that_configures_logging_at_import_is_measured_with_its_configuration(
    pytester: pytest.Pytester, processes: int
) -> None:
    pytester.makepyfile(seeing=SEEING, app=APP, test_pair="import app\n" + PAIR)
    done = pytester.runpytest_subprocess(
        "--overhead",
        "-o",
        f"overhead_processes={processes}",
        "-o",
        "overhead_time_budget=0.2s",
        "-p",
        "no:cacheprovider",
    )
    done.assert_outcomes(passed=1)
    for calls in seen(pytester):
        for call in timed(calls):
            assert call["handlers"] == ["NullHandler"] and call["level"] == logging.INFO, call


COVERED = """
import atexit
import pytest
from seeing import seeing, dump
import covered

atexit.register(dump)

def framework():
    seeing()
    return covered.work()

@pytest.mark.overhead(max_abs="1s")
def test_pair(overhead):
    overhead.compare(lambda: 1, framework)
"""


@pytest.mark.parametrize("processes", [2])  # the replicas and this process's calibration
@pytest.mark.every_plugin
def test_under_cov_the_timed_calls_are_untraced_and_the_coverage_data_is_whole(
    pytester: pytest.Pytester, processes: int
) -> None:
    pytest.importorskip("pytest_cov")
    pytester.makepyfile(
        seeing=SEEING,
        covered="def work():\n    total = 0\n    for i in range(3):\n        total += i\n    return total\n",
        test_pair=COVERED,
    )
    done = pytester.runpytest_subprocess(
        "--overhead",
        "--cov=covered",
        "--cov-report=term-missing",
        "-o",
        f"overhead_processes={processes}",
        "-o",
        "overhead_time_budget=0.2s",
        "-p",
        "no:cacheprovider",
    )
    done.assert_outcomes(passed=1)
    done.stdout.fnmatch_lines(["covered.py * 5 * 0 * 100%*"])  # every line, from this process's traced calls
    processes_seen = seen(pytester)
    assert len(processes_seen) == 1 + processes
    # this process's check call runs traced (that is where the coverage comes from); replicas run without coverage
    assert sum(calls[0]["trace"] for calls in processes_seen) == 1
    assert not any(call["trace"] for calls in processes_seen for call in timed(calls))


def test_replicas_start_without_coverage() -> None:
    invocation = Invocation(args=("--cov=app",), directory=Path("."), coverage=True)
    assert invocation.command(Path("cache"))[-1] == "--no-cov"
    environ = invocation.environ({"COV_CORE_SOURCE": "app", "COVERAGE_PROCESS_START": ".coveragerc", "HOME": "/h"}, {})
    assert "COV_CORE_SOURCE" not in environ and "COVERAGE_PROCESS_START" not in environ and environ["HOME"] == "/h"


class Capture(logging.Handler):
    """Stands in for pytest's handlers (same module name, so it is taken for one)."""


Capture.__module__ = "_pytest.logging"


def test_pytest_handlers_go_back_in_their_places_and_the_apps_new_ones_stay() -> None:
    root = logging.getLogger()
    saved, level = list(root.handlers), root.level
    first, app, last, added = Capture(), logging.NullHandler(), Capture(), logging.NullHandler()
    root.handlers = [first, app, last]
    try:
        with without_pytest_handlers(level=logging.ERROR):
            assert root.handlers == [app] and root.level == logging.ERROR
            root.addHandler(added)
        assert root.handlers == [first, app, last, added] and root.level == level
    finally:
        root.handlers, root.level = saved, level


def test_trace_and_profile_functions_are_off_while_timed_and_put_back_exactly() -> None:
    def tracer(frame, event, arg):  # pragma: no cover - only installed, never asked to run here
        return None

    saved = sys.gettrace(), sys.getprofile(), threading.gettrace(), threading.getprofile()
    sys.setprofile(tracer)
    threading.settrace(tracer)
    try:
        with untraced("t.py::x"):
            assert sys.getprofile() is None and threading.gettrace() is None and sys.gettrace() is None
        assert sys.getprofile() is tracer and threading.gettrace() is tracer
    finally:
        sys.setprofile(saved[1])
        threading.settrace(saved[2])


@pytest.mark.skipif(sys.version_info < (3, 12), reason="sys.monitoring is Python 3.12+")
def test_a_monitoring_tool_is_switched_off_globally_and_named_in_a_warning() -> None:
    monitoring = sys.monitoring  # type: ignore[attr-defined]
    tool = next(t for t in range(6) if monitoring.get_tool(t) is None)
    monitoring.use_tool_id(tool, "probe")
    monitoring.set_events(tool, monitoring.events.PY_START)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with untraced("t.py::x"):
                assert monitoring.get_events(tool) == 0
        assert monitoring.get_events(tool) == monitoring.events.PY_START
        (warning,) = [w for w in caught if issubclass(w.category, OverheadTimedPathWarning)]
        assert "t.py::x: sys.monitoring tool 'probe'" in str(warning.message)
    finally:
        monitoring.set_events(tool, 0)
        monitoring.free_tool_id(tool)


NOISY = """
import warnings
import pytest

warnings.filterwarnings("error", message="the app's own filter")  # at import: the app's, applied while timed

def bare():
    return 1

def deprecated():
    warnings.warn("a deprecated call", DeprecationWarning, stacklevel=2)
    return 1

def optional_import():
    try:
        import not_installed_speedups  # noqa: F401
    except ImportError:
        pass
    return 1

@pytest.mark.overhead(max_abs="1s", processes=1)
def test_deprecated_each_call(overhead):
    with pytest.warns(DeprecationWarning, match="a deprecated call"):  # the first calls, under pytest's recording
        overhead.compare(bare, deprecated)

@pytest.mark.overhead(max_abs="1s", processes=1)
def test_optional_import_each_call(overhead):
    overhead.compare(bare, optional_import)

@pytest.mark.overhead(max_abs="1s", processes=1)
def test_the_apps_filter(overhead):
    def filtered():
        warnings.warn("the app's own filter")
        return 1
    overhead.compare(bare, filtered)
"""


def test_warnings_in_the_timed_path_go_by_production_filters_and_pytest_records_none_of_them(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_noisy=NOISY)
    done = pytester.runpytest("--overhead", "-o", "overhead_time_budget=0.2s", "-p", "no:cacheprovider")
    done.assert_outcomes(passed=2, failed=1)
    # the timed calls' deprecation warnings were ignored, as production ignores them; recorded
    # one by one, they numbered hundreds of thousands
    assert done.parseoutcomes().get("warnings", 0) < 20, done.stdout.str()[-2000:]
    # the app's filter (set at import) decides in the timed path: its warning is an error there
    done.stdout.fnmatch_lines(["*CallableError: the framework callable raised UserWarning: the app's own filter"])


def test_pytest_finders_are_back_exactly_after_the_pair(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import sys
        import pytest

        @pytest.mark.overhead(max_abs="1s", processes=1)
        def test_pair(overhead):
            finders, hooks, cache = list(sys.meta_path), list(sys.path_hooks), sys.path_importer_cache
            overhead.compare(lambda: 1, lambda: 2)
            assert sys.meta_path == finders and sys.path_hooks == hooks and sys.path_importer_cache is cache
        """
    )
    pytester.runpytest("--overhead", "-o", "overhead_time_budget=0.1s").assert_outcomes(passed=1)


@pytest.mark.every_plugin
def test_an_async_pair_is_timed_with_the_loop_out_of_debug_mode(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import asyncio
        import pytest

        seen = []

        async def bare():
            return 1

        async def framework():
            seen.append(asyncio.get_running_loop().get_debug())
            return 1

        @pytest.mark.asyncio
        @pytest.mark.overhead(max_abs="1s", processes=1)
        async def test_pair(overhead):
            asyncio.get_running_loop().set_debug(True)
            await overhead.acompare(bare, framework)
            assert seen[0] is True and set(seen[1:]) == {False}  # the first call untimed, the timed ones not in debug
            assert asyncio.get_running_loop().get_debug()  # and back after
        """
    )
    pytester.runpytest("--overhead", "-o", "overhead_time_budget=0.1s").assert_outcomes(passed=1)


def test_a_plugins_import_hook_is_out_of_the_timed_path_and_the_apps_own_finder_stays(
    pytester: pytest.Pytester,
) -> None:
    finder = """
class {name}:
    @staticmethod
    def find_spec(name, path=None, target=None):
        return None
"""
    # a plugin's import hook (as a type checker's), installed before the tests are imported
    pytester.makeconftest("import sys\n" + finder.format(name="PluginHook") + "sys.meta_path.insert(0, PluginHook())\n")
    pytester.makepyfile(
        app="import sys\n" + finder.format(name="AppFinder") + "sys.meta_path.append(AppFinder())\n",
        test_pair="""
        import sys
        import pytest
        import app

        seen = []

        def framework():
            seen.append([type(f).__name__ for f in sys.meta_path])
            return 1

        @pytest.mark.overhead(max_abs="1s", processes=1)
        def test_pair(overhead):
            overhead.compare(lambda: 1, framework)
            assert "PluginHook" in seen[0] and "AppFinder" in seen[0]  # the first call, untimed
            assert all("PluginHook" not in names and "AppFinder" in names for names in seen[1:])
            assert any(type(f).__name__ == "PluginHook" for f in sys.meta_path)  # and back after
        """,
    )
    pytester.runpytest("--overhead", "-o", "overhead_time_budget=0.1s").assert_outcomes(passed=1)


@pytest.fixture
def plain_probes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[list[str]]]:
    """The plain interpreter's probes the test makes (none runs: each answers an empty machinery);
    the process's own answer is forgotten before and after."""
    probes: list[list[str]] = []

    def run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        probes.append(command)
        return subprocess.CompletedProcess(command, 0, json.dumps({"finders": [], "hooks": [], "cached": []}), "")

    monkeypatch.setattr(harness.subprocess, "run", run)
    monkeypatch.delenv(harness.PLAIN_ENV, raising=False)
    harness.plain_interpreter.cache_clear()
    yield probes
    harness.plain_interpreter.cache_clear()


@pytest.mark.unit  # its names say "subprocess": the mark says it starts none (conftest refuses one)
def test_a_replica_of_the_same_interpreter_is_told_the_plain_interpreter_and_asks_no_python(
    monkeypatch: pytest.MonkeyPatch, plain_probes: list[list[str]]
) -> None:
    """Each replica started a plain ``python`` to learn what its finders are: one process per replica."""
    told = harness.plain_for_replicas()  # the controller asks once
    assert len(plain_probes) == 1
    monkeypatch.setenv(harness.PLAIN_ENV, told)
    monkeypatch.setenv("PYTHONHASHSEED", "0")  # a callgrind replica's: no finder depends on it
    harness.plain_interpreter.cache_clear()  # a replica's process
    assert harness.plain_interpreter() == {"finders": frozenset(), "hooks": frozenset(), "cached": frozenset()}
    assert len(plain_probes) == 1


@pytest.mark.unit
@pytest.mark.parametrize("elsewhere", ["PYTHONPATH", "executable"])
def test_a_replica_of_another_interpreter_or_path_asks_its_own_plain_python(
    monkeypatch: pytest.MonkeyPatch, plain_probes: list[list[str]], elsewhere: str
) -> None:
    monkeypatch.setenv(harness.PLAIN_ENV, harness.plain_for_replicas())
    if elsewhere == "PYTHONPATH":  # --pythonpath, or a base tree's replica
        monkeypatch.setenv("PYTHONPATH", "/somewhere/else")
    else:  # another environment's interpreter
        monkeypatch.setattr(harness.sys, "executable", "/other/venv/bin/python")
    harness.plain_interpreter.cache_clear()
    harness.plain_interpreter()
    assert len(plain_probes) == 2 and plain_probes[1][0] == harness.sys.executable
    monkeypatch.setenv(harness.PLAIN_ENV, "{not json")  # what a user's environment may hold: asked too
    harness.plain_interpreter.cache_clear()
    harness.plain_interpreter()
    assert len(plain_probes) == 3
