"""The messages between the controller and a replica, one JSON object per line.

Replica to controller:

* :class:`Configured`: a new replica has imported pytest, its plugins and conftests, and collects now;
* :class:`Collected`: a new replica has started and collected its session;
* :class:`Ready`: parked at ``overhead.compare`` of a test, waiting for :class:`Go` or :class:`Done`;
* :class:`Samples`: the pair's samples, after :class:`Go`;
* :class:`Counted`: the pair's counts, after :class:`Go` (count mode, a replica of the base tree);
* :class:`Figured`: a transport test's judged figures, after :class:`Go` (its rounds at every place);
* :class:`Turn`: a transport test told to take turns has reached a round: waiting for :class:`Take` or :class:`Done`;
* :class:`Look`: such a test's pair has reached a look, with its rounds: waiting for :class:`Looked` or :class:`Done`;
* :class:`Working`: still measuring after :class:`Go` (a window or a stream of a long transport test
  is done): its silence starts again;
* :class:`Explained`: the pair's two profiles, after :class:`Explain`;
* :class:`Missed`: the test it was sent to ended (failed, skipped) before reaching ``compare``;
  carries that test's own report, which the controller quotes;
* :class:`Idle`: between tests, holding no test's fixtures, waiting for :class:`Next`.

Controller to replica:

* :class:`Next`: run on to this test (skipping the ones before it) and park at its ``compare``;
* :class:`Go`: sample the pair now, in blocks of these many calls;
* :class:`Take`: run the transport test's next round (it takes turns, :attr:`Go.turns`);
* :class:`Looked`: whether the pair at its look goes on;
* :class:`Explain`: profile the pair's two sides instead (a change between places is explained);
* :class:`Done`: the pair is finished: end the test and wait (:class:`Idle`) for the next.

End of file on either pipe means the other side has gone.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, cast

from ..engine.counted_samples import CountSamples
from ..engine.profiles import Profiled
from ..engine.samples import BlockSizes, ReplicaSamples, Timer
from ..engine.settings import Settings


@dataclass(frozen=True)
class Configured:
    """Replica: pytest, the session's plugins and conftest files are imported; collecting (importing
    the test files) comes next. Tells a slow start's two halves apart."""


@dataclass(frozen=True)
class Collected:
    """Replica: started and collected, about to run its first test. What came before (the
    interpreter, pytest, the suite's plugins and conftests) is the session's cost of a new
    process; what comes after (the test's fixtures, its body up to ``compare``) is the pair's."""


@dataclass(frozen=True)
class Ready:
    """Replica: parked at ``overhead.compare`` of this test, waiting for :class:`Go` or :class:`Done`."""

    nodeid: str
    """The test's original node id (as the controller collected it)."""


@dataclass(frozen=True)
class Missed:
    """Replica: the test it was sent to ended (failed, skipped) before reaching ``compare``."""

    nodeid: str
    when: str
    """The phase that ended the test: "setup", "call" or "teardown"."""
    outcome: str
    """"failed" or "skipped"."""
    report: str
    """The replica's own report of the test: its traceback and captured output."""


@dataclass(frozen=True)
class Samples:
    """Replica: the pair's samples, after :class:`Go`."""

    samples: ReplicaSamples
    """This process's paired block costs."""


@dataclass(frozen=True)
class Counted:
    """Replica of the base tree: the pair's counts (count mode, ``--overhead-against``), after :class:`Go`."""

    counts: CountSamples
    probe: ReplicaSamples | None = None
    """The same calls timed briefly in that replica (bytecode counted: a change the counter cannot see
    shows there; None under callgrind, whose replica runs under valgrind)."""


@dataclass(frozen=True)
class Figured:
    """Replica: a transport test's figures, measured after :class:`Go` (each as its JSON)."""

    figures: list[Any]
    rounds: list[Any] = dataclasses.field(default_factory=list)
    """Its pairs' rounds as places compare them (:data:`~overheadbench.transport.across.RoundValues` each)."""


@dataclass(frozen=True)
class Turn:
    """Replica: a transport test taking turns has reached its next round (:mod:`overheadbench.core.turns`):
    waiting for :class:`Take`, or :class:`Done` to end the test there."""


@dataclass(frozen=True)
class Look:
    """Replica: a pair of a transport test taking turns is at a look (:func:`~overheadbench.core.turns.looked`):
    waiting for :class:`Looked`, or :class:`Done`."""

    row: str
    rounds: list[Any]
    """Its rounds' values so far (:data:`~overheadbench.transport.across.RoundValues` each)."""


@dataclass(frozen=True)
class Looked:
    """Controller: whether the pair at its look goes on to its next."""

    more: bool


@dataclass(frozen=True)
class Take:
    """Controller: run the transport test's next round, then say :class:`Turn` (or :class:`Figured` at its end)."""


@dataclass(frozen=True)
class Explained:
    """Replica: the pair's two profiles, function by function, after :class:`Explain`."""

    profiled: Profiled


@dataclass(frozen=True)
class Working:
    """Replica: still measuring the test it was told to (:func:`~overheadbench.core.timeouts.progressed`,
    at most :data:`~overheadbench.replicas.replica.BEATS_PER_SILENCE` times a silence limit): an SDK's streams at 8 in
    flight measured minutes in a base tree's replica, sending nothing until its figures, and failed
    the gate of identical trees on the silence limit."""


@dataclass(frozen=True)
class Idle:
    """Replica: between tests, holding no test's fixtures, waiting for :class:`Next`."""


@dataclass(frozen=True)
class Done:
    """Controller: the pair is finished: end the test and wait (:class:`Idle`) for the next."""


@dataclass(frozen=True)
class Go:
    """Controller: sample the pair now, in blocks of this many calls (count them, in count mode)."""

    calls_per_block: int
    settings: Settings
    """The pair's settings (a marker may change them per test): how long to sample, to what width."""
    framework_calls: int = 0
    """The framework's blocks' calls, sized on its own cost (0: ``calls_per_block``)."""
    timer: str = Timer.WALL
    """The clock the controller chose for the pair (:func:`~overheadbench.engine.calibration.choose_timer`)."""
    own_sizes: bool = False
    """Another place's first process: calibrate here first, and keep its own sizes where they are
    lopsided to these (:meth:`~overheadbench.engine.samples.BlockSizes.at_place`); its samples say
    which sizes it used, and the place's later processes are given those."""
    turns: bool = False
    """A transport test: take its pairs' rounds in turn with the other places' (:class:`Turn`, :class:`Take`)."""
    looks: bool = False
    """Taking turns: a stream pair's looks are asked of the controller (:class:`Look`, :class:`Looked`)."""

    @property
    def sizes(self) -> BlockSizes:
        return BlockSizes(self.calls_per_block, self.framework_calls or self.calls_per_block, Timer(self.timer))


@dataclass(frozen=True)
class Explain:
    """Controller: profile each side of the pair (instead of measuring it) and send them
    (:class:`Explained`): the head's profiles less this place's explain a change between them."""


@dataclass(frozen=True)
class Next:
    """Controller: run on to this test (skipping the ones before it) and park at its ``compare``."""

    nodeid: str


FromReplica = (
    Configured | Collected | Ready | Samples | Counted | Figured | Turn | Look | Explained | Missed | Working | Idle
)
FromController = Next | Go | Take | Looked | Explain | Done
Message = FromReplica | FromController
_TYPES: dict[str, type] = {
    cls.__name__: cls
    for cls in (Configured, Collected, Ready, Samples, Counted, Figured, Turn, Look, Explained, Missed, Working, Idle)
    + (Next, Go, Take, Looked, Explain, Done)
}


class ProtocolError(Exception):
    """A line that is not a message: the other side is not an overheadbench of this version."""


_NESTED: dict[str, type] = {
    "samples": ReplicaSamples,
    "probe": ReplicaSamples,
    "counts": CountSamples,
    "settings": Settings,
    "profiled": Profiled,
}
"""Fields whose values are objects with their own JSON form (``to_json``/``from_json``)."""


def encode(message: Message) -> bytes:
    fields: dict[str, Any] = {name: getattr(message, name) for name in message.__dataclass_fields__}
    fields = {
        name: value.to_json() if name in _NESTED and value is not None else value for name, value in fields.items()
    }
    return json.dumps({"type": type(message).__name__, **fields}).encode() + b"\n"


def decode(line: bytes) -> Message:
    try:
        data = json.loads(line)
        cls = _TYPES[data.pop("type")]
        return cast(
            Message,
            cls(
                **{
                    name: _NESTED[name].from_json(value)  # type: ignore[attr-defined]
                    if name in _NESTED and value is not None
                    else value
                    for name, value in data.items()
                }
            ),
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ProtocolError(f"not an overheadbench replica message: {line[:200]!r}") from exc
