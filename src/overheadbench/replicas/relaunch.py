"""How to start the user's pytest session again, as a replica.

A replica must run a test exactly as the user's session runs it: the same interpreter,
directory, ini file, ``addopts``, ``PYTEST_ADDOPTS``, conftest options and plugins. Anything
less broke real suites (``--import-mode=importlib`` in addopts, ``-o pythonpath=src``, a
conftest's ``--runslow``, ``filterwarnings = error`` with another plugin's ini key). So the
replica's command line *is* the user's, from ``config.invocation_params``, with three changes:

* options that would make the replica distribute, write the user's files, or stop for a
  debugger are dropped (:data:`DROPPED`), from the command line, ``PYTEST_ADDOPTS`` and the
  ini file's ``addopts`` alike: xdist's, overheadbench's outputs, JUnit XML, ``--basetemp``
  (pytest empties it at start: a replica would delete the controller's ``tmp_path``),
  last-failed/stepwise selection, ``--pdb``;
* the test selection is replaced by the node ids to re-run (the replica-side plugin sets
  ``config.args``; the user's paths stay on the command line, so the same initial conftests
  load);
* the replica's own switches are appended: a throwaway cache directory (a replica must not
  rewrite the user's last-failed list), ``-p no:xdist``, so an ``addopts = -n 4`` does not make
  every replica start four more processes (``-n 0`` was refused by an environment of
  ``--overhead-env`` without xdist; ``-p`` is pytest's own and blocks nothing that is absent), and the session's
  rootdir, ini file and conftest cut-off, explicitly.

Why the rootdir explicitly: pytest chooses it (and the ini file) from the paths on the command
line before it knows any plugin's options, so ``--overhead-json /ci/out.json`` (with a space)
made it take the existing file for a test path and root the session at a common ancestor. The
replica, whose command line no longer had that option, rooted at the project: its node ids did
not match, and every pair failed on a CI re-run (the file existed only then). Given the
controller's rootdir, ini file (``/dev/null`` where it had none) and ``--confcutdir``, a replica
collects the same node ids with the same configuration, whatever the command line.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..engine.valgrind import COUNTER_ENV, wrapper
from . import lifeline

OPTIONAL = -1
"""Arity of an option whose value is optional (argparse ``nargs="?"``): it takes the next
word unless that word starts with ``-``, as argparse does."""

DROPPED: dict[str, int] = {
    # pytest-xdist: a replica is one process
    "-n": 1,
    "--numprocesses": 1,
    "--maxprocesses": 1,
    "--max-worker-restart": 1,
    "--dist": 1,
    "-d": 0,
    "--distload": 0,
    "--tx": 1,
    "--px": 1,
    "--rsyncdir": 1,
    "--rsyncignore": 1,
    "-f": 0,
    "--looponfail": 0,
    "--maxschedchunk": 1,
    # overheadbench: outputs and gates are the controller's
    "--overhead-json": 1,
    "--overhead-md": 1,
    "--overhead-save": 1,
    "--overhead-autosave": 0,
    "--overhead-compare": OPTIONAL,
    "--overhead-fail-above": 1,
    "--overhead-compare-fail": 1,
    "--overhead-compare-fail-percent": 1,
    "--overhead-compare-unknown": 1,
    "--overhead-compare-force": 0,
    "--overhead-against": 1,
    "--overhead-against-python": 1,
    "--overhead-env": 1,
    "--overhead-storage": 1,
    # files other plugins write, which the replica would overwrite
    "--junitxml": 1,
    "--junit-xml": 1,
    "--report-log": 1,
    "--html": 1,
    "--alluredir": 1,
    "--benchmark-json": 1,
    "--benchmark-save": 1,
    "--benchmark-autosave": 0,
    "--benchmark-save-data": 0,
    "--benchmark-histogram": OPTIONAL,
    "--benchmark-cprofile-dump": OPTIONAL,
    "--basetemp": 1,
    # selection from the cache (the replica's cache is empty) and debuggers (no terminal)
    "--lf": 0,
    "--last-failed": 0,
    "--ff": 0,
    "--failed-first": 0,
    "--nf": 0,
    "--new-first": 0,
    "--lfnf": 1,
    "--last-failed-no-failures": 1,
    "--sw": 0,
    "--stepwise": 0,
    "--sw-skip": 0,
    "--stepwise-skip": 0,
    "--sw-reset": 0,
    "--stepwise-reset": 0,
    "--cache-clear": 0,
    "--cache-show": OPTIONAL,
    # pytest-split's shard of the suite: a replica runs the tests it is given, all of them
    "--splits": 1,
    "--group": 1,
    "--splitting-algorithm": 1,
    "--pdb": 0,
    "--pdbcls": 1,
    "--trace": 0,
}

COVERAGE_STARTERS = ("COV_CORE_", "COVERAGE_PROCESS_")
"""Environment variables that start coverage in a new Python process: pytest-cov's (before 7)
and coverage.py's own (``COVERAGE_PROCESS_START``, ``COVERAGE_PROCESS_CONFIG``)."""


def without_dropped(args: Sequence[str], dropped: Mapping[str, int] = DROPPED) -> list[str]:
    """``args`` less the options in ``dropped`` and their values, in every spelling
    (``--opt value``, ``--opt=value``, ``-n4``); words after ``--`` are kept as they are."""
    kept: list[str] = []
    words = list(args)
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word == "--":
            kept += words[index - 1 :]
            break
        name, has_value = _option_name(word, dropped)
        if name is None:
            kept.append(word)
            continue
        arity = dropped[name]
        if has_value or arity == 0:
            continue
        if arity == 1 or (index < len(words) and not words[index].startswith("-")):
            index += 1
    return kept


def _option_name(word: str, dropped: Mapping[str, int]) -> tuple[str | None, bool]:
    """The dropped option ``word`` spells, and whether the word carries its value."""
    if word.startswith("--"):
        name, equals, _ = word.partition("=")
        return (name, bool(equals)) if name in dropped else (None, False)
    if word.startswith("-") and len(word) > 2 and word[:2] in dropped and dropped[word[:2]] != 0:
        return word[:2], True  # -n4
    return (word, False) if word in dropped else (None, False)


@dataclass(frozen=True)
class Invocation:
    """The user's session as started: its arguments, directory, addopts and interpreter."""

    args: tuple[str, ...]
    directory: Path
    ini_addopts: tuple[str, ...] = ()
    env_addopts: str | None = None
    module_run: bool = True
    """Started as ``python -m pytest`` (the working directory on ``sys.path``), not by the
    ``pytest`` script; the replica starts the same way, so imports resolve alike."""
    python: str = sys.executable
    """The replica's interpreter: this one, or the base tree's (``--overhead-against-python``)."""
    pythonpath: str | None = None
    """``PYTHONPATH`` for the replica, where it differs from this process's (the base tree's)."""
    coverage: bool = False
    """pytest-cov is loaded: the replica gets ``--no-cov`` (no tracer in its timed path; this
    process covers the tests' code, see :mod:`overheadbench.engine.timed_path`)."""
    wrapper: tuple[str, ...] = ()
    """A command the replica's interpreter is started under (count mode's callgrind)."""
    env: tuple[tuple[str, str], ...] = ()
    """Variables set in the replica's environment on top of this process's."""
    rootdir: Path | None = None
    """The session's rootdir, which the replica is given (None: it finds its own)."""
    inifile: Path | None = None
    """The session's ini file (``/dev/null``: it had none), which the replica is given (None:
    it finds its own, as a base tree without the head's ini file does)."""
    confcutdir: Path | None = None
    """Where the session stopped looking for conftests upwards (it follows the ini file)."""

    @classmethod
    def of(cls, config: Any) -> Invocation:
        """From a pytest config (in an xdist worker: the arguments the controller got)."""
        main_argv = getattr(config, "workerinput", {}).get("mainargv") or sys.argv
        return cls(
            args=tuple(str(arg) for arg in config.invocation_params.args),
            directory=Path(config.invocation_params.dir),
            ini_addopts=tuple(config.getini("addopts")),
            env_addopts=os.environ.get("PYTEST_ADDOPTS"),
            module_run=str(main_argv[0]).endswith("__main__.py"),
            coverage=config.pluginmanager.hasplugin("_cov"),
            rootdir=Path(config.rootpath),
            inifile=Path(config.inipath or os.devnull),
            confcutdir=_path_or_none(getattr(config.known_args_namespace, "confcutdir", None)),
        )

    def in_tree(self, mapped: Callable[[Path], Path], python: str) -> Invocation:
        """The same session in another tree: its directory, the paths among its arguments and in
        ``PYTHONPATH`` mapped by ``mapped`` (relative ones stay: they follow the directory)."""
        args = tuple(
            str(mapped(Path(arg))) if Path(arg).is_absolute() and Path(arg).exists() else arg for arg in self.args
        )
        raw = os.environ.get("PYTHONPATH")
        entries = [
            str(mapped(Path(entry))) if os.path.isabs(entry) else entry for entry in (raw or "").split(os.pathsep)
        ]
        pythonpath = os.pathsep.join(entries) if raw else None
        inifile = self.inifile and mapped(self.inifile)
        return dataclasses.replace(
            self,
            args=args,
            directory=mapped(self.directory),
            python=python,
            pythonpath=pythonpath,
            rootdir=self.rootdir and mapped(self.rootdir),
            inifile=inifile if inifile is None or inifile.exists() else None,
            confcutdir=self.confcutdir and mapped(self.confcutdir),
        )

    def under_callgrind(self) -> Invocation:
        """The same session, started under callgrind to count count-mode pairs.

        Only a process valgrind started can count machine instructions, and valgrind slows what
        it runs (start-up ~4x without instrumentation, the counted calls ~50x), so the user's
        session stays as it is and each count-mode pair is counted by one replica of it started
        so (kept for later count-mode pairs like any replica; under ``--overhead-against`` one of
        the base tree too). It runs with a fixed hash seed (``PYTHONHASHSEED=0``): a set's
        layout, and so the instructions that walk it, would otherwise move from process to process.
        """
        env = ((COUNTER_ENV, "callgrind"), ("PYTHONHASHSEED", "0"))
        return dataclasses.replace(self, wrapper=wrapper(), env=env)

    def command(self, cache_dir: Path) -> list[str]:
        """The replica's command line: the user's, less :data:`DROPPED`, plus its switches."""
        # the file, not the package: a package imported before pytest cannot have its asserts
        # rewritten, and pytest's warning about that is an error under filterwarnings = error
        boot = f"import runpy; runpy.run_path({lifeline.__file__!r})['boot'](module_run={self.module_run})"
        start = [*self.wrapper, self.python, "-c", boot]
        # a file that does not collect in the base tree fails its own tests, not the whole replica
        switches = ["-o", f"cache_dir={cache_dir}", "--continue-on-collection-errors"]
        ini_addopts = without_dropped(self.ini_addopts)
        if ini_addopts != list(self.ini_addopts):
            switches += ["-o", f"addopts={shlex.join(ini_addopts)}"]
        switches += ["-p", "no:xdist"]  # understood with or without xdist installed (``-n 0`` is not)
        if self.coverage:
            switches += ["--no-cov"]
        switches += [f"--rootdir={self.rootdir}"] if self.rootdir else []
        switches += ["-c", str(self.inifile)] if self.inifile else []
        switches += [f"--confcutdir={self.confcutdir}"] if self.confcutdir else []
        return [*start, *without_dropped(self.args), *switches]

    def environ(self, base: Mapping[str, str], extra: Mapping[str, str]) -> dict[str, str]:
        """The replica's environment: ``base`` with ``PYTEST_ADDOPTS`` less :data:`DROPPED`, and
        without the variables that start coverage in a subprocess (:data:`COVERAGE_STARTERS`)."""
        merged = {**base, **dict(self.env), **extra}
        environ = {name: value for name, value in merged.items() if not name.startswith(COVERAGE_STARTERS)}
        if self.pythonpath is not None:
            environ["PYTHONPATH"] = self.pythonpath
        if self.env_addopts is not None:
            environ["PYTEST_ADDOPTS"] = shlex.join(without_dropped(shlex.split(self.env_addopts)))
        return environ


def _path_or_none(value: object) -> Path | None:
    return Path(str(value)) if value else None


def absolute_nodeid(nodeid: str, rootpath: Path) -> str:
    """A node id as a collection argument that works from any directory: its path made absolute."""
    path, separator, rest = nodeid.partition("::")
    return f"{rootpath / path}{separator}{rest}"
