"""A pair's ratio as a measurement to compare: one run's against another's, or one place's
against another's in the same session (:mod:`overheadbench.engine.changes`).

The figure compared is the pair's ratio (framework / baseline), so the change is relative to
the framework path: new ratio / old ratio - 1, in percent; a 230% pair and a 20% pair are
gated alike. Its standard error comes from each side's processes (sampling and layout); two
places measured in one session, interleaved, share the session's state, so no between-session
term is added (:mod:`overheadbench.history.pair_changes` adds it between stored runs). Count
mode compares exact counts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from ..engine.changes import Change, Measurement, change, exact_change, median_measurement
from ..engine.samples import CountSamples, ReplicaSamples, Role
from ..engine.settings import Mode
from ..engine.stats import pair_ratios


class Compared(Protocol):
    """What a comparison reads of a result (:class:`~overheadbench.pairs.results.OverheadResult` has it)."""

    @property
    def nodeid(self) -> str: ...

    @property
    def mode(self) -> Mode: ...

    @property
    def concurrency(self) -> int: ...

    @property
    def ratio(self) -> float: ...

    @property
    def measured(self) -> bool: ...

    @property
    def samples(self) -> list[ReplicaSamples]: ...

    @property
    def counts(self) -> CountSamples | None: ...


def process_ratios(samples: Sequence[ReplicaSamples]) -> list[float]:
    """Each process's median pair ratio."""
    return [float(np.median(pair_ratios(s.baseline_ns, s.framework_ns))) for s in samples if s.baseline_ns]


def reading(result: Compared) -> Measurement:
    """A run's ratio for a pair, with the standard error of its log from its processes' medians."""
    spread = median_measurement(process_ratios(result.samples))
    return Measurement(result.ratio, spread.log_se if math.isfinite(spread.log_se) else 0.0, spread.df)


def paired_change(old: Compared, new: Compared) -> Change:
    """Two places measured in one session, interleaved: no between-session term."""
    if new.mode == Mode.COUNT:
        return exact_change(new.nodeid, old.ratio, new.ratio)
    return change(new.nodeid, reading(old), reading(new))


def place_change(role: Role, own: Compared, other: Compared) -> Change | None:
    """The change a place's measurement shows, in its role's direction: the session's own tree
    over a base tree (a pull request's head over its base), or an environment over the
    session's own; None where either side was not measured."""
    if not (own.measured and other.measured):
        return None
    return paired_change(other, own) if role == Role.BASE else paired_change(own, other)
