"""The pairs' gate across the session's places (the base tree of ``--overhead-against``, each
environment of ``--overhead-env``), in one object built by the session and asked by the rest.

The threshold and the looks at it were read in six modules: the stopping rule went on while a
place's change was unknown at it, the strategy read each change at the looks' confidence, the
explainer chose what to explain by it, the outcome judged the changes and warned of a threshold
the pair could not resolve. :class:`PlaceGate` answers each of those questions, and none of
those modules reads a threshold; transport keeps the same concern in
:mod:`overheadbench.transport.across`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from ..core.errors import PRECISION, OverheadPrecisionWarning
from ..core.units import format_overheads
from ..core.vocabulary import MAX_PROCESSES, Role
from ..engine.attribution import CHANGE_HEAD
from ..engine.changes import Change, Gate
from ..engine.findings import Finding
from ..engine.looks import look_counts, looks_confidence
from ..engine.outcome import Gated
from ..engine.samples import ReplicaSamples
from ..engine.sampling import GateRounds
from ..engine.settings import Settings
from ..engine.stats import CONFIDENCE
from .comparing import place_change, rounds_change
from .estimating import estimate
from .pair import Pair
from .results import OverheadResult, PlaceResult


@dataclass(frozen=True)
class Looks:
    """A gate read while a pair's rounds go on (``--overhead-against``, ``--overhead-env``): the
    rounds continue while a change is unknown at the threshold, so the gate looks at it more
    than once, and each look is a chance of a false alarm.

    The error rate stays honest by Bonferroni's bound, over the looks and over the session's
    gated pairs: each look reads an interval at ``1 - (1 - CONFIDENCE) / (looks x pairs)``, so
    a pair that did not move reads "regressed" (or "improved") with probability at most
    ``(1 - CONFIDENCE) / 2 / pairs`` whatever the looks found, and a session of ``pairs``
    identical pairs at most ``(1 - CONFIDENCE) / 2`` in all (the expected number of false alarms
    per suite). A change well inside the threshold is rarer still: the bound is for a change
    sitting right at it. The looks come at ``processes``, twice and four times as many
    (at most ``MAX_PROCESSES``): a few looks, far apart, keep the bound close to the truth.
    """

    threshold: float
    """Percent (the gate's ``--overhead-fail-above`` for pairs)."""
    pairs: int = 1
    """The session's gated pairs: the family whose false alarms are bounded together."""

    def counts(self, processes: int, most: int) -> list[int]:
        """The process counts (per place) at which the gate looks."""
        return look_counts(processes, most)

    def confidence(self, processes: int, most: int) -> float:
        """Of every look's interval (and the change the result keeps)."""
        return looks_confidence(len(self.counts(processes, most)) * max(self.pairs, 1))


@dataclass
class PlaceGate:
    """The pairs' gate at the session's other places: the ``gate`` (what the changes are against, its
    threshold, what an unknown one does) and the family of ``pairs`` its looks bound together."""

    gate: Gate
    pairs: int = 1
    """The session's gated pairs (:class:`Looks`): set by the kind once they are collected."""

    @property
    def looks(self) -> Looks | None:
        """The looks at a change while rounds go on (None: no threshold, the changes only shown)."""
        threshold = self.gate.threshold
        return None if threshold is None else Looks(threshold, self.pairs)

    def confidence(self, settings: Settings) -> float:
        """Of the interval a place's change is read at: the looks', or the usual one where none look."""
        looks = self.looks
        return CONFIDENCE if looks is None else looks.confidence(settings.processes, _most(settings))

    def rounds(self, pair: Pair, settings: Settings) -> GateRounds | None:
        """The rule of the rounds at every place (None without a threshold): go on to the next look
        while a place's change is unknown at the threshold, read at the looks' confidence."""
        looks = self.looks
        if looks is None:
            return None
        confidence = self.confidence(settings)

        def undecided(own: list[ReplicaSamples], others: Sequence[tuple[Role, list[ReplicaSamples]]]) -> bool:
            ratio = estimate(pair, own, settings).ratio
            for role, samples in others:
                other = estimate(pair, samples, settings).ratio
                old, new = role.old_new(own, samples)
                found = rounds_change(pair.nodeid, old, new, role.old_new(ratio, other), confidence)
                if found.finding(looks.threshold) == Finding.UNKNOWN:
                    return True
            return False

        return GateRounds(tuple(looks.counts(settings.processes, _most(settings))), undecided)

    def changed(self, own: OverheadResult, places: Sequence[PlaceResult], settings: Settings) -> OverheadResult:
        """``own`` with each place measured (:func:`~overheadbench.pairs.verdict.measure_places`) and its
        change against it, once, here (every report reads it from the result), at :meth:`confidence`."""
        confidence = self.confidence(settings)
        changed = [
            dataclasses.replace(place, change=place_change(place.role, own, place.result, confidence))
            if place.result is not None
            else place
            for place in places
        ]
        return dataclasses.replace(own, places=changed)

    def unsettled(self, result: OverheadResult) -> list[str]:
        """The places whose change is regressed or unknown at the threshold (none without one): what
        the explainer explains of a pair not explained whole."""
        found = [(place.name, self.gate.finding(place.change)) for place in result.places if place.change]
        return [name for name, finding in found if finding is not None and finding.unsettled]

    def gated(self, result: OverheadResult) -> list[Gated]:
        """Each place's change as the gate tells it, its explanation beside it."""
        return [
            gated(f"the framework path{place.role.under(place.name)}", place.change, _explained(place))
            for place in result.places
            if place.change is not None
        ]

    def unresolved(self, nodeid: str, changes: Sequence[Gated]) -> OverheadPrecisionWarning | None:
        return unresolved(nodeid, changes, self.gate)


@dataclass(frozen=True)
class StoredGate:
    """The gate against the stored run (``--overhead-compare``, or ``--overhead-fail-above`` alone), its
    change computed once by :class:`~overheadbench.history.pair_changes.StoredPairs`."""

    gate: Gate

    def gated(self, result: OverheadResult) -> list[Gated]:
        return [] if result.stored is None else [gated("the framework path", result.stored.change)]

    def unresolved(self, nodeid: str, changes: Sequence[Gated]) -> OverheadPrecisionWarning | None:
        return unresolved(nodeid, changes, self.gate)


def _explained(place: PlaceResult) -> str:
    return f"\n{place.explain.told(head=CHANGE_HEAD)}" if place.explain is not None else ""


def gated(what: str, change: Change, explained: str = "") -> Gated:
    """A pair's change as a gate tells it (a place's, or the stored run's): its overhead on both
    sides, the change of framework / baseline."""
    story = f"overhead {change.describe(format_overheads(change.old - 1, change.new - 1))}"
    return Gated(what, f"{story} (the change: of framework / baseline)", change, explained)


def unresolved(nodeid: str, changes: Sequence[Gated], gate: Gate) -> OverheadPrecisionWarning | None:
    """One warning where a change is unknown because the gate's threshold is within what it can
    detect here (a change of zero reads unknown too)."""
    threshold = gate.threshold
    for found in changes:
        if threshold is not None and gate.finding(found.change) == Finding.UNKNOWN:
            if found.change.detectable >= threshold:
                return OverheadPrecisionWarning(
                    f"{nodeid}: the gate's threshold ({threshold:g}%) is within what {found.what} can "
                    f"detect here (±{found.change.detectable:.1f}%): its change will read unknown; {PRECISION}"
                )
    return None


def _most(settings: Settings) -> int:
    """The most processes per place a gate's looks may reach: four times the first round's."""
    return min(MAX_PROCESSES, 4 * settings.processes)
