"""A pair in two runs: its readings and their change (:mod:`overheadbench.engine.changes`).

A run's overhead moves for three reasons: sampling inside a process, layout between fresh
processes, and the machine's state between sessions (its load, frequency, cache neighbours).
The first two are in a run's own spread: the per-process median ratios, whose log has
standard error ``sd/sqrt(k)`` (a median's is 1.25 times that). The third is common to every
process of a session, so no single run can see it: between two stored runs it is learned from
the stored history of the same machine or, without enough history, taken as a prior measured
for this project (``validation/gate.py``). Places measured in one session
(``--overhead-against``, ``--overhead-env``) share the session: no such term
(:mod:`overheadbench.pairs.comparing`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..core.vocabulary import Counter
from ..engine.changes import Change, Gate, StoredChange, change, exact_change
from ..pairs.comparing import Compared, Figure, process_ratios, reading, session_sd
from ..pairs.results import OverheadResult


def process_log_sd(result: Compared) -> float:
    logs = np.log([r for r in process_ratios(result.samples) if r > 0])
    return float(np.std(logs, ddof=1)) if logs.size >= 2 else 0.0


def comparable(old: Compared, new: Compared) -> bool:
    """Whether two results of one test measured the same figure (mode, callers and, for counts,
    the counter: machine and bytecode instructions differ), both positive."""
    same = old.mode == new.mode and old.concurrency == new.concurrency and _counter(old) == _counter(new)
    return same and all(r.ratio > 0 and math.isfinite(r.ratio) for r in (old, new))


def _counter(result: Compared) -> Counter | None:
    return result.counts.counter if result.mode.counted and result.counts is not None else None


def compare_result(old: Compared, new: Compared, history: Sequence[Compared] = ()) -> Change:
    """``new`` against a stored ``old`` run of the same machine."""
    if new.mode.counted:
        return exact_change(new.nodeid, old.ratio, new.ratio)
    session = session_sd(history, Figure.of(new), max(process_log_sd(old), process_log_sd(new)))
    found = change(new.nodeid, reading(old), reading(new), session)
    if old.timer == new.timer or found.between is None:
        return found
    clocks = dataclasses.replace(found.between, clocks=f"{old.timer.value}->{new.timer.value}")
    return dataclasses.replace(found, between=clocks)


def compare_runs(
    old_results: Sequence[Compared], new_results: Sequence[Compared], history: Sequence[Compared] = ()
) -> list[Change]:
    """A :class:`Change` for every test measured in both runs (by node id) in the same mode and
    at the same concurrency (a time overhead and an instruction overhead are different figures,
    as are one caller's and 64 callers'), in the new run's order;
    ``history``: the stored results of the same machine, for each pair's between-session spread."""
    old_by_id = {r.nodeid: r for r in old_results if r.measured}
    return [
        compare_result(old_by_id[r.nodeid], r, history)
        for r in new_results
        if r.measured and r.nodeid in old_by_id and comparable(old_by_id[r.nodeid], r)
    ]


@dataclass
class StoredPairs:
    """The pairs' side of the stored-run gate (:class:`~overheadbench.history.gate.StoredRuns`): the
    compared run's results, this machine's stored ones (each pair's between-session spread), and
    the pairs' gate."""

    gate: Gate
    old: dict[str, OverheadResult] = field(default_factory=dict)
    history: list[OverheadResult] = field(default_factory=list)

    def change(self, result: OverheadResult) -> Change | None:
        """How ``result`` changed against the stored run (None if it has no such test in this mode)."""
        old = self.old.get(result.nodeid)
        if old is None or not comparable(old, result) or not result.measured:
            return None
        return compare_result(old, result, self.history)

    def stored_change(self, result: OverheadResult) -> StoredChange | None:
        """The change :meth:`change` finds, named by the stored run: what the result carries."""
        change = self.change(result)
        return None if change is None else StoredChange(self.gate.reference, change)
