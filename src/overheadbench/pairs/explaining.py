"""When a pair is explained, how long that may take, and where its flame graph goes.

A failing or inconclusive pair is explained without being asked (what a person reads next is
*where* the overhead goes); with ``--overhead-explain`` every measured pair is. Explaining
runs each side once more, in this process, under its strategy's profiler for about
:data:`EXPLAIN_S` (:mod:`overheadbench.instruments.functions`): one more stage of the pair
(:func:`~.measuring.profile_stage`). The explanation is the result's ``explain``
(:mod:`overheadbench.engine.attribution`); with ``--overhead-flame DIR`` its added cost is also
written to ``DIR/<test>.folded``.

A change between places (``--overhead-against``, ``--overhead-env``) that the gate reads as
regressed or unknown (every one, with ``--overhead-explain``) is explained too: one new replica
of that place and one of the session's own profile the pair the same way and send their profiles
back; what each function adds at the new place less what it adds at the old
(:func:`~overheadbench.engine.attribution.explain_change`) is the change's explanation, which the
place's result carries.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Mapping
from pathlib import Path

from ..core.jsonio import write_text_atomic
from ..engine.attribution import Profiled, Profiler, explain, explain_change
from ..engine.changes import Finding
from ..engine.checks import Status
from ..engine.settings import Settings
from .results import OverheadResult

EXPLAIN_S = 0.25
"""Each side's profiled calls last about this long (doubling chunks: at most about twice)."""
EXPLAINED = (Status.FAIL, Status.INCONCLUSIVE)
"""Verdicts explained without ``--overhead-explain``."""
EXPLAINED_CHANGES = (Finding.REGRESSED, Finding.UNKNOWN)
"""Changes between places explained without ``--overhead-explain``."""


def unsettled(result: OverheadResult, settings: Settings, threshold: float | None) -> list[str]:
    """The other places whose change ``result`` explains: every one with ``--overhead-explain``,
    else those regressed or unknown at the gate's ``threshold`` (None: no gate, none)."""
    return [
        place.name
        for place in result.places
        if place.change is not None
        and (settings.explain or (threshold is not None and place.change.finding(threshold) in EXPLAINED_CHANGES))
    ]


def wanted(result: OverheadResult, settings: Settings, threshold: float | None) -> bool:
    """Whether ``result`` is explained: every measured pair with ``--overhead-explain``, else a failing or
    inconclusive one, or one whose change at another place the gate reads as regressed or unknown."""
    explained = settings.explain or result.verdict in EXPLAINED or bool(unsettled(result, settings, threshold))
    return result.measured and explained


def explained(
    result: OverheadResult, profiler: Profiler, own: Profiled, places: Mapping[str, tuple[Profiled, Profiled]]
) -> OverheadResult:
    """``result`` with its explanation (this process's profiles: the framework side's against the
    baseline's), and each of ``places``'s change explained by its pair of profiles (the session's own
    place's, the other place's): what the new side's framework path adds per function beyond the old
    side's (the base tree then the head; this environment then that one)."""
    unit, exact = profiler.unit, profiler.exact
    changes = [
        dataclasses.replace(
            place,
            explain=explain_change(*place.role.old_new(*places[place.name]), unit, exact, profiler.note),
        )
        if place.name in places
        else place
        for place in result.places
    ]
    return dataclasses.replace(result, explain=explain(own, unit, exact, profiler.note), places=changes)


FLAME_NAME_CHARS = 120
"""A flame file's name keeps this much of its test id (a file name holds at most 255 bytes)."""


def flame_path(folder: str, nodeid: str) -> Path:
    """The folded-stacks file of a test: its node id with what a file name cannot hold replaced,
    cut to :data:`FLAME_NAME_CHARS`, and a digest of the whole id (``a/b`` and ``a_b`` read alike
    once replaced, and two long ids alike once cut: each test keeps a file of its own)."""
    readable = re.sub(r"[^A-Za-z0-9._=-]+", "_", nodeid).strip("_")[:FLAME_NAME_CHARS]
    return Path(folder) / f"{readable}-{hashlib.sha256(nodeid.encode()).hexdigest()[:8]}.folded"


def write_flame(folder: str, result: OverheadResult) -> str | None:
    """Write the explained pair's added cost as folded stacks (atomically), if a folder is given;
    why it could not be written, if it could not (the test's result stands: see ``OverheadOutputWarning``)."""
    if not folder or result.explain is None:
        return None
    path = flame_path(folder, result.nodeid)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, result.explain.folded())
    except OSError as exc:
        return f"{result.nodeid}: its flame graph file {path} could not be written ({exc.strerror or exc})"
    return None
