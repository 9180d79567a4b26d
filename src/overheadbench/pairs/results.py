"""The result of one measured pair, and its JSON form (one entry of a run's ``results``).

Every figure is computed once, by :mod:`overheadbench.pairs.verdict`; the report, the stored run
and the comparison only read them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..core.jsonio import Fields
from ..core.vocabulary import Role
from ..engine.attribution import Explanation
from ..engine.changes import Change, StoredChange
from ..engine.checks import Check, Overall, Status
from ..engine.combining import SESSION_SD, Method
from ..engine.counted_samples import CountSamples
from ..engine.process_logs import ratio_log_se
from ..engine.readings import Reading, link_of, log_interval
from ..engine.samples import Kind, ReplicaSamples, Timer
from ..engine.settings import Mode
from .pair import Pair

REPORT_ATTRIBUTE = "overheadbench"
"""The test report attribute carrying its measured pair's JSON (:mod:`overheadbench.pairs.kind`):
pytest serialises extra report attributes, so xdist brings them from workers to the controller
(unlike ``user_properties``, it stays out of JUnit XML)."""
COUNT_PRIOR_SD = 0.001
"""The between-session sd (of the log) a counted pair's series leans on (a time pair's is
:data:`~overheadbench.engine.combining.SESSION_SD`): counts are exact, but a 0.1% move is an
interpreter's, not the code's."""


@dataclass
class OverheadResult:
    """One baseline-versus-framework pair. Times in seconds per call; overheads as fractions
    (of time, or of instructions in count mode)."""

    pair: Pair
    kind: Kind
    ratio: float = math.nan
    """framework / baseline."""
    ci: tuple[float, float] = (math.nan, math.nan)
    """Interval of the overhead (ratio - 1) its budgets were judged on: at the pair's confidence
    (time; joined with every reading that missed it, :attr:`widened`), or the range over the
    repeats (count)."""
    widened: str = ""
    """Why :attr:`ci` spans more than the estimate's own interval: the readings that missed it
    (the other clock, every block pair where the figure was read from the undisturbed ones;
    :func:`~overheadbench.pairs.estimating.judged_interval`); empty when none did (schema 20)."""
    method: Method | None = None
    baseline_s: float = math.nan
    framework_s: float = math.nan
    harness_s: float = math.nan
    """The measuring loop's own cost per call (an empty callable through the same path)."""
    harness_subtracted: bool = False
    verdict: Status = Status.UNMEASURED
    message: str = "not measured (run pytest with --overhead)"
    """The worst check's sentence, with the pair's figures."""
    checks: list[Check] = field(default_factory=list)
    """Every budget of the pair, judged (a stored run before schema 9 has none)."""
    calls_per_block: int = 0
    wall_s: float = 0.0
    """The pair's whole wall time, replica start-up and set-up included."""
    start_s: float = 0.0
    """Of ``wall_s``, the time its new replica processes took to start (import and collect the
    session): the first pair's, usually, and a later one's only where a replica was replaced."""
    between_sd: float = math.nan
    """The spread of the processes' log ratios beyond their own precision (time mode, several processes)."""
    disagree: bool = False
    """Whether the processes' medians disagreed beyond their own precision."""
    session_sd: float = math.nan
    """The between-session term its interval carries: learned from this machine's stored runs of
    the pair where there are enough (:attr:`session_runs`), else 1.25 times its processes' spread, at
    least the machine kind's 0.5% (:func:`~overheadbench.pairs.comparing.session_sd`); NaN: one
    process, or a run stored before schema 16."""
    session_runs: int = 0
    """The stored runs :attr:`session_sd` was learned from (0: the prior; schema 17)."""
    other_ratio: tuple[float, float, float] = (math.nan, math.nan, math.nan)
    """The ratio and its interval on the clock the pair was not judged on (NaN: not read)."""
    samples: list[ReplicaSamples] = field(default_factory=list)
    """Raw paired block costs, one entry per process (time mode)."""
    counts: CountSamples | None = None
    """Per-call counts: instructions (count mode) and allocations (both modes, unless off)."""
    time_ratio: float = math.nan
    """Count mode: framework / baseline in wall time, from a short timing of the same calls in
    the counting process (the counts' check, :func:`overheadbench.engine.counting.disagreement`)."""
    probe: ReplicaSamples | None = None
    """Count mode: that timing's blocks, both sides (:attr:`time_ratio` is read from them), kept so
    that a change between places the counts cannot see is told from one they can (schema 20)."""
    places: list[PlaceResult] = field(default_factory=list)
    """The same pair at every other place of this session (``--overhead-against``'s base tree,
    each ``--overhead-env``), measured interleaved with this one, and each change."""
    stored: StoredChange | None = None
    """Its change against the stored run the session compared with (``--overhead-compare``):
    computed once, where the result is made, and read by the gate, the terminal and the reports."""
    explain: Explanation | None = None
    """Where the overhead goes, function by function (a failing pair, or every pair with
    ``--overhead-explain``): :mod:`overheadbench.engine.attribution`."""
    outcome: Overall | None = None
    """The test's one outcome: its verdict and every gate's finding, worst first, as the test was
    decided (:func:`overheadbench.engine.outcome.decide`); None until then (its verdict's, read as such)."""
    failed: bool | None = None
    """Whether the test failed for it (an undecided outcome fails or warns by the session's policy)."""

    @property
    def nodeid(self) -> str:
        return self.pair.nodeid

    @property
    def mode(self) -> Mode:
        return self.pair.mode

    @property
    def concurrency(self) -> int:
        return self.pair.concurrency

    @property
    def overhead(self) -> float:
        return self.ratio - 1

    @property
    def timer(self) -> Timer:
        """The clock the pair was judged on (its processes all read the same one)."""
        return self.samples[0].timer if self.samples else Timer.WALL

    @property
    def abs_overhead_s(self) -> float:
        return self.framework_s - self.baseline_s

    @property
    def impact(self) -> float | None:
        """The absolute overhead as a share of the marker's ``work`` per call (None without it)."""
        if not self.pair.work_s or math.isnan(self.abs_overhead_s):
            return None
        return self.abs_overhead_s / self.pair.work_s

    @property
    def detectable(self) -> float:
        """The smallest change of framework / baseline (a fraction) that this result's interval
        could tell from zero at this session's precision: twice its half-width on the log scale,
        the distance at which two such intervals stop overlapping (0 for exact counts). What a
        gate on this pair can catch, before its "same" is trusted."""
        low, high = self.ci
        if not (math.isfinite(low) and math.isfinite(high)) or low <= -1:
            return math.nan
        return (1 + high) / (1 + low) - 1

    @property
    def measured(self) -> bool:
        return self.verdict != Status.UNMEASURED

    @property
    def overall(self) -> Overall:
        """The outcome every report shows: as decided, else the verdict's (a result not yet decided)."""
        return self.outcome if self.outcome is not None else Overall.of(self.verdict)

    @property
    def test_failed(self) -> bool:
        """Whether the test failed: as decided, else by its verdict alone."""
        return self.failed if self.failed is not None else self.verdict == Status.FAIL

    def series_reading(self, linked: str) -> Reading | None:
        """The pair as its stored run's history reads it (each kind gives its own readings): its
        ratio's log with its processes' standard error, the between-session spread its series leans
        on, its budget, and its link (its change over the base tree, where the run was ``linked`` to
        a commit); None where the pair has no ratio to follow."""
        if not (self.measured and self.ratio > 0 and math.isfinite(self.ratio)):
            return None
        changes = [p.change for p in self.places if p.role is Role.BASE and p.change is not None] if linked else []
        figure = f"overhead ({self.mode.value}" + (f", {self.concurrency} callers)" if self.concurrency > 1 else ")")
        budget = self.pair.budget.max_overhead
        link, link_se = link_of([(c.old, c.new, c.se) for c in changes])
        low, high = self.ci
        return Reading(
            self.nodeid,
            figure,
            math.log(self.ratio),
            ratio_log_se(self.samples)[0],
            COUNT_PRIOR_SD if self.mode.counted else SESSION_SD,
            None if budget is None else 1 + budget,
            link=link,
            link_se=link_se,
            interval=log_interval(1 + low, 1 + high),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            **self.pair.to_json(),
            "kind": self.kind,
            "impact": self.impact,
            "ratio": self.ratio,
            "overhead": self.overhead,
            "ci": list(self.ci),
            "widened": self.widened,
            "detectable": self.detectable,
            "method": self.method,
            "baseline_s": self.baseline_s,
            "framework_s": self.framework_s,
            "abs_overhead_s": self.abs_overhead_s,
            "harness_s": self.harness_s,
            "harness_subtracted": self.harness_subtracted,
            "outcome": self.overall,
            "failed": self.test_failed,
            "verdict": self.verdict,
            "message": self.message,
            "checks": [check.to_json() for check in self.checks],
            "calls_per_block": self.calls_per_block,
            "processes": len(self.samples),
            "wall_s": self.wall_s,
            "start_s": self.start_s,
            "timer": self.timer,
            "between_sd": self.between_sd,
            "session_sd": self.session_sd,
            "session_runs": self.session_runs,
            "disagree": self.disagree,
            "other_ratio": list(self.other_ratio),
            "samples": [replica.to_json() for replica in self.samples],
            "counts": self.counts.to_json() if self.counts else None,
            "time_ratio": self.time_ratio,
            "probe": self.probe.to_json() if self.probe else None,
            "places": [place.to_json() for place in self.places],
            "stored": self.stored.to_json() if self.stored else None,
            "explain": self.explain.to_json() if self.explain else None,
        }

    @classmethod
    def from_json(cls, data: Any, path: str = "result") -> OverheadResult:
        """The result back from :meth:`to_json` (schema 2 and later), every field checked; a
        :class:`~overheadbench.core.jsonio.ShapeError` names the first one that is wrong."""
        fields = Fields(data, path)
        nodeid = fields.text("nodeid")
        samples = fields.items("samples", ReplicaSamples.from_json)
        counts = fields.obj("counts", optional=True)
        ci = fields.interval("ci")
        pair = Pair.from_json(fields, nodeid, len(samples))
        method = fields.text("method", optional=True)
        result = cls(
            pair=pair,
            kind=fields.choice("kind", Kind),
            ratio=fields.ratio("ratio"),
            ci=(ci[0], ci[1]),
            method=fields.choice("method", Method) if method else None,
            baseline_s=fields.number("baseline_s"),
            framework_s=fields.number("framework_s"),
            harness_s=fields.number("harness_s"),
            harness_subtracted=fields.flag("harness_subtracted"),
            verdict=fields.choice("verdict", Status),
            message=fields.text("message"),
            checks=fields.items("checks", Check.from_json) if "checks" in fields.data else [],  # schema 9
            calls_per_block=fields.whole("calls_per_block"),
            wall_s=fields.number("wall_s"),
            samples=samples,
            counts=None if counts is None else CountSamples.from_json(counts.data, counts.path),
            time_ratio=fields.maybe_number("time_ratio") or math.nan,  # schema 6
            start_s=fields.maybe_number("start_s") or 0.0,  # schema 13, with the rest below
            between_sd=fields.number("between_sd", optional=True),
            session_sd=fields.number("session_sd", optional=True),  # schema 16
            session_runs=fields.whole("session_runs", optional=True) or 0,  # schema 17
            disagree=bool(fields.flag("disagree", optional=True)),
            widened=fields.text("widened", optional=True) or "",  # schema 20
        )
        _read_later_fields(result, fields)
        return result


def _read_later_fields(result: OverheadResult, fields: Fields) -> None:
    """What later schemas added to a result: its outcome, the other clock's ratio, its stored change,
    its explanation, its other places (schemas 5 to 11: a base tree only)."""
    nodeid = result.nodeid
    if "outcome" in fields.data:  # schema 16
        result.outcome, result.failed = fields.choice("outcome", Overall), fields.flag("failed")
    if (probe := fields.obj("probe", optional=True)) is not None:  # schema 20
        result.probe = ReplicaSamples.from_json(probe.data, probe.path)
    if "other_ratio" in fields.data:
        clock = fields.interval("other_ratio", size=3)
        result.other_ratio = (clock[0], clock[1], clock[2])
    stored = fields.obj("stored", optional=True) if "stored" in fields.data else None
    if stored is not None:
        result.stored = StoredChange.from_json(stored.data, stored.path, nodeid)
    if (explained := fields.obj("explain", optional=True)) is not None:  # schema 14
        result.explain = Explanation.from_json(explained)
    if "places" in fields.data:  # schema 12
        result.places = fields.items("places", lambda item, at: PlaceResult.from_json(item, at, nodeid))
    elif (against := fields.obj("against", optional=True)) is not None:  # schemas 5 to 11: a base tree only
        base = against.obj("base", optional=True)
        other = None if base is None else OverheadResult.from_json(base.data, base.path)
        note = against.text("note", optional=True) or ""
        result.places = [PlaceResult(against.text("tree"), Role.BASE, other, None, note)]  # its change: Run


@dataclass
class PlaceResult:
    """The pair at another place of the same session: its measurement (None: not measured
    there, ``note`` says why) and its change against the session's own, in the role's
    direction (:func:`~overheadbench.pairs.comparing.place_change`)."""

    name: str
    role: Role
    result: OverheadResult | None = None
    change: Change | None = None
    note: str = ""
    explain: Explanation | None = None
    """What the change added, function by function: the new side's framework path against the
    old side's (a regressed or unknown change, or every one with ``--overhead-explain``;
    :mod:`overheadbench.pairs.explaining`)."""

    @property
    def sides(self) -> tuple[str, str]:
        """What the change's old and new are called: base and head, or this and that environment."""
        return self.role.sides(self.name)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "role": self.role,
            "note": self.note,
            "result": self.result.to_json() if self.result else None,
            "change": self.change.to_json() if self.change else None,
            "explain": self.explain.to_json() if self.explain else None,
        }

    @classmethod
    def from_json(cls, data: Any, path: str, nodeid: str) -> PlaceResult:
        fields = Fields(data, path)
        result, change = fields.obj("result", optional=True), fields.obj("change", optional=True)
        explained = fields.obj("explain", optional=True)  # schema 15
        return cls(
            fields.text("name"),
            fields.choice("role", Role),
            None if result is None else OverheadResult.from_json(result.data, result.path),
            None if change is None else Change.from_json(change.data, change.path, nodeid),
            fields.text("note"),
            None if explained is None else Explanation.from_json(explained),
        )
