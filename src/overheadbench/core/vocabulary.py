"""The base of every enum of overheadbench's vocabulary, and the bounds every layer checks against.

Each word lives with the concept it names (``Mode`` and ``Policy`` in
:mod:`overheadbench.engine.settings`, ``Side``, ``Kind`` and ``Figure`` in
:mod:`overheadbench.engine.samples`, ``Method`` in :mod:`overheadbench.engine.stats`, ``Status``
and ``Unit`` in :mod:`overheadbench.engine.checks`, ``Metric`` in
:mod:`overheadbench.transport.metrics`, ``HttpProtocol`` in
:mod:`overheadbench.http.protocols`), except :class:`Counter`, here because both a setting and
the counts name it; each is a :class:`Word`: a ``str`` enum that compares equal to its text, so
JSON carries it as that text and a stored run reads back into the same member
(``Status("pass")``).
"""

from __future__ import annotations

from enum import Enum


class Word(str, Enum):
    """An enum whose members print, format and serialise as their text."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


MAX_CONCURRENCY = 1024
"""Upper bound of concurrent callers (threads or tasks) of one side of a pair."""
MAX_PROCESSES = 32
"""Upper bound of every process count: each replica is a whole pytest session (~50-100 MB)
and sets up the pair's fixtures; beyond this the interval no longer narrows in any useful way."""


class Counter(Word):
    """What count mode's instructions are."""

    AUTO = "auto"
    """Callgrind where it can run (valgrind installed, Linux on x86-64), else bytecode."""
    CALLGRIND = "callgrind"
    """Machine instructions, counted by Valgrind's callgrind in a replica it started: compiled code included."""
    BYTECODE = "bytecode"
    """Python bytecode instructions, counted in the test's process: compiled code is invisible."""
