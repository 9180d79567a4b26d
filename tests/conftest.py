"""The suite's fixtures, and its tiers: each test marked by what it starts (``pytest -m unit`` is
the inner loop; the README's command runs them all).

* ``unit``: nothing (no pytester session, no process; a unit test that starts one fails);
* ``session``: an in-process pytester session (with ``--overhead`` it may start replicas);
* ``replicas``: processes: pytest in a subprocess, servers, git, a CLI run of sessions.

As pytest's own suite marks its pytester tests by what their code calls (``testing/conftest.py``):
a test is read with the module functions it calls (its helpers), and the slowest tier runs first,
so that two xdist workers end together rather than one waiting on the other's long test.
"""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import types
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from helpers import (
    BYTECODE,
    FAKE_CLOCK_CONFTEST,
    INI,
    LOOP_SCOPE,
    ONE_BLAS_THREAD,
    ONLY_THIS_PLUGIN,
    QUIET_INI,
    XDIST_WORKER_ENV,
)

from overheadbench.core.tables import TERMINAL_WIDTH, shown_length

# Every pytest process the suite starts (hundreds: pytester subprocesses, replicas, CLI sessions)
# keeps pytest's rewritten modules: with the variable set (as on this machine's image) each process
# parsed and compiled every plugin's modules again, half of its start (1.19 s -> 0.72 s).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

PROCESS_NAMES = frozenset(
    {"runpytest_subprocess", "popen", "Popen", "subprocess", "start_server", "git", "main", "spawn", "fork", "kill"}
)
"""What a test's code calls (or its helpers') when it starts processes."""
PROCESS_FIXTURES = frozenset({"asgi_server", "project", "storage_project"})
"""Fixtures that start processes (a server, a git repository)."""
TIERS = ("replicas", "session", "unit")
"""Slowest first: the order the suite runs them in."""


def _names(code: types.CodeType) -> set[str]:
    found = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= _names(const)
    return found


def _called(function: Any) -> set[str]:
    """The names a test's code uses, with those of the module functions it calls (one level)."""
    code = getattr(function, "__code__", None)
    if code is None:
        return set()
    names = _names(code)
    module = inspect.getmodule(function)
    for name in list(names):
        helper = getattr(module, name, None)
        if inspect.isfunction(helper) and helper is not function and hasattr(helper, "__code__"):
            names |= _names(helper.__code__)
    return names


def tier(item: pytest.Item) -> str:
    """The test's tier: its own mark where it has one (a process started deep in the code, where
    its names cannot tell), else what its code and fixtures start."""
    if marked := [mark.name for mark in item.iter_markers() if mark.name in TIERS]:
        return marked[0]
    fixtures = set(getattr(item, "fixturenames", ()))
    names = _called(getattr(item, "function", None))
    if names & PROCESS_NAMES or fixtures & PROCESS_FIXTURES:
        return "replicas"
    if "pytester" in fixtures or "fake_clock_project" in fixtures:
        return "session"
    return "unit"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "unit: starts nothing (no pytester session, no process)")
    config.addinivalue_line("markers", "session: runs an in-process pytester session")
    config.addinivalue_line("markers", "replicas: starts processes (pytest in a subprocess, replicas, servers, git)")
    config.addinivalue_line("markers", "every_plugin: the generated project loads every installed plugin, as users' do")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if not any(mark.name in TIERS for mark in item.iter_markers()):
            item.add_marker(tier(item))
    items.sort(key=lambda item: TIERS.index(next(m.name for m in item.iter_markers() if m.name in TIERS)))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``-n 3`` hands out the tests by work stealing: xdist's ``load`` gives each worker its share up
    front, and one worker then ran its replica tests for two minutes after the other two had
    finished (the suite took 6:11 where its tests' time over three workers is 4:45)."""
    if config.getoption("dist") != "load":
        return None
    from xdist.scheduler import WorkStealingScheduling

    return WorkStealingScheduling(config, log)


@pytest.fixture(autouse=True)
def _unit_tests_start_no_process(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A test marked ``unit`` that starts a process fails: the tier says what ``-m unit`` costs."""
    if request.node.get_closest_marker("unit") is not None:
        real = subprocess.Popen.__init__

        def refused(self: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> None:
            raise AssertionError(
                f"{request.node.nodeid}: marked unit but started a process ({args[0] if args else kwargs.get('args')}"
                f"): its code or a fixture should say so (tests/conftest.py PROCESS_NAMES, PROCESS_FIXTURES)"
            )

        monkeypatch.setattr(subprocess.Popen, "__init__", refused)
        yield
        monkeypatch.setattr(subprocess.Popen, "__init__", real)
        return
    yield


@pytest.fixture(autouse=True, scope="session")
def _one_blas_thread() -> Iterator[None]:
    """Every process the suite starts runs numpy's OpenBLAS on one thread (:data:`helpers.ONE_BLAS_THREAD`)."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in ONE_BLAS_THREAD.items():
            patch.setenv(name, value)
        yield


def every_plugin(request: pytest.FixtureRequest) -> bool:
    """Whether the test's generated project loads every installed plugin (else only this one)."""
    return request.node.get_closest_marker("every_plugin") is not None


def loop_scope(request: pytest.FixtureRequest) -> str:
    """pytest-asyncio's ini key where the project loads it (elsewhere an unknown key warns)."""
    return LOOP_SCOPE if every_plugin(request) else ""


@pytest.fixture(autouse=True)
def _quiet_pytester_ini(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Generated projects run as sessions of their own, whether or not this suite runs under
    xdist, and load only this plugin unless marked ``every_plugin`` (:data:`helpers.ONLY_THIS_PLUGIN`)."""
    if "pytester" in request.fixturenames:
        request.getfixturevalue("pytester").makeini(QUIET_INI + loop_scope(request))
        for name in XDIST_WORKER_ENV:
            monkeypatch.delenv(name, raising=False)
        if not every_plugin(request):
            request.getfixturevalue("only_this_plugin")


@pytest.fixture
def only_this_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sessions this test starts load only this plugin (:data:`helpers.ONLY_THIS_PLUGIN`): every
    pytester project's unless marked ``every_plugin``; a test that starts sessions otherwise asks."""
    for name, value in ONLY_THIS_PLUGIN.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def fake_clock_project(pytester: pytest.Pytester, request: pytest.FixtureRequest) -> pytest.Pytester:
    """A pytester project whose tests get a ``clock`` fixture driving ``overhead`` synthetically."""
    pytester.makeconftest(FAKE_CLOCK_CONFTEST)
    pytester.makeini(f"{INI}{loop_scope(request)}overhead_processes = 1\n{BYTECODE}")
    return pytester


FOREIGN = re.compile(
    r"(asyncio|benchmark|rootdir|plugins|cachedir|configfile): |::(error|warning|notice) |-+ benchmark"
)
"""Lines other plugins write (their headers, pytest-benchmark's table), and GitHub's workflow commands, which
must be one line: not ours to fit."""


def long_lines(lines: Sequence[str]) -> list[str]:
    """Our lines over ``TERMINAL_WIDTH`` once their paths, test ids and file names are taken out (as the
    plugin measures them, :func:`~overheadbench.core.tables.shown_length`)."""
    benchmark = False
    found = []
    for line in lines:
        benchmark = (benchmark or " benchmark: " in line) and bool(line.strip())  # its table, to a blank line
        if not benchmark and not FOREIGN.match(line) and shown_length(line) > TERMINAL_WIDTH:
            found.append(line)
    return found


@pytest.fixture(autouse=True)
def _terminal_lines_fit(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every session a test runs (pytester, in process or in a subprocess) prints no line of ours over
    ``TERMINAL_WIDTH`` characters, paths excepted (issue 71: lines ran to 517): checked for the whole suite
    here, not one test at a time; ``--help`` and ``--fixtures`` are pytest's own text."""
    if "pytester" not in request.fixturenames:
        yield
        return
    results: list[pytest.RunResult] = []
    asked: list[Any] = []
    for name in ("runpytest_inprocess", "runpytest_subprocess"):
        real = getattr(pytest.Pytester, name)

        def recorded(self: pytest.Pytester, *args: Any, _real: Any = real, **kwargs: Any) -> pytest.RunResult:
            asked.extend(args)
            result = _real(self, *args, **kwargs)
            results.append(result)
            return result

        monkeypatch.setattr(pytest.Pytester, name, recorded)
    yield
    found = [line for result in results for line in long_lines([*result.outlines, *result.errlines])]
    found = [] if {"--help", "--fixtures"} & set(map(str, asked)) else found
    if record := os.environ.get("OVERHEADBENCH_LONG_LINES"):
        with open(record, "a", encoding="utf-8") as out:
            out.writelines(f"{request.node.nodeid}\t{line}\n" for line in found)
        return
    assert not found, f"{len(found)} terminal lines over {TERMINAL_WIDTH} characters (paths excepted): {found[:3]}"
