"""When a pair is explained, how long that may take, and where its flame graph goes.

A failing or inconclusive pair is explained without being asked (what a person reads next is
*where* the overhead goes); with ``--overhead-explain`` every measured pair is. Explaining
runs each side once more, in this process, under its strategy's profiler for about
:data:`EXPLAIN_S` (:mod:`overheadbench.instruments.functions`): no replica is started. The
explanation is the result's ``explain`` (:mod:`overheadbench.engine.attribution`); with
``--overhead-flame DIR`` its added cost is also written to ``DIR/<test>.folded``.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from ..core.jsonio import write_text_atomic
from ..engine.attribution import Profile, Profiler, explain
from ..engine.checks import Status
from ..engine.settings import Settings
from .results import OverheadResult

EXPLAIN_S = 0.25
"""Each side's profiled calls last about this long (doubling chunks: at most about twice)."""
EXPLAINED = (Status.FAIL, Status.INCONCLUSIVE)
"""Verdicts explained without ``--overhead-explain``."""


def wanted(result: OverheadResult, settings: Settings) -> bool:
    """Whether ``result`` is explained: every measured pair with ``--overhead-explain``, else a failing or
    inconclusive one."""
    return result.measured and (settings.explain or result.verdict in EXPLAINED)


def explained(
    result: OverheadResult, profiler: Profiler, profiles: tuple[tuple[Profile, int], tuple[Profile, int]]
) -> OverheadResult:
    """``result`` with its explanation: the framework side's profile against the baseline's."""
    (baseline, baseline_calls), (framework, framework_calls) = profiles
    explanation = explain(
        baseline, framework, (baseline_calls, framework_calls), profiler.unit, profiler.exact, profiler.note
    )
    return dataclasses.replace(result, explain=explanation)


def flame_path(folder: str, nodeid: str) -> Path:
    """The folded-stacks file of a test: its node id with what a file name cannot hold replaced."""
    return Path(folder) / (re.sub(r"[^A-Za-z0-9._=-]+", "_", nodeid).strip("_") + ".folded")


def write_flame(folder: str, result: OverheadResult) -> Path | None:
    """Write the explained pair's added cost as folded stacks (atomically), if a folder is given."""
    if not folder or result.explain is None:
        return None
    path = flame_path(folder, result.nodeid)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_text_atomic(path, result.explain.folded())
