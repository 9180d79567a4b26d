"""What pytest and its plugins put in Python's import and warnings machinery, taken out of a
pair's timed path (one part of :mod:`overheadbench.engine.timed_path`).

**Imports.** pytest puts its assertion-rewriting finder first on ``sys.meta_path``; plugins add
theirs (a type checker's import hook). Every import the timed code makes that is not already in
``sys.modules`` asks them first, so a framework that tries an optional import on every call (a
module that is not installed) paid more inside pytest than outside: an old release against a new
one read -35% under the plugin and -25% outside it. The finders and path hooks present when the
tests start being imported, less those a plain ``python`` of this interpreter also has (a
``.pth`` file's editable-install finder is production's too), are the harness's: they are off
``sys.meta_path`` and ``sys.path_hooks`` while a pair is timed, and ``sys.path_importer_cache``
holds only the plain interpreter's kinds of finder; all three are put back exactly after.
Finders the code under test adds (at import, or later) stay: production has them.

**Warnings.** pytest runs each test inside ``catch_warnings(record=True)`` with its own filters
(``always`` for deprecation warnings, the ``filterwarnings`` ini and ``-W`` options): a warning
issued on every call was appended to a list on every call, and every record kept, where
production's default filters ignore it or show it once per location. While a pair is timed,
the filters are production's (the interpreter's as the session started, with those the tests'
imports added) and a shown warning goes to the (quiet) ``sys.stderr``, as outside pytest; then
pytest's recording is back, so ``filterwarnings`` and ``pytest.warns`` act on everything
outside the timed blocks (the first calls included).
"""

from __future__ import annotations

import _warnings
import contextlib
import functools
import inspect
import json
import os
import subprocess
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

INTERPRETER_FILTERS: list[Any] = list(getattr(_warnings, "filters", warnings.filters))
"""The warning filters the interpreter started with: the C module's own list, which
``catch_warnings`` leaves alone (it swaps the Python module's ``filters`` for a copy), so it is
read right even from inside pytest's recording, where the plugin is imported."""


def show_on_stderr(message: warnings.WarningMessage) -> None:
    """Show a warning as the interpreter does outside ``catch_warnings`` (on ``sys.stderr``, or
    the file it names); pytest's recording replaced the interpreter's own before the plugin loaded."""
    file = message.file if message.file is not None else sys.stderr
    if file is not None:
        with contextlib.suppress(OSError):
            file.write(warnings._formatwarnmsg_impl(message))  # type: ignore[attr-defined]


def _name(thing: Any) -> str:
    """A finder's or a path hook's name: its own for a class or a function (``PathFinder``, a
    hook's closure), else its class's (pytest's ``AssertionRewritingHook`` instance)."""
    kind = thing if isinstance(thing, type) or inspect.isroutine(thing) else type(thing)
    return f"{getattr(kind, '__module__', '?')}.{getattr(kind, '__qualname__', '?')}"


def machinery() -> dict[str, list[str]]:
    """This process's finders, path hooks and kinds of cached path finder, by name."""
    return {
        "finders": [_name(finder) for finder in sys.meta_path],
        "hooks": [_name(hook) for hook in sys.path_hooks],
        "cached": sorted({_name(finder) for finder in sys.path_importer_cache.values() if finder is not None}),
    }


PLAIN_ENV = "OVERHEADBENCH_PLAIN_INTERPRETER"
"""A replica's environment: its controller's :func:`plain_interpreter`, with what it was asked
under (:func:`plain_for_replicas`): a replica of the same interpreter and ``PYTHON*`` settings
uses it rather than starting a plain ``python`` of its own (one per session, not one per process)."""
IRRELEVANT = frozenset({"PYTHONHASHSEED"})
"""``PYTHON*`` variables that change no finder or path hook (a callgrind replica fixes the hash seed)."""


def _asked_under() -> dict[str, str]:
    """What a plain ``python``'s machinery depends on in this process: the interpreter, and the
    ``PYTHON*`` variables a child inherits (``PYTHONPATH``, ``PYTHONHOME``, ``PYTHONNOUSERSITE``...)."""
    python = {name: value for name, value in os.environ.items() if name.startswith("PYTHON") and name not in IRRELEVANT}
    return {"executable": sys.executable, **python}


@functools.cache
def plain_interpreter() -> dict[str, frozenset[str]]:
    """:func:`machinery` of a plain ``python`` of this interpreter (``site`` and its ``.pth``
    files included; asked once per process, or told by the controller: :data:`PLAIN_ENV`). If it
    cannot be asked, nothing is taken out."""
    found = _told()
    if found is None:
        code = "import json; from overheadbench.engine.harness import machinery; print(json.dumps(machinery()))"
        try:
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
            found = json.loads(done.stdout)
        except (OSError, subprocess.SubprocessError, ValueError):  # no interpreter to ask: take nothing out
            found = machinery()
    return {key: frozenset(names) for key, names in found.items()}


def _told() -> dict[str, list[str]] | None:
    """The controller's answer (:data:`PLAIN_ENV`) where it was asked under this process's
    interpreter and settings; None where it was not (another environment's python, another path)."""
    try:
        told = json.loads(os.environ.get(PLAIN_ENV, "null"))
        return told["found"] if told and told["asked"] == _asked_under() else None
    except (ValueError, KeyError, TypeError):
        return None


def plain_for_replicas() -> str:
    """:data:`PLAIN_ENV`'s value: this process's :func:`plain_interpreter` and what it was asked under."""
    found = {key: sorted(names) for key, names in plain_interpreter().items()}
    return json.dumps({"asked": _asked_under(), "found": found})


def _filters_mutated() -> None:
    """Tell the warnings machinery its filters changed (its once-per-location registries reset)."""
    for name in ("_filters_mutated", "_filters_mutated_lock_held"):
        mutated = getattr(warnings, name, None)
        if mutated is not None:
            mutated()
            return


@dataclass
class Harness:
    """The harness's import finders and warning filters, found as the tests are imported."""

    interpreter_filters: list[Any] = field(default_factory=lambda: list(INTERPRETER_FILTERS))
    """The warning filters the interpreter started with (:data:`INTERPRETER_FILTERS`)."""
    app_filters: list[Any] = field(default_factory=list)
    """The filters the tests' imports added (the code under test's own)."""
    finders: list[Any] = field(default_factory=list)
    """``sys.meta_path`` when the tests start being imported."""
    hooks: list[Any] = field(default_factory=list)
    """``sys.path_hooks`` then."""

    @contextmanager
    def importing(self) -> Iterator[None]:
        """Around the tests' imports: note the finders before them, and the filters they add."""
        self.finders, self.hooks = list(sys.meta_path), list(sys.path_hooks)
        before = list(warnings.filters)
        try:
            yield
        finally:
            self.app_filters = [entry for entry in warnings.filters if entry not in before]

    @contextmanager
    def taken_out(self) -> Iterator[None]:
        """Imports and warnings as production has them (see the module), then exactly as they were."""
        plain = plain_interpreter()
        theirs = {id(f) for f in self.finders if _name(f) not in plain["finders"]}
        theirs |= {id(h) for h in self.hooks if _name(h) not in plain["hooks"]}
        saved = (sys.meta_path[:], sys.path_hooks[:], sys.path_importer_cache, warnings.filters)
        shown = (warnings.showwarning, warnings._showwarnmsg_impl)  # type: ignore[attr-defined]
        sys.meta_path[:] = [finder for finder in sys.meta_path if id(finder) not in theirs]
        sys.path_hooks[:] = [hook for hook in sys.path_hooks if id(hook) not in theirs]
        sys.path_importer_cache = {
            path: finder
            for path, finder in sys.path_importer_cache.items()
            if finder is None or _name(finder) in plain["cached"]
        }
        warnings.filters = [*self.app_filters, *self.interpreter_filters]
        warnings.showwarning = warnings._showwarning_orig  # type: ignore[attr-defined]
        warnings._showwarnmsg_impl = show_on_stderr  # type: ignore[attr-defined]
        _filters_mutated()
        try:
            yield
        finally:
            sys.meta_path[:], sys.path_hooks[:] = saved[0], saved[1]
            sys.path_importer_cache, warnings.filters = saved[2], saved[3]
            warnings.showwarning, warnings._showwarnmsg_impl = shown  # type: ignore[attr-defined]
            _filters_mutated()
