"""What the timed path sees: the code under test as production runs it, not pytest's harness.

A test runs inside pytest, and pytest and its plugins put things in the path of every call
that production does not have. Measured here on real libraries (issue 25): pytest's logging
plugin attaches its capture handlers to the root logger, so a stdlib ``logging`` call to a
``NullHandler`` cost 15-28 µs instead of ~4 µs and a structlog pair read 25-31% *faster* than
stdlib where it is 112-146% slower; an app that configures logging at import
(``logging.basicConfig``) got a no-op, since pytest already held the root logger; under
``--cov`` every call ran under coverage's tracer (a 1.46 µs baseline read 14.6 µs). So while a
pair is measured (:func:`timing_conditions`, in the replicas and in this process alike):

* **pytest's logging handlers** (``_pytest.logging``: report capture, ``caplog``, live logging,
  the log file) are detached from the root logger and put back after, in their places; the root
  logger's level is the one the code under test set (at import, see :class:`AppLogging`);
* **output capture**: ``sys.stdout`` / ``sys.stderr`` are block-buffered (stderr line-buffered, as
  Python makes a non-interactive one) files on ``os.devnull``: a ``print`` costs what it costs
  into a file, not pytest's unbuffered capture file; the timed calls' output is discarded;
* **tracers and profilers** (``sys.settrace`` / ``setprofile``, and ``threading``'s for new
  threads: coverage, debuggers, profilers) are off and put back after; ``sys.monitoring`` tools
  (3.12+) have their global events off, but events they set on code objects cannot be switched
  off from outside, so such a tool is named in a warning;
* **pytest's import finders and warning recording** (assertion rewriting, a plugin's import
  hook; ``catch_warnings(record=True)`` with its own filters) are out: imports and warnings go
  as in production (:mod:`overheadbench.engine.harness`);
* **an asyncio loop in debug mode** is out of it while async callables are timed;
* the garbage collector is paused (unless ``overhead_gc``).

Replicas start without coverage: pytest-cov's ``--no-cov`` and no coverage start-up variables
(:func:`overheadbench.replicas.relaunch.Invocation.command`); this process, where pytest-cov
measures, runs every test's code at least once traced (the first calls and calibration), so the
coverage data stays whole.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import OverheadTimedPathWarning
from .harness import Harness
from .settings import Settings

PYTEST_LOGGING = "_pytest.logging"
"""The module of pytest's logging handlers (capture, caplog, live logging, log file)."""
OWN_TOOL = "overheadbench"
"""The sys.monitoring tool name count mode uses (left alone: it is not in a timed path)."""


@dataclass
class AppLogging:
    """The root logger's level as the code under test left it at import.

    pytest's logging plugin holds the root logger while the test modules are imported (its
    handlers attached, its level set where ``log_level`` / ``log_cli_level`` say), so an app's
    import-time ``logging.basicConfig`` would be a no-op. :meth:`importing` takes pytest's
    handlers off for the import and gives the root logger the level it had before pytest
    touched it (made when the session's plugin is, at configure time); the level the imports
    leave is the one the timed path gets."""

    level: int = field(default_factory=lambda: logging.getLogger().level)

    @contextmanager
    def importing(self, measuring: bool = True) -> Iterator[None]:
        if not measuring:
            yield
            return
        with without_pytest_handlers(self.level):
            try:
                yield
            finally:
                self.level = logging.getLogger().level


def pytest_handlers(logger: logging.Logger) -> list[logging.Handler]:
    return [handler for handler in logger.handlers if type(handler).__module__ == PYTEST_LOGGING]


@contextmanager
def without_pytest_handlers(level: int | None = None) -> Iterator[None]:
    """The root logger without pytest's handlers (at ``level``, if given); then as it was, with
    any handler the code under test added meanwhile kept after pytest's."""
    root = logging.getLogger()
    before, was_level = list(root.handlers), root.level
    detached = pytest_handlers(root)
    for handler in detached:
        root.removeHandler(handler)
    if level is not None:
        root.setLevel(level)
    try:
        yield
    finally:
        now = list(root.handlers)
        root.handlers = [h for h in before if h in detached or h in now] + [h for h in now if h not in before]
        if level is not None:
            root.setLevel(was_level)


@contextmanager
def quiet_streams() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` into ``os.devnull``, buffered as a redirected process's."""
    with open(os.devnull, "w") as out, open(os.devnull, "w", buffering=1) as err:
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err
        try:
            yield
        finally:
            sys.stdout, sys.stderr = saved


@contextmanager
def untraced(where: str) -> Iterator[None]:
    """No trace or profile function in this thread or new ones; then each put back. A
    ``sys.monitoring`` tool (3.12+) other than count mode's has its global events off and is
    named in an :class:`OverheadTimedPathWarning` for ``where`` (its per-code events stay on)."""
    saved = sys.gettrace(), sys.getprofile(), threading.gettrace(), threading.getprofile()
    tools = _monitoring_tools()
    if tools:
        names = ", ".join(f"{name!r} (id {tool})" for tool, (name, _) in tools.items())
        warnings.warn(
            OverheadTimedPathWarning(
                f"{where}: sys.monitoring tool {names} is active: its global events are off while the pair is "
                f"timed, but the events it set on code objects still fire in the timed path (coverage with "
                f"COVERAGE_CORE=sysmon is one: measure without coverage for figures to quote)"
            ),
            stacklevel=2,
        )
    sys.settrace(None)
    sys.setprofile(None)
    threading.settrace(None)
    threading.setprofile(None)
    monitoring: Any = getattr(sys, "monitoring", None)
    for tool in tools:
        monitoring.set_events(tool, 0)
    try:
        yield
    finally:
        for tool, (_, events) in tools.items():
            monitoring.set_events(tool, events)
        trace, profile, thread_trace, thread_profile = saved
        threading.settrace(thread_trace)
        threading.setprofile(thread_profile)
        sys.setprofile(profile)
        sys.settrace(trace)


def _monitoring_tools() -> dict[int, tuple[str, int]]:
    """sys.monitoring tools in use but count mode's: id -> (name, global events)."""
    monitoring: Any = getattr(sys, "monitoring", None)
    if monitoring is None:
        return {}
    tools = {}
    for tool in range(6):
        name = monitoring.get_tool(tool)
        if name is not None and name != OWN_TOOL:
            tools[tool] = (name, monitoring.get_events(tool))
    return tools


@contextmanager
def loop_out_of_debug() -> Iterator[None]:
    """The running asyncio loop out of debug mode (``PYTHONASYNCIODEBUG``, ``-X dev``, a test
    plugin's ``debug=True``), then as it was: in debug mode it checks every callback's duration
    and tracks every coroutine's origin, which production's loop does not."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # trio, or no loop
        loop = None
    debugging = loop is not None and loop.get_debug()
    if loop is not None and debugging:
        loop.set_debug(False)
    try:
        yield
    finally:
        if loop is not None and debugging:
            loop.set_debug(True)


@contextmanager
def paused_gc(settings: Settings) -> Iterator[None]:
    """The garbage collector paused (unless ``settings.gc_enabled``), as it was after."""
    was_enabled = gc.isenabled()
    if not settings.gc_enabled:
        gc.collect()
        gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def timing_conditions(settings: Settings, app_logging: AppLogging, harness: Harness, where: str) -> Iterator[None]:
    """Everything above, for one pair's measurement (``where``: the test, for a warning)."""
    with ExitStack() as stack:
        stack.enter_context(untraced(where))
        stack.enter_context(harness.taken_out())
        stack.enter_context(without_pytest_handlers(app_logging.level))
        stack.enter_context(quiet_streams())
        stack.enter_context(paused_gc(settings))
        yield
