"""The result of one measured pair, and its JSON form.

All figures are computed once, here, from the raw replica samples; the report and the
JSON only read them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .counting import INSTRUCTIONS, CountSamples
from .marker import COUNT, TIME, Budget
from .options import Settings
from .sampling import BASELINE, ReplicaSamples
from .stats import combine, replica_ratio
from .verdict import judge_counts, judge_time

JSON_SCHEMA_VERSION = 2
"""2 added ``mode`` and ``counts``; version 1 files (time mode, no counts) still load."""
UNMEASURED = "unmeasured"
COUNTED = "count"
"""The ``method`` of a count-mode result: its interval is the range over the repeats."""


@dataclass
class OverheadResult:
    """One baseline-versus-framework pair. Times in seconds per call; overheads as fractions
    (of time, or of instructions in count mode)."""

    nodeid: str
    budget: Budget
    kind: str
    """"sync" or "async"."""
    ratio: float = math.nan
    """framework / baseline."""
    ci: tuple[float, float] = (math.nan, math.nan)
    """Interval of the overhead (ratio - 1) at ``confidence``."""
    confidence: float = math.nan
    method: str = ""
    baseline_s: float = math.nan
    framework_s: float = math.nan
    harness_s: float = math.nan
    """The measuring loop's own cost per call (an empty callable through the same path)."""
    harness_subtracted: bool = False
    verdict: str = UNMEASURED
    message: str = "not measured (run pytest with --overhead)"
    calls_per_block: int = 0
    wall_s: float = 0.0
    samples: list[ReplicaSamples] = field(default_factory=list)
    """Raw paired block costs, one entry per process."""
    group: str | None = None
    """The report table this pair belongs to (the marker's or pytest-benchmark's ``group``)."""
    mode: str = TIME
    counts: CountSamples | None = None
    """Per-call counts: instructions (count mode) and allocations (both modes, unless off)."""

    @property
    def overhead(self) -> float:
        return self.ratio - 1

    @property
    def abs_overhead_s(self) -> float:
        return self.framework_s - self.baseline_s

    @property
    def abs_ci_s(self) -> tuple[float, float]:
        return (self.ci[0] * self.baseline_s, self.ci[1] * self.baseline_s)

    @property
    def impact(self) -> float | None:
        """The absolute overhead as a share of the marker's ``work`` per call (None without it)."""
        if not self.budget.work_s or math.isnan(self.abs_overhead_s):
            return None
        return self.abs_overhead_s / self.budget.work_s

    @property
    def measured(self) -> bool:
        return self.verdict != UNMEASURED

    def to_json(self) -> dict[str, Any]:
        return {
            "nodeid": self.nodeid,
            "kind": self.kind,
            "group": self.group,
            "budget": {
                "max": self.budget.max_overhead,
                "max_abs_s": self.budget.max_abs_s,
                "confidence": self.budget.confidence,
                "work_s": self.budget.work_s,
                "max_alloc": self.budget.max_alloc,
                "max_alloc_bytes": self.budget.max_alloc_bytes,
                "mode": self.budget.mode,
                "processes": self.budget.processes,
            },
            "impact": self.impact,
            "ratio": self.ratio,
            "overhead": self.overhead,
            "ci": list(self.ci),
            "confidence": self.confidence,
            "method": self.method,
            "baseline_s": self.baseline_s,
            "framework_s": self.framework_s,
            "abs_overhead_s": self.abs_overhead_s,
            "harness_s": self.harness_s,
            "harness_subtracted": self.harness_subtracted,
            "verdict": self.verdict,
            "message": self.message,
            "calls_per_block": self.calls_per_block,
            "processes": len(self.samples),
            "wall_s": self.wall_s,
            "samples": [replica.to_json() for replica in self.samples],
            "mode": self.mode,
            "counts": self.counts.to_json() if self.counts else None,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> OverheadResult:
        """The result back from :meth:`to_json` (as it travels from an xdist worker or a file)."""
        budget = data["budget"]
        return cls(
            nodeid=data["nodeid"],
            kind=data["kind"],
            group=data.get("group"),
            budget=Budget(
                budget.get("max"),
                budget.get("max_abs_s"),
                budget.get("confidence"),
                budget.get("work_s"),
                budget.get("max_alloc"),
                budget.get("max_alloc_bytes"),
                budget.get("mode"),
                budget.get("processes"),
            ),
            ratio=data["ratio"],
            ci=tuple(data["ci"]),
            confidence=data["confidence"],
            method=data["method"],
            baseline_s=data["baseline_s"],
            framework_s=data["framework_s"],
            harness_s=data["harness_s"],
            harness_subtracted=data["harness_subtracted"],
            verdict=data["verdict"],
            message=data["message"],
            calls_per_block=data["calls_per_block"],
            wall_s=data["wall_s"],
            samples=[ReplicaSamples.from_json(sample) for sample in data["samples"]],
            mode=data.get("mode", TIME),
            counts=CountSamples.from_json(data["counts"]) if data.get("counts") else None,
        )


def _harness_ns(replicas: list[ReplicaSamples], settings: Settings) -> tuple[float, float]:
    """Harness cost per call (ns), and what to remove from every block (0 unless subtracting)."""
    harness_ns = float(np.median([r.harness_ns_per_call for r in replicas]))
    return harness_ns, harness_ns * replicas[0].calls_per_block if settings.subtract_harness else 0.0


def summarise(
    nodeid: str,
    budget: Budget,
    kind: str,
    replicas: list[ReplicaSamples],
    settings: Settings,
    wall_s: float,
    counts: CountSamples | None = None,
) -> OverheadResult:
    """Estimate, interval, per-call figures and verdict for a pair measured in time mode
    (``counts``: its allocations, from the pass after timing, if any)."""
    confidence = budget.confidence or settings.confidence
    calls = replicas[0].calls_per_block
    harness_ns, offset_ns = _harness_ns(replicas, settings)
    estimate = combine(
        [replica_ratio(r.baseline_ns, r.framework_ns, offset_ns, confidence) for r in replicas],
        confidence,
    )
    per_call_ns = [float(np.median(r.baseline_ns)) - offset_ns for r in replicas]
    baseline_s = max(float(np.median(per_call_ns)), 1.0) / calls / 1e9
    verdict = judge_time(estimate.overhead, estimate.overhead_ci, baseline_s, budget, confidence, counts)
    return OverheadResult(
        nodeid=nodeid,
        budget=budget,
        kind=kind,
        ratio=estimate.ratio,
        ci=estimate.overhead_ci,
        confidence=confidence,
        method=estimate.method,
        baseline_s=baseline_s,
        framework_s=baseline_s * estimate.ratio,
        harness_s=harness_ns / 1e9,
        harness_subtracted=settings.subtract_harness,
        verdict=verdict.status,
        message=verdict.message,
        calls_per_block=calls,
        wall_s=wall_s,
        samples=replicas,
        counts=counts,
    )


def summarise_counts(nodeid: str, budget: Budget, kind: str, counts: CountSamples, wall_s: float) -> OverheadResult:
    """The instruction overhead, its range over the repeats, and the verdict, for a pair
    measured in count mode."""
    has_bytecode = counts.median(BASELINE, INSTRUCTIONS) >= 1
    ratio, low, high = counts.ratio(INSTRUCTIONS) if has_bytecode else (math.nan,) * 3
    verdict = judge_counts(counts, budget)
    return OverheadResult(
        nodeid=nodeid,
        budget=budget,
        kind=kind,
        ratio=ratio,
        ci=(low - 1, high - 1),
        method=COUNTED,
        verdict=verdict.status,
        message=verdict.message,
        calls_per_block=counts.calls_per_block,
        wall_s=wall_s,
        mode=COUNT,
        counts=counts,
    )
