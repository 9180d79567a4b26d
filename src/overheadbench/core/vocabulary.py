"""The base of every enum of overheadbench's vocabulary, and the bounds every layer checks against.

Each word lives with the concept it names (``Mode`` and ``Policy`` in
:mod:`overheadbench.engine.settings`, ``Side``, ``Kind`` and ``Figure`` in
:mod:`overheadbench.engine.samples`, ``Method`` in :mod:`overheadbench.engine.stats`, ``Status``
and ``Unit`` in :mod:`overheadbench.engine.checks`, ``Metric`` in
:mod:`overheadbench.transport.metrics`, ``HttpProtocol`` in
:mod:`overheadbench.http.protocols`), except :class:`Counter`, here because both a setting and
the counts name it, and :class:`Role`, what a place other than the session's own is to it, whose
direction and words the engine, the replicas, the pairs, the transport figures and the reports all
read; each is a :class:`Word`: a ``str`` enum that compares equal to its text, so
JSON carries it as that text and a stored run reads back into the same member
(``Status("pass")``).
"""

from __future__ import annotations

from enum import Enum
from typing import TypeVar


class Word(str, Enum):
    """An enum whose members print, format and serialise as their text."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


OVERHEAD = "overhead"
"""What a pair's figure is called wherever it is named beside a transport figure's: the change
table's figure column, a failure's kind, an annotation's title."""
TRANSPORT = "transport"
"""A transport test's kind, where it is named beside a pair's (a failure's kind, an annotation's title)."""
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

    @property
    def instructions(self) -> str:
        """What its counts are called in a message: ``machine instructions``, ``bytecode instructions``."""
        return COUNTER_WORDS[self][0]

    @property
    def counts(self) -> str:
        """What it counts and cannot see, as a report's footnote says it."""
        return COUNTER_WORDS[self][1]

    @property
    def unseen(self) -> str:
        """What it cannot see: the likely cause when its counts and the time disagree."""
        return COUNTER_WORDS[self][2]


COUNTER_WORDS = {
    Counter.CALLGRIND: (
        "machine instructions",
        "machine instructions (callgrind: compiled code included; waiting, I/O and sleep not)",
        "the counter counts the machine instructions this process executes, so waiting (I/O, sleeping, locks, other "
        "processes) and memory stalls cost time and no instructions",
    ),
    Counter.BYTECODE: (
        "bytecode instructions",
        "bytecode instructions (Python only: work in C or Rust extensions is not counted)",
        "the counter counts Python bytecode only, so work in compiled code (C or Rust extensions), system calls, I/O "
        "or sleeping is invisible to it",
    ),
}
"""Each counter's words, in one place: what its counts are called, what it counts, what it cannot see."""


T = TypeVar("T")


class Role(Word):
    """What a place other than the session's own is to it: the change's direction and the words a
    report names both sides by, decided here once (they were decided by ``if role == BASE`` in ten
    places)."""

    BASE = "base"
    """The tree of ``--overhead-against``: the session's own tree (the head) is the change from it."""
    ENVIRONMENT = "environment"
    """An ``--overhead-env`` interpreter: the change is its, from the session's own."""

    def old_new(self, own: T, other: T) -> tuple[T, T]:
        """The session's own and the place's, in the change's order: (base, head), or (this
        environment, that one)."""
        return (other, own) if self == Role.BASE else (own, other)

    def sides(self, name: str) -> tuple[str, str]:
        """What the change's old and new sides are called: base and head, or this and that environment."""
        return ("base", "head") if self == Role.BASE else ("this environment", name)

    def own_side(self, name: str) -> str:
        """What the session's own side is called beside this place."""
        return self.sides(name)[1 if self == Role.BASE else 0]

    def place_side(self, name: str) -> str:
        """What this place's side is called: ``base HEAD~1``, ``under py3.13``."""
        return f"base {name}" if self == Role.BASE else f"under {name}"

    def under(self, name: str) -> str:
        """What a change's sentence adds to say where: nothing against the base, `` under NAME`` else."""
        return "" if self == Role.BASE else f" under {name}"

    def section(self, name: str) -> str:
        """The markdown section of the place: ``Against HEAD~1``, ``Under py3.13``."""
        return f"Against {name}" if self == Role.BASE else f"Under {name}"

    def columns(self, name: str) -> tuple[str, str]:
        """The overhead columns of its table, old then new: ``Base overhead``, ``Head overhead``;
        ``This environment overhead``, ``py3.13 overhead`` (an environment's name as given)."""
        old, new = self.sides(name)
        return f"{old} overhead".capitalize(), f"{new} overhead" if self == Role.ENVIRONMENT else "Head overhead"

    def reading(self, name: str) -> str:
        """How the place was measured and which way its change reads, under its table."""
        both, over = (
            ("trees", "head over base") if self == Role.BASE else ("environments", f"{name} over this environment")
        )
        return f"replicas of both {both} interleaved; the change is of framework / baseline, {over}"

    def reference(self, name: str) -> str:
        """What the change table's old column names: the base tree (an environment's name heads its new column)."""
        return name if self == Role.BASE else ""

    def lacking(self) -> str:
        """Why a pair has no change at this place when the place lacks the test."""
        return (
            "new: the base tree has no such test"
            if self == Role.BASE
            else "not measured: the environment has no such test"
        )


class Side(Word):
    """Which callable a block runs: the two sides of the pair, or the empty harness probe."""

    BASELINE = "baseline"
    """The bare path."""
    FRAMEWORK = "framework"
    """The path through the framework."""
    HARNESS = "harness"
    """An empty callable through the same loop: the measuring harness's own cost."""


class Figure(Word):
    """A counted figure per call."""

    INSTRUCTIONS = "instructions"
    """Executed bytecode instructions (count mode)."""
    PEAK_BYTES = "peak_bytes"
    """The most extra memory a call held at once."""
    KEPT_BLOCKS = "kept_blocks"
    """Memory blocks a call left allocated."""
    KEPT_BYTES = "kept_bytes"
    """Bytes a call left allocated."""
